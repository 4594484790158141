"""The runtime's subcommands: ``novikoff run``, ``novikoff audit``, ``novikoff replay``.

``register(subparsers)`` adds them to the ``novikoff`` command; each handler takes the parsed
arguments and returns the exit code: 0 nothing violated, 1 a violation, 2 bad input (one line on
stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ..errors import InvalidArgument, NovikoffError
from ..report.run_plots import FORMATS, plot_run
from ..report.run_report import write_run_report
from ._audit import audit, check_weights
from ._audit_averaged import _check_average, audit_averaged
from ._audit_batch import _check_steps, audit_batch
from ._audit_dual import _check_alpha, audit_kernel
from ._audit_voted import _check_vote, audit_voted
from ._io import _in_file, load_dataset, read_array, read_npz, save_run
from ._dual_run import parse_kernel
from ._monitor import LemmaViolation
from ._replay import replay
from ._validate import check_flag, check_order, check_positive, check_vector, check_w_star
from ._variants import VARIANTS, run

__all__ = ["register", "run_command", "audit_command", "replay_command"]


def register(subparsers) -> None:
    """Add run, audit and replay to an argparse subparsers object."""
    _add_run(subparsers)
    _add_audit(subparsers)
    _add_replay(subparsers)


def _add_run(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="run a perceptron with every lemma of proofs/ checked at every update",
        description="Run a perceptron on DATA (.npz with X and y, .csv with the label last, or "
                    "a bundled dataset: iris = setosa vs the rest, breast_cancer = benign vs "
                    "malignant), checking the verified lemmas of the library at every update.")
    p.add_argument("data", help="DATA.npz, DATA.csv, iris or breast_cancer")
    p.add_argument("--w-star", metavar="W.npy", help="the separator w* (default: a max-margin "
                                                     "separator, certified)")
    p.add_argument("--variant", choices=tuple(VARIANTS), default="classic",
                   help="the perceptron to run: " + "; ".join(
                       f"{row.name}: {row.summary}" for row in VARIANTS.values()))
    p.add_argument("--kernel", metavar="SPEC", type=_kernel_spec,
                   help="the kernel of --variant kernel: linear, poly:DEGREE[:C] "
                        "((<a, b> + C)^DEGREE, C = 1 by default) or rbf:G (exp(-G||a - b||^2))")
    p.add_argument("--gamma", type=float, help="the margin (default: certified min y<w*,x>)")
    # ETA is parsed by the run (check_positive): a bad value is one line naming it, exit 2
    p.add_argument("--eta", default="1", metavar="ETA",
                   help="the learning rate: an update is w <- w + ETA*y*x (default 1); "
                        "learning_rate.proof's lemmas are monitored, and with ETA != 1 the "
                        "lemmas assuming the step y*x do not apply")
    p.add_argument("--w0", metavar="W0.npy",
                   help="the weights before the first update (default 0); nonzero_start.proof's "
                        "lemmas are monitored, and those assuming w[0] = 0 do not apply")
    p.add_argument("--order", metavar="ORDER", help="example order: a .npy/.txt file of "
                   "indices (repeats allowed), or random[:SEED] (default: 0..n-1)")
    p.add_argument("--online", action="store_true",
                   help="one pass over the order instead of cycling until a clean pass")
    p.add_argument("--max-epochs", type=int, default=1000,
                   help="stop cycling after this many passes (default 1000)")
    p.add_argument("--non-separable", action="store_true",
                   help="data not separable by w*: monitor the hinge-loss bound (TD for w*, "
                        "gamma; gamma minimises the bound when not given)")
    p.add_argument("--exact", action="store_true", help="run in exact rational arithmetic")
    p.add_argument("--bias", action="store_true", help="append a constant feature 1")
    p.add_argument("--normalize", action="store_true", help="scale every row to unit norm")
    p.add_argument("--all-examples", action="store_true",
                   help="check lemmas about one example on every example (not only on the "
                        "examples of updates)")
    _common(p)
    p.add_argument("--save", metavar="RUN.npz",
                   help="save the run (always saved on a violation, by default to "
                        "novikoff-run.npz)")
    p.add_argument("--no-checks", action="store_true",
                   help="run the same engine unmonitored (to time a monitored run against it)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--progress", action="store_true",
                   help="progress on stderr also when it is not a terminal (a line every 2 s)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="draw the lemmas' trajectories: <w*, w_k> against k*gamma, ||w_k||^2 "
                        "against k*R^2, the squeeze behind the mistake bound (.png, .svg or "
                        ".pdf; needs matplotlib: pip install 'novikoff[plot]')")
    p.add_argument("--report", metavar="DIR",
                   help="write DIR/run.html: the run, every lemma checked and the figures")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="list every lemma that is not monitored (by default those whose "
                        "symbols are not run quantities, or that are not verified, are counted "
                        "in one line; --json always lists them)")
    p.set_defaults(handler=run_command)


def _add_audit(subparsers) -> None:
    a = subparsers.add_parser(
        "audit", help="check a trace of any perceptron implementation",
        description="Check a run made by any implementation: data npz (X (n, d), y (n,) in "
                    "{-1, +1}), trace npz (order (T,) the example visited at each step, w (T, "
                    "d) the weights after each visit, optionally td (T,) the implementation's TD "
                    "after each visit).  Reports violations of the update rule (kind 'rule'), "
                    "of the lemmas (kind 'lemma') and of TD's definition (kind 'td').")
    a.add_argument("--data", required=True, metavar="D.npz")
    a.add_argument("--trace", required=True, metavar="T.npz")
    a.add_argument("--w-star", metavar="W.npy")
    a.add_argument("--variant", choices=tuple(VARIANTS), default="classic",
                   help="batch: the trace has w (K, d), the weights after each batch step "
                        "(optionally converged: the run stopped with no mistake), judged by "
                        "batch.proof (setting batch_run); kernel: the trace has order (T,) and "
                        "alpha (T, n), the dual counts after each visit (alpha_i counts the "
                        "updates on example i, f(x) = sum_i alpha_i*y_i*K(x_i, x); signed "
                        "alpha_i*y_i: pass alpha*y), judged by kernel.proof; see --kernel; "
                        "averaged: order, w and average (T, d), the implementation's average "
                        "after each visit, judged by averaged.proof (see --average-convention); "
                        "voted: order, w and optionally the final vote, vectors (K+1, d) and "
                        "counts (K+1,), judged by voted.proof (see --vote-counts)")
    a.add_argument("--kernel", metavar="SPEC", type=_kernel_spec,
                   help="the kernel of --variant kernel: linear, poly:DEGREE[:C] or rbf:G "
                        "(w* is then given as dual coefficients beta, length n)")
    a.add_argument("--gamma", type=float)
    a.add_argument("--non-separable", action="store_true",
                   help="data not separable by w*: judge by the hinge-loss bound (TD for w*, "
                        "gamma over the examples presented; gamma chosen if not given)")
    a.add_argument("--w0", metavar="W0.npy",
                   help="the implementation's initial weights (default 0); lemmas assuming "
                        "w[0] = 0 then do not apply")
    a.add_argument("--eta", default="1", metavar="ETA",
                   help="the implementation's learning rate: an update is w + eta*y*x (default "
                        "1); lemmas assuming the step y*x then do not apply")
    a.add_argument("--bias", action="store_true",
                   help="the implementation appends a constant feature 1 (its weights, w0 and "
                        "w* have d + 1 entries)")
    a.add_argument("--float32", action="store_true",
                   help="the implementation computes in float32 (rounding bounds with unit "
                        "roundoff 2^-24)")
    a.add_argument("--average-convention", choices=("after", "in-use"),
                   help="--variant averaged (the trace also has average (T, d), the "
                        "implementation's average after each visit): the mean of the weights "
                        "after each visit (after, the default: scikit-learn's "
                        "SGDClassifier(average=True)) or of those in use at each visit (in-use: "
                        "seed 003's, novikoff run --variant averaged)")
    a.add_argument("--vote-counts", choices=("in-use", "freund-schapire"),
                   help="--variant voted (the trace may also have the final vote: vectors "
                        "(K+1, d) and counts (K+1,)): each vector counts the visits at which it "
                        "was in use (in-use, the default: novikoff run --variant voted), or the "
                        "visit of an update counts for the new vector (freund-schapire)")
    _common(a)
    a.set_defaults(handler=audit_command)


def _add_replay(subparsers) -> None:
    r = subparsers.add_parser(
        "replay", help="re-run a saved run in exact rational arithmetic",
        description="Re-run a run saved by `novikoff run` in exact rational arithmetic, to tell "
                    "round-off from a real violation.")
    r.add_argument("file", metavar="RUN.npz")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.add_argument("--progress", action="store_true",
                   help="progress on stderr even when it is not a terminal (a line every 2 s)")
    r.set_defaults(handler=replay_command)


def _common(p) -> None:
    p.add_argument("--proofs", nargs="+", metavar="FILE.proof",
                   help="lemma files to monitor (default: the bundled library)")
    p.add_argument("--include-unverified", action="store_true",
                   help="also monitor lemmas whose proof the kernel did not verify")
    p.add_argument("--json", action="store_true", help="machine-readable output")


# ------------------------------------------------------------------------------- helpers

def _kernel_spec(text: str) -> str:
    """--kernel SPEC: not empty (an empty SPEC would read as no --kernel at all)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is empty: a kernel is linear, "
                                         f"poly:DEGREE[:C] or rbf:G")
    return text


