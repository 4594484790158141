"""Make bookkeeping_golden.npz: the bookkeeping of a chunk as Bookkeeper.chunk computed it at
commit f65809a (numpy, before the compiled version), on 40 chunks, some with NaN, inf, -0,
subnormal and huge entries.  tests/test_runtime_scratch.py checks both current versions against
it bit for bit.  Regenerate only when the error bounds are changed on purpose:

    git show f65809a:src/novikoff/runtime/_bounds.py > src/novikoff/runtime/_bounds_f65809a.py
    python tests/data/make_bookkeeping_golden.py
    rm src/novikoff/runtime/_bounds_f65809a.py
"""
from pathlib import Path

import numpy as np

from novikoff.runtime import _bounds_f65809a as old

ROWS = [("k", 0, None), ("<w_star, w[k]>", 1, 2), ("<w[k], w[k]>", 3, 4), ("<w_star, x>", 5, 6),
        ("<x, x>", 7, 8), ("<w_star, w[k+1]>", 9, 10), ("<w[k+1], w[k+1]>", 11, 12),
        ("<x, w[k]>", 13, 14), ("<x, w[k+1]>", 15, 16), ("<w[k], w[k+1]>", 17, 18)]
rng = np.random.default_rng(20261122)
special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, 1e-310, 1e300, -1e300, 1e-300])
cases = {}
for c in range(40):
    L = int(rng.integers(1, 33))
    d = int(rng.choice([1, 3, 20, 100, 1000, 123456]))
    s = float(rng.random() * 10.0 ** rng.integers(-6, 6))
    yv = rng.choice([-1.0, 1.0], L)
    scale = 10.0 ** rng.integers(-8, 9)
    p = rng.standard_normal(L) * scale
    m = rng.standard_normal(L) * 10.0 ** rng.integers(-3, 3)
    nx2 = rng.random(L) * scale
    if c >= 30:  # special values in some entries
        for arr in (p, m, nx2):
            where = rng.random(L) < 0.2
            arr[where] = rng.choice(special, where.sum())
    state = np.array([float(rng.integers(0, 10 ** 6)), *(rng.random(6) * 10.0 ** rng.integers(-9, 9))])
    if c % 7 == 0:
        state[1:] = 0.0  # a run's first chunk
    y = yv.copy()
    stats = old.DataStats(None, np.ones(1), s, d, R_hint=1.0)
    keeper = old.Bookkeeper(stats, y, d, gamma=0.5, zero_loss=True)
    keeper.k = int(state[0])
    keeper.a, keeper.e_a, keeper.q, keeper.e_q, keeper.D, keeper.N = (float(v) for v in state[1:])
    with np.errstate(all="ignore"):
        env_u, env_s = keeper.chunk(np.arange(L), p.copy(), m=m.copy(), nx2=nx2.copy())
    out = np.empty((19, L))
    for name, vi, ei in ROWS:
        v, e = env_u[name]
        out[vi] = v
        if ei is not None:
            out[ei] = e
    ends = np.array([keeper.a, keeper.e_a, keeper.q, keeper.e_q, keeper.D, keeper.N])
    for key, val in dict(y=yv, p=p, m=m, nx2=nx2, state=state, s_d=np.array([s, d]), out=out, ends=ends).items():
        cases[f"{c}_{key}"] = val
np.savez_compressed(Path(__file__).with_name("bookkeeping_golden.npz"), **cases)
print("saved", len(cases) // 8, "cases")
