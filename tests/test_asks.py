"""The ``ask`` answer over HTTP: offered only to callers that handle it, confirmed once with
its token, never claiming while open; and the note for the model on repeats."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import MakeApp, check, complete
from tests.test_tenants import auth, make_key
from tooldedup.api.settings import Settings
from tooldedup.dedup.asks import AskBook
from tooldedup.dedup.errors import ConfirmTokenRejected, StoreUnavailable
from tooldedup.dedup.records import Scope, ToolCall
from tooldedup.index.wiring import build_ledger

BODY = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
# The verifier cannot account for the dropped "any": neither surely the same nor different.
UNSURE = "Hi Bob, the Q3 report is attached. Please let me know if you have questions."
# The README's paraphrase: a borderline semantic match the verifier has no objection to.
REWORDED = "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear."
FIRST = {"to": "bob@example.com", "body": BODY}
AGAIN = {"to": "bob@example.com", "body": UNSURE}


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(settings: Settings, make_app: MakeApp, clock: Clock) -> Iterator[TestClient]:
    app = make_app(settings, clock=clock)
    with TestClient(app) as test_client:
        yield test_client


def _sent(client: TestClient, session: str = "s1") -> str:
    """Store the first email, succeeded; return its call id."""
    first = check(client, FIRST, session_id=session)
    assert first["decision"] == "proceed"
    complete(client, first["call_id"], status="succeeded", result={"message_id": "m-42"})
    return str(first["call_id"])


def _calls(client: TestClient, session: str = "s1") -> int:
    return len(client.get(f"/v1/sessions/{session}/calls").json()["calls"])


def _fields(token: str) -> dict[str, Any]:
    """A confirm token's fields: cfm_, check id, expiry, then the args, sent and token MACs."""
    return {
        "check": token[4:36],
        "expiry": int(token[36:44], 16),
        "args": token[44:60],
        "sent": token[60:76],
        "token": token[76:],
    }


def _edited(
    token: str,
    *,
    check: str | None = None,
    expiry: int | None = None,
    sent: str | None = None,
    macs: str | None = None,
) -> str:
    """``token`` with some of its fields replaced (still well-formed)."""
    fields = _fields(token)
    all_macs = macs or fields["args"] + (sent or fields["sent"]) + fields["token"]
    return f"cfm_{check or fields['check']}{expiry or fields['expiry']:08x}{all_macs}"


def _ask(client: TestClient, **extra: Any) -> dict[str, Any]:
    asked = check(client, AGAIN, answers=["ask"], **extra)
    assert asked["decision"] == "ask", asked["explain"]
    return asked


def test_ask_carries_the_earlier_call_a_note_and_a_token(client: TestClient, clock: Clock) -> None:
    earlier = _sent(client)
    clock.now += 120
    asked = _ask(client)
    assert asked["call_id"] == earlier
    assert asked["match"]["args"] == FIRST
    assert asked["match"]["result"] == {"message_id": "m-42"}
    assert asked["match"]["status"] == "succeeded"
    token = asked["ask"]["confirm_token"]
    assert re.fullmatch(r"cfm_[0-9a-f]{88}", token)
    # What the token says of itself: its ask, and its expiry.
    assert "chk_" + _fields(token)["check"] == asked["check_id"]
    assert _fields(token)["expiry"] == clock.now + 600
    assert asked["ask"]["expires_at"] == "2027-01-15T08:12:00Z"
    note = asked["note"]
    assert 'You already called send_email(to="bob@example.com")' in note
    assert "(2 minutes ago)" in note
    assert 'message_id="m-42"' in note
    assert token in note
    assert "it differs in body" in note
    assert asked["explain"]["stages"][-1]["verdict"] == "unsure"
    assert _calls(client) == 1  # nothing claimed


