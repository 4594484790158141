"""Datasets in, runs out: .npz/.csv/bundled datasets, lossless run files, exact replay.

A run file is an .npz holding the data (X, y), the presentation order, w_star (empty when it was
computed), w0 (the start; empty for a run from 0), and ``meta``, a JSON string (floats written by repr, so they round-trip exactly) with
the variant, the parameters, the proofs and the float run's outcome.  Nothing in it is
pickled: ``np.load(..., allow_pickle=False)`` reads it without running code.  The proofs are
recorded by name when they are bundled library files and by their text (with its sha256)
otherwise, so replaying a run file reads no path the file names.

Every input file is read here, and every way one can be bad (missing, empty, truncated, not the
format its suffix says, pickled, a missing value) is an InvalidArgument naming the file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import warnings
from pathlib import Path

import numpy as np

from ..errors import InvalidArgument
from ._library import default_proof_paths
from ._validate import check_data, check_order, check_vector, check_w_star

__all__ = ["load_dataset", "save_run", "load_run", "read_npz", "read_npy",
           "read_array", "read_numbers", "BUNDLED"]

BUNDLED = ("iris", "breast_cancer")
_FORMAT = 1


# The bundled sets are the CSV files that ship inside scikit-learn (sklearn/datasets/data), read
# as sklearn.datasets.load_iris / load_breast_cancer read them: a first line "n, d, class names",
# then d numbers and a class index per row.  Reading the file directly spares importing
# scikit-learn (a second of start-up) for 150 rows.
_LABELS = {"iris": 0, "breast_cancer": 1}  # the class that is +1: setosa; benign


def _bundled(name: str):
    spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise InvalidArgument(f"data={name!r}: bundled datasets need scikit-learn "
                              f"(pip install scikit-learn)")
    path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / f"{name}.csv"
    try:
        with open(path, encoding="utf-8") as f:
            n, d = (int(v) for v in f.readline().split(",")[:2])
            table = np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2)
    except (OSError, ValueError) as err:
        raise InvalidArgument(f"data={name!r}: scikit-learn's copy {str(path)!r} cannot be "
                              f"read ({err})") from None
    if table.shape != (n, d + 1):
        raise InvalidArgument(f"data={name!r}: scikit-learn's copy {str(path)!r} holds "
                              f"{table.shape} numbers, not ({n}, {d + 1})")
    return table[:, :d].copy(), np.where(table[:, d] == _LABELS[name], 1.0, -1.0)


def _named(what: str, path) -> str:
    return f"{what}={str(path)!r}"


def _file_head(path: Path, what: str, kind: str, n: int = 8) -> bytes:
    """The first n bytes of a regular, non-empty file; else InvalidArgument saying why."""
    def bad(reason):
        return InvalidArgument(f"{_named(what, path)} is not a readable {kind}: {reason}")
    if not path.exists():
        raise bad("no such file")
    if not path.is_file():
        raise bad("not a regular file")
    try:
        with open(path, "rb") as f:
            head = f.read(n)
    except OSError as err:
        raise bad(err.strerror or str(err)) from None
    if not head:
        raise bad("the file is empty")
    return head


# What np.load raises on a damaged file: BadZipFile, zlib.error, EOFError, ValueError (a bad
# header, pickled objects), NotImplementedError (a flag of a zip format numpy cannot read), ...
# The bytes of a file are not code of ours: any exception while reading them is the file's.
_DAMAGED = Exception
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first local header, or an empty zip
_NPY = b"\x93NUMPY"


def _load_error(err: Exception) -> str:
    """What an exception of np.load (allow_pickle=False) means, in words."""
    if isinstance(err, ValueError) and "allow_pickle" in str(err):
        return "it holds Python objects (pickled data), which novikoff does not load"
    return f"truncated or corrupt ({type(err).__name__}: {err})"


def read_npz(path, what: str, keys=()) -> dict:
    """The arrays of an .npz file, read without unpickling; every way it can be bad is named."""
    path = Path(path)
    kind = ".npz file"
    head = _file_head(path, what, kind)
    if head.startswith(_NPY):
        raise InvalidArgument(f"{_named(what, path)} is not a readable {kind}: it is an .npy "
                              f"file (an .npz is a zip of .npy files)")
    if not head.startswith(_ZIP):
        raise InvalidArgument(f"{_named(what, path)} is not a readable {kind}: not a zip "
                              f"archive (an .npz is a zip of .npy files)")
    found = {}
    key = None
    try:
        with np.load(path, allow_pickle=False) as f:
            for key in f.files:
                found[key] = f[key]
    except _DAMAGED as err:
        where = f"array {key!r}: " if key is not None else ""
        raise InvalidArgument(f"{_named(what, path)} is not a readable {kind}: {where}"
                              f"{_load_error(err)}") from None
    missing = [k for k in keys if k not in found]
    if missing:
        raise InvalidArgument(f"{_named(what, path)} has no array {missing[0]!r} "
                              f"(it has {sorted(found)})")
    return found


def read_npy(path, what: str) -> np.ndarray:
    """The array of an .npy file, read without unpickling."""
    path = Path(path)
    kind = ".npy file"
    head = _file_head(path, what, kind)
    if not head.startswith(_NPY):
        reason = ("it is a zip archive (.npz)" if head.startswith(_ZIP) else
                  "no .npy header (np.save writes one)")
        raise InvalidArgument(f"{_named(what, path)} is not a readable {kind}: {reason}")
    try:
        return np.load(path, allow_pickle=False)
    except _DAMAGED as err:
        raise InvalidArgument(f"{_named(what, path)} is not a readable {kind}: "
                              f"{_load_error(err)}") from None


def read_array(path, what: str) -> np.ndarray:
    """One array from a file: .npy, .npz holding exactly one array, or .txt/.csv of numbers."""
    path = Path(path)
    if path.suffix == ".npz":
        arrays = read_npz(path, what)
        if len(arrays) != 1:
            raise InvalidArgument(f"{_named(what, path)} holds {sorted(arrays)}: expected one "
                                  f"array")
        return next(iter(arrays.values()))
    if path.suffix in (".txt", ".csv"):
        arr = read_numbers(path, what, "," if path.suffix == ".csv" else None, header=False)
        return arr.ravel() if 1 in arr.shape else arr  # one line or one column: a vector
    return read_npy(path, what)


def _number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _lines(path: Path, what: str):
    """(line number, text) of the lines of a text file that are not blank nor '#' comments; a
    UTF-8 byte-order mark (as Excel writes one) is not part of the first line."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            for line_no, line in enumerate(f, start=1):
                if line.strip() and not line.lstrip().startswith("#"):
                    yield line_no, line
    except (OSError, UnicodeDecodeError) as err:
        raise InvalidArgument(f"{_named(what, path)} is not a readable text file: {err}") \
            from None


