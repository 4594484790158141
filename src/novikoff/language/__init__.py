"""The untrusted front end: .proof syntax, parser and elaboration into kernel terms."""

from .parser import parse

__all__ = ["parse"]