@pytest.mark.parametrize(
    ("extra", "headers", "expected"),
    [
        ({}, {}, "proceed"),
        ({"answers": []}, {}, "proceed"),
        ({"answers": ["something-new"]}, {}, "proceed"),
        ({"answers": ["something-new", "ask"]}, {}, "ask"),
        ({}, {"X-Tooldedup-Answers": "ask"}, "ask"),
        ({}, {"X-Tooldedup-Answers": "other, ask"}, "ask"),
        ({}, {"X-Tooldedup-Answers": "other"}, "proceed"),
    ],
)
def test_ask_only_for_callers_that_handle_it(
    client: TestClient, extra: dict[str, Any], headers: dict[str, str], expected: str
) -> None:
    _sent(client)
    body = {"session_id": "s1", "tool": "send_email", "args": AGAIN, **extra}
    answer = client.post("/v1/check", json=body, headers=headers).json()
    assert answer["decision"] == expected
    assert (answer["ask"] is not None) is (expected == "ask")


@pytest.mark.parametrize(
    ("unsure_action", "expected"),
    [("proceed", "proceed"), ("duplicate", "duplicate"), ("judge", "proceed")],
)
def test_others_get_the_unsure_action(
    client: TestClient, unsure_action: str, expected: str
) -> None:
    client.put("/v1/tools/send_email/policy", json={"unsure_action": unsure_action})
    _sent(client)
    answer = check(client, AGAIN)
    assert answer["decision"] == expected
    # No judge is configured here: "judge" falls back to proceed and says so.
    assert any("unsure_action" in note for note in answer["explain"]["notes"])


def test_borderline_action_ask(client: TestClient) -> None:
    """A band match under borderline_action = "ask" asks; others get unsure_action."""
    client.put("/v1/tools/send_email/policy", json={"borderline_action": "ask"})
    _sent(client)
    args = {"to": "bob@example.com", "body": REWORDED}
    asked = check(client, args, answers=["ask"])
    assert asked["decision"] == "ask"
    assert asked["explain"]["borderline"] is True
    assert check(client, args)["decision"] == "proceed"


def test_confirm_round_trip(client: TestClient) -> None:
    earlier = _sent(client)
    asked = _ask(client)
    token = asked["ask"]["confirm_token"]
    confirmed = check(client, AGAIN, answers=["ask"], confirm_token=token)
    assert confirmed["decision"] == "proceed"
    assert confirmed["call_id"] not in (None, earlier)
    assert confirmed["explain"]["confirmed_ask"] == asked["check_id"]
    assert _calls(client) == 2
    # The caller's word is a 'distinct' label on the ask, for calibration.
    entry = client.get(f"/v1/log/{asked['check_id']}").json()["entry"]
    assert entry["feedback"]["label"] == "distinct"
    assert entry["feedback"]["source"] == "caller"
    assert entry["decision"] == "ask"
    assert entry["matched_call_id"] == earlier
    # The confirmed call is a call like any other: its own repeat is a duplicate.
    complete(client, confirmed["call_id"], status="succeeded", result={"message_id": "m-43"})
    again = check(client, AGAIN, answers=["ask"])
    assert (again["decision"], again["call_id"]) == ("duplicate", confirmed["call_id"])
    log = client.get("/v1/log", params={"decision": "ask"}).json()["entries"]
    assert [(e["check_id"], e["ask_ending"]) for e in log] == [(asked["check_id"], "confirmed")]


