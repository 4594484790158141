"""Untrusted search for certificates, and their files beside the proofs.

Nothing here can make a step verified: the kernel's checker (kernel/certificates.py) replays
every certificate it is given.  ``search`` finds one for an obligation's statement (Z3's unsat
cores choose the facts and the cases, an LP solved by HiGHS finds Positivstellensatz
multipliers, solved again exactly on the LP's support); ``store`` reads and writes the
certificate files.
"""

from ._search import find_certificate
from ._store import certificate_path, load_certificates, write_certificates

__all__ = ["find_certificate", "certificate_path", "load_certificates", "write_certificates"]