def read_numbers(path, what: str, sep, *, header: bool) -> np.ndarray:
    """A text file of numbers as a 2-d float array; blank lines and '#' comments are skipped.

    header=True: a first line whose every field is a name (not a number, not empty) is a
    header.  A first line that mixes numbers and other text is a data row with a typo, an
    error at its file:line:col like anywhere else: no row is ever dropped silently.
    """
    path = Path(path)
    _file_head(path, what, "text file")
    split = (lambda line: [t.strip() for t in line.split(sep)])
    first = next(_lines(path, what), None)
    if first is None:
        raise InvalidArgument(f"{_named(what, path)} has no data rows")
    skip = first[0] if header and all(t and not _number(t) for t in split(first[1])) else 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "input contained no data" is an error here
            return np.loadtxt(path, delimiter=sep, ndmin=2, skiprows=skip, comments="#",
                              encoding="utf-8-sig")
    except (ValueError, UserWarning):
        pass
    # loadtxt refused it: find the first bad line and say what is wrong with it
    width = None
    for line_no, line in _lines(path, what):
        if line_no <= skip:
            continue
        tokens = split(line)
        at = f"{path}:{line_no}"
        for col, t in enumerate(tokens, start=1):
            if not t:
                raise InvalidArgument(f"{at}:{col}: {what}: column {col} has no value")
            if not _number(t):
                why = (" (this first line also holds numbers, so it is not a header: a "
                       "header names every column)"
                       if header and line_no == first[0] else "")
                raise InvalidArgument(f"{at}:{col}: {what}: {t!r} is not a number{why}")
        if width is not None and len(tokens) != width:
            raise InvalidArgument(f"{at}:1: {what}: {len(tokens)} values, the lines before "
                                  f"it {width}")
        width = len(tokens)
    if width is None:
        raise InvalidArgument(f"{_named(what, path)} has a header but no data rows")
    raise InvalidArgument(f"{_named(what, path)} is not a numeric text file")


