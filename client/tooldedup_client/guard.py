"""``guard``: check before a tool runs, replay a repeat's stored result, report the outcome.

As a decorator, the call's arguments are the function's bound arguments by name. As a
context manager, the caller runs the tool inside the block when ``attempt.should_run``.
The session is an argument of the guard or, failing that, the ``current_session`` context
variable (set with ``session_scope``): never a hidden global.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import socket
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from tooldedup_client.client import AsyncTooldedup, Tooldedup
from tooldedup_client.errors import (
    InProgress,
    InvalidInput,
    Reconcile,
    ServiceUnavailable,
    TooldedupError,
)
from tooldedup_client.records import CheckResult, Decision, FailureClass, Status

__all__ = [
    "CONFIRM_ARG",
    "Attempt",
    "Guard",
    "ReplayedFailure",
    "current_session",
    "default_classify",
    "for_the_model",
    "session_scope",
]

logger = logging.getLogger(__name__)

current_session: ContextVar[str | None] = ContextVar("tooldedup_session", default=None)
Classify = Callable[[BaseException], FailureClass]
OnUnavailable = Literal["open", "closed"]
_NOT_ARGUMENTS = frozenset({"self", "cls"})
# The argument a model adds to a tool call to confirm what an ``ask`` asked about; taken
# off before the tool runs or the call is checked.
CONFIRM_ARG = "confirm_token"


@contextmanager
def session_scope(session_id: str) -> Iterator[None]:
    """Guards inside the block (in this task or thread) check in ``session_id``."""
    token = current_session.set(session_id)
    try:
        yield
    finally:
        current_session.reset(token)


_AMBIGUOUS_WORDS = ("timeout", "timedout", "connection", "disconnect", "network", "unreachable")


def default_classify(exc: BaseException) -> FailureClass:
    """Whatever may have reached the other side is ambiguous; other errors are retryable.

    Ambiguous: timeouts and lost connections, by type (``OSError``, which the requests
    library's errors also are, httpx's) or by name anywhere in the class's ancestry
    (``APITimeoutError``, ``ReadTimeoutError``, ``ServerDisconnectedError``): a repeat must
    reconcile before it runs again. Retryable: the rest, which did not take effect.
    """
    if isinstance(exc, OSError | socket.timeout | httpx.TransportError):
        return FailureClass.AMBIGUOUS
    names = (cls.__name__.lower() for cls in type(exc).__mro__)
    if any(word in name for name in names for word in _AMBIGUOUS_WORDS):
        return FailureClass.AMBIGUOUS
    return FailureClass.RETRYABLE


class ReplayedFailure(TooldedupError):
    """A repeat of a call that failed for good (poison): its stored error, raised again."""

    def __init__(self, call_id: str, error: Any) -> None:
        super().__init__(f"call {call_id} failed before: {error!r}", code="replayed_failure")
        self.call_id = call_id
        self.error = error


def _jsonable(value: Any) -> Any:
    """``value`` if JSON can hold it, else a record of what it was."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return {"unserializable": repr(value)[:2000], "type": type(value).__name__}
    return value


def _error_of(exc: BaseException) -> dict[str, str]:
    return {"type": type(exc).__name__, "message": str(exc)[:2000]}


@dataclass
class Attempt:
    """One guarded call: whether to run it, or the stored result of its first run."""

    check: CheckResult | None
    should_run: bool
    result: Any = None
    # The service's note for the model (a repeat or an ask), when it sent one.
    note: str | None = None
    # The check answered ``ask``: nothing ran; ``note`` says how to confirm.
    asked: bool = False
    _outcome: Any = field(default=None, repr=False)
    _failure: tuple[Any, FailureClass] | None = field(default=None, repr=False)

    @property
    def duplicate(self) -> bool:
        """Whether this call repeats one that already ran (``result`` is its result)."""
        return not self.should_run and self.check is not None and not self.asked

    def succeeded(self, result: Any = None) -> None:
        """Say the tool ran and returned ``result`` (stored for repeats to replay)."""
        self._outcome = result

    def failed(self, error: Any, failure_class: FailureClass = FailureClass.RETRYABLE) -> None:
        """Say the tool ran and reported a failure without raising (an error result)."""
        self._failure = (error, failure_class)