def _missing_folder(option: str, path) -> str | None:
    """Why an output file cannot be written in its folder (checked before the run), or None."""
    folder = Path(path).expanduser().parent
    if not folder.exists():
        return f"{option} {path}: no such folder {str(folder)!r}"
    if not folder.is_dir():
        return f"{option} {path}: {str(folder)!r} is not a folder"
    return None


def _fail(message: str) -> int:
    print(f"novikoff: error: {message}", file=sys.stderr)
    return 2


def _guard(fn):
    """Turn bad input into exit 2 with one line on stderr."""
    def wrapped(args) -> int:
        try:
            return fn(args)
        except BrokenPipeError:  # the reader went away (| head): not an error of ours
            import os
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except InvalidArgument as err:
            return _fail(str(err))
        except NovikoffError as err:  # ProofSyntaxError and friends: the message is the report
            return _fail(str(err).splitlines()[0] if str(err) else type(err).__name__)
        except (OSError, ValueError) as err:
            return _fail(str(err))
    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


def _vector_file(path, name: str, check):
    """check(the array of the file at path), its errors naming the file."""

    arr = read_array(path, name)
    with _in_file(name, path):
        return check(arr)


def _order(spec, n: int):
    if spec is None:
        return None
    if spec == "random" or spec.startswith("random:"):
        seed = spec.partition(":")[2]
        try:
            seed = int(seed) if seed else None
        except ValueError:
            raise InvalidArgument(f"order={spec!r}: the seed is not an integer") from None
        if seed is not None and seed < 0:
            raise InvalidArgument(f"order={spec!r}: random:SEED needs a seed >= 0")
        return np.random.default_rng(seed).permutation(n)
    return _vector_file(spec, "order", lambda v: check_order(v, n))