@pytest.mark.parametrize(
    ("misuse", "status", "code"),
    [
        ("reused", 409, "confirm_token_used"),
        ("wrong_args", 409, "confirm_token_mismatch"),
        ("other_tool", 409, "confirm_token_mismatch"),
        ("other_session", 409, "confirm_token_mismatch"),
        ("expired", 409, "confirm_token_expired"),
        ("unknown", 409, "confirm_token_unknown"),
        ("made_up", 409, "confirm_token_unknown"),
        ("forged", 409, "confirm_token_unknown"),
        ("extended", 409, "confirm_token_unknown"),
        ("one_mac_edited", 409, "confirm_token_unknown"),
        ("other_check", 409, "confirm_token_unknown"),
        ("malformed", 422, "invalid_input"),
        ("uppercase", 422, "invalid_input"),
        ("truncated", 422, "invalid_input"),
        ("trailing_newline", 422, "invalid_input"),
        ("too_long", 422, "invalid_request"),
        ("unicode", 422, "invalid_input"),
        ("dry_run", 422, "invalid_input"),
    ],
)
def test_token_misuse_runs_nothing(
    client: TestClient, clock: Clock, misuse: str, status: int, code: str
) -> None:
    _sent(client)
    _sent(client, "s2")
    token = _ask(client)["ask"]["confirm_token"]
    body: dict[str, Any] = {
        "session_id": "s1",
        "tool": "send_email",
        "args": AGAIN,
        "confirm_token": token,
    }
    if misuse == "reused":
        assert client.post("/v1/check", json=body).json()["decision"] == "proceed"
    elif misuse == "wrong_args":
        body["args"] = {**AGAIN, "to": "carol@example.com"}
    elif misuse == "other_tool":
        body["tool"] = "send_sms"
    elif misuse == "other_session":
        body["session_id"] = "s2"
    elif misuse == "expired":
        clock.now += 601
    elif misuse == "unknown":
        # The kind the development builds stored: the caller is to check again without it.
        body["confirm_token"] = "cfm_" + "0" * 40
    elif misuse == "made_up":
        body["confirm_token"] = "cfm_" + "0" * 88
    elif misuse == "forged":
        body["confirm_token"] = _edited(token, macs="f" * 48)
    elif misuse == "extended":
        body["confirm_token"] = _edited(token, expiry=_fields(token)["expiry"] + 86_400)
    elif misuse == "one_mac_edited":
        # The args MAC alone would bind the call: the token MAC seals the other one too.
        sent_mac = _fields(token)["sent"]
        body["confirm_token"] = _edited(token, sent="0" * 16 if sent_mac != "0" * 16 else "1" * 16)
    elif misuse == "other_check":
        body["confirm_token"] = _edited(token, check="0" * 32)
    elif misuse == "uppercase":
        body["confirm_token"] = "cfm_" + token[4:].upper()
    elif misuse == "truncated":
        body["confirm_token"] = token[:-1]
    elif misuse == "trailing_newline":
        body["confirm_token"] = token + "\n"
    elif misuse == "malformed":
        body["confirm_token"] = "cfm_" + "z" * 40
    elif misuse == "too_long":
        body["confirm_token"] = token * 3
    elif misuse == "unicode":
        body["confirm_token"] = "cfm_é\u202e" + token[4:]
    elif misuse == "dry_run":
        body["dry_run"] = True
    before = _calls(client, body["session_id"]), _calls(client, "s2")
    response = client.post("/v1/check", json=body)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert (_calls(client, body["session_id"]), _calls(client, "s2")) == before


def test_token_of_another_tenant_is_unknown(
    settings: Settings, make_app: MakeApp, capsys: pytest.CaptureFixture[str]
) -> None:
    acme = make_key(settings, capsys, "acme", "agent")
    beta = make_key(settings, capsys, "beta", "agent")
    with TestClient(make_app(settings)) as client:
        for key in (acme, beta):
            body = {"session_id": "s1", "tool": "send_email", "args": FIRST}
            first = client.post("/v1/check", json=body, headers=auth(key)).json()
            outcome = {"status": "succeeded"}
            client.post(f"/v1/calls/{first['call_id']}/complete", json=outcome, headers=auth(key))
        body = {"session_id": "s1", "tool": "send_email", "args": AGAIN, "answers": ["ask"]}
        token = client.post("/v1/check", json=body, headers=auth(acme)).json()["ask"]
        body["confirm_token"] = token["confirm_token"]
        response = client.post("/v1/check", json=body, headers=auth(beta))
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "confirm_token_unknown"


def test_concurrent_repeats_during_an_open_question_are_asked_too(client: TestClient) -> None:
    _sent(client)
    start = threading.Barrier(4)

    def repeat(_: int) -> dict[str, Any]:
        start.wait()
        return check(client, AGAIN, answers=["ask"])

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(repeat, range(4)))
    assert {a["decision"] for a in answers} == {"ask"}
    assert len({a["ask"]["confirm_token"] for a in answers}) == 4
    assert _calls(client) == 1
    # Two of them confirm: the call runs once; the other confirmation meets it running.
    tokens = [a["ask"]["confirm_token"] for a in answers[:2]]
    confirmed = [check(client, AGAIN, answers=["ask"], confirm_token=t) for t in tokens]
    assert [c["decision"] for c in confirmed] == ["proceed", "in_progress"]
    assert confirmed[1]["call_id"] == confirmed[0]["call_id"]
    assert _calls(client) == 2


