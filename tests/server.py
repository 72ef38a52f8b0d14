"""A real `tooldedup serve` process for tests that need one."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

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
    with serve_processes(db, cache, *extra, count=1) as [running]:
        yield running


@contextmanager
def serve_processes(
    db: Path | str, cache: Path, *extra: str, count: int
) -> Iterator[list[tuple[httpx.Client, subprocess.Popen[bytes]]]]:
    """``count`` servers on one store, started together (each loads its model while the
    others do), with their processes."""
    command = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(db)]
    with _running([command] * count, "--cache-dir", str(cache), *extra) as running:
        yield running


@contextmanager
def serve_command(
    command: list[str],
    *extra: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[httpx.Client]:
    """Run a `tooldedup serve` command line on a free port until the block ends."""
    with _running([command], *extra, env=env, cwd=cwd) as [(client, _)]:
        yield client


@dataclass
class _Launched:
    proc: subprocess.Popen[bytes]
    base: str
    # The server's output goes to a file: a pipe nobody reads would block it once full.
    log: IO[bytes]

    def wait_until_up(self) -> None:
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                pytest.fail(
                    f"server exited with {self.proc.returncode}: {self.log.read().decode()}"
                )
            try:
                if httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("server did not start within 120 s")
            time.sleep(0.05)


def _stop_all(launched: list[_Launched]) -> None:
    """SIGTERM every server first, then wait for each: their graceful stops overlap."""
    for server in launched:
        if server.proc.poll() is None:
            server.proc.terminate()
    for server in launched:
        try:
            server.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()
        server.log.close()


@contextmanager
def _running(
    commands: list[list[str]],
    *extra: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[list[tuple[httpx.Client, subprocess.Popen[bytes]]]]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"} if env is None else env
    launched: list[_Launched] = []
    with ExitStack() as stack:
        stack.callback(_stop_all, launched)
        for command in commands:
            port = free_port()
            cmd = [*command, "--port", str(port), "--log-level", "warning", *extra]
            log = tempfile.TemporaryFile()
            proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
            launched.append(_Launched(proc, f"http://127.0.0.1:{port}", log))
        for server in launched:
            server.wait_until_up()
        clients = [
            (stack.enter_context(httpx.Client(base_url=server.base, timeout=30)), server.proc)
            for server in launched
        ]
        yield clients


def export_log(db: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Run `tooldedup export-log` on ``db`` into ``out``; fail the test if it fails."""
    cmd = [sys.executable, "-m", "tooldedup.api.cli", "export-log", "--db", str(db)]
    return subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, check=True)
