"""The untrusted front end: .proof syntax, parser and elaboration into kernel terms."""

from .api import LemmaInfo, SettingInfo, load_lemmas
from .parser import parse

__all__ = ["LemmaInfo", "SettingInfo", "load_lemmas", "parse"]
