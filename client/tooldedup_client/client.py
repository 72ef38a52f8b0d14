"""``Tooldedup`` and ``AsyncTooldedup``: the service's endpoints as typed calls.

A check carries an attempt token made here, once per logical check, and the client resends
the same token when a connection fails or the service answers 503. So a ``proceed`` whose
answer was lost on the way comes back as the same ``proceed``, never as ``in_progress``
against its own claim.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from tooldedup_client.errors import ServiceUnavailable, error_from_response
from tooldedup_client.records import Call, CheckResult, FailureClass, Feedback, Status

__all__ = ["AsyncTooldedup", "Tooldedup"]

# 503: the service said nothing was stored. 502 and 504: a proxy in between lost the
# answer (or the request); the attempt token makes resending either one safe.
_RETRY_STATUSES = frozenset({502, 503, 504})


# The header that says which answers beyond the first four this client handles: an older
# service ignores it, where an unknown body field would be refused.
ANSWERS_HEADER = "X-Tooldedup-Answers"


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    path: str
    body: dict[str, Any] | None = None
    headers: Mapping[str, str] | None = None


def _check_request(
    tool: str,
    args: Mapping[str, Any],
    session_id: str,
    scope: str | None,
    run_id: str | None,
    step: str | int | None,
    idempotency_key: str | None,
    dry_run: bool,
    attempt_token: str,
    answers: Sequence[str] = (),
    confirm_token: str | None = None,
) -> _Request:
    body: dict[str, Any] = {
        "session_id": session_id,
        "tool": tool,
        "args": dict(args),
        "attempt_token": attempt_token,
        "dry_run": dry_run,
    }
    for name, value in (
        ("scope", scope),
        ("run_id", run_id),
        ("step", step),
        ("idempotency_key", idempotency_key),
        ("confirm_token", confirm_token),
    ):
        if value is not None:
            body[name] = value
    headers = {ANSWERS_HEADER: ", ".join(answers)} if answers else None
    return _Request("POST", "/v1/check", body, headers)


def _complete_request(
    call_id: str,
    status: Status | str,
    result: Any,
    error: Any,
    failure_class: FailureClass | str | None,
) -> _Request:
    body: dict[str, Any] = {"status": str(status), "result": result, "error": error}
    if failure_class is not None:
        body["failure_class"] = str(failure_class)
    return _Request("POST", f"/v1/calls/{quote(call_id, safe='')}/complete", body)


def _lease_request(call_id: str, check_id: str, seconds: float | None) -> _Request:
    body: dict[str, Any] = {"check_id": check_id}
    if seconds is not None:
        body["seconds"] = seconds
    return _Request("POST", f"/v1/calls/{quote(call_id, safe='')}/lease", body)


def _feedback_request(check_id: str, label: str, note: str | None, source: str) -> _Request:
    body: dict[str, Any] = {"check_id": check_id, "label": label, "source": source}
    if note is not None:
        body["note"] = note
    return _Request("POST", "/v1/feedback", body)


def _headers(api_key: str | None) -> dict[str, str]:
    return {} if api_key is None else {"Authorization": f"Bearer {api_key}"}


def _answer(response: httpx.Response) -> Any:
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code >= 400:
        raise error_from_response(response.status_code, body, response.headers.get("Retry-After"))
    return body


def _unreachable(exc: httpx.TransportError) -> ServiceUnavailable:
    """The error for a request that got no answer (its text names no URL or credential)."""
    error = ServiceUnavailable(f"tooldedup did not answer ({type(exc).__name__})")
    # A request that never connected reached nothing; any other may have been acted on.
    error.maybe_reached = not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
    return error


def _pause(attempt: int, response: httpx.Response | None) -> float:
    """Seconds before retry ``attempt``: the server's Retry-After (capped), else a backoff."""
    if response is not None:
        try:
            wait = float(str(response.headers.get("Retry-After", "")))
        except ValueError:
            pass
        else:
            return min(2.0, max(0.0, wait))
    return min(2.0, 0.1 * 2.0**attempt)