def test_a_question_never_confirmed_never_runs(client: TestClient, clock: Clock) -> None:
    _sent(client)
    asked = _ask(client)
    clock.now += 700
    check(client, {"to": "carol@example.com", "body": "Unrelated."})
    log = client.get("/v1/log", params={"decision": "ask"}).json()["entries"]
    assert log[0]["ask_ending"] == "abandoned"
    assert _calls(client) == 2  # the first email and the unrelated one
    summary = client.get("/v1/review/summary").json()
    tools = {tool["tool"]: tool for tool in summary["tools"]}
    assert tools["send_email"]["asks"] == {"abandoned": 1}
    assert asked["call_id"] is not None


def test_notes_on_duplicate_and_in_progress(client: TestClient, clock: Clock) -> None:
    first = check(client, FIRST)
    running = check(client, FIRST)
    assert running["decision"] == "in_progress"
    assert running["note"].startswith('You already called send_email(to="bob@example.com")')
    assert "it is still running" in running["note"]
    assert "wait for it to finish" in running["note"]
    complete(client, first["call_id"], status="succeeded", result={"message_id": "m-42"})
    clock.now += 120
    again = check(client, FIRST)
    assert again["decision"] == "duplicate"
    assert again["note"] == (
        'You already called send_email(to="bob@example.com") at 08:00 UTC (2 minutes ago);'
        ' it succeeded with message_id="m-42". It was not run again; use that result instead'
        " of calling it again."
    )
    assert check(client, {"to": "x@example.com", "body": BODY})["note"] is None


def test_notes_can_be_turned_off(client: TestClient) -> None:
    client.put("/v1/tools/send_email/policy", json={"model_notes": False})
    first = check(client, FIRST)
    complete(client, first["call_id"], status="succeeded")
    assert check(client, FIRST)["note"] is None


@pytest.mark.parametrize(
    "args",
    [
        {"to": "bob@example.com", "body": "x" * 60_000},
        {"to": "é" * 5000, "api_token": "sk-secret-value", "body": "\u202e\n\x07"},
        {"nested": {"deep": [1, 2, 3]}, "k" * 300: "v"},
    ],
)
def test_notes_stay_short_and_show_no_secrets(
    client: TestClient, tmp_path: Path, args: dict[str, Any]
) -> None:
    first = check(client, args)
    complete(client, first["call_id"], status="succeeded", result={"password": "hunter2"})
    note = check(client, args)["note"]
    assert len(note) <= 800
    assert "sk-secret-value" not in note
    assert "hunter2" not in note


