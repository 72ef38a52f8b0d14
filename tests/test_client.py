"""The light client against a real `tooldedup serve`: typed calls, guard, attempt tokens."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tooldedup_client import (
    AsyncTooldedup,
    ConfirmTokenRejected,
    Conflict,
    Decision,
    FailureClass,
    Forbidden,
    IdempotencyKeyReused,
    InProgress,
    LeaseLost,
    NotFound,
    RateLimited,
    ServiceUnavailable,
    Status,
    Tooldedup,
    Unauthorized,
    default_classify,
    session_scope,
)

from tests.server import serve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[str]:
    """One real server for the module; each test uses sessions of its own."""
    db = tmp_path_factory.mktemp("client") / "ledger.db"
    with serve(db, model_cache) as client:
        yield str(client.base_url)


@pytest.fixture
def td(base_url: str) -> Iterator[Tooldedup]:
    with Tooldedup(base_url) as client:
        yield client


@pytest.fixture
def session() -> str:
    return "s-" + uuid.uuid4().hex[:8]


def test_a_guarded_function_runs_once_per_intent(td: Tooldedup, session: str) -> None:
    runs: list[dict[str, Any]] = []

    @td.guard("transfer", session_id=session)
    def transfer(account: str, amount: float, memo: str = "") -> dict[str, Any]:
        runs.append({"account": account, "amount": amount})
        return {"transfer_id": f"t-{len(runs)}", "amount": amount}

    first = transfer("ACC-1", 1200, memo="rent")
    # Keyword order and 1200.0 for 1200: the same call, replayed.
    again = transfer(memo="rent", amount=1200.0, account="ACC-1")
    assert again == first == {"transfer_id": "t-1", "amount": 1200}
    assert len(runs) == 1
    other = transfer("ACC-1", 1300, memo="rent")
    assert other == {"transfer_id": "t-2", "amount": 1300}
    assert len(runs) == 2


def test_an_exception_is_a_failed_call_classified_by_the_hook(td: Tooldedup, session: str) -> None:
    class Declined(Exception):
        pass

    seen: list[str] = []

    def classify(exc: BaseException) -> FailureClass:
        return FailureClass.POISON if isinstance(exc, Declined) else FailureClass.RETRYABLE

    guard = td.guard("charge", session_id=session, classify=classify)

    @guard
    def charge(card: str, cents: int) -> str:
        seen.append(card)
        raise Declined("card declined")

    with pytest.raises(Declined):
        charge("4242", 500)
    check = td.check("charge", {"card": "4242", "cents": 500}, session_id=session, dry_run=True)
    assert check.decision is Decision.DUPLICATE
    assert check.match is not None
    stored = td.get_call(check.match.call_id)
    assert stored.status is Status.FAILED
    assert stored.failure_class is FailureClass.POISON
    assert stored.error == {"type": "Declined", "message": "card declined"}
    assert seen == ["4242"]


def test_a_timeout_is_ambiguous_and_a_repeat_must_reconcile(td: Tooldedup, session: str) -> None:
    @td.guard("ship", session_id=session)
    def ship(order_id: str) -> None:
        raise TimeoutError("carrier did not answer")

    with pytest.raises(TimeoutError):
        ship("ORD-9")
    check = td.check("ship", {"order_id": "ORD-9"}, session_id=session, dry_run=True)
    assert check.decision is Decision.RECONCILE
    assert check.match is not None
    assert check.match.failure_class is FailureClass.AMBIGUOUS


def test_a_call_in_progress_elsewhere_is_raised(td: Tooldedup, session: str) -> None:
    claim = td.check("book", {"room": "4B", "day": "2026-12-02"}, session_id=session)
    assert claim.decision is Decision.PROCEED

    @td.guard("book", session_id=session)
    def book(room: str, day: str) -> str:
        raise AssertionError("must not run while the first booking is pending")

    with pytest.raises(InProgress) as raised:
        book("4B", "2026-12-02")
    assert raised.value.call_id == claim.call_id


def test_the_context_manager_and_the_session_context_variable(td: Tooldedup, session: str) -> None:
    guard = td.guard("post")
    results = []
    with session_scope(session):
        for _ in range(2):
            with guard.attempt({"channel": "#ops", "text": "deploy finished"}) as attempt:
                if attempt.should_run:
                    attempt.succeeded({"ts": "1.0"})
                results.append((attempt.should_run, attempt.result))
    assert results == [(True, None), (False, {"ts": "1.0"})]
    with pytest.raises(ValueError, match="no session"), guard.attempt({"x": 1}):
        pass


def test_async_guard_and_cancellation_leaves_the_outcome_unknown(
    base_url: str, session: str
) -> None:
    async def scenario() -> None:
        async with AsyncTooldedup(base_url) as td:
            runs = []

            @td.guard("notify", session_id=session)
            async def notify(user: str, text: str) -> str:
                runs.append(user)
                return f"sent to {user}"

            assert await notify("ana", "the build is green") == "sent to ana"
            assert await notify("ana", "the build is green") == "sent to ana"
            assert runs == ["ana"]

            started = asyncio.Event()

            @td.guard("slow_notify", session_id=session)
            async def slow_notify(user: str) -> None:
                started.set()
                await asyncio.sleep(60)

            task = asyncio.create_task(slow_notify("ben"))
            await started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            check = await td.check("slow_notify", {"user": "ben"}, session_id=session)
            assert check.decision is Decision.RECONCILE
            assert check.match is not None
            assert check.match.status is Status.UNKNOWN

    asyncio.run(scenario())


class _DropFirstCheckAnswer(httpx.BaseTransport):
    """Forwards every request; the answer to the first check is lost on the way back."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.checks = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        if request.url.path == "/v1/check":
            self.checks += 1
            if self.checks == 1:
                response.read()
                raise httpx.ReadError("connection reset", request=request)
        return response

    def close(self) -> None:
        self._inner.close()


