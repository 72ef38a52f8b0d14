"""The ``Ledger`` protocol and the records only ledgers deal in."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from tooldedup.dedup.records import DEFAULT_TENANT, CallRecord, Outcome, Scope

__all__ = [
    "ArgsMatch",
    "ClaimConflict",
    "Feedback",
    "KeyBinding",
    "KeyKind",
    "Ledger",
    "LogEntry",
    "LogQuery",
    "Lookup",
    "SpentToken",
]


class KeyKind(StrEnum):
    """What a caller-made key names: a side effect, or one check and its retries."""

    IDEMPOTENCY = "idempotency_keys"
    ATTEMPT = "attempt_tokens"


class Lookup(StrEnum):
    """Which hash an exact lookup compares."""

    ARGS = "args"  # the canonical arguments
    SENT = "sent"  # the arguments exactly as sent: a byte-for-byte replay
    LEGACY = "legacy"  # the canonical arguments of release 0.1, among rows 0.1 wrote


@dataclass(frozen=True, slots=True)
class ArgsMatch:
    """The newest live call with a proposal's canonical args, and the calls that labels say
    these args do not duplicate."""

    call: CallRecord | None
    ruled_out: frozenset[str]


@dataclass(frozen=True, slots=True)
class KeyBinding:
    """What an explicit idempotency key is bound to."""

    tool: str
    intent_key: str
    sent_hash: str


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One immutable line of the decision log."""

    check_id: str
    ts: float
    scope: str
    session_id: str
    tool: str
    args: Any
    decision: str
    stage: str | None
    score: float | None
    call_id: str | None
    matched_call_id: str | None
    latency_ms: float
    dry_run: bool
    explain: Any
    feedback: Feedback | None = None
    borderline: bool = False
    tenant: str = DEFAULT_TENANT
    # The id of the API key that sent the check (never the key); None without keys.
    key_id: str | None = None
    # Under observe mode, the answer enforcement would have given (``decision`` is
    # then ``proceed``; stage, score and matched call are the would-be match's).
    observed: str | None = None
    # An ``ask``'s: when its confirm token expires (None for any other line, and a dry run).
    ask_expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class SpentToken:
    """A confirm token spent by the check it confirmed, kept by its ask's check id past expiry."""

    ask_check_id: str
    tenant: str
    used_by: str
    used_at: float
    expires_at: float


@dataclass(frozen=True, slots=True)
class Feedback:
    """A label on one check: was the proposal a duplicate of what it was compared with?"""

    check_id: str
    label: str
    note: str | None
    source: str
    ts: float
    excluded_call_id: str | None = None
    key_id: str | None = None


@dataclass(frozen=True, slots=True)
class LogQuery:
    """Which of one tenant's log entries to read, newest first; None filters nothing."""

    tenant: str
    limit: int = 100
    before: str | None = None  # a check id: entries older than it
    tool: str | None = None
    decision: str | None = None
    stage: str | None = None  # "none" for entries nothing matched
    min_score: float | None = None
    max_score: float | None = None
    since: float | None = None
    until: float | None = None
    borderline: bool | None = None
    labelled: bool | None = None
    # An observe-mode would-be answer ("duplicate", ...), or "any" for every observed one.
    observed: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimConflict:
    """A claim lost a race: another pending claim holds the same intent or key."""

    holder: CallRecord