class _Progress:
    """Progress on stderr for runs longer than a second: one line rewritten in place on a
    terminal; with --progress also when stderr is not a terminal (a line every 2 s, for logs)."""

    def __init__(self, enabled: bool, forced: bool = False, clock=None):
        self.tty = sys.stderr.isatty()
        self.enabled = enabled and (self.tty or forced)
        # A log's lines 1.75 s apart at least, and at most 2 s when the work between two
        # reports takes up to 0.25 s (the separator's units; the run's chunks aim at 0.5 s).
        self.every = 0.2 if self.tty else 1.75
        self.clock = clock or time.perf_counter  # a test's fake clock
        self.start = self.clock()
        self.last = 0.0
        self.shown = False

    def _show(self, text: str) -> None:
        now = self.clock()
        if not self.enabled or now - self.start < 1.0 or now - self.last < self.every:
            return
        self.last, self.shown = now, True
        text = f"  {text}  ({now - self.start:.1f} s)"
        if self.tty:
            print(f"\r{text:<70}", end="", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)

    def __call__(self, visits: int, mistakes: int, epochs: int) -> None:
        self._show(f"epoch {epochs}  visits {visits:,}  mistakes {mistakes:,}")

    def phase(self, name: str, fraction: float) -> None:
        """A phase before the run (the separator's solve)."""
        self._show(f"{name} {fraction:.0%}")

    def done(self) -> None:
        if self.shown and self.tty:
            print("\r" + " " * 70 + "\r", end="", file=sys.stderr, flush=True)


