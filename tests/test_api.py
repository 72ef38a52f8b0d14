"""End to end through HTTP on both ledgers: the README session, the outcome table, reads,
keys, explain."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from tests.helpers import EMAIL, check, complete
from tooldedup.api.settings import Settings


@pytest.fixture
def settings(settings_on_both: Settings) -> Settings:
    """Every test here runs on a fresh SQLite file and on a fresh PostgreSQL database."""
    return settings_on_both


def test_readme_session(client: TestClient) -> None:
    first = check(client, {**EMAIL, "request_id": "r-1"})
    assert first["decision"] == "proceed"
    assert first["match"] is None
    call_id = first["call_id"]
    done = complete(client, call_id, status="succeeded", result={"message_id": "m-42"})
    assert done["status"] == "succeeded"

    reordered = {
        "request_id": "r-2",
        "body": EMAIL["body"],
        "subject": "Q3 report",
        "to": "bob@example.com",
    }
    again = check(client, reordered)
    assert again["decision"] == "duplicate"
    assert again["match"]["stage"] == "exact"
    assert again["match"]["result"] == {"message_id": "m-42"}
    assert again["call_id"] == call_id
    assert again["idempotency_key"] == first["idempotency_key"]
    assert "borderline" not in again["explain"]
    # The matched call reads as the agent first sent it, request_id included.
    assert again["match"]["args"] == {**EMAIL, "request_id": "r-1"}

    reworded = {
        **EMAIL,
        "body": "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
    }
    semantic = check(client, reworded)
    assert semantic["decision"] == "duplicate"
    assert semantic["match"]["stage"] == "semantic"
    assert semantic["match"]["result"] == {"message_id": "m-42"}
    assert semantic["explain"]["borderline"] is True

    other = check(client, {**EMAIL, "to": "carol@example.com"})
    assert other["decision"] == "proceed"
    assert other["explain"]["differing_fields"] == ["to"]
    assert other["explain"]["differing_from"] == call_id


@pytest.mark.parametrize(
    ("action", "decision", "matched"),
    [("duplicate", "duplicate", True), ("proceed", "proceed", False)],
)
def test_explain_agrees_with_a_borderline_decision(
    client: TestClient, action: str, decision: str, matched: bool
) -> None:
    put = client.put("/v1/tools/send_email/policy", json={"borderline_action": action})
    assert put.status_code == 200, put.text
    first = check(client, EMAIL)
    complete(client, first["call_id"], status="succeeded", result={"message_id": "m-42"})
    reworded = {
        **EMAIL,
        "body": "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
    }
    answer = check(client, reworded)
    assert answer["decision"] == decision
    assert answer["explain"]["borderline"] is True
    semantic = [s for s in answer["explain"]["stages"] if s["stage"] == "semantic"]
    assert len(semantic) == 1
    assert 0.85 <= semantic[0]["score"] < 0.90
    # The stage whose match the policy took says it matched; one the policy let go does not.
    assert semantic[0]["matched"] is matched


def test_whitespace_and_typo_reissue_hits_fuzzy(client: TestClient) -> None:
    first = check(client, EMAIL)
    complete(client, first["call_id"], status="succeeded", result="ok")
    typo = {**EMAIL, "body": EMAIL["body"].replace("questions", "questons")}
    again = check(client, typo)
    assert again["decision"] == "duplicate"
    assert again["match"]["stage"] == "fuzzy"
    assert 0.97 <= again["match"]["score"] < 1.0


@pytest.mark.parametrize(
    ("changed", "field"),
    [
        ({"to": "eve@example.com"}, "to"),
        ({"body": EMAIL["body"].replace("Q3", "Q4")}, "body"),
    ],
)
def test_critical_change_is_never_a_duplicate(
    client: TestClient, changed: dict[str, str], field: str
) -> None:
    first = check(client, EMAIL)
    complete(client, first["call_id"], status="succeeded")
    again = check(client, {**EMAIL, **changed})
    assert again["decision"] == "proceed"
    assert field in again["explain"]["differing_fields"]


def test_amount_change_is_distinct_whatever_the_cosine(client: TestClient) -> None:
    args = {"order_id": "A-17", "amount": 100, "reason": "Customer was charged twice for the order"}
    first = check(client, args, tool="refund")
    complete(client, first["call_id"], status="succeeded")
    assert check(client, {**args, "amount": 100.0}, tool="refund")["decision"] == "duplicate"
    bigger = check(client, {**args, "amount": 100000}, tool="refund")
    assert bigger["decision"] == "proceed"
    assert bigger["explain"]["differing_fields"] == ["amount"]


def test_pending_then_in_progress(client: TestClient) -> None:
    first = check(client, EMAIL)
    second = check(client, EMAIL)
    assert second["decision"] == "in_progress"
    assert second["call_id"] == first["call_id"]
    assert second["match"]["status"] == "pending"


def _set_policy(client: TestClient, tool: str, **policy: object) -> None:
    response = client.put(f"/v1/tools/{tool}/policy", json=policy)
    assert response.status_code == 200, response.text


def test_expired_lease_asks_to_reconcile(client: TestClient) -> None:
    _set_policy(client, "send_email", lease_seconds=0.05)
    first = check(client, EMAIL)
    time.sleep(0.1)
    again = check(client, EMAIL)
    assert again["decision"] == "reconcile"
    assert again["call_id"] == first["call_id"]
    # The caller checked downstream and found the email was sent: it completes the original.
    complete(client, first["call_id"], status="succeeded", result="sent")
    assert check(client, EMAIL)["decision"] == "duplicate"


@pytest.mark.parametrize(
    ("outcome", "decision"),
    [
        ({"status": "succeeded", "result": {"id": 1}}, "duplicate"),
        ({"status": "failed", "failure_class": "poison", "error": "bad address"}, "duplicate"),
        ({"status": "failed", "failure_class": "ambiguous", "error": "timeout"}, "reconcile"),
        ({"status": "unknown"}, "reconcile"),
        ({"status": "failed", "failure_class": "retryable", "error": "503"}, "proceed"),
    ],
)
def test_outcome_table(client: TestClient, outcome: dict[str, object], decision: str) -> None:
    first = check(client, EMAIL)
    complete(client, first["call_id"], **outcome)
    again = check(client, {**EMAIL, "request_id": "retry"})
    assert again["decision"] == decision
    assert again["match"]["call_id"] == first["call_id"]
    if "error" in outcome and decision == "duplicate":
        assert again["match"]["error"] == outcome["error"]
    if decision == "proceed":
        assert again["call_id"] != first["call_id"]
        attempt = client.get(f"/v1/calls/{again['call_id']}").json()
        assert attempt["attempt_of"] == first["call_id"]
        # The retry is now the live attempt: a third check is in progress on it.
        third = check(client, EMAIL)
        assert third["decision"] == "in_progress"
        assert third["call_id"] == again["call_id"]


def test_reads_bypass(client: TestClient) -> None:
    _set_policy(client, "search", side_effect="read")
    for _ in range(2):
        answer = check(client, {"q": "flights to Rome"}, tool="search")
        assert answer["decision"] == "proceed"
        assert answer["call_id"] is None
    calls = client.get("/v1/sessions/s1/calls").json()["calls"]
    assert [c for c in calls if c["tool"] == "search"] == []


def test_dry_run_claims_nothing(client: TestClient) -> None:
    dry = check(client, EMAIL, dry_run=True)
    assert dry["decision"] == "proceed"
    assert dry["call_id"] is None
    assert dry["explain"]["dry_run"] is True
    assert check(client, EMAIL)["decision"] == "proceed"


def test_scope_shares_across_sessions_and_isolates_by_default(client: TestClient) -> None:
    first = check(client, EMAIL, scope="customer-9")
    complete(client, first["call_id"], status="succeeded", result="sent")
    other_session = check(client, EMAIL, session_id="s2", scope="customer-9")
    assert other_session["decision"] == "duplicate"
    assert other_session["match"]["result"] == "sent"
    # Without the shared scope, another session never sees that stored result.
    isolated = check(client, EMAIL, session_id="s3")
    assert isolated["decision"] == "proceed"
    assert isolated["match"] is None


def test_explicit_idempotency_key(client: TestClient) -> None:
    first = check(client, EMAIL, idempotency_key="k-1")
    assert first["idempotency_key"] == "k-1"
    assert check(client, EMAIL, idempotency_key="k-1")["decision"] == "in_progress"
    complete(client, first["call_id"], status="succeeded", result="sent")
    response = client.post(
        "/v1/check",
        json={"session_id": "s1", "tool": "send_email", "args": EMAIL},
        headers={"Idempotency-Key": "k-1"},
    )
    assert response.json()["decision"] == "duplicate"
    reused = client.post(
        "/v1/check",
        json={"session_id": "s1", "tool": "send_email", "args": {**EMAIL, "to": "x@y.com"}},
        headers={"Idempotency-Key": "k-1"},
    )
    assert reused.status_code == 422
    assert reused.json()["error"]["code"] == "idempotency_key_reused"


def test_run_and_step_join_the_intent_key(client: TestClient) -> None:
    plain = check(client, EMAIL, dry_run=True)["idempotency_key"]
    step3 = check(client, EMAIL, run_id="run-1", step=3, dry_run=True)["idempotency_key"]
    step4 = check(client, EMAIL, run_id="run-1", step=4, dry_run=True)["idempotency_key"]
    again = check(client, {**EMAIL, "request_id": "retry"}, run_id="run-1", step=3, dry_run=True)
    assert len({plain, step3, step4}) == 3
    assert again["idempotency_key"] == step3  # a retry of the same step is the same intent


def test_call_and_session_listing(client: TestClient) -> None:
    first = check(client, EMAIL)
    call = client.get(f"/v1/calls/{first['call_id']}").json()
    assert call["status"] == "pending"
    assert call["args"]["to"] == "bob@example.com"
    listing = client.get("/v1/sessions/s1/calls").json()
    assert [c["call_id"] for c in listing["calls"]] == [first["call_id"]]


def test_policy_roundtrip(client: TestClient) -> None:
    default = client.get("/v1/tools/anything/policy").json()
    assert default["custom"] is False
    assert default["policy"]["side_effect"] == "write"
    put = client.put(
        "/v1/tools/send_email/policy",
        json={"min_cosine_duplicate": 0.0, "min_cosine_borderline": -1.0},
    )
    assert put.status_code == 200
    got = client.get("/v1/tools/send_email/policy").json()
    assert got["custom"] is True
    assert got["policy"]["min_cosine_duplicate"] == 0.0  # zero is a real value


def test_metrics_and_health(client: TestClient) -> None:
    check(client, EMAIL)
    assert client.get("/healthz").json()["status"] == "ok"
    text = client.get("/metrics").text
    assert 'tooldedup_checks_total{decision="proceed",stage="none"} 1.0' in text
    assert "tooldedup_check_latency_seconds_bucket" in text


def test_feedback_distinct_stops_a_wrong_match(client: TestClient) -> None:
    first = check(client, EMAIL)
    complete(client, first["call_id"], status="succeeded", result="sent")
    follow_up = {**EMAIL, "body": "Hi Bob, the Q3 report is attached. Any questions, let me know."}
    wrong = check(client, follow_up)
    assert wrong["decision"] == "duplicate"
    label = client.post(
        "/v1/feedback",
        json={
            "check_id": wrong["check_id"],
            "label": "distinct",
            "note": "a second send was intended",
        },
    )
    assert label.status_code == 201, label.text
    assert label.json()["excluded_call_id"] == first["call_id"]
    # The same proposal again is no longer matched with that call.
    assert check(client, follow_up)["decision"] == "proceed"


def test_feedback_errors(client: TestClient) -> None:
    missing = client.post("/v1/feedback", json={"check_id": "chk_nope", "label": "distinct"})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    first = check(client, EMAIL)
    bad = client.post("/v1/feedback", json={"check_id": first["check_id"], "label": "maybe"})
    assert bad.status_code == 422


@pytest.mark.parametrize(
    "sent",
    [
        {"queue": "IT", "priority": "HIGH", "amount": 1200.0, "request_id": "r-7"},
        {"b": [3, 1, 2], "a": {"Z": "Ünïcode  text", "trace_id": "t-1"}, "n": 1e21},
    ],
)
def test_stored_call_returns_args_as_sent(client: TestClient, sent: dict[str, object]) -> None:
    first = check(client, sent)
    stored = client.get(f"/v1/calls/{first['call_id']}").json()
    assert stored["args"] == sent
    assert list(stored["args"]) == list(sent)
    listed = client.get("/v1/sessions/s1/calls").json()["calls"]
    assert [c["args"] for c in listed] == [sent]


_BOOKING = {"location": "Seattle", "date": "2026-03-01", "guests": 2, "currency": "EUR"}


@pytest.mark.parametrize(
    ("changed", "decision", "stage"),
    [
        (
            {"location": "Seattle, WA", "date": "March 1, 2026", "currency": "Euros"},
            "duplicate",
            "equivalent",
        ),
        ({"location": "seattle, washington", "date": "2026-3-1"}, "duplicate", "equivalent"),
        ({"location": "Seattle, OR"}, "duplicate", "equivalent"),
        ({"date": "13:00 1 March 2026"}, "proceed", None),
        ({"location": "Seattle Center"}, "proceed", None),
        ({"location": "WA"}, "proceed", None),
        ({"date": "2026-03-02"}, "proceed", None),
        # Read two ways (1 March or 3 January), the numbers stay as written.
        ({"date": "03/01/2026"}, "proceed", None),
        ({"currency": "USD"}, "proceed", None),
        ({"guests": 3, "location": "Seattle, WA"}, "proceed", None),
    ],
)
def test_one_value_spelt_two_ways(
    client: TestClient, changed: dict[str, object], decision: str, stage: str | None
) -> None:
    first = check(client, _BOOKING, tool="book_hotel")
    complete(client, first["call_id"], status="succeeded", result={"booking": "B-1"})
    again = check(client, {**_BOOKING, **changed}, tool="book_hotel")
    assert again["decision"] == decision
    if stage is None:
        assert again["match"] is None
        assert again["explain"]["differing_from"] == first["call_id"]
    else:
        assert again["match"]["stage"] == stage
        assert again["match"]["result"] == {"booking": "B-1"}
        matched = [s for s in again["explain"]["stages"] if s["stage"] == "equivalent"]
        assert matched[0]["matched"] is True
        assert all(field in matched[0]["detail"] for field in changed)


_TOUR = {
    "museum_name": "Louvre Museum",
    "interests": ["Egyptian art", "sculpture", "paintings"],
    "company": "Paris Walks",
    "guests": 2,
}
_REORDERED = ["sculpture", "paintings", "Egyptian art"]


@pytest.mark.parametrize(
    ("tool", "changed", "decision"),
    [
        ("book_tour", {"museum_name": "Louvre", "interests": _REORDERED}, "duplicate"),
        ("book_tour", {"company": "paris walks"}, "duplicate"),
        ("book_tour", {"company": "PARIS WALKS"}, "proceed"),
        # A tool that stores what it is given keeps its spelling.
        ("create_tour", {"company": "paris walks"}, "proceed"),
        ("book_tour", {"museum_name": "Louvre Palace"}, "proceed"),
        ("book_tour", {"interests": ["sculpture", "paintings"]}, "proceed"),
        ("book_tour", {"interests": _REORDERED, "guests": 3}, "proceed"),
        # A tool about order keeps its lists in order.
        ("rank_tour", {"interests": _REORDERED}, "proceed"),
    ],
)
def test_a_name_or_a_list_written_another_way(
    client: TestClient, tool: str, changed: dict[str, object], decision: str
) -> None:
    first = check(client, _TOUR, tool=tool)
    complete(client, first["call_id"], status="succeeded", result={"order": "O-1"})
    again = check(client, {**_TOUR, **changed}, tool=tool)
    assert again["decision"] == decision
    if decision == "duplicate":
        assert again["match"]["stage"] == "equivalent"
        assert again["match"]["result"] == {"order": "O-1"}
    else:
        assert again["match"] is None
        # The call is stored as sent, in the order sent.
        stored = client.get(f"/v1/calls/{again['call_id']}").json()
        assert stored["args"] == {**_TOUR, **changed}


def test_explain_names_only_what_differs_in_value(client: TestClient) -> None:
    first = check(client, {**_BOOKING, "extras": ["spa", "breakfast"]}, tool="book_hotel")
    complete(client, first["call_id"], status="succeeded")
    # Only the guests differ: the place is spelt otherwise and the extras are a set.
    changed = {"location": "Seattle, WA", "guests": 3, "extras": ["breakfast", "spa"]}
    again = check(client, {**_BOOKING, **changed}, tool="book_hotel")
    assert again["decision"] == "proceed"
    assert again["explain"]["differing_from"] == first["call_id"]
    assert again["explain"]["differing_fields"] == ["guests"]


def test_places_of_two_regions_stay_apart_even_with_the_same_text(client: TestClient) -> None:
    note = "Please book a quiet room near the conference centre, late checkout if possible."
    first = check(client, {"location": "Paris, TX", "note": note}, tool="book_hotel")
    complete(client, first["call_id"], status="succeeded")
    france = check(client, {"location": "Paris, France", "note": note}, tool="book_hotel")
    assert france["decision"] == "proceed"
    assert france["explain"]["differing_fields"] == ["location"]
    # A free-text rewording with the same place spelt otherwise is still a repeat.
    typo = note.replace("quiet", "quite")
    again = check(client, {"location": "Paris, Texas", "note": typo}, tool="book_hotel")
    assert again["decision"] == "duplicate"
    assert again["match"]["call_id"] == first["call_id"]


def test_a_field_named_exact_compares_as_written(client: TestClient) -> None:
    put = client.put("/v1/tools/book_hotel/policy", json={"exact_fields": ["location"]})
    assert put.status_code == 200, put.text
    first = check(client, _BOOKING, tool="book_hotel")
    complete(client, first["call_id"], status="succeeded")
    again = check(client, {**_BOOKING, "location": "Seattle, WA"}, tool="book_hotel")
    assert again["decision"] == "proceed"
    # Only the named field: a date in another format is still the same date.
    same = check(client, {**_BOOKING, "date": "March 1, 2026"}, tool="book_hotel")
    assert same["decision"] == "duplicate"
    assert same["match"]["stage"] == "equivalent"


@pytest.mark.parametrize(
    "args",
    [
        {"date": "0001-01-01T00:00:00+01:00"},
        {"start_time": "9999-12-31T23:59:00-01:00"},
        {"location": "Seattle" * 20_000},
        {"location": ", ,"},
        {"destination": "acct_1AbCdEf"},
        {"unit": "\u00b0"},
    ],
)
def test_odd_values_in_value_fields_answer_as_written(
    client: TestClient, args: dict[str, str]
) -> None:
    first = check(client, args, tool="book_hotel")
    assert first["decision"] == "proceed"
    complete(client, first["call_id"], status="succeeded")
    again = check(client, args, tool="book_hotel")
    assert again["decision"] == "duplicate"
    assert again["match"]["stage"] == "exact"


_REMINDER = (
    "Ask the team to fix the Kestrel invoice in 2 hours and 30 minutes, it is due on Thursday."
)


@pytest.mark.parametrize(
    ("body", "decision"),
    [
        # A unit's short form is the unit; each unit is bound to its number.
        (_REMINDER.replace("30 minutes", "30 mins"), "duplicate"),
        (_REMINDER.replace("2 hours and 30 minutes", "30 hours and 2 minutes"), "proceed"),
        (_REMINDER.replace("30 minutes", "30 hours"), "proceed"),
        (_REMINDER.replace("Thursday", "Friday"), "proceed"),
        (_REMINDER.replace("Thursday", "Fri"), "proceed"),
    ],
)
def test_units_and_weekdays_in_free_text(client: TestClient, body: str, decision: str) -> None:
    first = check(client, {"to": "team@example.com", "body": _REMINDER}, tool="notify")
    complete(client, first["call_id"], status="succeeded", result={"sent": True})
    again = check(client, {"to": "team@example.com", "body": body}, tool="notify")
    assert again["decision"] == decision, again["explain"]


@pytest.mark.parametrize(
    ("country", "decision"), [("CN", "duplicate"), ("China", "duplicate"), ("CA", "proceed")]
)
def test_a_country_by_its_code(client: TestClient, country: str, decision: str) -> None:
    args = {"country": "CHN", "sku": "A-17", "quantity": 40}
    first = check(client, args, tool="set_export_quota")
    complete(client, first["call_id"], status="succeeded")
    again = check(client, {**args, "country": country}, tool="set_export_quota")
    assert again["decision"] == decision