class Ledger(Protocol):
    """Durable store of claimed calls, their outcomes and the decision log."""

    def candidates(
        self,
        scope: Scope,
        tool: str,
        exact_signature: str,
        since: float,
        limit: int,
        step: tuple[str, str] | None = None,
    ) -> list[CallRecord]:
        """Live calls sharing scope, tool and exact signature (and step), newest first."""
        ...

    def args_match(
        self,
        scope: Scope,
        tool: str,
        args_hash: str,
        since: float,
        step: tuple[str, str] | None = None,
    ) -> ArgsMatch:
        """The newest live call (of this step) with these canonical args, and the calls
        feedback said these args do not duplicate: one statement, every check's first."""
        ...

    def exact_match(
        self,
        scope: Scope,
        tool: str,
        lookup: Lookup,
        digest: str,
        since: float,
        step: tuple[str, str] | None = None,
    ) -> CallRecord | None:
        """The newest live call (of this step) whose ``lookup`` hash is ``digest``."""
        ...

    def has_legacy_calls(self) -> bool:
        """Whether rows written by release 0.1 may still be live."""
        ...

    def reserve_key(
        self,
        scope: Scope,
        key: str,
        binding: KeyBinding,
        now: float,
        since: float,
        kind: KeyKind = KeyKind.IDEMPOTENCY,
    ) -> KeyBinding:
        """Bind an explicit key unless it is bound inside the window; return its binding."""
        ...

    def by_attempt_token(self, scope: Scope, token: str, since: float) -> CallRecord | None:
        """The call a check with this attempt token claimed, if one did."""
        ...

    def serialized(self, scope: Scope, tool: str) -> AbstractContextManager[None]:
        """Hold (scope, tool) for deciding and claiming, against every process sharing
        the store; on PostgreSQL, also one transaction for everything inside."""
        ...

    def checkpoint(self) -> None:
        """Do deferred storage housekeeping (a no-op where there is none)."""
        ...

    def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless the store answers now."""
        ...

    def latest_attempt(self, record: CallRecord) -> CallRecord:
        """The newest retry in ``record``'s chain of attempts."""
        ...

    def recent(self, scope: Scope, tool: str, since: float, limit: int) -> list[CallRecord]:
        """Live calls of ``tool`` in ``scope``, newest first."""
        ...

    def by_idempotency_key(self, scope: Scope, key: str, since: float) -> CallRecord | None:
        """The newest call claimed with this explicit key."""
        ...

    def claim(
        self, record: CallRecord, *, live_since: float | None = None
    ) -> CallRecord | ClaimConflict:
        """Store a pending claim, unless a live call of the same intent already exists."""
        ...

    def complete(self, tenant: str, call_id: str, outcome: Outcome, now: float) -> CallRecord:
        """Record a call's outcome; repeating the same outcome is a no-op."""
        ...

    def extend_lease(self, tenant: str, call_id: str, until: float, now: float) -> CallRecord:
        """Move a pending, unexpired claim's lease to ``until`` (never earlier); raise
        ``NotFound`` or ``Conflict`` (``LeaseExpired``) otherwise."""
        ...

    def get(self, tenant: str, call_id: str) -> CallRecord | None:
        """One of ``tenant``'s calls by id."""
        ...

    def session_calls(
        self, tenant: str, session_id: str, limit: int, offset: int
    ) -> list[CallRecord]:
        """One of ``tenant``'s sessions' calls, oldest first."""
        ...

    def append_log(self, entry: LogEntry) -> None:
        """Append one decision log entry."""
        ...

    def iter_log(self, tenant: str | None = None) -> Iterator[LogEntry]:
        """Every decision log entry (of one tenant, if named), oldest first."""
        ...

    def log_page(self, query: LogQuery) -> list[LogEntry]:
        """The log entries ``query`` asks for, newest first, each with its latest label."""
        ...

    def log_entry(self, tenant: str, check_id: str) -> LogEntry | None:
        """One of ``tenant``'s log entries, with its latest label."""
        ...

    def add_feedback(
        self,
        tenant: str,
        check_id: str,
        label: str,
        note: str | None,
        source: str,
        now: float,
        key_id: str | None = None,
    ) -> Feedback:
        """Label a logged check; a 'distinct' label on a match rules that match out."""
        ...

    def spend_confirm_token(self, spent: SpentToken) -> bool:
        """Record an ask's confirm token spent; False when another check spent it first."""
        ...

    def confirm_token_spent_by(self, tenant: str, ask_check_id: str) -> str | None:
        """The check that spent the confirm token of one of ``tenant``'s asks, if one did."""
        ...

    def unspend_confirm_token(self, ask_check_id: str, used_by: str) -> None:
        """Give back a confirm token ``used_by`` spent, when its claim was not stored."""
        ...

    def purge_spent_confirm_tokens(self, before: float) -> int:
        """Forget spent confirm tokens that expired before ``before``; return how many."""
        ...

    def purge(self, before: float, longer: Mapping[str, float] | None = None) -> int:
        """Delete calls created before ``before`` (a tenant in ``longer``: before its own
        cut-off there) and what only they used; return how many."""
        ...

    def purge_log(self, before: float) -> int:
        """Delete decision log entries written before ``before``; return how many."""
        ...

    def load_policies(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Stored per-tool policy overrides, by tenant, then tool."""
        ...

    def save_policy(self, tenant: str, tool: str, data: dict[str, Any]) -> None:
        """Store one of ``tenant``'s tool policies."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