def test_a_lost_proceed_is_answered_again_to_the_retry(base_url: str, session: str) -> None:
    transport = _DropFirstCheckAnswer()
    with Tooldedup(base_url, transport=transport) as td:
        answer = td.check("send_sms", {"to": "+15550100", "text": "hi"}, session_id=session)
        # The server claimed on the first request; the retry carried the same attempt token.
        assert transport.checks == 2
        assert answer.decision is Decision.PROCEED
        stored = td.get_call(answer.call_id or "")
        assert stored.status is Status.PENDING
        # A new logical check (a new token) of the same call meets that claim.
        again = td.check("send_sms", {"to": "+15550100", "text": "hi"}, session_id=session)
        assert again.decision is Decision.IN_PROGRESS


def test_attempt_tokens_through_http(base_url: str, session: str) -> None:
    body = {"session_id": session, "tool": "refund", "args": {"order": "A-1", "amount": 30}}
    with httpx.Client(base_url=base_url) as http:
        first = http.post("/v1/check", json={**body, "attempt_token": "tok-1"}).json()
        again = http.post("/v1/check", json={**body, "attempt_token": "tok-1"}).json()
        assert first["decision"] == again["decision"] == "proceed"
        assert first["call_id"] == again["call_id"]
        other = {**body, "args": {"order": "A-1", "amount": 31}, "attempt_token": "tok-1"}
        reused = http.post("/v1/check", json=other)
        assert reused.status_code == 422
        assert reused.json()["error"]["code"] == "attempt_token_reused"
        # Once the call is done, the same token is answered like any repeat of it.
        http.post(f"/v1/calls/{first['call_id']}/complete", json={"status": "succeeded"})
        done = http.post("/v1/check", json={**body, "attempt_token": "tok-1"}).json()
        assert done["decision"] == "duplicate"
        assert done["call_id"] == first["call_id"]


def test_typed_errors(td: Tooldedup, session: str) -> None:
    with pytest.raises(NotFound):
        td.get_call("call_missing")
    td.check("pay", {"to": "x", "amount": 1}, session_id=session, attempt_token="t-9")
    with pytest.raises(IdempotencyKeyReused):
        td.check("pay", {"to": "x", "amount": 2}, session_id=session, attempt_token="t-9")


def _dead_url() -> str:
    return "http://127.0.0.1:9"  # the discard port: nothing listens there


