"""A real `tooldedup serve` process for tests that need one."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(db: Path, cache: Path, *extra: str) -> Iterator[httpx.Client]:
    """Run `tooldedup serve` until the block ends."""
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "api.cli",
        "serve",
        "--db",
        str(db),
        "--port",
        str(port),
        "--cache-dir",
        str(cache),
        "--log-level",
        "warning",
        *extra,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                output = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"server exited with {proc.returncode}: {output}")
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("server did not start within 120 s")
            time.sleep(0.2)
        with httpx.Client(base_url=base, timeout=30) as client:
            yield client
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
