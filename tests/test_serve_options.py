"""``tooldedup serve``'s settings from the environment: every option, its variable, the
command line winning, bad values refused by name, and the docs' table kept in step."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.server import free_port
from tooldedup.api.cli import main
from tooldedup.api.serve_options import (
    ServeOption,
    add_serve_options,
    apply_environment,
    env_name,
    options_table,
)

DOCS = Path(__file__).parent.parent / "docs" / "configuration.md"


def _parser() -> tuple[argparse.ArgumentParser, list[ServeOption]]:
    parser = argparse.ArgumentParser()
    return parser, add_serve_options(parser)


@pytest.mark.parametrize(
    ("flag", "env"),
    [
        ("--db", "TOOLDEDUP_DB"),
        ("--db-pool-size", "TOOLDEDUP_DB_POOL_SIZE"),
        ("--pair-model", "TOOLDEDUP_PAIR_MODEL"),
        ("--judge-api-key-env", "TOOLDEDUP_JUDGE_API_KEY_ENV"),
    ],
)
def test_env_name(flag: str, env: str) -> None:
    assert env_name(flag) == env


@pytest.mark.parametrize(
    ("environ", "dest", "value"),
    [
        ({"TOOLDEDUP_PORT": "9001"}, "port", 9001),
        ({"TOOLDEDUP_HOST": "0.0.0.0"}, "host", "0.0.0.0"),
        ({"TOOLDEDUP_DB": "postgresql://u@h/db"}, "db", "postgresql://u@h/db"),
        ({"TOOLDEDUP_WORKERS": "4"}, "workers", 4),
        ({"TOOLDEDUP_DB_TIMEOUT": "0.5"}, "db_timeout", 0.5),
        ({"TOOLDEDUP_POLICY": "/etc/p.toml"}, "policy", Path("/etc/p.toml")),
        ({"TOOLDEDUP_PAIR_MODEL": "false"}, "pair_model", False),
        ({"TOOLDEDUP_PAIR_MODEL": "OFF"}, "pair_model", False),
        ({"TOOLDEDUP_PAIR_MODEL": "1"}, "pair_model", True),
        ({"TOOLDEDUP_MIN_LOGIT_SAME": "0"}, "min_logit_same", 0.0),
        ({"TOOLDEDUP_EMBEDDER": "onnx"}, "embedder", "onnx"),
        ({"TOOLDEDUP_LOG_LEVEL": "warning"}, "log_level", "warning"),
        ({"TOOLDEDUP_RATE_PER_SECOND": "20"}, "rate_per_second", 20.0),
        ({"TOOLDEDUP_JUDGE_TIMEOUT": "3"}, "judge_timeout", 3.0),
        # Variables that are not options change nothing.
        ({"TOOLDEDUP_API_KEY": "k"}, "port", 8000),
        ({"TOOLDEDUP_NOT_AN_OPTION": "x"}, "db", "tooldedup.db"),
    ],
)
def test_a_variable_sets_its_option(environ: dict[str, str], dest: str, value: object) -> None:
    parser, options = _parser()
    apply_environment(parser, options, environ)
    assert getattr(parser.parse_args([]), dest) == value


def test_the_command_line_wins_over_the_environment() -> None:
    parser, options = _parser()
    apply_environment(parser, options, {"TOOLDEDUP_PORT": "9001", "TOOLDEDUP_PAIR_MODEL": "no"})
    args = parser.parse_args(["--port", "9002", "--pair-model"])
    assert (args.port, args.pair_model) == (9002, True)


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("TOOLDEDUP_PORT", "eighty", "TOOLDEDUP_PORT: must be a port number"),
        ("TOOLDEDUP_PORT", "70000", "TOOLDEDUP_PORT: must be from 0 to 65535"),
        ("TOOLDEDUP_WORKERS", "0", "TOOLDEDUP_WORKERS: must be at least 1"),
        ("TOOLDEDUP_DB_TIMEOUT", "-1", "TOOLDEDUP_DB_TIMEOUT: must be a positive number"),
        ("TOOLDEDUP_DB_TIMEOUT", "nan", "TOOLDEDUP_DB_TIMEOUT: must be a positive number"),
        ("TOOLDEDUP_MIN_LOGIT_SAME", "inf", "TOOLDEDUP_MIN_LOGIT_SAME: must be a finite"),
        ("TOOLDEDUP_PAIR_MODEL", "maybe", "TOOLDEDUP_PAIR_MODEL must be true or false"),
        ("TOOLDEDUP_EMBEDDER", "gpt", "TOOLDEDUP_EMBEDDER must be one of onnx-int8"),
        ("TOOLDEDUP_LOG_LEVEL", "loud", "TOOLDEDUP_LOG_LEVEL must be one of"),
        ("TOOLDEDUP_RATE_BURST", "", "TOOLDEDUP_RATE_BURST is set but empty"),
        ("TOOLDEDUP_HOST", "", "TOOLDEDUP_HOST is set but empty"),
        ("TOOLDEDUP_DB", "  ", "TOOLDEDUP_DB is set but empty"),
    ],
)
def test_a_bad_variable_stops_the_start_and_names_itself(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    said: str,
) -> None:
    monkeypatch.setenv(variable, value)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert said in err
    assert "Traceback" not in err


def test_a_bad_serve_variable_does_not_touch_other_commands(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLDEDUP_PORT", "eighty")
    db = str(tmp_path / "t.db")
    assert main(["keys", "create", "--db", db, "--role", "admin"]) == 0
    assert main(["keys", "list", "--db", db]) == 0
    assert "TOOLDEDUP_PORT" not in capsys.readouterr().err


def test_help_shows_each_default_and_variable() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "tooldedup.api.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": ""},
    ).stdout
    text = " ".join(shown.split())
    _, options = _parser()
    assert text.count("(default: ") == len(options)
    for o in options:
        assert f"{o.flag}" in text
        assert f"(default: {o.default}; env {o.env})" in text


def test_the_docs_list_every_option_as_the_cli_has_it() -> None:
    _, options = _parser()
    assert options_table(options) in DOCS.read_text(encoding="utf-8"), (
        "regenerate the table: python -m tooldedup.api.serve_options"
    )


@pytest.mark.slow
def test_serve_configured_by_the_environment_alone(tmp_path: Path, model_cache: Path) -> None:
    port = free_port()
    db = tmp_path / "from-env.db"
    env = {
        "PATH": "",
        "HF_HUB_OFFLINE": "1",
        "TOOLDEDUP_PORT": str(port),
        "TOOLDEDUP_DB": str(db),
        "TOOLDEDUP_CACHE_DIR": str(model_cache),
        "TOOLDEDUP_LOG_LEVEL": "warning",
        "TOOLDEDUP_NO_PAIR_MODEL": "ignored: not a variable of any option",
        "TOOLDEDUP_PAIR_MODEL": "false",
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tooldedup.api.cli", "serve"],
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        health = _healthy(f"http://127.0.0.1:{port}", proc, log)
        assert health["pair_model"] is None
        assert db.exists()
        assert f"store:       SQLite {db}" in log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _healthy(base: str, proc: subprocess.Popen[bytes], log: Path) -> dict[str, object]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited with {proc.returncode}: {log.read_text()}")
        try:
            response = httpx.get(f"{base}/healthz", timeout=1)
            if response.status_code == 200:
                data: dict[str, object] = response.json()
                return data
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail(f"server did not start: {log.read_text()}")
