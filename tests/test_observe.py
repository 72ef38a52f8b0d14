"""Observe mode over HTTP on both stores: every check proceeds and claims, and the answer
enforcement would have given is logged, filterable, labelable and calibrated from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.helpers import EMAIL, MakeApp, check, complete
from tooldedup.api.cli import main
from tooldedup.api.settings import Settings
from tooldedup.calibration.command import predicted_changes
from tooldedup.calibration.samples import samples_from_log
from tooldedup.dedup.policy import PolicySet

UNSURE = {
    **EMAIL,
    "body": EMAIL["body"].replace("Let me know if you have any", "Please let me know if you have"),
}


@pytest.fixture
def client(settings_on_both: Settings, make_app: MakeApp) -> Iterator[TestClient]:
    app = make_app(settings_on_both)
    with TestClient(app) as test_client:
        yield test_client


def _observe(client: TestClient, tool: str = "send_email") -> None:
    response = client.put(f"/v1/tools/{tool}/policy", json={"enforcement": "observe"})
    assert response.status_code == 200, response.text
    assert response.json()["policy"]["enforcement"] == "observe"


def test_observe_mode_proceeds_and_logs_the_would_be_answer(
    client: TestClient, settings_on_both: Settings, tmp_path: Path
) -> None:
    _observe(client)
    first = check(client, EMAIL)
    assert (first["decision"], first["observed"]) == ("proceed", None)
    running = check(client, EMAIL)
    assert running["decision"] == "proceed"
    assert running["call_id"] != first["call_id"]
    assert running["observed"]["decision"] == "in_progress"
    assert running["observed"]["match"]["call_id"] == first["call_id"]
    assert running["note"] is None
    # The observed repeat really runs: later checks compare with it too.
    for call in (first, running):
        complete(client, call["call_id"], status="succeeded", result={"message_id": "m-42"})
    repeat = check(client, EMAIL)
    assert repeat["decision"] == "proceed"
    assert repeat["observed"]["decision"] == "duplicate"
    assert repeat["explain"]["observed"]["decision"] == "duplicate"
    # Each observed repeat is a claim of its own: it is completed like any call.
    complete(client, repeat["call_id"], status="succeeded")
    calls = client.get("/v1/sessions/s1/calls").json()["calls"]
    assert len(calls) == 3

    log = client.get("/v1/log", params={"observed": "duplicate"}).json()["entries"]
    assert [e["check_id"] for e in log] == [repeat["check_id"]]
    assert log[0]["decision"] == "proceed"
    assert (log[0]["stage"], log[0]["matched_call_id"]) == ("exact", running["call_id"])
    every = client.get("/v1/log", params={"observed": "any"}).json()["entries"]
    assert {e["check_id"] for e in every} == {repeat["check_id"], running["check_id"]}
    assert client.get("/v1/log", params={"observed": "nonsense"}).status_code == 422

    # The operator labels the would-be duplicate; calibrate reads it from the export.
    label = {"check_id": repeat["check_id"], "label": "duplicate"}
    assert client.post("/v1/feedback", json=label).status_code == 201
    summary = client.get("/v1/review/summary").json()
    tools = {tool["tool"]: tool for tool in summary["tools"]}
    assert tools["send_email"]["observed"] == {"duplicate": 1, "in_progress": 1}
    assert tools["send_email"]["labels"] == 1
    exported = tmp_path / "log.jsonl"
    db = settings_on_both.postgres_url or str(settings_on_both.db_path)
    assert main(["export-log", "--db", db, "--out", str(exported)]) == 0
    samples, _ = samples_from_log(exported)
    assert [(s.ref, s.fixed, s.duplicate) for s in samples] == [(repeat["check_id"], "exact", True)]
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert {line["observed"] for line in lines} == {None, "in_progress", "duplicate"}


def test_observe_mode_records_a_would_be_ask(client: TestClient) -> None:
    _observe(client)
    first = check(client, EMAIL)
    complete(client, first["call_id"], status="succeeded")
    asked = check(client, UNSURE, answers=["ask"])
    assert (asked["decision"], asked["ask"]) == ("proceed", None)
    assert asked["observed"]["decision"] == "ask"
    log = client.get("/v1/log", params={"observed": "ask"}).json()["entries"]
    assert [e["check_id"] for e in log] == [asked["check_id"]]


def test_enforce_is_the_default_and_tools_differ(client: TestClient) -> None:
    _observe(client, "send_sms")
    first = check(client, EMAIL)
    complete(client, first["call_id"], status="succeeded")
    repeat = check(client, EMAIL)
    assert (repeat["decision"], repeat["observed"]) == ("duplicate", None)
    policy = client.get("/v1/tools/send_email/policy").json()["policy"]
    assert policy["enforcement"] == "enforce"


def test_observe_mode_honours_the_callers_own_keys(client: TestClient) -> None:
    """An idempotency key is the caller's own promise: observe mode keeps it."""
    _observe(client)
    first = check(client, EMAIL, idempotency_key="k1")
    complete(client, first["call_id"], status="succeeded")
    again = check(client, EMAIL, idempotency_key="k1")
    assert (again["decision"], again["call_id"]) == ("duplicate", first["call_id"])


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("enforcement", "shadow"),
        ("enforcement", 1),
        ("unsure_action", "ask"),
        ("borderline_action", "maybe"),
        ("ask_ttl_seconds", 0),
        ("ask_ttl_seconds", True),
        ("model_notes", "no"),
    ],
)
def test_bad_settings_are_refused(client: TestClient, setting: str, value: object) -> None:
    response = client.put("/v1/tools/send_email/policy", json={setting: value})
    assert response.status_code == 422
    assert response.json()["error"]["code"] in ("invalid_request", "invalid_input")


def test_calibrate_names_the_would_be_answer() -> None:
    """A predicted change of an observed check says what it would have answered."""
    entry = {
        "check_id": "chk_1",
        "tool": "send_email",
        "stage": "semantic",
        "decision": "proceed",
        "observed": "duplicate",
        "explain": {"stages": [{"stage": "semantic", "score": 0.5, "verdict": "no_objection"}]},
    }
    assert predicted_changes([entry], PolicySet()) == [
        "chk_1 send_email: would no longer match (cosine 0.5, was duplicate)"
    ]
