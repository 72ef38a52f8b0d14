"""Idempotency key recipes: the broker's identity of a message, or a logical key from its body."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "KeyFunction",
    "MissingKey",
    "field_key",
    "nats_key",
    "parse_key_fields",
    "rabbitmq_key",
    "redis_key",
]

# From a message's body and its broker identity to its key.
KeyFunction = Callable[[Any, str], str]


class MissingKey(ValueError):
    """The body lacks a field the logical key is made of."""


def redis_key(stream: str, entry_id: str) -> str:
    """Redis Streams: stream + entry id."""
    return f"redis:{stream}:{entry_id}"


def rabbitmq_key(queue: str, message_id: str) -> str:
    """RabbitMQ: the publisher's ``message_id`` (the queue names where it was read)."""
    return f"amqp:{queue}:{message_id}"


def nats_key(stream: str, sequence: int) -> str:
    """NATS JetStream: stream + sequence."""
    return f"nats:{stream}:{sequence}"


def field_key(fields: Sequence[str]) -> KeyFunction:
    """A logical key from body fields, joined with ':' (``customer_id:order_id:action``)."""
    names = tuple(fields)
    if not names or any(not name for name in names):
        raise ValueError("a key field list names at least one field, none of them blank")

    def key_of(body: Any, _identity: str) -> str:
        if not isinstance(body, Mapping):
            raise MissingKey(f"the body is not an object, so it has no key field {names[0]!r}")
        parts = []
        for name in names:
            value = body.get(name)
            if value is None or value == "":
                raise MissingKey(f"the body has no key field {name!r}")
            parts.append(str(value))
        return "key:" + ":".join(parts)

    return key_of


def parse_key_fields(spec: str) -> tuple[str, ...]:
    """``"customer_id:order_id:action"`` as its field names."""
    return tuple(part.strip() for part in spec.split(":"))
