"""Key recipes, failure classes and dead-letter triage of the consumer."""

from __future__ import annotations

import time
from typing import Any

import pytest
from tooldedup_client import FailureClass
from tooldedup_client.consumer import (
    Ambiguous,
    ConsumerSettings,
    DeadLetter,
    MissingKey,
    Poison,
    Retryable,
    Route,
    classify_failure,
    field_key,
    nats_key,
    parse_key_fields,
    rabbitmq_key,
    redis_key,
    triage,
)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (redis_key("orders", "1700000000000-0"), "redis:orders:1700000000000-0"),
        (rabbitmq_key("orders", "m-1"), "amqp:orders:m-1"),
        (nats_key("ORDERS", 17), "nats:ORDERS:17"),
    ],
)
def test_broker_keys(key: str, expected: str) -> None:
    assert key == expected


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ({"customer_id": "c1", "order_id": 7, "action": "refund"}, "key:c1:7:refund"),
        ({"customer_id": "c1", "order_id": 7, "action": "refund", "note": "x"}, "key:c1:7:refund"),
    ],
)
def test_a_logical_key_joins_body_fields(body: dict[str, Any], key: str) -> None:
    make = field_key(parse_key_fields("customer_id:order_id:action"))
    assert make(body, "redis:orders:1-0") == key


@pytest.mark.parametrize(
    ("body", "missing"),
    [
        ({"customer_id": "c1", "action": "refund"}, "order_id"),
        ({"customer_id": "c1", "order_id": "", "action": "refund"}, "order_id"),
        ({"customer_id": None, "order_id": 1, "action": "refund"}, "customer_id"),
        ("plain text", "customer_id"),
        (["c1", 7], "customer_id"),
    ],
)
def test_a_body_without_a_key_field_says_which(body: Any, missing: str) -> None:
    make = field_key(parse_key_fields("customer_id:order_id:action"))
    with pytest.raises(MissingKey, match=missing):
        make(body, "id")


@pytest.mark.parametrize("spec", ["", "a::b", ":"])
def test_a_blank_key_field_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="blank"):
        field_key(parse_key_fields(spec))


@pytest.mark.parametrize(
    ("exc", "failure"),
    [
        (Retryable("429"), FailureClass.RETRYABLE),
        (Poison("bad parameter"), FailureClass.POISON),
        (Ambiguous("timed out after sending"), FailureClass.AMBIGUOUS),
        (KeyError("order"), FailureClass.POISON),
        (TypeError("not a dict"), FailureClass.POISON),
        (ValueError("not a number"), FailureClass.POISON),
        (TimeoutError(), FailureClass.AMBIGUOUS),
        (ConnectionResetError(), FailureClass.AMBIGUOUS),
        (RuntimeError("provider 500"), FailureClass.RETRYABLE),
    ],
)
def test_failures_are_classified(exc: Exception, failure: FailureClass) -> None:
    assert classify_failure(exc) is failure


def _letter() -> DeadLetter:
    return DeadLetter(
        "1-0", "key:1", {"order": 1}, {}, FailureClass.POISON, "Poison: x", "call_1",
        Route.HUMAN_REVIEW,
    )  # fmt: skip


def _hang(letter: DeadLetter) -> Route:
    time.sleep(2)
    return Route.REPROCESS


@pytest.mark.parametrize(
    ("classifier", "route"),
    [
        (None, Route.HUMAN_REVIEW),
        (lambda letter: Route.REPROCESS, Route.REPROCESS),
        (lambda letter: "compensate", Route.COMPENSATE),
        (lambda letter: "elsewhere", Route.HUMAN_REVIEW),
        (lambda letter: 1 / 0, Route.HUMAN_REVIEW),
        (_hang, Route.HUMAN_REVIEW),
    ],
)
def test_triage_falls_back_to_human_review(classifier: Any, route: Route) -> None:
    routed = triage(_letter(), classifier, timeout=0.2)
    assert routed.route is route
    assert routed.call_id == "call_1"
    assert '"class": "poison"' in routed.to_json()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tool": " "}, "tool"),
        ({"tool": "t", "batch": 0}, "batch"),
        ({"tool": "t", "tokens_per_minute": 0}, "tokens_per_minute"),
        ({"tool": "t", "max_attempts": 0}, "max_attempts"),
        ({"tool": "t", "keepalive_seconds": 0}, "keepalive_seconds"),
    ],
)
def test_settings_refuse_nonsense(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ConsumerSettings(**options)
