"""The CLI as a user runs it: a real `tooldedup serve` process, restarts, concurrency, export."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import EMAIL
from tests.server import export_log, serve
from tooldedup.index.source_model import source_model_dir


def _check(client: httpx.Client, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    response = client.post(
        "/v1/check", json={"session_id": "s1", "tool": "send_email", "args": args, **extra}
    )
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_restart_keeps_history(tmp_path: Path, model_cache: Path) -> None:
    db = tmp_path / "ledger.db"
    with serve(db, model_cache) as client:
        first = _check(client, EMAIL)
        assert first["decision"] == "proceed"
        done = client.post(
            f"/v1/calls/{first['call_id']}/complete",
            json={"status": "succeeded", "result": {"id": "m-1"}},
        )
        assert done.status_code == 200
    with serve(db, model_cache) as client:
        exact = _check(client, {**EMAIL, "request_id": "after-restart"})
        assert exact["decision"] == "duplicate"
        assert exact["match"]["result"] == {"id": "m-1"}
        reworded = {
            **EMAIL,
            "body": "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
        }
        semantic = _check(client, reworded)
        assert semantic["decision"] == "duplicate"
        assert semantic["match"]["stage"] == "semantic"
        history = client.get("/v1/sessions/s1/calls").json()["calls"]
        assert [c["call_id"] for c in history] == [first["call_id"]]


@pytest.mark.parametrize(
    ("backend", "own_model"),
    [("torch", False), ("torch", True), ("onnx-int8", True), ("onnx", True)],
)
def test_the_torch_extra_serves_other_backends_and_models(
    tmp_path: Path, model_cache: Path, backend: str, own_model: bool
) -> None:
    extra = ["--embedder", backend]
    if own_model:
        # Any sentence-transformers folder; here a copy of the source of the shipped model.
        own = tmp_path / "my-model"
        shutil.copytree(source_model_dir(), own)
        extra += ["--model-path", str(own)]
    with serve(tmp_path / "ledger.db", model_cache, *extra) as client:
        model = client.get("/healthz").json()["model"]
        assert model.startswith("torch:" if backend == "torch" else f"{backend}:")
        first = _check(client, EMAIL)
        client.post(f"/v1/calls/{first['call_id']}/complete", json={"status": "succeeded"})
        reworded = {
            **EMAIL,
            "body": "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
        }
        semantic = _check(client, reworded)
        assert (semantic["decision"], semantic["match"]["stage"]) == ("duplicate", "semantic")


def test_concurrent_identical_checks_give_one_proceed(tmp_path: Path, model_cache: Path) -> None:
    with serve(tmp_path / "ledger.db", model_cache) as client:
        # Warm the path once in another session so the race is not decided by start-up.
        _check(client, EMAIL, session_id="warm-up")
        barrier = threading.Barrier(16)

        def attempt(i: int) -> str:
            barrier.wait()
            args = {**EMAIL, "request_id": f"r-{i}"}
            return str(_check(client, args, session_id="race")["decision"])

        with ThreadPoolExecutor(16) as pool:
            decisions = list(pool.map(attempt, range(16)))
        assert decisions.count("proceed") == 1
        assert decisions.count("in_progress") == 15


def test_export_log(tmp_path: Path, model_cache: Path) -> None:
    db = tmp_path / "ledger.db"
    with serve(db, model_cache) as client:
        first = _check(client, EMAIL)
        second = _check(client, EMAIL)
    out = tmp_path / "decisions.jsonl"
    result = export_log(db, out)
    assert "exported 2 decisions" in result.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["check_id"] for line in lines] == [first["check_id"], second["check_id"]]
    assert lines[1]["decision"] == "in_progress"
    assert lines[1]["stage"] == "exact"
    assert lines[1]["explain"]["stages"][0]["score"] == 1.0
    assert lines[0]["args"]["to"] == "bob@example.com"
    assert lines[0]["latency_ms"] > 0


def test_api_key_file(tmp_path: Path, model_cache: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("k3y\nthe rest of the file is not part of the key\n")
    with serve(tmp_path / "ledger.db", model_cache, "--api-key-file", str(key_file)) as client:
        body = {"session_id": "s", "tool": "t", "args": {}}
        assert client.post("/v1/check", json=body).status_code == 401
        ok = client.post("/v1/check", json=body, headers={"Authorization": "Bearer k3y"})
        assert ok.status_code == 200


@pytest.mark.parametrize(
    ("env", "key_file", "message"),
    [
        ({"TOOLDEDUP_API_KEY": ""}, None, "TOOLDEDUP_API_KEY is set but empty"),
        ({"TOOLDEDUP_API_KEY": "  "}, None, "TOOLDEDUP_API_KEY is set but empty"),
        ({}, "\nk3y\n", "first line of API key file"),
        ({}, "", "first line of API key file"),
    ],
)
def test_a_blank_api_key_refuses_to_start(
    tmp_path: Path, env: dict[str, str], key_file: str | None, message: str
) -> None:
    extra = []
    if key_file is not None:
        (tmp_path / "key").write_text(key_file)
        extra = ["--api-key-file", str(tmp_path / "key")]
    cmd = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(tmp_path / "x.db")]
    result = subprocess.run(
        [*cmd, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert result.returncode == 2
    assert message in result.stderr


def test_policy_file(tmp_path: Path, model_cache: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        "[defaults]\nmin_cosine_duplicate = 0.95\nmin_cosine_borderline = 0.95\n\n"
        '[tools.search]\nside_effect = "read"\n'
    )
    with serve(tmp_path / "ledger.db", model_cache, "--policy", str(policy)) as client:
        got = client.get("/v1/tools/search/policy").json()
        assert got["policy"]["side_effect"] == "read"
        assert got["policy"]["min_cosine_duplicate"] == 0.95
        assert client.get("/v1/tools/other/policy").json()["policy"]["min_cosine_duplicate"] == 0.95


def test_bad_policy_file_fails_clearly(tmp_path: Path, model_cache: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[defaults]\nmin_cosine_duplicate = 2\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tooldedup.api.cli",
            "serve",
            "--db",
            str(tmp_path / "x.db"),
            "--policy",
            str(policy),
            "--cache-dir",
            str(model_cache),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "min_cosine_duplicate" in result.stderr
