"""Typed, frozen records that cross module boundaries."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "DEFAULT_TENANT",
    "AskTicket",
    "CallRecord",
    "CallStatus",
    "CanonicalCall",
    "Decision",
    "DecisionKind",
    "FailureClass",
    "FieldReading",
    "JudgeMode",
    "JudgeReport",
    "Match",
    "Observed",
    "Outcome",
    "Scope",
    "SemanticLeaf",
    "SideEffect",
    "Stage",
    "StageReport",
    "ToolCall",
    "ValueKind",
]

JSON = Any

# The tenant of every call when no key names another: what a store from before tenants
# holds, and what a service without keys serves.
DEFAULT_TENANT = "default"


class SideEffect(StrEnum):
    """How much a tool changes the world."""

    READ = "read"
    WRITE = "write"
    IRREVERSIBLE = "irreversible"


class JudgeMode(StrEnum):
    """Whether the judge decides the borderline band, only labels it, or is not asked."""

    OFF = "off"
    INLINE = "inline"
    SHADOW = "shadow"


class CallStatus(StrEnum):
    """Ledger state of one claimed call."""

    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    UNKNOWN = "unknown"


class FailureClass(StrEnum):
    """Why a failed call failed, which decides whether a retry may run."""

    RETRYABLE = "retryable"
    POISON = "poison"
    AMBIGUOUS = "ambiguous"


class DecisionKind(StrEnum):
    """The answer to a check."""

    PROCEED = "proceed"
    DUPLICATE = "duplicate"
    IN_PROGRESS = "in_progress"
    RECONCILE = "reconcile"
    # Neither surely the same nor surely different: the caller's agent is asked, and
    # nothing is claimed until it confirms.
    ASK = "ask"


class Stage(StrEnum):
    """The funnel stage that matched."""

    EXACT = "exact"
    # Equal but for values spelt two ways: "Seattle" and "Seattle, WA", "EUR" and "Euros".
    EQUIVALENT = "equivalent"
    FUZZY = "fuzzy"
    SEMANTIC = "semantic"
    JUDGE = "judge"


class ValueKind(StrEnum):
    """What an exact field holds, when it is something written more than one way."""

    PLACE = "place"
    REGION = "region"
    COUNTRY = "country"
    DATE = "date"
    TIME = "time"
    UNIT = "unit"
    CURRENCY = "currency"


@dataclass(frozen=True, slots=True)
class FieldReading:
    """How a language pack reads a field's name: what its values are, and how to compare them."""

    # True: free text ("body"); False: a value ("email"); None: the value decides.
    prose: bool | None = None
    value_kind: ValueKind | None = None
    code: bool = False
    path: bool = False
    secret: bool = False
    category: bool = False
    # A list of tags, labels or names, whose order says nothing.
    unordered: bool = False


