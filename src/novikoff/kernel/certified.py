"""Decisions that replay a stored certificate before they ask a solver.

``entails`` and ``identity`` are ``solver``'s, but when the ledger holds a certificate for the
obligation's statement (keyed by the statement's hash) and ``certificates.check`` accepts it, the
verdict is 'valid' on the certificate alone (basis 'certified') and no solver is asked.  Every
other 'valid' verdict rests on Z3 (basis 'solver') or on SymPy's normal form ('sympy'), and the
ledger counts it, so that the checker can say what each verified step rests on.  Certificates in
the ledger come from files anyone can edit: each is checked every time it is used.

A check whose facts are satisfiable is answered 'invalid' by a stored model that
``certificates.check_model`` accepts, with no solver asked (basis 'model'): a consistency check
(no goal: the facts are consistent), or a decision whose goal does not follow (the statement's
facts include the negated goal, so the model is a counterexample).  'invalid' never verifies
anything: it keeps a step from being verified, or shows that facts are consistent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import solver
from .certificates import CertificateError, check_facts, check_model
from .solver import Verdict
from .statements import NoStatement, statement_of

__all__ = ["LEDGER", "Ledger", "NO_CERTIFICATE", "NO_MODEL", "entails", "identity"]


@dataclass
class Ledger:
    """The certificates the kernel may replay, and what the valid verdicts rested on.

    store: statement key -> certificate (untrusted: checked on every use).  recording: keep the
    statements of the verdicts no certificate backs (pending), for `novikoff certify`.  used:
    key -> certificate of every replay accepted.  uncertified: how many 'valid' verdicts rested
    on a solver or on SymPy (the checker compares it before and after a step)."""

    store: dict = field(default_factory=dict)
    # Certificates every file may replay besides its own (`novikoff grade`: the reference's,
    # for the students' decisions that are the reference's).
    shared: dict = field(default_factory=dict)
    recording: bool = False
    pending: dict = field(default_factory=dict)  # key -> statement text
    labels: dict = field(default_factory=dict)  # key -> where it was met (file:line:col)
    # Recording: key -> statement text of every certificate replayed, and the statements a
    # solver found satisfiable (a model), on which no certificate may ever be accepted.
    statements: dict = field(default_factory=dict)
    satisfiable: dict = field(default_factory=dict)
    used: dict = field(default_factory=dict)
    refused: dict = field(default_factory=dict)  # key -> why its certificate was refused
    # Recording: key -> statement text of every check that a solver found satisfiable (a
    # consistency check, a decision whose goal does not follow) and no stored model backs, for
    # `novikoff certify` to find a model.
    unmodelled: dict = field(default_factory=dict)
    uncertified: int = 0
    certified: int = 0
    modelled: int = 0  # checks answered 'invalid' by a stored model
    # A 'valid' verdict that no certificate backs is 'unknown' (check --require-certificates).
    required: bool = False
    # Untrusted: statement text -> certificate or None, asked when none is stored (tests search
    # on the fly with it); what it returns is checked like a stored certificate.
    searcher: object = None
    # Untrusted, the same for a model of a consistency check that a solver could not decide, or
    # found satisfiable where certificates are required; what it returns is checked like a
    # stored model.
    model_searcher: object = None

    @property
    def active(self) -> bool:
        return bool(self.store) or self.recording or self.searcher is not None


LEDGER = Ledger()


def _statement(hypotheses, goal, nats):
    """(key, statement) of the obligation, or None when it has no polynomial statement."""
    try:
        statement = statement_of(hypotheses, goal, nats)
    except NoStatement:
        return None
    return statement.key, statement


def _is_model(entry) -> bool:
    return isinstance(entry, dict) and entry.get("by") == "model"


def _accepted(obligation, model: bool) -> bool:
    """Whether the ledger stores, for the obligation's statement, a model (model) or a
    certificate (not model) that its checker accepts; recorded as used, or as refused."""
    if obligation is None:
        return False
    key, statement = obligation
    entry = LEDGER.store.get(key)
    if entry is None or _is_model(entry) != model:
        return False
    try:
        (check_model if model else check_facts)(statement.facts, statement.nats, entry,
                                                  statement.integers)
    except CertificateError as exc:
        LEDGER.refused[key] = str(exc)
        return False
    LEDGER.used[key] = entry
    if LEDGER.recording:
        LEDGER.statements[key] = statement.text
    return True


def _replay(obligation) -> Verdict | None:
    """'valid' by a stored certificate that the checker accepts."""
    if not _accepted(obligation, model=False):
        return None
    LEDGER.certified += 1
    return Verdict("valid", reason="certified", basis="certified")


def _replay_model(obligation) -> Verdict | None:
    """'invalid' (the statement's facts are satisfiable) by a stored model that the checker
    accepts."""
    if not _accepted(obligation, model=True):
        return None
    LEDGER.modelled += 1
    return Verdict("invalid", reason="model", basis="model")


NO_CERTIFICATE = ("rests on a solver alone: no stored certificate backs it, and certificates "
                  "are required (`novikoff certify` searches one)")
NO_MODEL = ("only a solver found values that satisfy them: no stored model shows it, and "
            "certificates are required (`novikoff certify` searches one)")


def _searched(verdict: Verdict, obligation) -> Verdict:
    """The verdict, or 'certified' when the searcher finds a certificate the checker accepts."""
    if verdict.answer != "valid" or LEDGER.searcher is None or obligation is None:
        return verdict
    certificate = LEDGER.searcher(obligation[1].text)
    if certificate is None:
        return verdict
    LEDGER.store[obligation[0]] = certificate
    return _replay(obligation) or verdict


def _uncertified(verdict: Verdict, obligation) -> Verdict:
    if verdict.basis == "certified":
        return verdict
    if verdict.answer == "invalid" and LEDGER.recording and obligation is not None:
        LEDGER.satisfiable[obligation[0]] = obligation[1].text
    if verdict.answer == "valid":
        LEDGER.uncertified += 1
        if LEDGER.recording and obligation is not None:
            LEDGER.pending[obligation[0]] = obligation[1].text
            LEDGER.labels.setdefault(obligation[0], solver.AUDIT.label)
        if LEDGER.required:
            return Verdict("unknown", translator=verdict.translator, reason=NO_CERTIFICATE)
    return verdict


def entails(hypotheses, goal, timeout_ms: int, nats=frozenset(),
            search_model: bool = False) -> Verdict:
    """solver.entails, or 'valid' by a stored certificate that the checker accepts, or
    'invalid' by a stored model that the checker accepts; search_model: a consistency check
    (no goal) that the solver could not decide, or found satisfiable where certificates are
    required, asks the model searcher too (a setting's or givens' check)."""
    obligation = _statement(hypotheses, goal, nats) if LEDGER.active else None
    replayed = _replay_model(obligation) or _replay(obligation)
    if replayed is not None:
        return replayed
    verdict = solver.entails(hypotheses, goal, timeout_ms, nats)
    if verdict.answer == "invalid" and LEDGER.recording and obligation is not None:
        LEDGER.unmodelled[obligation[0]] = obligation[1].text
    if search_model and goal is None and LEDGER.model_searcher is not None and (
            verdict.answer == "unknown" and solver.BUDGET_SPENT not in verdict.reason
            or verdict.answer == "invalid" and LEDGER.required):
        modelled = _model_searched(obligation or _statement(hypotheses, goal, nats))
        if modelled is not None:
            return modelled
    return _uncertified(_searched(verdict, obligation), obligation)


def _model_searched(obligation) -> Verdict | None:
    """'invalid' by a model that the model searcher finds and the checker accepts, or None."""
    if obligation is None:
        return None
    model = LEDGER.model_searcher(obligation[1].text)
    if model is None:
        return None
    LEDGER.store[obligation[0]] = model
    return _replay_model(obligation)


def identity(hypotheses, goal, timeout_ms: int, nats=frozenset()) -> Verdict:
    """solver.identity (SymPy's normal form), or 'valid' by a stored certificate: the checker's
    own polynomial arithmetic then confirms it, and SymPy's simplifier is not trusted."""
    obligation = _statement(hypotheses, goal, nats) if LEDGER.active else None
    replayed = _replay(obligation)
    if replayed is not None:
        return replayed
    verdict = _searched(solver.identity(hypotheses, goal, timeout_ms, nats), obligation)
    return _uncertified(verdict, obligation)