def _fmt(v, digits: int = 6) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


# ------------------------------------------------------------------------------- run

@_guard
def run_command(args) -> int:
    """novikoff run DATA ..."""
    kernel = args.variant == "kernel"
    flags, reason = VARIANTS[args.variant].run_flags_refused
    refused = [flag for flag in flags if getattr(args, flag[2:].replace("-", "_"))]
    if refused:
        return _fail(f"{refused[0]}: not available for the {args.variant} perceptron ({reason})")
    if args.no_checks and (args.report or args.plot):
        return _fail(f"{'--report' if args.report else '--plot'}: shows the monitored lemmas, "
                     f"which --no-checks turns off")
    for option, path in (("--save", args.save), ("--plot", args.plot)):
        missing = path and _missing_folder(option, path)  # refused before the run, not after
        if missing:
            return _fail(missing)
    if args.plot:  # refuse a plot that cannot be drawn before the run, not after it
        if Path(args.plot).suffix.lower() not in FORMATS:
            return _fail(f"--plot {args.plot}: the file name must end in {', '.join(FORMATS)}")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return _fail("--plot needs matplotlib: pip install 'novikoff[plot]'")
    if args.report:
        try:
            Path(args.report).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return _fail(f"--report {args.report}: {exc.strerror or exc}")
    X, y, name = load_dataset(args.data, bias=args.bias, normalize=args.normalize)
    # The kernel perceptron's separator is its dual coefficients (length n), checked there.
    w_star = (_vector_file(args.w_star, "w_star", (lambda v: v) if kernel else
                           lambda v: check_w_star(v, X.shape[1]))
              if args.w_star else None)
    w0 = (_vector_file(args.w0, "w0", lambda v: check_vector("w0", v, X.shape[1],
                                                             nonzero=False))
          if args.w0 else None)
    order = _order(args.order, X.shape[0])
    config = {"variant": args.variant, "gamma": args.gamma,
              "eta": check_positive(args.eta, "eta"),
              "cyclic": not args.online,
              "max_epochs": args.max_epochs, "separable": not args.non_separable,
              "include_unverified": args.include_unverified,
              "proofs": [str(Path(p).resolve()) for p in args.proofs] if args.proofs else None}
    progress = _Progress(not args.no_progress and not args.json, forced=args.progress)
    violation = None
    result = None
    try:
        result = run(X, y, w_star=w_star, w0=w0, order=order, exact=args.exact,
                     progress=progress, all_examples=args.all_examples, kernel=args.kernel,
                     checks=not args.no_checks, **config)
    except LemmaViolation as err:
        violation = err.violation
    finally:
        progress.done()
    saved = None
    if args.save or (violation is not None and
                     "--save" not in VARIANTS[args.variant].run_flags_refused[0]):
        outcome = {"mistakes": result.mistakes if result else None,
                   "violation": violation.as_dict() if violation else None}
        saved = save_run(args.save or "novikoff-run.npz", X, y, order=order, w_star=w_star,
                         w0=w0, config=config, outcome=outcome)
    if args.json:
        out = {"data": name, "n": int(X.shape[0]), "d": int(X.shape[1]),
               "violations": [violation.as_dict()] if violation else [],
               "saved": str(saved) if saved else None}
        if result is not None:
            out.update(result.as_dict())
        print(json.dumps(out, indent=2, default=_json_default))
    elif violation is not None:
        print(f"VIOLATION: {violation.message()}")
        if saved:
            print(f"run saved to {saved}; `novikoff replay {saved}` re-runs it in exact "
                  f"arithmetic")
    else:
        _print_result(name, X, result, saved, verbose=args.verbose)
    if result is not None:
        _figures(args, X, y, result, name)
    return 1 if violation is not None else 0


