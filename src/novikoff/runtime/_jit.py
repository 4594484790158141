"""numba, optional and imported on first use: compiled twins of functions written in Python.

A module marks with ``@jit(...)`` the functions numba may compile.  They stay plain Python
functions (the fallback runs them as written); ``compiled(fn)`` is numba's twin, and the first
such call imports numba and wraps every marked function of fn's module, each twin calling the
others' twins.  Importing numba costs about 0.5 s of CPU and loading the machine code from
numba's cache (``cache=True``) another 0.3 s: a run too small to repay that never pays it.

numba is optional (pip install novikoff[fast]); NOVIKOFF_NO_NUMBA=1 makes it unavailable even
when installed (CI tests both).
"""

from __future__ import annotations

import importlib.util
import os
import types

__all__ = ["AVAILABLE", "jit", "compiled", "loaded", "worth_compiling"]

AVAILABLE = (os.environ.get("NOVIKOFF_NO_NUMBA", "") in ("", "0")
             and importlib.util.find_spec("numba") is not None)

# A process that makes many small calls (fuzzing, a notebook) pays numba's start-up once, when
# its calls on the Python path add up to this (each counts work / its threshold, plus a fixed
# part for the call's own cost: some 50 small calls, a dozen small runs).
_PYTHON_PATH_BUDGET = 1.0
_PER_CALL = 0.02
_PYTHON_PATH_SPENT = [0.0]
_MARKED: dict = {}    # module name -> {function name: (function, numba options)}
_COMPILED: dict = {}  # (module name, function name) -> numba's dispatcher


def jit(**options):
    """Mark a module-level function for numba (njit with these options); return it unchanged."""
    def mark(fn):
        _MARKED.setdefault(fn.__module__, {})[fn.__name__] = (fn, options)
        return fn
    return mark


def loaded() -> bool:
    """Whether numba's twins exist in this process (then a compiled call costs no start-up)."""
    return bool(_COMPILED)


def worth_compiling(work: float, threshold: float) -> bool:
    """Whether a call of this much work should run compiled: when numba is in use already, the
    work reaches the threshold, or the process has done enough small work to repay the start-up
    (this call counts toward that).  Only for twins that compute the same floats as the Python
    they replace (the judge, the bookkeeping): the perceptron's loop, whose two versions may
    round a near-tie apart, is chosen by the run alone (_loops.run_visits)."""
    if not AVAILABLE:
        return False
    if loaded() or work >= threshold:
        return True
    _PYTHON_PATH_SPENT[0] += work / threshold + _PER_CALL
    return _PYTHON_PATH_SPENT[0] >= _PYTHON_PATH_BUDGET


def compiled(fn):
    """numba's twin of a marked function (ImportError when numba is not available)."""
    key = (fn.__module__, fn.__name__)
    if key not in _COMPILED:
        if not AVAILABLE:
            raise ImportError("numba is not installed (pip install 'novikoff[fast]') or "
                              "NOVIKOFF_NO_NUMBA is set")
        _wrap_module(fn.__module__, fn.__globals__)
    return _COMPILED[key]


def _wrap_module(module: str, namespace: dict) -> None:
    import numba

    # The twins read their globals from a copy of the module's namespace in which every marked
    # function is its twin: numba resolves a call to a global when it compiles the caller.
    scope = dict(namespace)
    for name, (fn, options) in _MARKED[module].items():
        twin = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
        twin.__qualname__, twin.__doc__ = fn.__qualname__, fn.__doc__
        scope[name] = _COMPILED[(module, name)] = numba.njit(**options)(twin)