@dataclass(frozen=True, slots=True)
class Scope:
    """Where calls are compared: one tenant's named scope (a session, unless named)."""

    tenant: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A proposed tool call as the agent runtime sent it."""

    session_id: str
    tool: str
    args: dict[str, JSON]
    scope: str | None = None
    run_id: str | None = None
    step: str | None = None
    idempotency_key: str | None = None
    # Made by the client once per logical check and resent on its retries: a repeat gets
    # the first answer, ``proceed`` with the same call id included.
    attempt_token: str | None = None
    tenant: str = DEFAULT_TENANT
    # The caller handles the ``ask`` answer; without it, the policy's unsure_action applies.
    handles_ask: bool = False
    # The token of an earlier ``ask`` about this very call: the caller means it, so it runs.
    confirm_token: str | None = None

    @property
    def effective_scope(self) -> Scope:
        """The scope dedup runs in: the session unless the caller named another."""
        return Scope(self.tenant, self.session_id if self.scope is None else self.scope)

    @property
    def workflow_step(self) -> tuple[str, str] | None:
        """(run id, step) when either is given: only calls of the same step can match."""
        if self.run_id is None and self.step is None:
            return None
        return (self.run_id or "", self.step or "")


@dataclass(frozen=True, slots=True)
class SemanticLeaf:
    """A free-text leaf compared by meaning."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class CanonicalCall:
    """The canonical form of a call's arguments, split into exact and semantic parts."""

    args: JSON
    args_json: str
    args_hash: str
    exact_signature: str
    exact_leaves: tuple[tuple[str, str], ...]
    semantic_leaves: tuple[SemanticLeaf, ...]
    # Free text the service does not read, so compared exactly: (path, why not read).
    unread: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call stored in the ledger.

    ``args`` is the canonical form that matching uses; ``sent_args`` are the arguments as the
    agent sent them (volatile fields included), which is what callers read back. A record
    read from the ledger may be shared by concurrent checks (and a judge): its JSON values
    are read, never changed.
    """

    call_id: str
    row_id: int
    scope: str
    session_id: str
    tool: str
    args: JSON
    args_hash: str
    exact_signature: str
    exact_leaves: tuple[tuple[str, str], ...]
    semantic_leaves: tuple[SemanticLeaf, ...]
    intent_key: str
    idempotency_key: str | None
    status: CallStatus
    created_at: float
    lease_expires_at: float
    failure_class: FailureClass | None = None
    result: JSON = None
    error: JSON = None
    completed_at: float | None = None
    attempt_of: str | None = None
    run_id: str | None = None
    step: str | None = None
    sent_args: JSON = None
    attempt_token: str | None = None
    tenant: str = DEFAULT_TENANT

    @property
    def where(self) -> Scope:
        """The tenant and scope this call was claimed in."""
        return Scope(self.tenant, self.scope)


@dataclass(frozen=True, slots=True)
class Match:
    """A stored call judged to be the same intent as the proposal."""

    call: CallRecord
    stage: Stage
    score: float
    borderline: bool = False
    # Why this match may not be answered ``duplicate`` without a verifier's verdict.
    hold: str | None = None


@dataclass(frozen=True, slots=True)
class StageReport:
    """What one funnel stage saw: its best score against its threshold."""

    stage: Stage
    score: float | None
    threshold: float | None
    matched: bool
    candidates: tuple[tuple[str, float], ...] = ()
    detail: str | None = None
    # The verifier's verdict on the reported candidate ("different", "unsure", ...), if it ran.
    verdict: str | None = None


@dataclass(frozen=True, slots=True)
class JudgeReport:
    """What the judge did for a borderline match: a verdict, a failure, or a shadow call."""

    mode: str
    outcome: str
    duplicate: bool | None = None
    confidence: float | None = None
    reason: str | None = None
    detail: str | None = None
    cached: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """A completion report for a claimed call."""

    status: CallStatus
    result: JSON = None
    error: JSON = None
    failure_class: FailureClass | None = None


@dataclass(frozen=True, slots=True)
class AskTicket:
    """The confirmation an ``ask`` hands out: single-use, for this session, tool and args."""

    confirm_token: str
    expires_at: int  # whole seconds since the epoch


@dataclass(frozen=True, slots=True)
class Observed:
    """What a check under ``enforcement = "observe"`` would have answered, and its match."""

    kind: DecisionKind
    match: Match | None


@dataclass(frozen=True, slots=True)
class Decision:
    """The service's answer to one check."""

    kind: DecisionKind
    check_id: str
    intent_key: str
    call: CallRecord | None
    match: Match | None
    reports: tuple[StageReport, ...] = ()
    differing_fields: tuple[str, ...] = ()
    differing_from: str | None = None
    notes: tuple[str, ...] = ()
    judge: JudgeReport | None = None
    latency_ms: float = 0.0
    dry_run: bool = False
    # The semantic match fell in the borderline band, whatever was then decided.
    borderline: bool = False
    # Free text of the call compared exactly, not by meaning: (path, why it is not read).
    unread: tuple[tuple[str, str], ...] = ()
    # An ``ask``'s confirmation (None for a dry run, which hands out none).
    ask: AskTicket | None = None
    # Under observe mode: the answer enforcement would have given (this one is ``proceed``).
    observed: Observed | None = None
    # One short paragraph for the model: what it already did and how to go on.
    note: str | None = None
    # The ``ask`` a confirmed call was confirmed from (its check id).
    confirmed_ask: str | None = None

    @property
    def call_id(self) -> str | None:
        """The call the caller acts on: its new claim, or the call it duplicates."""
        if self.call is not None:
            return self.call.call_id
        return None if self.match is None else self.match.call.call_id
