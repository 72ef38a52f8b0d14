"""What a handler receives, and what a broker adapter hands the runner."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Delivery", "Message", "TokenTally"]


class TokenTally:
    """Tokens a handler says it used for one message (``Message.use_tokens``); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._used = 0

    def add(self, tokens: int) -> None:
        """Count ``tokens`` more."""
        if tokens < 0:
            raise ValueError("tokens must be 0 or more")
        with self._lock:
            self._used += tokens

    @property
    def used(self) -> int:
        """Tokens counted so far."""
        with self._lock:
            return self._used


@dataclass(frozen=True, slots=True)
class Message:
    """One delivered message: ``id`` is the broker's delivery identity, ``key`` the
    idempotency key the check used, ``body`` the payload (a Redis entry's field map, or the
    decoded JSON of a RabbitMQ or NATS body)."""

    id: str
    key: str
    body: Any
    headers: Mapping[str, str]
    tokens: TokenTally = field(default_factory=TokenTally, compare=False, repr=False)

    def use_tokens(self, tokens: int) -> None:
        """Tell the token budget this message cost ``tokens`` model tokens."""
        self.tokens.add(tokens)


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message as fetched, before its key is known: ``handle`` is the adapter's own
    reference for acking it, read by that adapter only."""

    id: str
    body: Any
    headers: Mapping[str, str]
    default_key: str
    handle: object
    # How many times the broker says it has delivered this message (1: the first time).
    delivered: int = 1
