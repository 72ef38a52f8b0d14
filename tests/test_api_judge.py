"""The judge through /v1/check: inline verdicts, failures falling back, shadow labels."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.fake_llm import FakeLLM, Reply, fake_llm, verdict
from tests.helpers import EMAIL, MakeApp, check, complete
from tooldedup.api.settings import Settings
from tooldedup.dedup.ledger import SqliteLedger

REWORDED = {
    **EMAIL,
    "body": "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
}
# Thresholds that put this rewording (cosine ~0.89) in the borderline band.
BAND = {"min_cosine_duplicate": 0.999, "min_cosine_borderline": 0.5}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


@pytest.fixture
def judged(settings: Settings, make_app: MakeApp, llm: FakeLLM) -> Iterator[TestClient]:
    # A deadline a loaded machine still meets (0.5 s timed out once, on a first verdict);
    # the timeout case below replies after 2 s, past it.
    configured = replace(
        settings, judge_base_url=llm.url, judge_model="m", judge_timeout_seconds=1.5
    )
    with TestClient(make_app(configured)) as client:
        yield client


def _borderline(client: TestClient, mode: str) -> None:
    response = client.put("/v1/tools/send_email/policy", json={**BAND, "judge_mode": mode})
    assert response.status_code == 200
    first = check(client, EMAIL)
    complete(client, first["call_id"], status="succeeded", result="sent")


@pytest.mark.parametrize(("duplicate", "decision"), [(True, "duplicate"), (False, "proceed")])
def test_inline_verdict_decides(
    judged: TestClient, llm: FakeLLM, duplicate: bool, decision: str
) -> None:
    _borderline(judged, "inline")
    llm.script.append(verdict(duplicate, 0.8, "scripted reason"))
    answer = check(judged, REWORDED)
    assert answer["decision"] == decision
    judge = answer["explain"]["judge"]
    assert judge["outcome"] == "verdict"
    assert judge["duplicate"] is duplicate
    assert judge["reason"] == "scripted reason"
    if duplicate:
        assert answer["match"]["stage"] == "judge"
        assert answer["match"]["result"] == "sent"


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (Reply(content="nonsense"), "malformed"),
        (Reply(status=429, body="{}"), "unavailable"),
        (Reply(status=500, body="{}"), "unavailable"),
        (
            Reply(content='{"duplicate": false, "confidence": 1, "reason": "x"}', delay=2.0),
            "timeout",
        ),
    ],
)
def test_failures_fall_back_to_the_borderline_action(
    judged: TestClient, llm: FakeLLM, reply: Reply, outcome: str
) -> None:
    _borderline(judged, "inline")
    llm.script.append(reply)
    answer = check(judged, REWORDED)
    assert answer["decision"] == "duplicate"  # the default borderline action
    assert answer["match"]["stage"] == "semantic"
    assert answer["explain"]["judge"]["outcome"] == outcome


def test_shadow_mode_labels_without_deciding(
    judged: TestClient, llm: FakeLLM, settings: Settings
) -> None:
    _borderline(judged, "shadow")
    llm.script.append(verdict(False, 0.9, "a follow-up, not a repeat"))
    answer = check(judged, REWORDED)
    assert answer["decision"] == "duplicate"  # decided by threshold at once
    assert answer["explain"]["judge"]["outcome"] == "shadow"
    judged.app.state.service.drain_judge(timeout=10)  # type: ignore[attr-defined]
    entries = {e.check_id: e for e in SqliteLedger(Path(settings.db_path)).iter_log()}
    label = entries[answer["check_id"]].feedback
    assert label is not None
    assert label.source == "judge"
    assert label.label == "distinct"
    # A judge's label never changes what is served.
    assert check(judged, REWORDED)["decision"] == "duplicate"


def test_no_judge_configured(client: TestClient) -> None:
    _borderline(client, "inline")
    answer = check(client, REWORDED)
    assert answer["decision"] == "duplicate"
    assert answer["explain"]["judge"]["outcome"] == "not_configured"
