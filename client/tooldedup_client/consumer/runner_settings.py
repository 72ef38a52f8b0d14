"""The runner's settings and the metrics it reports."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ConsumerMetrics", "ConsumerSettings"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerSettings:
    """How a runner checks, retries and paces itself."""

    tool: str
    # Default: the broker's "<stream>:<group>".
    session: str | None = None
    batch: int = 10
    tokens_per_minute: int | None = None
    # The budget's sliding window: a minute, shorter only in tests.
    budget_window_seconds: float = 60.0
    # How long one poll waits for new messages.
    poll_seconds: float = 1.0
    # How often the claim's and the broker's leases are renewed while a handler runs.
    keepalive_seconds: float = 5.0
    # How long a message whose key is in progress elsewhere waits before it is checked again.
    in_progress_retry_seconds: float = 1.0
    max_attempts: int = 3
    max_backoff_seconds: float = 5.0
    classifier_timeout_seconds: float = 10.0

    def __post_init__(self) -> None:
        if not self.tool.strip():
            raise ValueError("tool must not be blank")
        if self.batch < 1:
            raise ValueError("batch must be 1 or more")
        if self.tokens_per_minute is not None and self.tokens_per_minute < 1:
            raise ValueError("tokens_per_minute must be 1 or more")
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be 1 or more")
        for name in (
            "poll_seconds",
            "keepalive_seconds",
            "in_progress_retry_seconds",
            "budget_window_seconds",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be more than 0")


@dataclass(frozen=True, slots=True)
class ConsumerMetrics:
    """What a runner has done: handler calls, replays, waits, dead letters by class, and
    the token budget's use."""

    handled: int
    duplicates: int
    deferred: int
    dead_letters: dict[str, int] = field(default_factory=dict)
    tokens_used: int = 0
    paused_seconds: float = 0.0
