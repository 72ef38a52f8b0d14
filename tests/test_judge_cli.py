"""`tooldedup judge-check` and `tooldedup calibrate --judge` against a scripted endpoint."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.fake_llm import Reply, fake_llm, verdict
from tests.helpers import EMAIL, check, complete

CLI = [sys.executable, "-m", "tooldedup.api.cli"]


def test_judge_check_prints_agreement() -> None:
    with fake_llm() as llm:
        llm.default = verdict(True)
        result = subprocess.run(
            [*CLI, "judge-check", "--base-url", llm.url, "--model", "m"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 0, result.stderr
    assert "agreement: 4/8 (50%)" in result.stdout
    assert len(llm.requests) == 8


def _judge_check(base_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "judge-check", "--base-url", base_url, "--model", "m", "--timeout", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_judge_check_fails_when_nothing_answers() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Closed again: nothing listens on the port, so every connection is refused.
    result = _judge_check(f"http://127.0.0.1:{port}/v1")
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert "no verdict for 8 of 8 pairs" in result.stderr
    assert f"http://127.0.0.1:{port}/v1" in result.stderr
    assert "agreement:" not in result.stdout


@pytest.mark.parametrize(
    ("script", "default", "code", "said"),
    [
        ([], Reply(status=500), 1, "no verdict for 8 of 8 pairs"),
        ([Reply(status=503)], verdict(True), 1, "no verdict for 1 of 8 pairs"),
        ([], verdict(True), 0, "agreement: 4/8 (50%)"),
    ],
)
def test_judge_check_exit_code_says_whether_every_pair_was_answered(
    script: list[Reply], default: Reply, code: int, said: str
) -> None:
    with fake_llm() as llm:
        llm.script.extend(script)
        llm.default = default
        result = _judge_check(llm.url)
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    assert said in (result.stderr if code else result.stdout)


def test_calibrate_labels_borderline_checks_with_the_judge(
    client: TestClient, tmp_path: Path, settings: object
) -> None:
    band = {"min_cosine_duplicate": 0.999, "min_cosine_borderline": 0.5}
    assert client.put("/v1/tools/send_email/policy", json=band).status_code == 200
    rewordings = [
        "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
        "Bob, attached you will find the Q3 report; questions welcome.",
        "Hi Bob, the Q3 report is in the attachment. Ask me anything about it.",
    ]
    for i, body in enumerate(rewordings):
        session = f"s{i}"
        first = check(client, EMAIL, session_id=session)
        complete(client, first["call_id"], status="succeeded")
        check(client, {**EMAIL, "body": body}, session_id=session)
    db = Path(settings.db_path)  # type: ignore[attr-defined]
    log = tmp_path / "log.jsonl"
    subprocess.run([*CLI, "export-log", "--db", str(db), "--out", str(log)], check=True)
    with fake_llm() as llm:
        llm.default = verdict(True, 0.9, "same email reworded")
        result = subprocess.run(
            [
                *CLI,
                "calibrate",
                "--log",
                str(log),
                "--judge",
                "--db",
                str(db),
                "--judge-base-url",
                llm.url,
                "--judge-model",
                "m",
                "--out",
                str(tmp_path / "p.toml"),
                "--report",
                str(tmp_path / "r.html"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "judge: labelled 3 borderline checks (0 judge calls failed)" in result.stdout
    report = (tmp_path / "r.html").read_text()
    assert "Judge-made labels" in report
    assert report.count(": duplicate") == 3


def test_calibrate_judge_needs_its_settings(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("")
    result = subprocess.run(
        [*CLI, "calibrate", "--log", str(log), "--judge"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "--judge needs --db" in result.stderr
