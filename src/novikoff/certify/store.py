"""Certificate files: ``DIR/.certificates/NAME.proof.json`` beside ``DIR/NAME.proof``.

A file maps each obligation's key (the SHA-256 of its statement) to its certificate, so an
edited step invalidates only its own.  The files are untrusted input: the kernel checks every
certificate it replays, and a malformed file is reported, never half read.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..kernel.certificates import FORMAT

__all__ = ["CertificateFileError", "certificate_path", "load_certificates",
           "write_certificates"]


class CertificateFileError(Exception):
    """A certificate file that cannot be read (not JSON, another format)."""


def certificate_path(proof: Path) -> Path:
    """Where the certificates of a proof file are kept."""
    return proof.parent / ".certificates" / (proof.name + ".json")


def load_certificates(proof: Path) -> dict:
    """key -> certificate of a proof file ({} when it has none)."""
    path = certificate_path(Path(proof))
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CertificateFileError(f"{path}: not a certificate file ({exc})") from None
    except RecursionError:
        raise CertificateFileError(f"{path}: not a certificate file (nested too deeply)") from None
    if not (isinstance(data, dict) and data.get("format") == FORMAT
            and isinstance(data.get("certificates"), dict)):
        raise CertificateFileError(f"{path}: not a certificate file of format {FORMAT}")
    return data["certificates"]


def write_certificates(proof: Path, certificates: dict) -> Path:
    """Write a proof file's certificates (sorted by key, one per line); return the path."""
    path = certificate_path(Path(proof))
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"  {json.dumps(k)}: {json.dumps(certificates[k], separators=(',', ':'))}"
             for k in sorted(certificates)]
    text = ('{\n  "format": ' + json.dumps(FORMAT) + ',\n  "certificates": {\n'
            + ",\n".join("  " + line for line in lines) + "\n  }\n}\n")
    path.write_text(text, encoding="utf-8")
    return path
