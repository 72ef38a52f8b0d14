"""The adversarial reproductions, through HTTP: each of these once dropped a real action."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import check, complete


def _call(client: TestClient, tool: str, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body = {"session_id": "s1", "tool": tool, "args": args, **extra}
    response = client.post("/v1/check", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def _done(client: TestClient, tool: str, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Check ``args``, expect ``proceed``, and complete the call as succeeded."""
    first = _call(client, tool, args, **extra)
    assert first["decision"] == "proceed", first
    complete(client, first["call_id"], status="succeeded", result={"done": first["call_id"]})
    return first


def _now(offset_seconds: float = 0.0) -> str:
    moment = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=offset_seconds)
    return moment.isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize(
    ("tool", "first", "second"),
    [
        (
            "create_event",
            {"title": "Standup", "timestamp": "2024-05-01T09:00"},
            {"title": "Standup", "timestamp": "2024-05-01T10:00"},
        ),
        (
            "wallet_send",
            {"to": "0xabc", "value": 1, "nonce": 7},
            {"to": "0xabc", "value": 1, "nonce": 8},
        ),
        (
            "run_command",
            {"cmd": "kubectl delete namespace staging"},
            {"cmd": "kubectl delete namespace production"},
        ),
        (
            "db",
            {"query": "UPDATE accounts SET status = 'closed' WHERE owner = 'alice'"},
            {"query": "UPDATE accounts SET status = 'closed' WHERE owner = 'bob'"},
        ),
        (
            "shell",
            {"command": "git push origin main --force"},
            {"command": "git push origin release --force"},
        ),
        ("refund", {"order_id": "ABCD"}, {"order_id": "abcd"}),
        ("git", {"branch": "Main", "action": "delete"}, {"branch": "main", "action": "delete"}),
        ("fs", {"filename": "Makefile", "op": "rm"}, {"filename": "makefile", "op": "rm"}),
        ("vault", {"user": "ana", "password": "Secret"}, {"user": "ana", "password": "SECRET"}),
        (
            "send_message",
            {"to": "ops@example.com", "body": "Please transfer 1.000 EUR to the supplier today"},
            {"to": "ops@example.com", "body": "Please transfer 1 EUR to the supplier today"},
        ),
        (
            "send_message",
            {"to": "ops@example.com", "body": "Book the big room for Tuesday the twenty-first"},
            {"to": "ops@example.com", "body": "Book the big room for Tuesday the twenty-second"},
        ),
        (
            "send_message",
            {"to": "ops@example.com", "body": "Please send the first draft to the whole team"},
            {"to": "ops@example.com", "body": "Please send the second draft to the whole team"},
        ),
        (
            "annotate",
            {"a": {"b": "ship the parcel on Monday morning"}, "a.b": "call the client back"},
            {"a": {"b": "call the client back"}, "a.b": "call the client back"},
        ),
    ],
)
def test_a_changed_argument_proceeds(
    client: TestClient, tool: str, first: dict[str, Any], second: dict[str, Any]
) -> None:
    _done(client, tool, first)
    again = _call(client, tool, second)
    assert again["decision"] == "proceed", again["explain"]
    assert again["call_id"] != _call(client, tool, first)["call_id"]


def test_an_ordinal_swap_is_held_for_a_verifier(client: TestClient) -> None:
    args = {"to": "ops@example.com", "body": "Please send the first draft to the whole team"}
    _done(client, "send_message", args)
    swapped = {**args, "body": args["body"].replace("first", "second")}
    answer = _call(client, "send_message", swapped)
    assert answer["decision"] == "proceed"
    semantic = [s for s in answer["explain"]["stages"] if s["stage"] == "semantic"]
    assert semantic[0]["detail"].startswith("held for a verifier")
    assert answer["explain"]["borderline"] is True


def test_a_retry_that_adds_a_fresh_timestamp_is_a_duplicate(client: TestClient) -> None:
    args = {"title": "Standup", "start": "2024-05-01T09:00"}
    first = _done(client, "create_event", args)
    for name in ("timestamp", "client_ts", "sent_at"):
        again = _call(client, "create_event", {**args, name: _now()})
        assert again["decision"] == "duplicate", name
        assert again["match"]["stage"] == "exact"
        assert again["call_id"] == first["call_id"]
    stored = client.get(f"/v1/calls/{first['call_id']}").json()
    assert stored["args"] == args


