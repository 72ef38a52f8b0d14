"""Feedback to calibrated policy, end to end: traffic, labels, export, calibrate, serve, replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from tests.server import serve
from tooldedup.calibration.command import would_match
from tooldedup.calibration.samples import sample_from_entry
from tooldedup.dedup.policy import PolicySet, load_policy_file

# (first text, second text, truly the same intent?)
FUZZY = [
    (
        f"Please book meeting room {i} for the weekly sync with the design team.",
        f"Please book meeting room {i} for the weekyl sync with the design team.",
        True,
    )
    for i in range(1, 15)
]
PARAPHRASES = [
    (
        "Share the Q3 minutes with everyone please.",
        "Please share the Q3 minutes with everyone.",
        True,
    ),
    (
        "Tell the on-call engineer that database 3 is down.",
        "Notify the on-call engineer that database 3 is down.",
        True,
    ),
    (
        "Let the team know the Q3 offsite starts on Monday.",
        "Let the team know that the Q3 offsite begins on Monday.",
        True,
    ),
    (
        "Share the minutes of the Q3 planning meeting with everyone.",
        "Send everyone the minutes from the Q3 planning meeting.",
        True,
    ),
]
NEGATIVES = [
    (
        "Remind the team that the offsite starts on Monday.",
        "Remind the team that the offsite is cancelled on Monday.",
        False,
    ),
    (
        "Tell Alice the server migration is finished on Monday.",
        "Tell Alice the server migration is postponed on Monday.",
        False,
    ),
    (
        "Ask Dave to approve the Q3 budget request.",
        "Ask Dave to reject the Q3 budget request.",
        False,
    ),
    (
        "Let Carol know the contract for project 7 is signed.",
        "Let Carol know the contract for project 7 is not signed.",
        False,
    ),
    (
        "Thank the customer for reporting the login bug in version 2.",
        "Apologise to the customer for the login bug in version 2.",
        False,
    ),
]
PAIRS = FUZZY + PARAPHRASES + NEGATIVES


def _check(client: httpx.Client, session: str, text: str, dry_run: bool = False) -> dict:  # type: ignore[type-arg]
    body = {
        "session_id": session,
        "tool": "post_message",
        "args": {"channel": "#team", "text": text},
        "dry_run": dry_run,
    }
    response = client.post("/v1/check", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def _traffic(client: httpx.Client, suffix: str, label: bool) -> dict[int, dict]:  # type: ignore[type-arg]
    """Post each first message, mark it sent, then check the second; optionally label it."""
    answers = {}
    for i, (first, second, same) in enumerate(PAIRS):
        session = f"pair-{i}-{suffix}"
        claimed = _check(client, session, first)
        assert claimed["decision"] == "proceed"
        done = client.post(f"/v1/calls/{claimed['call_id']}/complete", json={"status": "succeeded"})
        assert done.status_code == 200
        answers[i] = _check(client, session, second, dry_run=not label)
        if label:
            verdict = {
                "check_id": answers[i]["check_id"],
                "label": "duplicate" if same else "distinct",
            }
            assert client.post("/v1/feedback", json=verdict).status_code == 201
    return answers


def test_feedback_to_calibrated_policy(tmp_path: Path, model_cache: Path) -> None:
    db = tmp_path / "ledger.db"
    with serve(db, model_cache) as client:
        before = _traffic(client, "live", label=True)
    # With default thresholds some negations were matched as duplicates.
    assert any(before[i]["decision"] == "duplicate" for i in range(len(PAIRS) - 5, len(PAIRS)))

    log = tmp_path / "decisions.jsonl"
    cli = [sys.executable, "-m", "tooldedup.api.cli"]
    subprocess.run([*cli, "export-log", "--db", str(db), "--out", str(log)], check=True)
    policy = tmp_path / "policy.toml"
    report = tmp_path / "report.html"
    result = subprocess.run(
        [
            *cli,
            "calibrate",
            "--log",
            str(log),
            "--target-precision",
            "0.8",
            "--out",
            str(policy),
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "labelled" in result.stdout
    assert report.read_text().startswith("<!doctype html>")
    assert "data:image/png;base64," in report.read_text()
    defaults, tools = load_policy_file(policy)
    assert defaults.borderline_action.value == "proceed"
    # Nothing under the written band is confirmed into a match: the guarantee holds.
    assert defaults.min_cosine_confirmed == defaults.min_cosine_borderline
    policies = PolicySet.build(defaults, tools)

    entries = [json.loads(line) for line in log.read_text().splitlines()]
    seconds = {e["check_id"]: e for e in entries if e["feedback"] is not None}
    predicted = {
        i: would_match(
            sample_from_entry(seconds[a["check_id"]], False, "log"),
            policies.for_tool("post_message"),
        )
        for i, a in before.items()
    }
    changed = [i for i in predicted if predicted[i] != (before[i]["decision"] == "duplicate")]
    assert changed, "calibration should change at least one decision on this traffic"
    assert f"{len(changed)} of" in result.stdout

    with serve(tmp_path / "replay.db", model_cache, "--policy", str(policy)) as client:
        after = _traffic(client, "replay", label=False)
    for i, answer in after.items():
        assert (answer["decision"] == "duplicate") is predicted[i], (i, answer["explain"])
    # The negations the defaults merged are now told apart.
    for i in range(len(PAIRS) - 5, len(PAIRS)):
        assert after[i]["decision"] == "proceed"
