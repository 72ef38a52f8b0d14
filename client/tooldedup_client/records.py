"""Typed, frozen records of the service's answers."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "Ask",
    "Call",
    "CheckResult",
    "Decision",
    "FailureClass",
    "Feedback",
    "Match",
    "Observed",
    "Status",
]


class Decision(StrEnum):
    """What a check answers."""

    PROCEED = "proceed"
    DUPLICATE = "duplicate"
    IN_PROGRESS = "in_progress"
    RECONCILE = "reconcile"
    # Only to a caller that said it handles it: maybe the same call, so it did not run;
    # send it again with ``ask.confirm_token`` to run it anyway.
    ASK = "ask"


class Status(StrEnum):
    """A stored call's state."""

    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    UNKNOWN = "unknown"


class FailureClass(StrEnum):
    """Why a call failed: whether a repeat may run it again."""

    RETRYABLE = "retryable"  # it did not take effect; a repeat runs again
    POISON = "poison"  # it will never work; a repeat gets this failure back
    AMBIGUOUS = "ambiguous"  # it may have taken effect; a repeat must reconcile first


@dataclass(frozen=True, slots=True)
class Match:
    """The stored call a check matched."""

    call_id: str
    tool: str
    args: Any
    stage: str
    score: float
    status: Status
    failure_class: FailureClass | None
    result: Any
    error: Any

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Match:
        """From the ``match`` object of a check's answer."""
        failure = data.get("failure_class")
        return cls(
            call_id=data["call_id"],
            tool=data["tool"],
            args=data.get("args"),
            stage=data["stage"],
            score=float(data["score"]),
            status=Status(data["status"]),
            failure_class=None if failure is None else FailureClass(failure),
            result=data.get("result"),
            error=data.get("error"),
        )


@dataclass(frozen=True, slots=True)
class Ask:
    """How to confirm a call an ``ask`` is about: check it again with this token."""

    confirm_token: str
    expires_at: str


@dataclass(frozen=True, slots=True)
class Observed:
    """Observe mode: the answer enforcement would have given, and the call it matched."""

    decision: str
    match: Match | None


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The answer to one check."""

    decision: Decision
    call_id: str | None
    check_id: str
    idempotency_key: str
    match: Match | None
    explain: dict[str, Any]
    # For the model: what it already did and how to go on (repeats and asks).
    note: str | None = None
    ask: Ask | None = None
    observed: Observed | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckResult:
        """From the body of ``POST /v1/check``."""
        match = data.get("match")
        ask = data.get("ask")
        observed = data.get("observed")
        seen = None if observed is None else observed.get("match")
        return cls(
            decision=Decision(data["decision"]),
            call_id=data.get("call_id"),
            check_id=data["check_id"],
            idempotency_key=data["idempotency_key"],
            match=None if match is None else Match.from_json(match),
            explain=data.get("explain") or {},
            note=data.get("note"),
            ask=None if ask is None else Ask(ask["confirm_token"], ask["expires_at"]),
            observed=None
            if observed is None
            else Observed(observed["decision"], None if seen is None else Match.from_json(seen)),
        )


@dataclass(frozen=True, slots=True)
class Call:
    """A call as the ledger holds it."""

    call_id: str
    session_id: str
    scope: str
    tool: str
    args: Any
    status: Status
    failure_class: FailureClass | None
    result: Any
    error: Any
    created_at: float
    completed_at: float | None
    lease_expires_at: float | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Call:
        """From the body of ``GET /v1/calls/{id}`` or a completion."""
        failure = data.get("failure_class")
        return cls(
            call_id=data["call_id"],
            session_id=data["session_id"],
            scope=data["scope"],
            tool=data["tool"],
            args=data.get("args"),
            status=Status(data["status"]),
            failure_class=None if failure is None else FailureClass(failure),
            result=data.get("result"),
            error=data.get("error"),
            created_at=float(data["created_at"]),
            completed_at=data.get("completed_at"),
            lease_expires_at=data.get("lease_expires_at"),
        )


@dataclass(frozen=True, slots=True)
class Feedback:
    """A stored label on a check."""

    check_id: str
    label: str
    note: str | None
    source: str
    excluded_call_id: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Feedback:
        """From the body of ``POST /v1/feedback``."""
        return cls(
            check_id=data["check_id"],
            label=data["label"],
            note=data.get("note"),
            source=data["source"],
            excluded_call_id=data.get("excluded_call_id"),
        )