@pytest.mark.parametrize(
    ("on_unavailable", "runs"),
    [("open", True), ("closed", False), (None, False)],
)
def test_when_the_service_is_down(on_unavailable: str | None, runs: bool) -> None:
    ran: list[int] = []
    with Tooldedup(_dead_url(), retries=0, timeout=2) as td:

        @td.guard("wire", session_id="s", on_unavailable=on_unavailable)
        def wire(amount: int) -> int:
            ran.append(amount)
            return amount

        if runs:
            assert wire(5) == 5
        else:
            with pytest.raises(ServiceUnavailable):
                wire(5)
    assert ran == ([5] if runs else [])


class APITimeoutError(Exception):
    """Named like openai's: a read that timed out after the request was sent."""


class ServerDisconnectedError(Exception):
    """Named like aiohttp's."""


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (TimeoutError("t"), FailureClass.AMBIGUOUS),
        (ConnectionResetError("r"), FailureClass.AMBIGUOUS),
        (OSError("requests' errors are OSErrors"), FailureClass.AMBIGUOUS),
        (httpx.ReadTimeout("t"), FailureClass.AMBIGUOUS),
        (APITimeoutError("t"), FailureClass.AMBIGUOUS),
        (ServerDisconnectedError("d"), FailureClass.AMBIGUOUS),
        (ValueError("bad amount"), FailureClass.RETRYABLE),
        (KeyError("to"), FailureClass.RETRYABLE),
    ],
)
def test_default_classify(exc: BaseException, expected: FailureClass) -> None:
    assert default_classify(exc) is expected