def _figures(args, X, y, result, name) -> None:
    """--plot and --report, once the run is done (messages on stderr: stdout may be JSON)."""
    if args.plot:
        path = plot_run(X, y, result, args.plot)
        print(f"plot written to {path}", file=sys.stderr)
    if args.report:
        path = write_run_report(X, y, result, args.report, data=name)
        print(f"report written to {path}", file=sys.stderr)


def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


# Reasons a lemma is not monitored that say only that it is about something else than a run of
# this engine (quantities no engine keeps, or a proof that did not verify): counted in one line
# unless --verbose.  Any other reason (an index, a kind, a per-update name) is listed.
_SUMMARISED = (("no run quantity is bound to", "whose symbols are not run quantities"),
               ("not verified", "not verified"),
               ("it has a sum", "with a sum (sum(i < n, ...))"),
               ("about the batch perceptron only", "about batch steps (--variant batch)"),
               ("about the averaged perceptron only",
                "about an averaged run's visits (--variant averaged)"),
               ("about the voted perceptron only", "about the vote (--variant voted)"),
               ("about one example per update", "about one example per update"))


def _not_monitored_lines(entries, verbose: bool) -> list:
    lines, counted = [], {what: 0 for _, what in _SUMMARISED}
    for m in entries:
        what = next((w for key, w in _SUMMARISED if key in m["reason"]), None)
        if what is None or verbose:
            lines.append(f"  not monitored   {m['lemma']}: {m['reason']}")
        else:
            counted[what] += 1
    lines += [f"  not monitored   {c} lemma{'s' if c > 1 else ''} {what} (--verbose lists "
              f"them)" for what, c in counted.items() if c]
    return lines