def test_a_policy_can_keep_a_timestamp(client: TestClient) -> None:
    policy = {"exact_fields": ["timestamp"], "volatile_fields": []}
    assert client.put("/v1/tools/create_event/policy", json=policy).status_code == 200
    stamp = _now()
    first = _done(client, "create_event", {"title": "Standup", "timestamp": stamp})
    assert client.get(f"/v1/calls/{first['call_id']}").json()["args"]["timestamp"] == stamp
    later = _call(client, "create_event", {"title": "Standup", "timestamp": _now(30)})
    assert later["decision"] == "proceed"


def test_steps_are_part_of_the_intent(client: TestClient) -> None:
    args = {"to": "bob@example.com", "body": "Your order has shipped and will arrive Friday"}
    third = _done(client, "send_email", args, run_id="run-9", step=3)
    replay = _call(client, "send_email", args, run_id="run-9", step=3)
    assert (replay["decision"], replay["call_id"]) == ("duplicate", third["call_id"])
    reworded = {**args, "body": "Your order is on its way and arrives on Friday"}
    replay_reworded = _call(client, "send_email", reworded, run_id="run-9", step="3")
    assert replay_reworded["call_id"] == third["call_id"]
    fourth = _call(client, "send_email", args, run_id="run-9", step=4)
    assert fourth["decision"] == "proceed"
    stored = client.get(f"/v1/calls/{fourth['call_id']}").json()
    assert (stored["run_id"], stored["step"]) == ("run-9", "4")


@pytest.mark.parametrize("read", [False, True])
def test_one_key_one_intent(client: TestClient, read: bool) -> None:
    if read:
        policy = {"side_effect": "read"}
        assert client.put("/v1/tools/lookup/policy", json=policy).status_code == 200
    tool = "lookup" if read else "charge"
    first = _call(client, tool, {"amount": 5}, idempotency_key="k-1")
    assert first["decision"] == "proceed"
    same = _call(client, tool, {"amount": 5.0}, idempotency_key="k-1")
    # A read runs again; a write whose first run is still going is in progress.
    assert same["decision"] == ("proceed" if read else "in_progress")
    for other_tool, args in ((tool, {"amount": 6}), ("refund", {"amount": 5})):
        body = {"session_id": "s1", "tool": other_tool, "args": args, "idempotency_key": "k-1"}
        response = client.post("/v1/check", json=body)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "idempotency_key_reused"


def test_a_distinct_label_unblocks_an_exact_match(client: TestClient) -> None:
    args = {"to": "bob@example.com", "amount": 40, "memo": "March rent"}
    first = _done(client, "pay", args)
    blocked = _call(client, "pay", args)
    assert (blocked["decision"], blocked["match"]["stage"]) == ("duplicate", "exact")
    label = {"check_id": blocked["check_id"], "label": "distinct"}
    assert client.post("/v1/feedback", json=label).status_code == 201
    retried = _call(client, "pay", args)
    assert retried["decision"] == "proceed"
    assert retried["call_id"] != first["call_id"]
    # The new call is now the one an identical check repeats.
    again = _call(client, "pay", args)
    assert (again["decision"], again["call_id"]) == ("in_progress", retried["call_id"])


def test_a_distinct_label_unblocks_a_pending_exact_match(client: TestClient) -> None:
    args = {"to": "bob@example.com", "amount": 40, "memo": "April rent"}
    first = _call(client, "pay", args)
    blocked = _call(client, "pay", args)
    assert (blocked["decision"], blocked["call_id"]) == ("in_progress", first["call_id"])
    label = {"check_id": blocked["check_id"], "label": "distinct"}
    assert client.post("/v1/feedback", json=label).status_code == 201
    retried = _call(client, "pay", args)
    assert retried["decision"] == "proceed"


def test_names_are_trimmed(client: TestClient) -> None:
    args = {"to": "bob@example.com", "amount": 12}
    first = check(client, args, session_id="  s7 ", tool=" pay\t")
    assert first["decision"] == "proceed"
    again = check(client, args, session_id="s7", tool="pay")
    assert again["call_id"] == first["call_id"]
    stored = client.get(f"/v1/calls/{first['call_id']}").json()
    assert (stored["session_id"], stored["tool"]) == ("s7", "pay")


@pytest.mark.parametrize("path", ["github%2Fcreate_issue", "github/create_issue"])
def test_tool_names_with_a_slash_get_a_policy(client: TestClient, path: str) -> None:
    put = client.put(f"/v1/tools/{path}/policy", json={"side_effect": "read"})
    assert put.status_code == 200, put.text
    assert put.json()["tool"] == "github/create_issue"
    got = client.get(f"/v1/tools/{path}/policy").json()
    assert (got["tool"], got["custom"]) == ("github/create_issue", True)
    answer = _call(client, "github/create_issue", {"title": "Bug"})
    assert answer["explain"]["notes"] == ["read tool: proceeds without a claim"]