def _csv(path: Path):
    arr = read_numbers(path, "data", ",", header=True)
    if arr.shape[1] < 2:
        raise InvalidArgument(f"data={str(path)!r}: a CSV needs feature columns and a last "
                              f"label column, got {arr.shape[1]} column(s)")
    return arr[:, :-1], arr[:, -1]


def load_dataset(spec, *, bias: bool = False, normalize: bool = False):
    """(X, y, name) from an .npz (arrays X, y), a .csv (label last) or a bundled dataset name.

    bias appends a constant feature 1 (a separator with offset becomes one through the origin);
    normalize scales every row to unit norm (the lemmas for unit x then apply).
    """
    spec = str(spec)
    path = Path(spec)
    if spec in BUNDLED:
        X, y = _bundled(spec)
    elif path.suffix == ".npz":
        f = read_npz(path, "data", ("X", "y"))
        X, y = f["X"], f["y"]
    elif path.suffix == ".csv":
        X, y = _csv(path)
    else:
        raise InvalidArgument(f"data={spec!r} is not an .npz or .csv file nor a bundled dataset "
                              f"({', '.join(BUNDLED)})")
    with _in_file("data", spec):
        X, y = check_data(X, y)
    if bias:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    if normalize:
        X = X / np.linalg.norm(X, axis=1)[:, None]
    return X, y, spec


class _in_file:
    """Prefix the InvalidArgument raised inside with the file its values came from."""

    def __init__(self, what: str, path):
        self.prefix = f"{_named(what, path)}: "

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if isinstance(err, InvalidArgument) and not str(err).startswith(self.prefix):
            raise InvalidArgument(self.prefix + str(err)) from None
        return False


# ----------------------------------------------------------------------------- run files

def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _bundled_proofs() -> dict:
    """{file name: path} of the bundled library, the only proofs a run file may name."""
    return {p.name: p for p in default_proof_paths()}


def _record_proofs(paths) -> list | None:
    """How a run file records its proof files: a bundled one by name, any other by its text
    (with its sha256), so that replaying reads no path the run file names."""
    if paths is None:
        return None
    library = {p.resolve(): name for name, p in _bundled_proofs().items()}
    out = []
    for p in paths:
        if isinstance(p, dict):  # already recorded (a config read from a run file)
            out.append(p)
            continue
        p = Path(p)
        if p.resolve() in library:
            out.append({"bundled": library[p.resolve()]})
        else:
            text = p.read_text(encoding="utf-8")
            out.append({"name": p.name, "sha256": _sha256(text), "text": text})
    return out


def _check_proofs(entries, where: str) -> list | None:
    """The proofs entry of a run file's config, checked: each names a bundled library file (by
    name, or by a path whose file name is one: the format of earlier run files) or records a
    .proof file's text with its sha256.  Nothing else is accepted: a run file cannot make
    replay read a path of its choosing."""
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise InvalidArgument(f"{where}: config 'proofs' is not a list")
    library = _bundled_proofs()
    out = []
    for e in entries:
        if isinstance(e, str) or (isinstance(e, dict) and set(e) == {"bundled"}):
            name = Path(e).name if isinstance(e, str) else e["bundled"]
            if not isinstance(name, str) or name not in library:
                raise InvalidArgument(f"{where}: the proof {e!r} is not in the bundled library "
                                      f"({', '.join(sorted(library))}); a run file names "
                                      f"bundled proofs or records a proof's text")
            out.append({"bundled": name})
        elif isinstance(e, dict) and set(e) == {"name", "sha256", "text"}:
            name, text = e["name"], e["text"]
            if not (isinstance(name, str) and isinstance(text, str)
                    and name == Path(name).name and name.endswith(".proof")
                    and not name.startswith(".")):
                raise InvalidArgument(f"{where}: a recorded proof's name {name!r} is not a "
                                      f"plain .proof file name")
            if e["sha256"] != _sha256(text):
                raise InvalidArgument(f"{where}: the recorded proof {name!r} does not match "
                                      f"its sha256 (the file is corrupt)")
            out.append(e)
        else:
            raise InvalidArgument(f"{where}: a proofs entry is neither a bundled proof nor a "
                                  f"recorded one ({str(e)[:60]!r})")
    return out


