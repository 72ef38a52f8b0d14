"""Pydantic models of the HTTP edge; the core never sees them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    field_validator,
)

from tooldedup.dedup.records import CallRecord

__all__ = [
    "AskOut",
    "CallOut",
    "CheckRequest",
    "CheckResponse",
    "CompleteRequest",
    "DecisionOut",
    "ErrorBody",
    "FeedbackOut",
    "FeedbackRequest",
    "FieldOut",
    "KeyCreate",
    "KeyList",
    "KeyOut",
    "LeaseRequest",
    "LogPage",
    "MatchOut",
    "NewKeyOut",
    "ObservedOut",
    "PageAccess",
    "PolicyBody",
    "SessionCalls",
    "SummaryOut",
    "ToolCountOut",
]

# Names are trimmed: " s1" and "s1" are one session.
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=256)]


def _valid_unicode(value: str | None) -> str | None:
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("must be valid Unicode") from None
        if not value.strip():
            raise ValueError("must not be blank")
        if "\x00" in value:
            raise ValueError("must not contain NUL (U+0000)")
    return value


class CheckRequest(BaseModel):
    """A proposed tool call."""

    model_config = ConfigDict(extra="forbid")

    session_id: Name
    tool: Name
    args: dict[str, Any]
    scope: Name | None = None
    run_id: Name | None = None
    step: Name | StrictInt | None = None
    idempotency_key: Name | None = None
    # Made by the client once per logical check and resent on its own retries.
    attempt_token: Name | None = None
    dry_run: StrictBool = False
    # The answers beyond the four every caller handles that this caller handles: "ask".
    # Names this release does not know are ignored, so a newer client still works here.
    answers: Annotated[list[Annotated[str, Field(max_length=32)]], Field(max_length=16)] = []
    # The token of an earlier ``ask`` about this very call: the caller means it.
    confirm_token: Annotated[str, Field(max_length=128)] | None = None

    _check_text = field_validator(
        "session_id", "tool", "scope", "run_id", "idempotency_key", "attempt_token"
    )(_valid_unicode)

    @field_validator("step")
    @classmethod
    def _check_step(cls, value: str | int | None) -> str | int | None:
        return _valid_unicode(value) if isinstance(value, str) else value


class MatchOut(BaseModel):
    """The stored call a check matched."""

    call_id: str
    tool: str
    args: Any
    stage: Literal["exact", "equivalent", "fuzzy", "semantic", "judge"]
    score: float
    status: Literal["pending", "succeeded", "failed", "unknown"]
    failure_class: Literal["retryable", "poison", "ambiguous"] | None
    result: Any
    error: Any


class AskOut(BaseModel):
    """How to confirm a call the answer ``ask`` is about: send it again with the token."""

    confirm_token: str
    expires_at: str


class ObservedOut(BaseModel):
    """Observe mode: what enforcement would have answered, and the call it matched."""

    decision: Literal["duplicate", "in_progress", "reconcile", "ask"]
    match: MatchOut | None


class CheckResponse(BaseModel):
    """The answer to a check."""

    decision: Literal["proceed", "duplicate", "in_progress", "reconcile", "ask"]
    call_id: str | None
    check_id: str
    idempotency_key: str
    match: MatchOut | None
    explain: dict[str, Any]
    # For the model: what it already did and how to go on (duplicate, in_progress,
    # reconcile and ask answers, unless the tool's policy turns notes off).
    note: str | None = None
    ask: AskOut | None = None
    observed: ObservedOut | None = None


class CompleteRequest(BaseModel):
    """The outcome of a call the runtime ran."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["succeeded", "failed", "unknown"]
    result: Any = None
    error: Any = None
    failure_class: Literal["retryable", "poison", "ambiguous"] | None = None


