"""What ``tooldedup serve`` says before it listens: the version, the store, the review page
and the access mode, read from a real process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.server import free_port
from tooldedup.api.settings import Settings
from tooldedup.api.startup import store_name
from tooldedup.api.version import VERSION


@pytest.mark.parametrize(
    ("url", "named"),
    [
        (
            "postgresql://td:s3cret@db.internal:5432/td",
            "PostgreSQL postgresql://td:***@db.internal:5432/td",
        ),
        ("postgresql://td@db.internal/td", "PostgreSQL postgresql://td@db.internal/td"),
        ("postgres://:p%40ss@h/td", "PostgreSQL postgres://:***@h/td"),
        (
            "postgresql://u:p@a@b/td?sslmode=require",
            "PostgreSQL postgresql://u:***@b/td?sslmode=require",
        ),
    ],
)
def test_a_postgres_store_is_named_without_its_password(url: str, named: str) -> None:
    assert store_name(Settings(postgres_url=url)) == named


def test_a_sqlite_store_is_named_by_its_absolute_path(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    assert store_name(Settings(db_path=db)) == f"SQLite {db}"


def _start_lines(db: Path, cache: Path, tmp_path: Path) -> tuple[str, int]:
    """Serve ``db`` until it answers, stop it, and return what it printed and its port."""
    port = free_port()
    log = tmp_path / f"serve-{port}.log"
    command = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(db)]
    command += ["--port", str(port), "--cache-dir", str(cache), "--no-pair-model"]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        assert proc.poll() is None, log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return log.read_text(), port


@pytest.mark.slow
def test_the_start_names_store_page_and_access(tmp_path: Path, model_cache: Path) -> None:
    db = tmp_path / "ledger.db"
    said, port = _start_lines(db, model_cache, tmp_path)
    assert f"tooldedup {VERSION} serving on http://127.0.0.1:{port}" in said
    assert f"store:       SQLite {db}" in said
    assert f"review page: http://127.0.0.1:{port}/ui" in said
    assert "access:      open to loopback callers without a key (no keys exist" in said
    assert "tooldedup keys create --tenant default --role admin" in said

    created = subprocess.run(
        [
            sys.executable,
            "-m",
            "tooldedup.api.cli",
            "keys",
            "create",
            "--db",
            str(db),
            "--role",
            "admin",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert created.stdout.strip()
    said, _ = _start_lines(db, model_cache, tmp_path)
    assert "access:      bearer API keys required (keys exist in the store)" in said