def _print_result(name, X, res, saved, verbose: bool = False) -> None:
    mon = res.monitor or {}
    monitored = mon.get("monitored", [])
    applied = [m for m in monitored if m["applies"]]
    mode = "cyclic" if res.cyclic else "online"
    print(f"data       {name}: {X.shape[0]} examples, d = {X.shape[1]}")
    if res.variant == "batch":
        mode = "a step over every example"
    print(f"run        {res.variant} perceptron, {mode}, {res.epochs} epoch(s), "
          f"{res.visits:,} visits, {'converged' if res.converged else 'not converged'}"
          f"{' (exact arithmetic)' if res.exact else ''}")
    if res.variant == "batch":
        print(f"rule       w <- w + {res.eta!r}*sum(y*x over the misclassified examples) from 0")
    elif res.variant == "averaged":
        print(f"average    of the weights in use at the {res.visits:,} visits: ||a|| = "
              f"{_fmt(float(np.linalg.norm(res.w)))} (res.w; the last weights: "
              f"||w|| = {_fmt(float(np.linalg.norm((res.monitor or {}).get('weights', []))))})")
    elif getattr(res, "eta", 1.0) != 1.0 or getattr(res, "w0", None) is not None:
        start = "0" if res.w0 is None else f"w0 (||w0|| = {_fmt(float(np.linalg.norm(res.w0)))})"
        print(f"rule       w <- w + {res.eta!r}*y*x from {start}")
    # every lemma giving the tightest bound (on separable data the hinge bound, with TD = 0, is
    # the mistake bound: naming one of them would depend on the order the files load)
    bound_by = ", ".join(sorted(name for name, b in res.bounds.items()
                                if res.bound is not None and b <= res.bound * (1 + 1e-12)))
    if res.variant == "batch":
        print(f"steps      {res.mistakes}  ({(res.monitor or {}).get('corrections', '-')} "
              f"corrections)")
    else:
        print(f"mistakes   {res.mistakes}")
    if res.variant == "voted":
        counts = res.vote.counts
        shown = " ".join(str(c) for c in counts[:8]) + (" ..." if len(counts) > 8 else "")
        print(f"vote       {len(counts):,} vectors, counts {shown} (sum {int(counts.sum()):,})")
    print(f"bound      {_fmt(res.bound)}" + (f"  ({bound_by})" if bound_by else ""))
    print(f"ratio      {_fmt(res.ratio, 4)}")
    print(f"gamma      {_fmt(res.gamma)}   R {_fmt(res.R)}" +
          (f"   TD {_fmt(res.td)}" if res.td else ""))
    if res.monitor is None:
        print(f"checks     off (--no-checks): the run alone took {res.seconds:.3g} s")
        return
    print(f"checks     {res.checks:,} invariant checks of {len(applied)} lemma(s), "
          f"no violation")
    for m in monitored:
        if not m["applies"]:
            print(f"  not applicable  {m['lemma']} ({m['source']}): {m['inapplicable']}")
    for line in _not_monitored_lines(mon.get("not_monitorable", []), verbose):
        print(line)
    if saved:
        print(f"saved      {saved}")


# ------------------------------------------------------------------------------- audit

@_guard
def audit_command(args) -> int:
    """novikoff audit --data D.npz --trace T.npz ..."""
    if args.variant == "averaged":
        return _audit_averaged(args)
    if args.average_convention:
        return _fail(f"--average-convention: only for --variant averaged (not {args.variant})")
    if args.variant in ("batch", "kernel"):
        return _audit_batch_or_kernel(args)
    if args.kernel:
        return _fail(f"--kernel: only for --variant kernel (not {args.variant})")
    if args.vote_counts and args.variant != "voted":
        return _fail(f"--vote-counts: only for --variant voted (not {args.variant})")
    if args.variant == "voted" and args.non_separable:
        return _fail("--non-separable: not available for --variant voted (the vote's lemmas "
                     "are judged on separable data)")
    # The files are read (and every way they can be bad reported) as `run` reads its inputs.
    X, y, _ = load_dataset(args.data)
    trace = read_npz(args.trace, "trace", VARIANTS[args.variant].trace_arrays)
    with _in_file("trace", args.trace):  # the trace's own errors name its file
        order = check_order(trace["order"], X.shape[0])
        check_weights(trace["w"], order.shape[0], X.shape[0], X.shape[1], args.bias)
        if args.variant == "voted":
            _check_vote(trace.get("vectors"), trace.get("counts"), X.shape[1] + bool(args.bias))
    d = X.shape[1] + bool(args.bias)
    w_star = (_vector_file(args.w_star, "w_star", lambda v: check_w_star(v, d))
              if args.w_star else None)
    w0 = (_vector_file(args.w0, "w0", lambda v: check_vector("w0", v, d, nonzero=False))
          if args.w0 else None)
    options = dict(w_star=w_star, td=trace.get("td"), gamma=args.gamma, proofs=args.proofs,
                   include_unverified=args.include_unverified, w0=w0,
                   eta=check_positive(args.eta, "eta"), bias=args.bias, float32=args.float32)
    if args.variant == "voted":
        report = audit_voted(X, y, order, trace["w"], vectors=trace.get("vectors"),
                             counts=trace.get("counts"), convention=args.vote_counts or "in-use",
                             **options)
    else:
        report = audit(X, y, order, trace["w"], variant=args.variant,
                       separable=not args.non_separable, **options)
    head = [f"trace      {report.visits} visits, {report.updates} updates"]
    r = report.rule
    if r.get("w0") is not None or r.get("eta", 1.0) != 1.0 or r.get("bias") or \
            r.get("arithmetic", "float64") != "float64":
        head.append(f"declared   w <- w + {r['eta']!r}*y*x from "
                    f"{'w0' if r['w0'] is not None else '0'}"
                    f"{', x with a bias column 1' if r['bias'] else ''}, {r['arithmetic']}")
    return _print_audit(args, report, head)