class _AnswerLost(httpx.BaseTransport):
    """Every request reaches the server, and every answer is lost (a read timeout)."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        response.read()
        raise httpx.ReadTimeout("no answer", request=request)

    def close(self) -> None:
        self._inner.close()


def test_fail_open_never_runs_a_call_the_service_may_have_claimed(
    base_url: str, session: str
) -> None:
    ran: list[int] = []
    with Tooldedup(base_url, retries=1, transport=_AnswerLost()) as td:

        @td.guard("wire", session_id=session, on_unavailable="open")
        def wire(amount: int) -> int:
            ran.append(amount)
            return amount

        with pytest.raises(ServiceUnavailable):
            wire(5)
    assert ran == []


def test_a_result_too_large_to_store_still_completes_the_call(td: Tooldedup, session: str) -> None:
    @td.guard("export", session_id=session)
    def export(report: str) -> str:
        return "x" * (2 << 20)  # over the service's 1 MiB body limit

    assert len(export("q3")) == 2 << 20
    again = td.check("export", {"report": "q3"}, session_id=session, dry_run=True)
    assert again.decision is Decision.DUPLICATE
    assert again.match is not None
    assert "unstored" in again.match.result


def test_a_sync_guard_refuses_an_awaitable(td: Tooldedup, session: str) -> None:
    async def send() -> None:
        return None

    @td.guard("send_later", session_id=session)
    def send_later(to: str) -> Any:
        return send()

    with pytest.raises(TypeError, match="awaitable"):
        send_later("ana")
    check = td.check("send_later", {"to": "ana"}, session_id=session, dry_run=True)
    assert check.match is not None
    assert check.match.status is Status.FAILED


_KEYS_CREATE = [sys.executable, "-m", "tooldedup.api.cli", "keys", "create", "--tenant"]


def test_keys_roles_and_limits_as_typed_errors(tmp_path: Path, model_cache: Path) -> None:
    db = tmp_path / "ledger.db"

    def key(role: str, *extra: str) -> str:
        made = subprocess.run(
            [
                sys.executable,
                "-m",
                "tooldedup.api.cli",
                "keys",
                "create",
                "--tenant",
                "acme",
                "--role",
                role,
                "--db",
                str(db),
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return made.stdout.strip()

    agent, reader = key("agent"), key("reader")
    limited = key("agent", "--rate-per-second", "0.01", "--burst", "1")
    with serve(db, model_cache) as server:
        url = str(server.base_url)
        with Tooldedup(url, api_key=agent) as td:
            assert (
                td.check("pay", {"to": "x", "amount": 1}, session_id="s").decision
                is Decision.PROCEED
            )
        with Tooldedup(url) as anonymous, pytest.raises(Unauthorized):
            anonymous.check("pay", {"to": "x", "amount": 1}, session_id="s")
        with Tooldedup(url, api_key=reader) as td, pytest.raises(Forbidden):
            td.check("pay", {"to": "x", "amount": 1}, session_id="s")
        with Tooldedup(url, api_key=limited) as td:
            td.check("pay", {"to": "y", "amount": 1}, session_id="s")
            with pytest.raises(RateLimited) as raised:
                td.check("pay", {"to": "y", "amount": 2}, session_id="s")
            assert raised.value.retry_after_seconds is not None
            assert raised.value.retry_after_seconds >= 1


def test_the_holder_extends_its_lease_and_nobody_else_can(td: Tooldedup, session: str) -> None:
    first = td.check("charge", {"order": "o-1", "cents": 500}, session_id=session)
    assert first.decision is Decision.PROCEED
    assert first.call_id is not None
    held = td.extend_lease(first.call_id, first.check_id, seconds=900)
    assert held.lease_expires_at is not None
    assert held.lease_expires_at > held.created_at + 800
    second = td.check("charge", {"order": "o-1", "cents": 500}, session_id=session)
    assert second.decision is Decision.IN_PROGRESS
    with pytest.raises(LeaseLost, match="did not claim"):
        td.extend_lease(first.call_id, second.check_id)
    td.complete(first.call_id, Status.SUCCEEDED, result={"charged": True})
    with pytest.raises(Conflict, match="only a pending claim has a lease"):
        td.extend_lease(first.call_id, first.check_id)


def test_the_async_client_extends_a_lease(base_url: str, session: str) -> None:
    async def run() -> float | None:
        async with AsyncTooldedup(base_url) as client:
            first = await client.check("charge", {"order": "o-2"}, session_id=session)
            assert first.call_id is not None
            call = await client.extend_lease(first.call_id, first.check_id, seconds=600)
            return call.lease_expires_at

    until = asyncio.run(run())
    assert until is not None


BODY = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
# The verifier cannot account for the dropped "any": the service asks the agent.
UNSURE = "Hi Bob, the Q3 report is attached. Please let me know if you have questions."


def test_a_guard_for_a_model_returns_notes_and_takes_a_confirmation(
    td: Tooldedup, session: str
) -> None:
    sent: list[str] = []

    @td.guard("send_email", session_id=session, for_model=True)
    def send_email(to: str, body: str) -> dict[str, str]:
        sent.append(body)
        return {"message_id": f"m-{len(sent)}"}

    assert send_email("bob@example.com", BODY) == {"message_id": "m-1"}
    repeat = send_email("bob@example.com", BODY)
    assert repeat.startswith('You already called send_email(to="bob@example.com")')
    assert repeat.endswith('The earlier call\'s result: {"message_id": "m-1"}')
    asked = send_email("bob@example.com", UNSURE)
    assert "This call may be the same request again" in asked
    assert sent == [BODY]
    token = asked.split('confirm_token "')[1].split('"')[0]
    assert send_email("bob@example.com", UNSURE, confirm_token=token) == {"message_id": "m-2"}
    assert sent == [BODY, UNSURE]
    with pytest.raises(ConfirmTokenRejected) as used:
        send_email("bob@example.com", "Another text entirely.", confirm_token=token)
    assert used.value.code == "confirm_token_used"
    assert sent == [BODY, UNSURE]


def test_check_answers_and_notes_through_the_client(td: Tooldedup, session: str) -> None:
    first = td.check("send_email", {"to": "bob@example.com", "body": BODY}, session_id=session)
    td.complete(first.call_id or "", Status.SUCCEEDED, result={"message_id": "m-1"})
    again = {"to": "bob@example.com", "body": UNSURE}
    # Without answers=["ask"], the policy's unsure_action (proceed by default): no ask.
    assert td.check("send_email", again, session_id=session, dry_run=True).decision is (
        Decision.PROCEED
    )
    asked = td.check("send_email", again, session_id=session, answers=["ask"])
    assert asked.decision is Decision.ASK
    assert asked.ask is not None
    assert asked.ask.confirm_token.startswith("cfm_")
    assert asked.note is not None
    assert asked.match is not None
    assert asked.match.call_id == first.call_id
