"""A real `tooldedup serve` process for tests that need one."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(db: Path | str, cache: Path, *extra: str) -> Iterator[httpx.Client]:
    """Run `tooldedup serve` from this interpreter until the block ends."""
    with serve_process(db, cache, *extra) as (client, _):
        yield client


@contextmanager
def serve_process(
    db: Path | str, cache: Path, *extra: str
) -> Iterator[tuple[httpx.Client, subprocess.Popen[bytes]]]:
    """Like ``serve``, with the server process too (to kill it)."""
    command = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(db)]
    with _running(command, "--cache-dir", str(cache), *extra) as running:
        yield running


@contextmanager
def serve_command(
    command: list[str],
    *extra: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[httpx.Client]:
    """Run a `tooldedup serve` command line on a free port until the block ends."""
    with _running(command, *extra, env=env, cwd=cwd) as (client, _):
        yield client


@contextmanager
def _running(
    command: list[str],
    *extra: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[tuple[httpx.Client, subprocess.Popen[bytes]]]:
    port = free_port()
    cmd = [*command, "--port", str(port), "--log-level", "warning", *extra]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"} if env is None else env
    # The server's output goes to a file: a pipe nobody reads would block it once full.
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"server exited with {proc.returncode}: {log.read().decode()}")
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("server did not start within 120 s")
            time.sleep(0.2)
        with httpx.Client(base_url=base, timeout=30) as client:
            yield client, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def export_log(db: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Run `tooldedup export-log` on ``db`` into ``out``; fail the test if it fails."""
    cmd = [sys.executable, "-m", "tooldedup.api.cli", "export-log", "--db", str(db)]
    return subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, check=True)
