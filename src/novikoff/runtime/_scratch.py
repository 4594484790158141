"""Scratch arrays that a run borrows and gives back, so the next run reuses their memory.

Why: the first write to a freshly allocated page costs a page fault, about 1.3 us per 4 KiB on
the development VM.  The monitor's per-chunk arrays (the bookkeeping rows, the judge's slots and
registers, the update log) are allocated anew by every run; on a 1,500-update run their page
faults cost more than the work done in them (docs/runtime.md, Speed).

Contract: arrays from a Scratch are valid while the run that borrowed it holds it, and the same
name gives the same memory again, so a caller copies what must outlive its step.  A run
borrows with ``with borrowed() as scratch:``; a run nested in another (an audit's reference
run) or in another thread gets a Scratch of its own.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

__all__ = ["Scratch", "borrowed"]

# A buffer larger than this is not kept after the run (a long run's chunks amortise its faults).
# The limit is per buffer: a Scratch holds about a dozen names, so what a thread keeps between
# runs is bounded by KEEP_SCRATCHES * 12 * KEEP_BYTES, and is a few MB after typical runs.
KEEP_BYTES = 8 << 20
# Scratches kept per thread (nested runs need one each).
KEEP_SCRATCHES = 4


class Scratch:
    """Named, growable byte buffers viewed as arrays of the asked shape and dtype."""

    __slots__ = ("_bufs",)

    def __init__(self):
        self._bufs: dict[str, np.ndarray] = {}

    def array(self, name: str, shape, dtype=np.float64) -> np.ndarray:
        """An uninitialised array of the given shape, in the memory kept under `name`."""
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        count = 1
        for s in shape:
            count *= int(s)
        nbytes = count * dtype.itemsize
        buf = self._bufs.get(name)
        if buf is None or buf.nbytes < nbytes:
            grown = 0 if buf is None else 2 * buf.nbytes
            # float64-aligned memory, whatever the dtype asked for
            buf = np.empty((max(nbytes, grown, 64) + 7) // 8, np.float64).view(np.uint8)
            self._bufs[name] = buf
        return buf[:nbytes].view(dtype).reshape(shape)

    def trim(self) -> None:
        """Drop the buffers too large to keep between runs."""
        for name in [k for k, b in self._bufs.items() if b.nbytes > KEEP_BYTES]:
            del self._bufs[name]


_local = threading.local()


@contextmanager
def borrowed():
    """A Scratch for the duration of a run (this thread's free one, or a new one)."""
    free = getattr(_local, "free", None)
    if free is None:
        free = _local.free = []
    scratch = free.pop() if free else Scratch()
    try:
        yield scratch
    finally:
        scratch.trim()
        if len(free) < KEEP_SCRATCHES:
            free.append(scratch)