@pytest.mark.parametrize(
    "answers",
    [
        "ask",
        [1],
        [None],
        ["a" * 33],
        ["ask"] * 17,
        {"ask": True},
    ],
)
def test_malformed_answers_are_refused(client: TestClient, answers: Any) -> None:
    body = {"session_id": "s1", "tool": "send_email", "args": FIRST, "answers": answers}
    response = client.post("/v1/check", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"
    assert _calls(client) == 0


def test_an_oversized_answers_header_is_refused(client: TestClient) -> None:
    body = {"session_id": "s1", "tool": "send_email", "args": FIRST}
    response = client.post("/v1/check", json=body, headers={"X-Tooldedup-Answers": "a" * 300})
    assert response.status_code == 422
    assert _calls(client) == 0


def test_a_dry_run_ask_hands_out_no_token(client: TestClient) -> None:
    _sent(client)
    asked = check(client, AGAIN, answers=["ask"], dry_run=True)
    assert asked["decision"] == "ask"
    assert asked["ask"] is None
    assert "send the same call again, confirmed" in asked["note"]


def test_ask_unconfirmed_asks_about_matches_the_verifier_only_did_not_object_to(
    client: TestClient,
) -> None:
    """A reworded repeat the verifier has no objection to is a duplicate by default; under
    ask_unconfirmed, a caller that handles ask is asked instead; others still get duplicate."""
    reworded = (
        "Hi Bob, the Q3 report is attached, as promised. Let me know if you have any questions."
    )
    _sent(client)
    args = {"to": "bob@example.com", "body": reworded}
    assert check(client, args, answers=["ask"], dry_run=True)["decision"] == "duplicate"
    client.put("/v1/tools/send_email/policy", json={"ask_unconfirmed": True})
    asked = check(client, args, answers=["ask"])
    assert asked["decision"] == "ask"
    assert asked["explain"]["stages"][-1]["verdict"] == "no_objection"
    assert "ask_unconfirmed" in asked["explain"]["notes"][0]
    assert check(client, args, dry_run=True)["decision"] == "duplicate"
    # In the borderline band too (under borderline_action = "duplicate").
    band = {"to": "bob@example.com", "body": REWORDED}
    in_band = check(client, band, answers=["ask"], dry_run=True)
    assert (in_band["decision"], in_band["explain"]["borderline"]) == ("ask", True)
    token = asked["ask"]["confirm_token"]
    assert check(client, args, confirm_token=token)["decision"] == "proceed"


def test_asks_across_both_stores(
    settings_on_both: Settings, make_app: MakeApp, clock: Clock
) -> None:
    """Tokens live in the store: asked, confirmed once, refused after, on SQLite and
    PostgreSQL alike (and so across workers sharing one)."""
    app = make_app(settings_on_both, clock=clock)
    with TestClient(app) as client:
        _sent(client)
        asked = [_ask(client) for _ in range(2)]
        tokens = [a["ask"]["confirm_token"] for a in asked]
        clock.now += 1
        first = check(client, AGAIN, confirm_token=tokens[0])
        assert first["decision"] == "proceed"
        second = check(client, AGAIN, confirm_token=tokens[1])
        assert (second["decision"], second["call_id"]) == ("in_progress", first["call_id"])
        reused = client.post(
            "/v1/check",
            json={
                "session_id": "s1",
                "tool": "send_email",
                "args": AGAIN,
                "confirm_token": tokens[0],
            },
        )
        assert reused.json()["error"]["code"] == "confirm_token_used"
        clock.now += 700
        log = client.get("/v1/log", params={"decision": "ask"}).json()["entries"]
        assert sorted(e["ask_ending"] for e in log) == ["abandoned", "confirmed"]
        assert _calls(client) == 2


def test_a_retried_confirmation_gets_its_first_answer(client: TestClient) -> None:
    """The client resends a check with its attempt token when the answer is lost: the
    confirmation that spent the token is answered again, not refused."""
    _sent(client)
    token = _ask(client)["ask"]["confirm_token"]
    sent = {"confirm_token": token, "attempt_token": "at-1"}
    first = check(client, AGAIN, **sent)
    again = check(client, AGAIN, **sent)
    assert (first["decision"], again["decision"]) == ("proceed", "proceed")
    assert again["call_id"] == first["call_id"]
    assert _calls(client) == 2


def test_a_confirmation_whose_claim_was_not_stored_can_be_sent_again(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sent(client)
    token = _ask(client)["ask"]["confirm_token"]
    ledger = client.app.state.service._ledger  # type: ignore[attr-defined]
    stored = ledger.claim

    def store_gone(*args: Any, **kwargs: Any) -> Any:
        raise StoreUnavailable("the store did not answer")

    # The store fails between spending the token and storing the claim: a 503, which says
    # "send again", and the retry runs the call rather than meeting "already used".
    monkeypatch.setattr(ledger, "claim", store_gone)
    body = {"session_id": "s1", "tool": "send_email", "args": AGAIN, "confirm_token": token}
    assert client.post("/v1/check", json=body).status_code == 503
    monkeypatch.setattr(ledger, "claim", stored)
    again = check(client, AGAIN, answers=["ask"], confirm_token=token)
    assert again["decision"] == "proceed"
    assert _calls(client) == 2


def test_an_extended_token_is_refused_once_the_real_one_expired(
    client: TestClient, clock: Clock
) -> None:
    _sent(client)
    token = _ask(client)["ask"]["confirm_token"]
    clock.now += 601
    extended = _edited(token, expiry=_fields(token)["expiry"] + 86_400)
    body = {"session_id": "s1", "tool": "send_email", "args": AGAIN, "confirm_token": extended}
    response = client.post("/v1/check", json=body)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "confirm_token_expired"
    assert _calls(client) == 1


def test_a_spent_token_replayed_after_its_record_is_purged_has_expired(
    client: TestClient, clock: Clock
) -> None:
    """The expiry is read from the signed token: forgetting a spent token once it expired
    lets no replay through."""
    _sent(client)
    asked = _ask(client)
    body = {
        "session_id": "s1",
        "tool": "send_email",
        "args": AGAIN,
        "confirm_token": asked["ask"]["confirm_token"],
    }
    assert client.post("/v1/check", json=body).json()["decision"] == "proceed"
    assert client.post("/v1/check", json=body).json()["error"]["code"] == "confirm_token_used"
    clock.now += 700
    service = client.app.state.service  # type: ignore[attr-defined]
    service.purge(7 * 86_400.0, log_retention_seconds=60.0)
    assert service._ledger.confirm_token_spent_by("default", asked["check_id"]) is None
    response = client.post("/v1/check", json=body)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "confirm_token_expired"
    assert _calls(client) == 2


def test_a_confirmation_runs_after_its_ask_left_the_log(client: TestClient, clock: Clock) -> None:
    """A log kept for less than a token lives: the ask's line is gone, its token still
    confirms (its label is what goes missing)."""
    _sent(client)
    token = _ask(client)["ask"]["confirm_token"]
    clock.now += 100
    client.app.state.service.purge(7 * 86_400.0, log_retention_seconds=50.0)  # type: ignore[attr-defined]
    assert check(client, AGAIN, confirm_token=token)["decision"] == "proceed"
    assert _calls(client) == 2


@pytest.fixture
def asked_token(client: TestClient) -> str:
    """An unconfirmed token for AGAIN in session s1."""
    _sent(client)
    token: str = _ask(client)["ask"]["confirm_token"]
    return token


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_one_character_changed_is_refused(
    client: TestClient, asked_token: str, data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(asked_token) - 1), label="at")
    hexes = st.sampled_from("0123456789abcdefABCDEF")
    # A lone surrogate cannot be sent as JSON at all: the client refuses to encode it.
    sendable = st.characters(exclude_categories=["Cs"])
    char = data.draw(
        st.one_of(hexes, sendable).filter(lambda c: c != asked_token[at]), label="char"
    )
    edited = asked_token[:at] + char + asked_token[at + 1 :]
    body = {"session_id": "s1", "tool": "send_email", "args": AGAIN, "confirm_token": edited}
    response = client.post("/v1/check", json=body)
    well_formed = at >= 4 and char in "0123456789abcdef"
    expected = (409, "confirm_token_unknown") if well_formed else (422, "invalid_input")
    assert (response.status_code, response.json()["error"]["code"]) == expected
    assert _calls(client) == 1


def test_a_token_survives_a_restart(
    settings_on_both: Settings, make_app: MakeApp, clock: Clock
) -> None:
    """The secret is the store's: a token handed out before a restart confirms after it."""
    app = make_app(settings_on_both, clock=clock)
    with TestClient(app) as client:
        _sent(client)
        asked = _ask(client)
    clock.now += 300
    app = make_app(settings_on_both, clock=clock)
    with TestClient(app) as client:
        token = asked["ask"]["confirm_token"]
        confirmed = check(client, AGAIN, confirm_token=token)
        assert confirmed["decision"] == "proceed"
        assert confirmed["explain"]["confirmed_ask"] == asked["check_id"]
        assert _calls(client) == 2


def test_services_on_a_fresh_store_share_one_secret(
    settings_on_both: Settings, make_app: MakeApp, clock: Clock
) -> None:
    """Two services (workers, replicas) on a new store share one secret: either takes the
    other's tokens, and spends each once. (Their race to make it is in
    ``tests/test_server_secrets.py``; FastAPI apps built in two threads of one process race
    on shared parameter metadata, which separate worker processes never do.)"""
    one_app, two_app = (make_app(settings_on_both, clock=clock) for _ in range(2))
    with TestClient(one_app) as one, TestClient(two_app) as two:
        _sent(one)
        token, theirs = (_ask(service)["ask"]["confirm_token"] for service in (one, two))
        assert check(two, AGAIN, confirm_token=token)["decision"] == "proceed"
        body = {"session_id": "s1", "tool": "send_email", "args": AGAIN, "confirm_token": token}
        assert one.post("/v1/check", json=body).json()["error"]["code"] == "confirm_token_used"
        # The first confirmation's call is still running: the second meets it, and runs nothing.
        assert check(one, AGAIN, confirm_token=theirs)["decision"] == "in_progress"
        assert _calls(one) == 2
    ledger = build_ledger(settings_on_both)
    try:
        assert ledger.db.execute("SELECT COUNT(*) AS n FROM server_secrets").rows[0]["n"] == 1
    finally:
        ledger.close()


def test_how_asks_ended_is_read_from_the_log(client: TestClient, clock: Clock) -> None:
    """An ask is its log line: open while its token is good, then confirmed (by its spent
    token, or by its caller's label once that is forgotten), abandoned or expired."""
    sessions = ("s1", "s2", "s3")
    for session in sessions:
        _sent(client, session)
    asked = {session: _ask(client, session_id=session) for session in sessions}
    check(client, AGAIN, answers=["ask"], session_id="s1", dry_run=True)  # hands out no token

    def endings() -> dict[str, str]:
        log = client.get("/v1/log", params={"decision": "ask"}).json()["entries"]
        assert all(("ask_ending" in e) is not e["dry_run"] for e in log)
        return {e["session_id"]: e["ask_ending"] for e in log if not e["dry_run"]}

    assert endings() == {"s1": "open", "s2": "open", "s3": "open"}
    entry = client.get(f"/v1/log/{asked['s1']['check_id']}").json()["entry"]
    assert entry["ask_expires_at"] == clock.now + 600
    token = asked["s1"]["ask"]["confirm_token"]
    assert check(client, AGAIN, session_id="s1", confirm_token=token)["decision"] == "proceed"
    assert endings() == {"s1": "confirmed", "s2": "open", "s3": "open"}
    clock.now += 700
    check(client, {"to": "carol@example.com", "body": "Unrelated."}, session_id="s3")
    assert endings() == {"s1": "confirmed", "s2": "expired", "s3": "abandoned"}
    ledger = client.app.state.service._ledger  # type: ignore[attr-defined]
    assert ledger.purge_spent_confirm_tokens(clock.now) == 1
    assert endings()["s1"] == "confirmed"
    summary = client.get("/v1/review/summary").json()
    tools = {tool["tool"]: tool for tool in summary["tools"]}
    assert tools["send_email"]["asks"] == {"confirmed": 1, "abandoned": 1, "expired": 1}


def test_the_token_format_is_stable_across_releases(tmp_path: Path) -> None:
    """Tokens handed out before an upgrade must confirm after it: the same inputs sign the
    same bytes (this token was made by the first release that signed tokens), laid out as
    the docs say."""
    ledger = build_ledger(Settings(db_path=tmp_path / "ledger.db"))
    book = AskBook(ledger, b"k" * 32)
    # Every bound field its own value, so that no two can trade places unnoticed.
    call = ToolCall("s-ü1", "send_email", {"to": "bob@example.com"}, "room-ü2", tenant="acme")
    scope = Scope("acme", "room-ü2")
    hashes = ("a" * 64, "b" * 64)
    check_id = "chk_" + "0123456789abcdef" * 2
    ticket = book.make(call, scope, hashes, check_id, 1_800_000_000.5, 600)
    assert ticket.confirm_token == (
        "cfm_0123456789abcdef0123456789abcdef6b49d45933ced0d1a10c43ae94badb963b3dce400dd45a3de4db6697"
    )
    # docs/asks-and-observe.md: keyed BLAKE2b over each field after its length, the check
    # id, the expiry (rounded up), then one byte naming the MAC and what it adds.
    expires = f"{1_800_000_601:08x}"
    context = f"4:acme7:room-ü24:s-ü110:send_email{check_id}{expires}".encode()

    def tag(purpose: bytes, value: str) -> str:
        mac = hashlib.blake2b(key=b"k" * 32, digest_size=8, person=b"tooldedup cfm2")
        mac.update(context + purpose + value.encode())
        return mac.hexdigest()

    args_mac, sent_mac = tag(b"\x01", hashes[0]), tag(b"\x02", hashes[1])
    token_mac = tag(b"\x03", args_mac + sent_mac)
    assert ticket.confirm_token == f"cfm_{check_id[4:]}{expires}{args_mac}{sent_mac}{token_mac}"
    confirming = replace(call, confirm_token=ticket.confirm_token)
    assert book.accept(confirming, scope, hashes, 1_800_000_100.0) == check_id
    ledger.close()


# Any character, lone surrogates among them: a JSON body may carry one.
_BOUND = st.text(st.characters(exclude_categories=()), max_size=5)
_FIELDS = st.tuples(_BOUND, _BOUND, _BOUND, _BOUND)
# Digits and separators most often: what an encoding of the fields could confuse.
_PIECE = st.one_of(
    st.sampled_from(list("1:|\x00")), st.sampled_from(list('a0;,"')), st.characters()
)


@st.composite
def _cut_twice(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One text cut in four, and cut again with one cut moved by a character."""
    # A list of pieces, not st.text: that would draw from the union of the characters evenly.
    text = "".join(draw(st.lists(_PIECE, min_size=1, max_size=10)))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), min_size=3, max_size=3)))
    moved, by = draw(st.integers(0, 2)), draw(st.sampled_from([-1, 1]))
    others = sorted([*cuts[:moved], min(max(cuts[moved] + by, 0), len(text)), *cuts[moved + 1 :]])
    return _cut(text, cuts), _cut(text, others)


def _cut(text: str, cuts: list[int]) -> tuple[str, ...]:
    """``text`` cut in four at ``cuts``."""
    a, b, c = cuts
    return text[:a], text[a:b], text[b:c], text[c:]


@pytest.mark.parametrize("key_bytes", [16, 32, 64, 65, 200])
def test_a_key_of_any_length_from_16_bytes_signs(tmp_path: Path, key_bytes: int) -> None:
    """A secret longer than BLAKE2b's 64-byte key is hashed first, not refused."""
    ledger = build_ledger(Settings(db_path=tmp_path / "ledger.db"))
    book, other = AskBook(ledger, b"k" * key_bytes), AskBook(ledger, b"j" * key_bytes)
    call, scope, hashes = ToolCall("s1", "send_email", {}), Scope("default", "s1"), ("a", "b")
    token = book.make(call, scope, hashes, "chk_" + "0" * 32, 0.0, 60).confirm_token
    confirming = replace(call, confirm_token=token)
    assert book.accept(confirming, scope, hashes, 1.0) == "chk_" + "0" * 32
    with pytest.raises(ConfirmTokenRejected):
        other.accept(confirming, scope, hashes, 1.0)
    ledger.close()


def test_a_key_shorter_than_16_bytes_is_refused(tmp_path: Path) -> None:
    ledger = build_ledger(Settings(db_path=tmp_path / "ledger.db"))
    with pytest.raises(ValueError, match="at least 16 bytes"):
        AskBook(ledger, b"k" * 15)
    ledger.close()


def test_a_token_binds_each_field_apart(tmp_path: Path) -> None:
    """Tokens for two calls that differ in tenant, scope, session or tool differ: when the
    same characters are cut into the four fields at other places ("ab", "c" against "a",
    "bc"), and when a lone surrogate stands where another character does."""
    ledger = build_ledger(Settings(db_path=tmp_path / "ledger.db"))
    book = AskBook(ledger, b"k" * 32)
    check_id = "chk_" + "0" * 32

    def token(fields: tuple[str, ...]) -> str:
        tenant, scope, session, tool = fields
        call = ToolCall(session, tool, {}, scope, tenant=tenant)
        return book.make(call, Scope(tenant, scope), ("a", "b"), check_id, 0.0, 60).confirm_token

    @settings(max_examples=200, deadline=None)
    @given(_FIELDS, _FIELDS)
    def any_two(one: tuple[str, str, str, str], other: tuple[str, str, str, str]) -> None:
        assert (token(one) == token(other)) is (one == other)

    @settings(max_examples=300, deadline=None)
    @given(_cut_twice())
    def cut_apart(cut: tuple[tuple[str, ...], tuple[str, ...]]) -> None:
        one, other = cut
        assert (token(one) == token(other)) is (one == other)

    any_two()
    cut_apart()
    # A lone surrogate, a pair of them, and what a lossy encoding would make of either.
    spelt = ["\ud83d", "\ud83d\ude00", "\U0001f600", "?", "??", "\ufffd"]
    assert len({token(("t", "s", text, "tool")) for text in spelt}) == len(spelt)
    ledger.close()