@dataclass
class Guard:
    """Put a tool behind the service: as ``@guard`` or ``with guard.attempt(args)``."""

    client: Tooldedup | AsyncTooldedup
    tool: str
    session_id: str | None = None
    scope: str | None = None
    classify: Classify = default_classify
    # What to do when the service cannot be reached: run the tool anyway ("open") or raise
    # ``ServiceUnavailable`` ("closed"). None: closed for tools whose policy is irreversible
    # (or unknown), open for the others.
    on_unavailable: OnUnavailable | None = None
    # The tool is called by a model: the guard handles ``ask`` (the decorator returns the
    # note; the model calls again with ``confirm_token=`` to run it anyway) and a repeat
    # returns the note with the earlier result.
    for_model: bool = False
    _side_effect: str | None = field(default=None, init=False, repr=False)

    def _session(self) -> str:
        session = self.session_id or current_session.get()
        if not session:
            raise ValueError(
                f"guard for {self.tool!r}: no session; pass session_id= or use session_scope()"
            )
        return session

    def _decide(self, check: CheckResult) -> Attempt:
        if check.decision is Decision.PROCEED:
            return Attempt(check, should_run=True)
        match = check.match
        call_id = match.call_id if match is not None else (check.call_id or "?")
        if check.decision is Decision.ASK:
            return Attempt(check, should_run=False, note=check.note, asked=True)
        if check.decision is Decision.IN_PROGRESS:
            raise InProgress(call_id, note=check.note)
        if check.decision is Decision.RECONCILE:
            raise Reconcile(call_id, note=check.note)
        assert match is not None
        if match.status is Status.FAILED:
            raise ReplayedFailure(call_id, match.error)
        return Attempt(check, should_run=False, result=match.result, note=check.note)

    def _answers(self) -> tuple[str, ...]:
        return ("ask",) if self.for_model else ()

    def _fail_open(self, exc: ServiceUnavailable) -> Attempt:
        mode = self.on_unavailable
        if mode is None:
            mode = "open" if self._side_effect in ("read", "write") else "closed"
        # Open only when the check surely stored nothing: a lost answer may be a claim
        # that another repeat would also find missing, and run the tool a second time.
        if mode == "closed" or exc.maybe_reached:
            raise exc
        logger.warning("tooldedup unavailable; running %s unguarded: %s", self.tool, exc)
        return Attempt(None, should_run=True)

    # -- blocking -------------------------------------------------------------------------

    def _sync_client(self) -> Tooldedup:
        if not isinstance(self.client, Tooldedup):
            raise TypeError("this guard has an AsyncTooldedup client: use it from async code")
        return self.client

    def _begin(self, args: Mapping[str, Any], confirm_token: str | None = None) -> Attempt:
        client = self._sync_client()
        if self._side_effect is None and self.on_unavailable is None:
            try:
                self._side_effect = str(client.policy(self.tool)["side_effect"])
            except ServiceUnavailable:
                pass
        try:
            check = client.check(
                self.tool,
                args,
                session_id=self._session(),
                scope=self.scope,
                answers=self._answers(),
                confirm_token=confirm_token,
            )
        except ServiceUnavailable as exc:
            return self._fail_open(exc)
        return self._decide(check)

    def _finish(self, attempt: Attempt, exc: BaseException | None) -> None:
        check = attempt.check
        if check is None or not attempt.should_run or check.call_id is None:
            return
        client = self._sync_client()
        outcome = _outcome(attempt, exc, self.classify)
        try:
            try:
                client.complete(check.call_id, **outcome)
            except InvalidInput as refused:
                # Too large or too deep to store: the outcome without its payload.
                client.complete(check.call_id, **_without_payload(outcome, refused))
        except TooldedupError as failed:
            # The tool ran; its claim stays pending until its lease ends, then repeats are
            # asked to reconcile. Nothing is lost by not raising over the tool's own result.
            logger.warning("could not report %s's outcome: %s", check.call_id, failed)

    @contextmanager
    def attempt(
        self, args: Mapping[str, Any], confirm_token: str | None = None
    ) -> Iterator[Attempt]:
        """Check ``args``; inside the block run the tool if ``should_run`` and call
        ``succeeded(result)``. An exception is reported as the call's failure.
        ``confirm_token``: from an ``ask`` about this very call, which then runs."""
        attempt = self._begin(args, confirm_token)
        try:
            yield attempt
        except BaseException as exc:
            self._finish(attempt, exc)
            raise
        self._finish(attempt, None)

    # -- asyncio --------------------------------------------------------------------------

    def _async_client(self) -> AsyncTooldedup:
        if not isinstance(self.client, AsyncTooldedup):
            raise TypeError("this guard has a blocking Tooldedup client: use it from sync code")
        return self.client

    async def _abegin(self, args: Mapping[str, Any], confirm_token: str | None = None) -> Attempt:
        client = self._async_client()
        if self._side_effect is None and self.on_unavailable is None:
            try:
                self._side_effect = str((await client.policy(self.tool))["side_effect"])
            except ServiceUnavailable:
                pass
        try:
            check = await client.check(
                self.tool,
                args,
                session_id=self._session(),
                scope=self.scope,
                answers=self._answers(),
                confirm_token=confirm_token,
            )
        except ServiceUnavailable as exc:
            return self._fail_open(exc)
        return self._decide(check)

    async def _afinish(self, attempt: Attempt, exc: BaseException | None) -> None:
        check = attempt.check
        if check is None or not attempt.should_run or check.call_id is None:
            return
        client = self._async_client()
        outcome = _outcome(attempt, exc, self.classify)
        try:
            try:
                await client.complete(check.call_id, **outcome)
            except InvalidInput as refused:
                await client.complete(check.call_id, **_without_payload(outcome, refused))
        except TooldedupError as failed:
            logger.warning("could not report %s's outcome: %s", check.call_id, failed)

    @asynccontextmanager
    async def aattempt(
        self, args: Mapping[str, Any], confirm_token: str | None = None
    ) -> AsyncIterator[Attempt]:
        """``attempt`` for asyncio."""
        attempt = await self._abegin(args, confirm_token)
        try:
            yield attempt
        except BaseException as exc:
            # Report even when cancelled: shielded, so the report itself is not cancelled.
            await asyncio.shield(self._afinish(attempt, exc))
            raise
        # Shielded too: a cancellation arriving now must not lose a result that exists.
        await asyncio.shield(self._afinish(attempt, None))

    # -- the decorator --------------------------------------------------------------------

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Guard ``fn``: its bound arguments, by name, are the call's arguments."""
        signature = inspect.signature(fn)
        # A model confirms an ask with an extra argument the function does not take.
        takes_confirm = not self.for_model or CONFIRM_ARG in signature.parameters

        def arguments(*args: Any, **kwargs: Any) -> dict[str, Any]:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return {k: v for k, v in bound.arguments.items() if k not in _NOT_ARGUMENTS}

        def confirmation(kwargs: dict[str, Any]) -> str | None:
            token = None if takes_confirm else kwargs.pop(CONFIRM_ARG, None)
            return token if isinstance(token, str) and token else None

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                token = confirmation(kwargs)
                async with self.aattempt(arguments(*args, **kwargs), token) as attempt:
                    if not attempt.should_run:
                        return for_the_model(attempt) if self.for_model else attempt.result
                    result = await fn(*args, **kwargs)
                    attempt.succeeded(result)
                    return result

            return guarded_async

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            token = confirmation(kwargs)
            with self.attempt(arguments(*args, **kwargs), token) as attempt:
                if not attempt.should_run:
                    return for_the_model(attempt) if self.for_model else attempt.result
                result = fn(*args, **kwargs)
                if inspect.isawaitable(result):
                    # Nothing has run yet: storing this as the result would be a lie.
                    if inspect.iscoroutine(result):
                        result.close()
                    raise TypeError(
                        f"{fn!r} returned an awaitable: give the guard an AsyncTooldedup"
                        " client and an async function"
                    )
                attempt.succeeded(result)
                return result

        return guarded


