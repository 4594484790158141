"""How many threads BLAS may use while the runtime works: one, on data large enough to matter.

OpenBLAS starts a thread per core for a large matrix product, and its threads spin while they
wait: on two cores that other processes also load, the separator at 20k x 1000 took 1.5-2.8 x
as long on two threads as on one (benchmarks/bench_blas_threads.py).  The runtime's loops are
single-threaded, so one BLAS thread loses little on an idle machine and much less time than two
lose on a busy one.  A library cannot set OPENBLAS_NUM_THREADS: numpy, and its BLAS, started
before novikoff was imported.  So the runtime's public entries limit the BLAS libraries loaded
in the process to one thread for the length of the call, through threadpoolctl when it is
installed (it restores them after); without it, or when the user chose a number of threads in
the environment, nothing changes.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys

__all__ = ["one_blas_thread"]

# Entries of X from which a call limits BLAS: below, threadpoolctl's set-up (about 7 ms on its
# first call, 16 us after) is not small against the work.
_FROM_ENTRIES = 1 << 16
_CHOSEN_BY_USER = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# The modules whose import may load another BLAS library (SciPy's own OpenBLAS): a controller
# made before one of them came knows only the libraries loaded then.
_LOADERS = ("scipy.linalg", "scipy.optimize", "sklearn", "torch")
_AVAILABLE = importlib.util.find_spec("threadpoolctl") is not None
_CONTROLLER: dict = {}


def one_blas_thread(fn):
    """fn(X, ...) with BLAS on one thread when X has at least _FROM_ENTRIES entries."""
    @functools.wraps(fn)
    def limited(X, *args, **kwargs):
        if (not _AVAILABLE or getattr(X, "size", 0) < _FROM_ENTRIES
                or any(os.environ.get(v) for v in _CHOSEN_BY_USER)):
            return fn(X, *args, **kwargs)
        with _controller().limit(limits=1, user_api="blas"):
            return fn(X, *args, **kwargs)
    return limited


def _controller():
    loaded = tuple(m in sys.modules for m in _LOADERS)
    if _CONTROLLER.get("loaded") != loaded:
        import threadpoolctl  # optional: installed with scikit-learn, or novikoff[fast]

        _CONTROLLER.update(loaded=loaded, controller=threadpoolctl.ThreadpoolController())
    return _CONTROLLER["controller"]