class Tooldedup:
    """A blocking client; safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 10.0,
        retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        self.base_url = base_url
        self.retries = retries
        self._http = httpx.Client(
            base_url=base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )

    def _send(self, request: _Request) -> Any:
        response: httpx.Response | None = None
        for attempt in range(self.retries + 1):
            try:
                response = self._http.request(
                    request.method, request.path, json=request.body, headers=request.headers
                )
            except httpx.TransportError as exc:
                if attempt == self.retries:
                    raise _unreachable(exc) from exc
                time.sleep(_pause(attempt, None))
                continue
            if response.status_code not in _RETRY_STATUSES or attempt == self.retries:
                return _answer(response)
            time.sleep(_pause(attempt, response))
        raise AssertionError("unreachable")  # pragma: no cover

    def check(
        self,
        tool: str,
        args: Mapping[str, Any],
        *,
        session_id: str,
        scope: str | None = None,
        run_id: str | None = None,
        step: str | int | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        attempt_token: str | None = None,
        answers: Sequence[str] = (),
        confirm_token: str | None = None,
    ) -> CheckResult:
        """Ask whether ``tool(**args)`` may run; ``proceed`` means a claim is stored.

        ``answers=["ask"]``: this caller handles ``ask``; ``confirm_token``: the token of
        an ``ask`` about this very call, which then runs.
        """
        token = attempt_token or uuid.uuid4().hex
        request = _check_request(
            tool,
            args,
            session_id,
            scope,
            run_id,
            step,
            idempotency_key,
            dry_run,
            token,
            answers,
            confirm_token,
        )
        return CheckResult.from_json(self._send(request))

    def complete(
        self,
        call_id: str,
        status: Status | str,
        *,
        result: Any = None,
        error: Any = None,
        failure_class: FailureClass | str | None = None,
    ) -> Call:
        """Report a claimed call's outcome (repeating the same report is harmless)."""
        request = _complete_request(call_id, status, result, error, failure_class)
        return Call.from_json(self._send(request))

    def extend_lease(self, call_id: str, check_id: str, *, seconds: float | None = None) -> Call:
        """Keep a pending claim alive: ``check_id`` is the check whose ``proceed`` claimed it;
        ``seconds`` from now (default: the tool's lease)."""
        return Call.from_json(self._send(_lease_request(call_id, check_id, seconds)))

    def get_call(self, call_id: str) -> Call:
        """One stored call."""
        return Call.from_json(self._send(_Request("GET", f"/v1/calls/{quote(call_id, safe='')}")))

    def feedback(
        self, check_id: str, label: str, *, note: str | None = None, source: str = "agent"
    ) -> Feedback:
        """Label a check 'duplicate' or 'distinct' ('distinct' on a match stops it recurring)."""
        return Feedback.from_json(self._send(_feedback_request(check_id, label, note, source)))

    def policy(self, tool: str) -> dict[str, Any]:
        """The policy in force for ``tool``."""
        answer: dict[str, Any] = self._send(
            _Request("GET", f"/v1/tools/{quote(tool, safe='')}/policy")
        )
        return dict(answer["policy"])

    def guard(self, tool: str, **options: Any) -> Any:
        """A ``Guard`` for ``tool`` (see ``tooldedup_client.guard.Guard``)."""
        from tooldedup_client.guard import Guard

        return Guard(self, tool, **options)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> Tooldedup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncTooldedup:
    """The same client for asyncio."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 10.0,
        retries: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        self.base_url = base_url
        self.retries = retries
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(api_key), timeout=timeout, transport=transport
        )

    async def _send(self, request: _Request) -> Any:
        response: httpx.Response | None = None
        for attempt in range(self.retries + 1):
            try:
                response = await self._http.request(
                    request.method, request.path, json=request.body, headers=request.headers
                )
            except httpx.TransportError as exc:
                if attempt == self.retries:
                    raise _unreachable(exc) from exc
                await asyncio.sleep(_pause(attempt, None))
                continue
            if response.status_code not in _RETRY_STATUSES or attempt == self.retries:
                return _answer(response)
            await asyncio.sleep(_pause(attempt, response))
        raise AssertionError("unreachable")  # pragma: no cover

    async def check(
        self,
        tool: str,
        args: Mapping[str, Any],
        *,
        session_id: str,
        scope: str | None = None,
        run_id: str | None = None,
        step: str | int | None = None,
        idempotency_key: str | None = None,
        dry_run: bool = False,
        attempt_token: str | None = None,
        answers: Sequence[str] = (),
        confirm_token: str | None = None,
    ) -> CheckResult:
        """Ask whether ``tool(**args)`` may run; ``proceed`` means a claim is stored.

        ``answers=["ask"]``: this caller handles ``ask``; ``confirm_token``: the token of
        an ``ask`` about this very call, which then runs.
        """
        token = attempt_token or uuid.uuid4().hex
        request = _check_request(
            tool,
            args,
            session_id,
            scope,
            run_id,
            step,
            idempotency_key,
            dry_run,
            token,
            answers,
            confirm_token,
        )
        return CheckResult.from_json(await self._send(request))

    async def complete(
        self,
        call_id: str,
        status: Status | str,
        *,
        result: Any = None,
        error: Any = None,
        failure_class: FailureClass | str | None = None,
    ) -> Call:
        """Report a claimed call's outcome (repeating the same report is harmless)."""
        request = _complete_request(call_id, status, result, error, failure_class)
        return Call.from_json(await self._send(request))

    async def extend_lease(
        self, call_id: str, check_id: str, *, seconds: float | None = None
    ) -> Call:
        """Keep a pending claim alive: ``check_id`` is the check whose ``proceed`` claimed it;
        ``seconds`` from now (default: the tool's lease)."""
        return Call.from_json(await self._send(_lease_request(call_id, check_id, seconds)))

    async def get_call(self, call_id: str) -> Call:
        """One stored call."""
        path = f"/v1/calls/{quote(call_id, safe='')}"
        return Call.from_json(await self._send(_Request("GET", path)))

    async def feedback(
        self, check_id: str, label: str, *, note: str | None = None, source: str = "agent"
    ) -> Feedback:
        """Label a check 'duplicate' or 'distinct' ('distinct' on a match stops it recurring)."""
        request = _feedback_request(check_id, label, note, source)
        return Feedback.from_json(await self._send(request))

    async def policy(self, tool: str) -> dict[str, Any]:
        """The policy in force for ``tool``."""
        answer: dict[str, Any] = await self._send(
            _Request("GET", f"/v1/tools/{quote(tool, safe='')}/policy")
        )
        return dict(answer["policy"])

    def guard(self, tool: str, **options: Any) -> Any:
        """A ``Guard`` for ``tool`` (see ``tooldedup_client.guard.Guard``)."""
        from tooldedup_client.guard import Guard

        return Guard(self, tool, **options)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncTooldedup:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
