"""Server processes for the load benchmark: start on loopback, watch memory and CPU, stop."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

__all__ = [
    "CpuMeter",
    "CpuWindow",
    "ServerProcess",
    "free_port",
    "python",
    "serve_process",
    "wait_quiet",
]


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class ServerProcess:
    """A running server: its port, its process, and the peak RSS seen so far."""

    port: int
    process: psutil.Process
    started_seconds: float
    peak_rss: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def rss(self) -> int:
        """The server's resident memory now, in bytes (children included)."""
        total = 0
        for proc in [self.process, *self.process.children(recursive=True)]:
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        self.peak_rss = max(self.peak_rss, total)
        return total

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server has used."""
        times = self.process.cpu_times()
        return float(times.user + times.system)

    def _watch(self) -> None:
        while not self._stop.wait(0.25):
            try:
                self.rss()
            except psutil.NoSuchProcess:
                return


@dataclass
class CpuWindow:
    """CPU use during one run: the server's, this client's, and everything else's, in cores."""

    server: float
    client: float
    other: float


class CpuMeter:
    """Measures a ``CpuWindow`` between ``start()`` and ``stop()``."""

    def __init__(self, server: ServerProcess) -> None:
        self._server = server
        self._me = psutil.Process()
        self._marks: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)

    @staticmethod
    def _busy() -> float:
        times = psutil.cpu_times()
        return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))

    def _mine(self) -> float:
        times = self._me.cpu_times()
        return float(times.user + times.system)

    def start(self) -> None:
        """Mark the start of a run."""
        self._marks = (time.perf_counter(), self._busy(), self._server.cpu_seconds(), self._mine())

    def stop(self) -> CpuWindow:
        """CPU cores used by each party since ``start()``."""
        wall = max(1e-9, time.perf_counter() - self._marks[0])
        busy = self._busy() - self._marks[1]
        server = self._server.cpu_seconds() - self._marks[2]
        client = self._mine() - self._marks[3]
        other = max(0.0, busy - server - client)
        return CpuWindow(server / wall, client / wall, other / wall)


def wait_quiet(max_seconds: float, *, busy_cores: float = 0.3) -> float:
    """Wait until the machine is idle (under ``busy_cores`` busy), at most ``max_seconds``.

    The benchmarks share two cores with whatever else runs; a run started while another
    process holds a core measures that process too. Returns the seconds waited.
    """
    started = time.perf_counter()
    while time.perf_counter() - started < max_seconds:
        before = CpuMeter._busy()
        time.sleep(0.5)
        if (CpuMeter._busy() - before) / 0.5 < busy_cores:
            break
    return time.perf_counter() - started


@contextmanager
def serve_process(
    command: Sequence[str], *, cwd: Path | None = None, timeout: float = 300.0
) -> Iterator[ServerProcess]:
    """Run ``command`` (which must take ``{port}``) until ``/healthz`` answers; stop it after."""
    port = free_port()
    argv = [part.format(port=port) for part in command]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    log = (cwd or Path.cwd()) / f"server-{port}.log"
    with log.open("wb") as out:
        started = time.perf_counter()
        popen = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        server = ServerProcess(port, psutil.Process(popen.pid), 0.0)
        try:
            _wait_healthy(popen, port, timeout, log)
            server.started_seconds = time.perf_counter() - started
            watcher = threading.Thread(target=server._watch, daemon=True)
            watcher.start()
            yield server
        finally:
            server._stop.set()
            popen.terminate()
            try:
                popen.wait(timeout=120)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait()


def _wait_healthy(popen: subprocess.Popen[bytes], port: int, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if popen.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"server exited with {popen.returncode}:\n{tail}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"server did not answer /healthz within {timeout} s")
        time.sleep(0.2)


def python() -> str:
    """The interpreter that runs the benchmarks (the project's venv)."""
    return sys.executable
