"""The untrusted front end: .proof syntax, parser and elaboration into kernel terms."""

from .api import LemmaInfo, SettingInfo, load_lemmas
from .parser import parse, parse_expression

__all__ = ["LemmaInfo", "SettingInfo", "load_lemmas", "parse", "parse_expression"]