_SHOWN = 5  # findings of one kind an audit prints (--json lists them all)


def _print_audit(args, report, head: list) -> int:
    """Print an audit report of any variant (JSON with --json); the exit code."""
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=_json_default))
        return 1 if report.violations else 0
    for line in head:
        print(line)
    for note in getattr(report, "notes", ()):
        print(f"note       {note}")
    # gamma in full: auditing again with --gamma must judge by the same TD
    print(f"gamma      {_fmt(report.gamma, 17)}   R {_fmt(report.R)}")
    print(f"checks     {report.checks:,} invariant checks")
    print(f"rule       {report.rule_violations} violation(s) of the update rule")
    if hasattr(report, "average_violations"):
        print(f"average    {report.average_violations} visit(s) whose average is not the mean")
    print(f"lemmas     {report.lemma_violations} lemma(s) violated")
    vote = getattr(report, "vote", None)
    if vote is not None:
        held = (f"{vote['vectors']} vectors" if "vectors" in vote else
                "not in the trace (no vectors, counts)")
        print(f"vote       {held} for {vote['updates']} update(s), {vote['convention']} "
              f"counts: {report.vote_violations} entry(ies) not the vote's definition")
    if report.td_violations:
        print(f"td         {report.td_violations} visit(s) report a TD that is not its "
              f"definition")
    if report.undetermined:
        print(f"undecided  {report.undetermined} {'step' if args.variant == 'batch' else 'visit'}"
              f"(s) within the rounding bound of the prediction (not violations: a correct "
              f"float implementation may decide either way)")
    for p in report.patterns:
        print(f"  [pattern] {p['message']}")
    shown = {}  # kind -> findings printed: past _SHOWN of a kind, one line counts the rest
    for v in report.violations:
        shown[v["kind"]] = shown.get(v["kind"], 0) + 1
        if shown[v["kind"]] <= _SHOWN:
            print(f"  [{v['kind']}] {v['message']}")
    for kind, listed in shown.items():
        total = report.rule_violations if kind == "rule" else listed
        if total > _SHOWN:
            print(f"  [{kind}] ... {total - _SHOWN} more {kind} finding(s) (--json lists "
                  f"{'them' if total == listed else f'the first {listed}'})")
    for v in report.undetermined_visits:
        print(f"  [undetermined] {v['message']}")
    for m in report.monitor.get("monitored", []):
        if not m["applies"]:
            print(f"  not applicable  {m['lemma']}: {m['inapplicable']}")
    return 1 if report.violations else 0


def _audit_averaged(args) -> int:
    """novikoff audit --variant averaged: the weights as the classic audit, the averages against
    the declared convention's mean, averaged.proof's lemmas at every visit."""
    refused = _refused_audit_option(args)
    if refused:
        return _fail(refused)
    if check_positive(args.eta, "eta") != 1.0:
        return _fail(f"--eta {args.eta}: not available for --variant averaged (its updates add "
                     f"y*x)")
    X, y, _ = load_dataset(args.data)
    trace = read_npz(args.trace, "trace", VARIANTS[args.variant].trace_arrays)
    with _in_file("trace", args.trace):
        order = check_order(trace["order"], X.shape[0])
        check_weights(trace["w"], order.shape[0], X.shape[0], X.shape[1])
    w_star = (_vector_file(args.w_star, "w_star", lambda v: check_w_star(v, X.shape[1]))
              if args.w_star else None)
    convention = args.average_convention or "after"
    with _in_file("trace", args.trace):  # the trace's own errors name its file
        _check_average(trace["average"], order.shape[0], X.shape[1])
    report = audit_averaged(X, y, order, trace["w"], trace["average"], w_star=w_star,
                            convention=convention, gamma=args.gamma, proofs=args.proofs,
                            include_unverified=args.include_unverified)
    return _print_audit(args, report, [
        f"trace      {report.visits} visits, {report.updates} updates, averages of the weights "
        f"{'after' if convention == 'after' else 'in use at'} each visit"])