def for_the_model(attempt: Attempt) -> Any:
    """What a model reads for a call that did not run: an ask's note; a repeat's note and
    the earlier result (the result alone when the service sent no note)."""
    if attempt.asked:
        return attempt.note or "tooldedup: this call may repeat an earlier one; it did not run"
    if attempt.note is None:
        return attempt.result
    result = attempt.result
    text = result if isinstance(result, str) else json.dumps(_jsonable(result))
    return f"{attempt.note}\nThe earlier call's result: {text}"


def _without_payload(outcome: dict[str, Any], refused: TooldedupError) -> dict[str, Any]:
    """``outcome`` with its result or error replaced by why it could not be stored."""
    note = {"unstored": refused.message[:500]}
    if "result" in outcome:
        return {**outcome, "result": note}
    return {**outcome, "error": note}


def _outcome(attempt: Attempt, exc: BaseException | None, classify: Classify) -> dict[str, Any]:
    """The completion to report for a run that ended with ``exc`` (or returned)."""
    if exc is None and attempt._failure is not None:
        error, failure_class = attempt._failure
        return {"status": Status.FAILED, "error": _jsonable(error), "failure_class": failure_class}
    if exc is None:
        return {"status": Status.SUCCEEDED, "result": _jsonable(attempt._outcome)}
    if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit)):
        # Stopped from outside, mid-run: whether it took effect is not known.
        return {"status": Status.UNKNOWN, "error": _error_of(exc)}
    return {"status": Status.FAILED, "error": _error_of(exc), "failure_class": classify(exc)}