def test_completing_again_with_another_result_is_a_conflict(client: TestClient) -> None:
    first = _call(client, "pay", {"amount": 3})
    done = {"status": "succeeded", "result": {"id": "p-1"}}
    assert client.post(f"/v1/calls/{first['call_id']}/complete", json=done).status_code == 200
    again = client.post(f"/v1/calls/{first['call_id']}/complete", json=done)
    assert again.status_code == 200
    other = client.post(
        f"/v1/calls/{first['call_id']}/complete", json={**done, "result": {"id": "p-2"}}
    )
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "conflict"
    stored = client.get(f"/v1/calls/{first['call_id']}").json()
    assert stored["result"] == {"id": "p-1"}


def _notes(count: int) -> list[str]:
    return [f"Note number {i}: please water the plants on the balcony" for i in range(count)]


def test_the_per_check_budget(client: TestClient) -> None:
    over = client.post(
        "/v1/check",
        json={"session_id": "s1", "tool": "log", "args": {"notes": _notes(65)}},
    )
    assert over.status_code == 422
    assert over.json()["error"]["code"] == "check_too_large"
    assert "max_text_leaves" in over.json()["error"]["message"]
    long_text = {"body": "word " * 14_000}
    chars = client.post("/v1/check", json={"session_id": "s1", "tool": "log", "args": long_text})
    assert chars.status_code == 422
    assert "max_text_chars" in chars.json()["error"]["message"]
    raised = {"max_text_leaves": 100}
    assert client.put("/v1/tools/log/policy", json=raised).status_code == 200
    assert _call(client, "log", {"notes": _notes(65)})["decision"] == "proceed"
    bad = client.put("/v1/tools/log/policy", json={"max_text_leaves": -1})
    assert bad.status_code == 422


@pytest.mark.parametrize(
    ("first", "second", "decision"),
    [
        (
            "Please run `kubectl delete namespace staging` now on the cluster",
            "Please run `kubectl delete namespace production` now on the cluster",
            "proceed",
        ),
        (
            "Please send 2,5 kg of flour to the bakery",
            "Please send 5,2 kg of flour to the bakery",
            "proceed",
        ),
        (
            "Clean the build box: please run rm -rf /srv/build/cache tonight",
            "Clean the build box: please run rm -rf /srv/build tonight",
            "proceed",
        ),
        (
            "Mow the front lawns on Tuesdays this month",
            "Mow the front lawns on Thursdays this month",
            "proceed",
        ),
        # A command word that is a noun or a short form here, and a weekday in the plural.
        (
            "Harbourview Hotel, rm 1507. Leave the bag with the concierge by 12:30 PM.",
            "Harbourview Hotel, rm 1507: please leave the bag with the concierge by 12:30 PM.",
            "duplicate",
        ),
        (
            "Mow the front lawns on Tuesdays this month",
            "Mow the front lawns every Tuesday this month",
            "duplicate",
        ),
    ],
)
def test_commands_decimal_commas_and_days_inside_prose(
    client: TestClient, first: str, second: str, decision: str
) -> None:
    _done(client, "post", {"channel": "#ops", "body": first})
    answer = _call(client, "post", {"channel": "#ops", "body": second})
    assert answer["decision"] == decision, answer["explain"]