def save_run(path, X, y, *, order=None, w_star=None, w0=None, config: dict | None = None,
             outcome: dict | None = None) -> Path:
    """Write a run (data, order, w_star, the start w0, parameters, outcome) losslessly to an
    .npz file; the learning rate is config['eta'] (a float, written by repr: exact)."""
    X, y = check_data(X, y)
    order = np.arange(X.shape[0], dtype=np.int64) if order is None else np.asarray(order,
                                                                                   np.int64)
    config = dict(config or {})
    if config.get("proofs") is not None:
        config["proofs"] = _record_proofs(config["proofs"])
    meta = {"format": _FORMAT, "config": config, "outcome": outcome}
    path = Path(path)
    np.savez_compressed(path, X=X, y=y, order=order,
                        w_star=np.zeros(0) if w_star is None else np.asarray(w_star, float),
                        w0=np.zeros(0) if w0 is None else np.asarray(w0, float),
                        meta=np.array(json.dumps(meta)))
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


# The config keys replay passes to run(), and the JSON types they must have.
_NUMBER = (int, float)
_RUN_KEYS = {"gamma": _NUMBER, "variant": str, "cyclic": bool, "max_epochs": int,
             "include_unverified": bool, "separable": bool, "proofs": list, "eta": _NUMBER}


def load_run(path) -> dict:
    """The content of a run file: X, y, order, w_star (None if computed), w0 (None: from 0),
    config, outcome.

    Everything is checked here, so that a corrupt file is one InvalidArgument naming it.
    """
    where = _named("run", path)
    f = read_npz(path, "run", ("X", "y", "order", "w_star", "meta"))
    m = f["meta"]
    if m.shape != () or m.dtype.kind != "U":
        raise InvalidArgument(f"{where}: meta is not a JSON string (dtype {m.dtype}, shape "
                              f"{m.shape})")
    try:
        meta = json.loads(str(m))
    except ValueError as err:
        raise InvalidArgument(f"{where}: meta is not valid JSON ({err})") from None
    if not isinstance(meta, dict):
        raise InvalidArgument(f"{where}: meta is not a JSON object (it is a "
                              f"{type(meta).__name__})")
    if meta.get("format") != _FORMAT:
        raise InvalidArgument(f"{where}: unknown run format {meta.get('format')!r}")
    config, outcome = meta.get("config") or {}, meta.get("outcome")
    if not isinstance(config, dict):
        raise InvalidArgument(f"{where}: meta's config is not a JSON object")
    for key, kind in _RUN_KEYS.items():
        v = config.get(key)
        if v is not None and (not isinstance(v, kind) or (kind is not bool
                                                          and isinstance(v, bool))):
            raise InvalidArgument(f"{where}: config {key!r} = {str(v)[:40]!r} is not a "
                                  f"{'number' if kind is _NUMBER else kind.__name__}")
    config = {**config, "proofs": _check_proofs(config.get("proofs"), where)}
    if outcome is not None and not (
            isinstance(outcome, dict)
            and isinstance(outcome.get("violation") or {}, dict)
            and isinstance(outcome.get("mistakes", 0) or 0, int)):
        raise InvalidArgument(f"{where}: meta's outcome is not an object with 'mistakes' and "
                              f"'violation'")
    with _in_file("run", path):
        X, y = check_data(f["X"], f["y"])
        order = check_order(f["order"], X.shape[0])
        ws = f["w_star"]
        ws = check_w_star(ws, X.shape[1]) if ws.size else None
        # run files written before the start was saved have no w0: they ran from 0
        w0 = f.get("w0", np.zeros(0))
        w0 = check_vector("w0", w0, X.shape[1], nonzero=False) if w0.size else None
    return {"X": X, "y": y, "order": order, "w_star": ws, "w0": w0, "config": config,
            "outcome": outcome}


def _proof_paths(entries, directory: Path) -> list | None:
    """Paths to load a run file's (checked) proofs from: the bundled library's files, and the
    recorded texts written into directory."""
    if entries is None:
        return None
    library = _bundled_proofs()
    paths = []
    for e in entries:
        if "bundled" in e:
            paths.append(library[e["bundled"]])
        else:
            p = directory / e["name"]
            p.write_text(e["text"], encoding="utf-8")
            paths.append(p)
    return paths