class LeaseRequest(BaseModel):
    """A claim holder's request for more time: ``check_id`` is the check that claimed it."""

    model_config = ConfigDict(extra="forbid")

    check_id: Name
    # None: the tool's lease_seconds again, from now.
    seconds: Annotated[float, Field(gt=0, le=86_400)] | None = None

    _check_text = field_validator("check_id")(_valid_unicode)

    @field_validator("seconds", mode="before")
    @classmethod
    def _no_booleans(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("must be a number, not a boolean")
        return value


class CallOut(BaseModel):
    """A call as the ledger holds it."""

    call_id: str
    session_id: str
    scope: str
    tool: str
    args: Any
    status: Literal["pending", "succeeded", "failed", "unknown"]
    failure_class: Literal["retryable", "poison", "ambiguous"] | None
    result: Any
    error: Any
    intent_key: str
    idempotency_key: str | None
    created_at: float
    lease_expires_at: float
    completed_at: float | None
    attempt_of: str | None
    run_id: str | None
    step: str | None

    @classmethod
    def of(cls, record: CallRecord) -> CallOut:
        """The HTTP form of a stored call."""
        return cls(
            call_id=record.call_id,
            session_id=record.session_id,
            scope=record.scope,
            tool=record.tool,
            args=record.sent_args,
            status=record.status.value,
            failure_class=None if record.failure_class is None else record.failure_class.value,
            result=record.result,
            error=record.error,
            intent_key=record.intent_key,
            idempotency_key=record.idempotency_key,
            created_at=record.created_at,
            lease_expires_at=record.lease_expires_at,
            completed_at=record.completed_at,
            attempt_of=record.attempt_of,
            run_id=record.run_id,
            step=record.step,
        )


class SessionCalls(BaseModel):
    """A page of a session's calls."""

    session_id: str
    calls: list[CallOut]


class PolicyBody(BaseModel):
    """A tool's policy; settings left out take the defaults."""

    model_config = ConfigDict(extra="forbid")

    side_effect: Literal["read", "write", "irreversible"] | None = None
    exact_fields: list[str] | None = None
    semantic_fields: list[str] | None = None
    volatile_fields: list[str] | None = None
    unordered_fields: list[str] | None = None
    min_fuzzy_ratio: float | None = None
    max_fuzzy_edits: int | None = None
    min_cosine_duplicate: float | None = None
    min_cosine_borderline: float | None = None
    min_cosine_confirmed: float | None = None
    window_seconds: float | None = None
    lease_seconds: float | None = None
    borderline_action: Literal["duplicate", "proceed", "ask"] | None = None
    mode: Literal["fields", "whole"] | None = None
    max_candidates: int | None = None
    judge_mode: Literal["off", "inline", "shadow"] | None = None
    pair_model: StrictBool | None = None
    max_text_leaves: int | None = None
    max_text_chars: int | None = None
    max_comparisons: int | None = None
    unsure_action: Literal["proceed", "duplicate", "judge"] | None = None
    enforcement: Literal["enforce", "observe"] | None = None
    ask_ttl_seconds: float | None = None
    model_notes: StrictBool | None = None
    ask_unconfirmed: StrictBool | None = None

    @field_validator(
        "min_fuzzy_ratio",
        "max_fuzzy_edits",
        "min_cosine_duplicate",
        "min_cosine_borderline",
        "min_cosine_confirmed",
        "window_seconds",
        "lease_seconds",
        "max_candidates",
        "max_text_leaves",
        "max_text_chars",
        "max_comparisons",
        "ask_ttl_seconds",
        mode="before",
    )
    @classmethod
    def _no_booleans(cls, value: Any) -> Any:
        # JSON's true is no threshold: pydantic would read it as 1.
        if isinstance(value, bool):
            raise ValueError("must be a number, not a boolean")
        return value


class FeedbackRequest(BaseModel):
    """A correction: was the checked call a duplicate of what it was compared with?"""

    model_config = ConfigDict(extra="forbid")

    check_id: Name
    label: Literal["duplicate", "distinct"]
    note: Annotated[str, Field(max_length=2000)] | None = None
    source: Literal["human", "agent"] = "human"

    _check_text = field_validator("check_id", "note")(_valid_unicode)


class FeedbackOut(BaseModel):
    """A stored label."""

    check_id: str
    label: str
    note: str | None
    source: str
    ts: float
    excluded_call_id: str | None
    key_id: str | None = None


class KeyCreate(BaseModel):
    """A new API key of the caller's tenant."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["agent", "reader", "admin"]
    name: Annotated[str, Field(max_length=200)] | None = None
    rate_per_second: Annotated[float, Field(ge=0.001, le=1e6)] | None = None
    burst: Annotated[int, Field(ge=1, le=1_000_000)] | None = None

    _check_text = field_validator("name")(_valid_unicode)


class KeyOut(BaseModel):
    """A stored key: never its secret."""

    key_id: str
    tenant: str
    role: str
    name: str | None
    created_at: float
    revoked_at: float | None
    rate_per_second: float | None
    burst: int | None


class NewKeyOut(KeyOut):
    """A key just made: ``key`` is shown this once and stored only as a hash."""

    key: str


class KeyList(BaseModel):
    """A tenant's keys, oldest first."""

    keys: list[KeyOut]


class LogPage(BaseModel):
    """Decision log entries, newest first; pass ``next_before`` as ``before`` for more."""

    entries: list[dict[str, Any]]
    next_before: str | None


class PageAccess(BaseModel):
    """Whether the caller must give the review page a key before it can read the log."""

    key_needed: bool


class FieldOut(BaseModel):
    """One field of two compared calls."""

    path: str
    compared: Literal["exact", "meaning"]
    proposed: str | None
    matched: str | None
    same: bool
    cosine: float | None


class DecisionOut(BaseModel):
    """A logged decision beside the call it was compared with."""

    entry: dict[str, Any]
    claimed: CallOut | None
    compared_with: CallOut | None
    relation: Literal["match", "closest"] | None
    fields: list[FieldOut]


class ToolCountOut(BaseModel):
    """One tool's traffic and labels."""

    tool: str
    checks: int
    duplicates: int
    # Asks by how they ended (confirmed, abandoned, expired, open), and observe mode's
    # would-be answers other than proceed, by decision.
    asks: dict[str, int] = {}
    observed: dict[str, int] = {}
    labels: int
    labels_to_go: int
    note: str | None


class SummaryOut(BaseModel):
    """A tenant's traffic and labels at a glance."""

    since: float
    checks: int
    bucket_seconds: int
    series: list[tuple[float, str, str, int]]
    tools: list[ToolCountOut]
    latency_ms: dict[str, float]
    scores: list[tuple[float, str]]
    latency_sample: int
    min_cosine_duplicate: float
    min_cosine_borderline: float
    target_precision: float


class ErrorDetail(BaseModel):
    """What went wrong."""

    code: str
    message: str


class ErrorBody(BaseModel):
    """Every 4xx answer has this shape."""

    error: ErrorDetail
