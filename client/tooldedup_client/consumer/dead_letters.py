"""Why a message left the stream: failure classes, the routes a triage picks, the record kept.

A handler says what went wrong by raising ``Retryable``, ``Poison`` or ``Ambiguous``; any
other exception is classified by ``classify_failure``. A dead letter goes to one route:
REPROCESS, HUMAN_REVIEW or COMPENSATE; a classifier hook may pick it, under a hard timeout.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tooldedup_client.guard import default_classify
from tooldedup_client.records import FailureClass

__all__ = [
    "Ambiguous",
    "Classifier",
    "DeadLetter",
    "HandlerFailure",
    "Poison",
    "Retryable",
    "Route",
    "classify_failure",
    "default_route",
    "triage",
]

logger = logging.getLogger(__name__)


class Route(StrEnum):
    """Where a dead letter goes next."""

    REPROCESS = "reprocess"  # transient: send it through again later
    HUMAN_REVIEW = "human_review"  # a data problem for a person
    COMPENSATE = "compensate"  # an effect may have happened: undo or confirm it


class HandlerFailure(Exception):
    """A handler's failure that names its class."""

    failure_class = FailureClass.RETRYABLE


class Retryable(HandlerFailure):
    """Nothing happened; a retry may work (a provider's timeout before the call, a 429)."""

    failure_class = FailureClass.RETRYABLE


class Poison(HandlerFailure):
    """This message will never work: a person must look at it."""

    failure_class = FailureClass.POISON


class Ambiguous(HandlerFailure):
    """An effect may have happened (a payment whose confirmation timed out)."""

    failure_class = FailureClass.AMBIGUOUS


# A body the handler cannot read fails the same way every time.
_POISON_TYPES = (LookupError, TypeError, ValueError, UnicodeError)


def classify_failure(exc: BaseException) -> FailureClass:
    """A handler's exception as a failure class: its own if it names one; a body the handler
    cannot read (KeyError, TypeError, ValueError) is poison; a lost connection or timeout is
    ambiguous; anything else is retryable."""
    if isinstance(exc, HandlerFailure):
        return exc.failure_class
    if isinstance(exc, _POISON_TYPES):
        return FailureClass.POISON
    return default_classify(exc)


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A message that left the stream, and why."""

    message_id: str
    key: str
    body: Any
    headers: dict[str, str]
    failure_class: FailureClass
    error: str
    call_id: str | None
    route: Route
    note: str = ""

    def to_json(self) -> str:
        """The dead letter as one JSON object."""
        return json.dumps(
            {
                "message_id": self.message_id,
                "key": self.key,
                "body": self.body,
                "headers": self.headers,
                "class": self.failure_class.value,
                "error": self.error,
                "call_id": self.call_id,
                "route": self.route.value,
                "note": self.note,
            },
            default=repr,
            sort_keys=True,
        )


Classifier = Callable[[DeadLetter], Route]


def default_route(failure_class: FailureClass) -> Route:
    """The route of a class when no classifier picks one."""
    return {
        FailureClass.RETRYABLE: Route.REPROCESS,
        FailureClass.POISON: Route.HUMAN_REVIEW,
        FailureClass.AMBIGUOUS: Route.COMPENSATE,
    }[failure_class]


def triage(letter: DeadLetter, classifier: Classifier | None, timeout: float) -> DeadLetter:
    """``letter`` routed by ``classifier`` (an LLM that triages, say), given at most
    ``timeout`` seconds; a classifier that fails, hangs or answers nonsense sends it to
    HUMAN_REVIEW."""
    if classifier is None:
        return letter
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tooldedup-triage")
    try:
        route = Route(pool.submit(classifier, letter).result(timeout=timeout))
    except Exception as exc:
        logger.warning(
            "dead letter %s: the classifier failed (%s); routed to human_review",
            letter.message_id,
            type(exc).__name__,
        )
        route = Route.HUMAN_REVIEW
    finally:
        # A hung classifier is left behind, not waited for: the timeout is hard.
        pool.shutdown(wait=False, cancel_futures=True)
    return DeadLetter(
        letter.message_id,
        letter.key,
        letter.body,
        letter.headers,
        letter.failure_class,
        letter.error,
        letter.call_id,
        route,
        letter.note,
    )
