"""The optional LLM judge for the borderline band: protocol, verdicts, cache and circuit breaker.

The judge never makes a check fail: every failure becomes an outcome that the service
answers with the policy's borderline action.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from tooldedup.dedup.canonical import canonical_json, stable_hash, window_field
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.records import DEFAULT_TENANT, CanonicalCall, JudgeMode

__all__ = [
    "GuardedJudge",
    "Judge",
    "JudgeFailure",
    "JudgeMode",
    "JudgeOutcome",
    "JudgeRequest",
    "JudgeVerdict",
    "OutcomeKind",
]


class OutcomeKind(StrEnum):
    """What happened when the judge was asked."""

    VERDICT = "verdict"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """Two calls to one tool, in canonical form, and what the policy says about their fields."""

    tool: str
    side_effect: str
    proposal: Any
    stored: Any
    exact_fields: tuple[str, ...]
    semantic_fields: tuple[str, ...]
    cosine: float
    # Whose calls these are: a verdict is reused inside one tenant only.
    tenant: str = DEFAULT_TENANT

    @classmethod
    def for_pair(
        cls,
        tool: str,
        policy: ToolPolicy,
        proposal: CanonicalCall,
        stored: Any,
        cosine: float,
        tenant: str = DEFAULT_TENANT,
    ) -> JudgeRequest:
        """The request for a proposal in canonical form against a stored call's args."""
        return cls(
            tool=tool,
            side_effect=policy.side_effect.value,
            proposal=proposal.args,
            stored=stored,
            exact_fields=tuple(path for path, _ in proposal.exact_leaves),
            # A long text's windows are one field to the judge, which reads the whole args.
            semantic_fields=tuple(
                dict.fromkeys(window_field(leaf.path) for leaf in proposal.semantic_leaves)
            ),
            cosine=cosine,
            tenant=tenant,
        )

    @property
    def cache_key(self) -> str:
        """The pair's canonical hash: the same two calls, shown the same way, in one tenant."""
        shown = [self.side_effect, list(self.exact_fields), list(self.semantic_fields)]
        return stable_hash(
            canonical_json([self.tenant, self.tool, shown, self.proposal, self.stored])
        )


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """The judge's answer, parsed strictly."""

    duplicate: bool
    confidence: float
    reason: str


@dataclass(frozen=True, slots=True)
class JudgeOutcome:
    """A verdict, or why there is none."""

    kind: OutcomeKind
    verdict: JudgeVerdict | None = None
    detail: str | None = None
    cached: bool = False


class JudgeFailure(Exception):
    """A judge call that produced no usable verdict."""

    def __init__(self, kind: OutcomeKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


class Judge(Protocol):
    """Anything that can judge a pair; raises ``JudgeFailure`` when it cannot."""

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        """Decide whether the proposal repeats the stored call."""
        ...


class GuardedJudge:
    """Caches verdicts by pair and stops calling a failing judge for a cool-down period."""

    def __init__(
        self,
        inner: Judge,
        *,
        failures_to_open: int = 3,
        cooldown_seconds: float = 30.0,
        cache_size: int = 10_000,
        deadline_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failures_to_open < 1 or cooldown_seconds < 0 or cache_size < 0:
            raise ValueError("failures_to_open >= 1, cooldown_seconds >= 0, cache_size >= 0")
        if deadline_seconds is not None and deadline_seconds <= 0:
            raise ValueError("deadline_seconds must be positive")
        self._inner = inner
        self._deadline = deadline_seconds
        # Calls run on their own threads so that a slow or trickling endpoint cannot hold a
        # check past the deadline, whatever the HTTP client's per-phase timeouts allow.
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tooldedup-judge-call")
        self._probing = False
        self._failures_to_open = failures_to_open
        self._cooldown = cooldown_seconds
        self._cache_size = cache_size
        self._clock = clock
        self._cache: OrderedDict[str, JudgeVerdict] = OrderedDict()
        self._failures = 0
        self._open_until: float | None = None
        self._lock = threading.Lock()
        self.calls = 0

    @property
    def circuit_open(self) -> bool:
        """Whether calls are currently being refused."""
        with self._lock:
            return self._open_until is not None and self._clock() < self._open_until

    def ask(self, request: JudgeRequest) -> JudgeOutcome:
        """A verdict from the cache or the judge; any failure becomes an outcome."""
        key = request.cache_key
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return JudgeOutcome(OutcomeKind.VERDICT, cached, cached=True)
            if self._open_until is not None:
                if self._clock() < self._open_until:
                    return JudgeOutcome(OutcomeKind.UNAVAILABLE, detail="circuit open")
                # Past the cool-down one call goes through (half-open); its result decides.
                if self._probing:
                    return JudgeOutcome(OutcomeKind.UNAVAILABLE, detail="circuit half-open")
                self._probing = True
            self.calls += 1
        try:
            verdict = self._pool.submit(self._inner.judge, request).result(self._deadline)
        except FutureTimeout:
            self._record_failure()
            return JudgeOutcome(OutcomeKind.TIMEOUT, detail="no verdict within the deadline")
        except JudgeFailure as failure:
            self._record_failure()
            return JudgeOutcome(failure.kind, detail=failure.detail)
        except Exception as exc:  # a judge must never make a check fail
            self._record_failure()
            return JudgeOutcome(OutcomeKind.UNAVAILABLE, detail=type(exc).__name__)
        with self._lock:
            self._failures = 0
            self._open_until = None
            self._probing = False
            if self._cache_size:
                self._cache[key] = verdict
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return JudgeOutcome(OutcomeKind.VERDICT, verdict)

    def _record_failure(self) -> None:
        with self._lock:
            self._failures += 1
            if self._probing or self._failures >= self._failures_to_open:
                self._open_until = self._clock() + self._cooldown
            self._probing = False

    def close(self) -> None:
        """Stop the call threads without waiting for calls still under way."""
        self._pool.shutdown(wait=False, cancel_futures=True)
