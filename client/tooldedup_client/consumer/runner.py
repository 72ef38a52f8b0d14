"""The consumer loop: check, call, persist, commit, for every message a broker delivers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tooldedup_client.client import AsyncTooldedup
from tooldedup_client.consumer.broker import Broker, ConsumerRefused
from tooldedup_client.consumer.budget import TokenBudget, tokens_in_result
from tooldedup_client.consumer.dead_letters import (
    Classifier,
    DeadLetter,
    classify_failure,
    default_route,
    triage,
)
from tooldedup_client.consumer.key_recipes import KeyFunction, MissingKey
from tooldedup_client.consumer.leases import kept_alive
from tooldedup_client.consumer.message import Delivery, Message
from tooldedup_client.consumer.retries import StopRequested, until_answered
from tooldedup_client.consumer.runner_settings import ConsumerMetrics, ConsumerSettings
from tooldedup_client.errors import Conflict, IdempotencyKeyReused, InvalidInput
from tooldedup_client.guard import _jsonable
from tooldedup_client.records import CheckResult, Decision, FailureClass, Match, Status

__all__ = ["ConsumerRunner", "DuplicateHook", "Handler"]

logger = logging.getLogger(__name__)
T = TypeVar("T")
Handler = Callable[[Message], Any]
# Told each message answered from the store: the message and the stored decision.
DuplicateHook = Callable[[Message, Any], None]


@dataclass(slots=True)
class _Deferred:
    delivery: Delivery
    due: float


@dataclass(slots=True)
class _Counts:
    handled: int = 0
    duplicates: int = 0
    deferred: int = 0
    dead_letters: dict[str, int] = field(default_factory=dict)


class ConsumerRunner:
    """Reads ``broker`` and runs ``handler`` once per key, in the fixed order: check, call,
    persist (report), commit (ack)."""

    def __init__(
        self,
        broker: Broker,
        td: AsyncTooldedup,
        handler: Handler,
        settings: ConsumerSettings,
        *,
        key: KeyFunction | None = None,
        on_duplicate: DuplicateHook | None = None,
        classifier: Classifier | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.broker = broker
        self.settings = settings
        self._td = td
        self._handler = handler
        self._key = key
        self._on_duplicate = on_duplicate
        self._classifier = classifier
        self._clock = clock
        self._deferred: dict[str, _Deferred] = {}
        # Fetched and not acked yet, by delivery id.
        self._held: dict[str, Delivery] = {}
        self._counts = _Counts()
        self._lease_seconds = 300.0
        self._stop = asyncio.Event()
        self.budget = (
            None
            if settings.tokens_per_minute is None
            else TokenBudget(
                settings.tokens_per_minute,
                window_seconds=settings.budget_window_seconds,
                clock=clock,
            )
        )

    def metrics(self) -> ConsumerMetrics:
        """What the runner has done so far."""
        counts, budget = self._counts, self.budget
        return ConsumerMetrics(
            handled=counts.handled,
            duplicates=counts.duplicates,
            deferred=counts.deferred,
            dead_letters=dict(counts.dead_letters),
            tokens_used=0 if budget is None else budget.tokens_used,
            paused_seconds=0.0 if budget is None else budget.paused_seconds,
        )

    def stop(self) -> None:
        """Finish the message under way, then return from ``run``."""
        self._stop.set()

    async def run(self, *, until_idle: bool = False) -> ConsumerMetrics:
        """Consume until ``stop`` (or, with ``until_idle``, until nothing is left to do)."""
        try:
            await self._retry_until_stopped("connect to the broker", self.broker.start)
            policy = await self._retry_until_stopped(
                "read the tool's policy", lambda: self._td.policy(self.tool)
            )
        except StopRequested as exc:
            # Nothing fetched yet: nothing to finish.
            logger.info("%s; not consuming", exc)
            return self.metrics()
        if policy.get("side_effect") == "read":
            # A read tool proceeds without a claim: nothing would stop a second call.
            raise ConsumerRefused(f"tool {self.tool!r} is a read tool in tooldedup: no claims")
        self._lease_seconds = float(policy.get("lease_seconds", self._lease_seconds))
        logger.info(
            "consuming %s as tool %r in session %r", self.broker.name, self.tool, self.session
        )
        renewer = asyncio.create_task(self._renew_held())
        try:
            await self._consume(until_idle)
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
        return self.metrics()

    async def _consume(self, until_idle: bool) -> None:
        while not self._stop.is_set():
            await self._pause_for_budget()
            due = [d for d in self._deferred.values() if d.due <= self._clock()]
            for deferred in due:
                del self._deferred[deferred.delivery.id]
                await self._process(deferred.delivery)
            if self._stop.is_set():
                break
            try:
                batch = await self._retry_until_stopped("read from the broker", self._fetch)
            except StopRequested as exc:
                logger.info("%s", exc)
                break
            if not batch and not self._deferred and until_idle:
                break
            self._held.update((delivery.id, delivery) for delivery in batch)
            for delivery in batch:
                if delivery.id in self._deferred:
                    continue  # redelivered while this runner waits on it
                # Before every message, not every poll: a batch must not overrun the budget.
                await self._pause_for_budget()
                await self._process(delivery)
                if self._stop.is_set():
                    break

    async def _fetch(self) -> list[Delivery]:
        # Waiting on the broker must not delay messages deferred for a short while.
        wait = 0.2 if self._deferred else self.settings.poll_seconds
        return await self.broker.fetch(self.settings.batch, wait)

    @property
    def tool(self) -> str:
        """The tool name the checks use."""
        return self.settings.tool

    @property
    def session(self) -> str:
        """The session the checks go to."""
        return self.settings.session or self.broker.name

    async def _pause_for_budget(self) -> None:
        if self.budget is not None:
            await self.budget.pause(self._stop)

    async def _renew_held(self) -> None:
        """Renew the broker's hold on every message fetched and not yet acked: the one a
        handler runs on, the rest of its batch, and those waiting on another's claim."""
        while True:
            await asyncio.sleep(self.settings.keepalive_seconds)
            for delivery in list(self._held.values()):
                try:
                    await self.broker.keep_alive(delivery)
                except Exception as exc:
                    # Best effort: a failed renewal must not stop the next ones, nor the loop.
                    logger.warning("broker lease of %s not renewed: %r", delivery.id, exc)

    async def _retry(self, what: str, step: Callable[[], Awaitable[T]]) -> T:
        """For the steps of a message under way (check, report, dead letter, ack): a stop
        waits for them, so the message is finished."""
        return await until_answered(what, step, self.settings.max_backoff_seconds)

    async def _retry_until_stopped(self, what: str, step: Callable[[], Awaitable[T]]) -> T:
        """For the steps between messages (connect, policy, fetch): a stop ends the wait and
        raises ``StopRequested``."""
        return await until_answered(what, step, self.settings.max_backoff_seconds, stop=self._stop)

    async def _process(self, delivery: Delivery) -> None:
        try:
            key = (
                delivery.default_key
                if self._key is None
                else self._key(delivery.body, delivery.default_key)
            )
            if not key:
                raise MissingKey(
                    "the message has no broker id to key on; give it one or a key field"
                )
        except MissingKey as exc:
            logger.error("message %s: %s; dead-lettered as poison", delivery.id, exc)
            await self._dead_letter(delivery, "", FailureClass.POISON, str(exc), None)
            return
        message = Message(delivery.id, key, delivery.body, dict(delivery.headers))
        failure: tuple[str, str] | None = None
        for attempt in range(1, self.settings.max_attempts + 1):
            failure = await self._attempt(delivery, message)
            if failure is None:
                return
            if attempt < self.settings.max_attempts:
                pause = min(self.settings.max_backoff_seconds, 0.2 * 2**attempt)
                logger.warning(
                    "message %s: attempt %d failed (%s); retrying in %.1f s",
                    delivery.id,
                    attempt,
                    failure[0],
                    pause,
                )
                await asyncio.sleep(pause)
        assert failure is not None
        error, call_id = failure
        logger.error("message %s: retries exhausted (%s); dead-lettered", delivery.id, error)
        await self._dead_letter(delivery, key, FailureClass.RETRYABLE, error, call_id)

    async def _check(self, delivery: Delivery, message: Message) -> CheckResult | None:
        body = message.body
        args = body if isinstance(body, dict) else {"body": body}
        # One token per processing of a delivery: a check resent after a lost answer gets
        # its own proceed back, while a restarted process never mistakes another's claim.
        token = uuid.uuid4().hex
        try:
            return await self._retry(
                "check with tooldedup",
                lambda: self._td.check(
                    self.tool,
                    args,
                    session_id=self.session,
                    run_id=message.key,
                    step="consume",
                    idempotency_key=message.key,
                    attempt_token=token,
                ),
            )
        except IdempotencyKeyReused as exc:
            note = f"key {message.key!r} was already used for another body ({exc.message})"
            logger.error("message %s: %s; dead-lettered as poison", delivery.id, note)
            await self._dead_letter(delivery, message.key, FailureClass.POISON, note, None)
        except InvalidInput as exc:
            logger.error(
                "message %s: tooldedup refused the check (%s); dead-lettered as poison",
                delivery.id,
                exc.message,
            )
            await self._dead_letter(delivery, message.key, FailureClass.POISON, exc.message, None)
        return None

    async def _attempt(self, delivery: Delivery, message: Message) -> tuple[str, str] | None:
        """One check and what follows; a retryable failure comes back as (error, call id)."""
        checked = await self._check(delivery, message)
        if checked is None:
            return None
        if checked.decision is Decision.DUPLICATE:
            await self._duplicate(delivery, message, checked.match)
            return None
        if checked.decision is Decision.IN_PROGRESS:
            self._counts.deferred += 1
            logger.info("message %s: in progress elsewhere; left pending", delivery.id)
            due = self._clock() + self.settings.in_progress_retry_seconds
            self._deferred[delivery.id] = _Deferred(delivery, due)
            return None
        if checked.decision is Decision.RECONCILE:
            call_id = None if checked.match is None else checked.match.call_id
            note = "a claim of this key has an unknown outcome: reconcile before running again"
            logger.error("message %s: %s (call %s); dead-lettered", delivery.id, note, call_id)
            await self._dead_letter(delivery, message.key, FailureClass.AMBIGUOUS, note, call_id)
            return None
        if checked.call_id is None:
            # The tool became a read tool since the start: no claim, so no call.
            logger.error("message %s: proceed without a claim; left pending", delivery.id)
            self._deferred[delivery.id] = _Deferred(delivery, self._clock() + 5.0)
            return None
        return await self._call(delivery, message, checked.call_id, checked.check_id)

    async def _call(
        self, delivery: Delivery, message: Message, call_id: str, check_id: str
    ) -> tuple[str, str] | None:
        claim = (call_id, check_id)
        async with kept_alive(self._td, delivery.id, claim, self._lease_seconds):
            try:
                result = await asyncio.to_thread(self._handler, message)
            except Exception as exc:
                return await self._failed(delivery, message, call_id, exc)
            self._counts.handled += 1
            if self.budget is not None:
                self.budget.spend(message.tokens.used or tokens_in_result(result))
            await self._report(call_id, Status.SUCCEEDED, result=_jsonable(result))
        await self._ack(delivery)
        return None

    async def _failed(
        self, delivery: Delivery, message: Message, call_id: str, exc: Exception
    ) -> tuple[str, str] | None:
        failure = classify_failure(exc)
        error = f"{type(exc).__name__}: {exc}"
        logger.warning("message %s: handler raised %s (%s)", delivery.id, error, failure.value)
        if failure is FailureClass.RETRYABLE:
            await self._report(call_id, Status.FAILED, error=error, failure_class=failure)
            return error, call_id
        # The dead letter first: a crash before the report leaves the claim to reconcile,
        # never a failure stored with no dead letter for it.
        await self._dead_letter(delivery, message.key, failure, error, call_id, ack=False)
        status = Status.FAILED if failure is FailureClass.POISON else Status.UNKNOWN
        await self._report(
            call_id,
            status,
            error=error,
            failure_class=failure if failure is FailureClass.POISON else None,
        )
        await self._ack(delivery)
        return None

    async def _report(
        self,
        call_id: str,
        status: Status,
        *,
        result: Any = None,
        error: Any = None,
        failure_class: FailureClass | None = None,
    ) -> None:
        try:
            await self._retry(
                f"report call {call_id}",
                lambda: self._td.complete(
                    call_id, status, result=result, error=error, failure_class=failure_class
                ),
            )
        except Conflict as exc:
            # Someone reconciled the call meanwhile: the stored outcome stands.
            logger.error("call %s: report refused: %s", call_id, exc.message)

    async def _duplicate(self, delivery: Delivery, message: Message, match: Match | None) -> None:
        self._counts.duplicates += 1
        stored = None if match is None else match.result
        logger.info(
            "message %s: key %s already decided (call %s); acked without calling the handler",
            delivery.id,
            message.key,
            None if match is None else match.call_id,
        )
        if self._on_duplicate is not None and match is not None:
            if match.status is Status.SUCCEEDED:
                try:
                    await asyncio.to_thread(self._on_duplicate, message, stored)
                except Exception:
                    # The read model missed the replay: keep the message and replay it again.
                    logger.exception(
                        "message %s: the duplicate hook failed; left pending", delivery.id
                    )
                    due = self._clock() + self.settings.in_progress_retry_seconds
                    self._deferred[delivery.id] = _Deferred(delivery, due)
                    return
        await self._ack(delivery)

    async def _dead_letter(
        self,
        delivery: Delivery,
        key: str,
        failure: FailureClass,
        error: str,
        call_id: str | None,
        *,
        ack: bool = True,
    ) -> None:
        letter = DeadLetter(
            delivery.id,
            key,
            delivery.body,
            dict(delivery.headers),
            failure,
            error,
            call_id,
            default_route(failure),
        )
        letter = await asyncio.to_thread(
            triage, letter, self._classifier, self.settings.classifier_timeout_seconds
        )
        await self._retry(
            "publish a dead letter", lambda: self.broker.dead_letter(delivery, letter)
        )
        counts = self._counts.dead_letters
        counts[failure.value] = counts.get(failure.value, 0) + 1
        if ack:
            await self._ack(delivery)

    async def _ack(self, delivery: Delivery) -> None:
        await self._retry(f"ack {delivery.id}", lambda: self.broker.ack(delivery))
        self._held.pop(delivery.id, None)