def _refused_audit_option(args) -> str | None:
    """The error for the first option the variant's audit does not take, or None."""
    flags, reason = VARIANTS[args.variant].audit_flags_refused
    refused = [f for f in flags if getattr(args, f[2:].replace("-", "_"), None)]
    return (f"{refused[0]}: not available for --variant {args.variant} ({reason})"
            if refused else None)


def _audit_batch_or_kernel(args) -> int:
    """novikoff audit --variant batch|kernel: read the files, audit, print as the classic audit."""
    refused = _refused_audit_option(args)
    if refused:
        return _fail(refused)
    eta = check_positive(args.eta, "eta")
    X, y, _ = load_dataset(args.data)
    common = dict(gamma=args.gamma, proofs=args.proofs,
                  include_unverified=args.include_unverified)
    if args.variant == "batch":
        trace = read_npz(args.trace, "trace", VARIANTS[args.variant].trace_arrays)
        with _in_file("trace", args.trace):  # the trace's own errors name its file
            W = _check_steps(trace["w"], X.shape[1])
            converged = "converged" in trace and check_flag(trace["converged"], "converged")
        w_star = (_vector_file(args.w_star, "w_star", lambda v: check_w_star(v, X.shape[1]))
                  if args.w_star else None)
        report = audit_batch(X, y, W, eta=eta, w_star=w_star, converged=converged, **common)
        head = (f"trace      {report.visits} batch steps, {report.rule['corrections']} "
                f"corrections{' (converged)' if converged else ''}")
    else:
        if eta != 1.0:
            return _fail(f"--eta {args.eta}: not available for --variant kernel (an update adds "
                         f"1 to alpha_i)")
        if not args.kernel:
            return _fail("--kernel: required with --variant kernel (linear, poly:DEGREE[:C] or "
                         "rbf:G)")
        kern = parse_kernel(args.kernel)
        trace = read_npz(args.trace, "trace", VARIANTS[args.variant].trace_arrays)
        with _in_file("trace", args.trace):
            order = check_order(trace["order"], X.shape[0])
            alpha = _check_alpha(trace["alpha"], order.shape[0], X.shape[0], y)
        w_star = _vector_file(args.w_star, "w_star", lambda v: v) if args.w_star else None
        report = audit_kernel(X, y, order, alpha, kernel=kern, w_star=w_star, **common)
        head = (f"trace      {report.visits} visits, {report.updates} updates, kernel "
                f"{report.rule['kernel']} (alpha: unsigned counts)")
    return _print_audit(args, report, [head])


# ------------------------------------------------------------------------------- replay

@_guard
def replay_command(args) -> int:
    """novikoff replay RUN.npz"""
    progress = _Progress(not args.json, forced=args.progress)
    try:
        out = replay(args.file, progress=progress)
    finally:
        progress.done()
    if args.json:
        print(json.dumps(out, indent=2, default=_json_default))
    else:
        ex = out["exact"]
        print(f"exact replay: {ex['mistakes']} mistakes (float run: "
              f"{_fmt(out['mistakes_float'])}), {ex['checks']:,} exact checks")
        print(f"verdict: {out['verdict']}")
        for v in (ex.get("monitor") or {}).get("violations", []):
            print(f"  {v['message']}")
    return 1 if out["violated"] else 0