@pytest.mark.parametrize(
    ("first", "second", "decision"),
    [
        (
            "Hi Ana, the Q3 report is attached. Let me know if anything isn't clear.",
            "Hi Ana, the Q3 report is attached. Let me know if anything is unclear.",
            "duplicate",
        ),
        (
            "Please approve the refund for the damaged chair",
            "Please do not approve the refund for the damaged chair",
            "proceed",
        ),
        (
            "Increase the spending limit on the team card",
            "Decrease the spending limit on the team card",
            "proceed",
        ),
        ("Final quiz scores: Ana: 4, Ben: 2", "Final quiz scores: Ana: 2, Ben: 4", "proceed"),
        # 0.11: opposites in place, one phrase for another, bounds that are no refusals.
        (
            "Turn off the pricing flag for all EU users until Legal signs off on it",
            "Turn on the pricing flag for all EU users until Legal signs off on it",
            "proceed",
        ),
        (
            "Pager handover: Lena primary, Omar secondary until Friday 18:00",
            "Pager handover: Lena primary, Omar secondary from Friday 18:00",
            "proceed",
        ),
        (
            "Priya, please put Kofi on forklift 2 and Sanne on the receiving desk tomorrow",
            "Priya, please put Kofi on reach truck 2 and Sanne on the receiving desk tomorrow",
            "proceed",
        ),
        (
            "Please have the signed drafts in the shared folder no later than Friday noon",
            "Please have the signed drafts in the shared folder by Friday noon",
            "duplicate",
        ),
        (
            "Please fill out the visa form for Ana before her trip to Lisbon",
            "Please fill in the visa form for Ana before her trip to Lisbon",
            "duplicate",
        ),
        (
            "Order up to 50 branded mugs for the conference booth in March",
            "Order no more than 50 branded mugs for the conference booth in March",
            "duplicate",
        ),
        (
            "Log in to the billing portal and download the March invoice for Acme",
            "Log out of the billing portal and download the March invoice for Acme",
            "proceed",
        ),
        (
            "Submit the audit report to the regulator no later than Friday 5pm",
            "Submit the audit report to the regulator later than Friday 5pm",
            "proceed",
        ),
        (
            "Thanks for all the quick replies on the budget thread!",
            "Could you all reply on the budget thread?",
            "proceed",
        ),
        # Values between names, items and people that traded places.
        ("Pizza order: Sam 3 slices, Leo 2", "Pizza order: Sam 2 slices, Leo 3", "proceed"),
        (
            "Dinner at 7 PM: Leo brings the wine, Ada brings the dessert",
            "Dinner at 7 PM: Leo brings the dessert, Ada brings the wine",
            "proceed",
        ),
        ("Rent for June: I sent you $650", "Rent for June: you sent me $650", "proceed"),
        (
            "Please swap the 2 grey cushion covers I received for the navy ones I ordered",
            "Please swap the 2 navy cushion covers I received for the grey ones I ordered",
            "proceed",
        ),
        # The act of a sentence whose words stay: a report, a thank-you, a question.
        (
            "Please cancel order FX-2093 for 300 gaskets",
            "We've cancelled order FX-2093 for 300 gaskets",
            "proceed",
        ),
        (
            "Don't forget to return the library books, they're due on the 14th",
            "Thanks for returning the library books, they were due on the 14th",
            "proceed",
        ),
        (
            "The store is closed Monday 6/2 for inventory.",
            "Is the store closed Monday 6/2 for inventory?",
            "proceed",
        ),
        # A negation whose word was reworded too rewords; a list reordered rewords.
        (
            "Hello, the radiator in apartment 3B has not worked since Sunday. Could you fix it?",
            "Hello, the radiator in apartment 3B has been broken since Sunday. Could you fix it?",
            "duplicate",
        ),
        (
            "Great news: Fjordline signed the renewal. Thanks to Ingrid and Tomas for closing it.",
            "Great news: Fjordline signed the renewal. Thanks to Tomas and Ingrid for closing it.",
            "duplicate",
        ),
        (
            "Tickets for the Oct 12 food truck festival go on sale Friday at 10 AM.",
            "Tickets for the food truck festival on Oct 12 go on sale Friday at 10 AM.",
            "duplicate",
        ),
    ],
)
def test_meaning_flips_that_cosine_cannot_see(
    client: TestClient, first: str, second: str, decision: str
) -> None:
    _done(client, "post", {"channel": "#team", "text": first})
    answer = _call(client, "post", {"channel": "#team", "text": second})
    assert answer["decision"] == decision, answer["explain"]


@pytest.mark.parametrize(
    ("second", "decision", "stage"),
    [
        # A typo ("entrnace") is accounted for: a near-identical string, matched at the fuzzy
        # stage.
        ("Please leave the parcel here by the side entrance of number 14", "duplicate", "fuzzy"),
        # "there" for "here" is a change of meaning, however few characters it takes: the
        # fuzzy stage does not match it, and the semantic stage holds it.
        ("Please leave the parcel there by the side entrance of number 14", "proceed", None),
    ],
)
def test_the_fuzzy_stage_matches_only_changes_accounted_for(
    client: TestClient, second: str, decision: str, stage: str | None
) -> None:
    first = "Please leave the parcel here by the side entrnace of number 14"
    _done(client, "post", {"channel": "#deliveries", "text": first})
    answer = _call(client, "post", {"channel": "#deliveries", "text": second})
    assert answer["decision"] == decision, answer["explain"]
    stages = {s["stage"]: s for s in answer["explain"]["stages"]}
    if stage is None:
        assert "did not confirm" in stages["fuzzy"]["detail"], stages
        assert stages["semantic"]["detail"].startswith("held for a verifier"), stages
    else:
        assert answer["match"]["stage"] == stage
