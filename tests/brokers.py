"""Real brokers for the consumer tests: Debian's redis-server, rabbitmq-server and nats-server,
each started on free ports in a private folder and stopped at the end (no system service)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.server import free_port

RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"


def _need(program: str) -> str:
    found = shutil.which(program) or (program if Path(program).is_file() else None)
    if found is None:
        # `make test` installs the three from Debian's packages, as it does Chromium.
        pytest.fail(f"{program} is not installed: run `make brokers` (or `make test`)")
    return found


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"broker exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"broker did not listen on {port} within {seconds} s: {log.read_text()[-2000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class RedisServer:
    """A redis-server whose stream survives a restart (append-only file, fsync always)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it listens."""
        log = self.folder / "redis.log"
        command = [
            _need("redis-server"),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.folder),
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--save", "",
            "--logfile", str(log),
        ]  # fmt: skip
        self._proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        _wait_for_port(self.port, self._proc, log, 30)

    def stop(self) -> None:
        """Stop it (SIGTERM: it writes its file and exits)."""
        if self._proc is not None:
            _stop(self._proc)
            self._proc = None


@contextmanager
def redis_server(folder: Path) -> Iterator[RedisServer]:
    """A running ``RedisServer`` until the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    server = RedisServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class NatsServer:
    """A nats-server with JetStream on file storage, which survives a restart."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it listens."""
        log = self.folder / "nats.log"
        command = [
            _need("nats-server"),
            "-js",
            "-a", "127.0.0.1",
            "-p", str(self.port),
            "-sd", str(self.folder / "jetstream"),
            "-l", str(log),
        ]  # fmt: skip
        self._proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        _wait_for_port(self.port, self._proc, log, 30)

    def stop(self) -> None:
        """Stop it (SIGTERM: JetStream flushes its files)."""
        if self._proc is not None:
            _stop(self._proc)
            self._proc = None


@contextmanager
def nats_server(folder: Path) -> Iterator[NatsServer]:
    """A running ``NatsServer`` until the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    server = NatsServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class RabbitMQServer:
    """A RabbitMQ node of its own (node name, ports, epmd, files), restartable with its
    durable queues."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        (folder / "enabled_plugins").write_text("[].\n")
        self.port, dist, self._epmd = free_port(), free_port(), free_port()
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}/"
        self._env = {
            **os.environ,
            # The Erlang cookie goes to $HOME: a private one, never the user's.
            "HOME": str(folder),
            "RABBITMQ_NODENAME": f"tooldedup_test_{self.port}@localhost",
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(dist),
            "ERL_EPMD_PORT": str(self._epmd),
            "RABBITMQ_MNESIA_BASE": str(folder / "mnesia"),
            "RABBITMQ_LOG_BASE": str(folder / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(folder / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(folder / "rabbit.pid"),
        }
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Boot the node (seconds) and wait until it takes connections."""
        log = self.folder / "rabbitmq.out"
        with log.open("ab") as out:
            self._proc = subprocess.Popen(
                [_need(RABBITMQ_SERVER)],
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
            )
        _wait_for_port(self.port, self._proc, log, 90)

    def stop(self) -> None:
        """Stop the node (SIGTERM: a clean shutdown)."""
        if self._proc is not None:
            _stop(self._proc)
            self._proc = None

    def close(self) -> None:
        """Stop the node and the epmd it started on its own port."""
        self.stop()
        env = {**self._env, "ERL_EPMD_PORT": str(self._epmd)}
        subprocess.run(["epmd", "-kill"], env=env, capture_output=True)


@contextmanager
def rabbitmq_server(folder: Path) -> Iterator[RabbitMQServer]:
    """A running ``RabbitMQServer`` until the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    server = RabbitMQServer(folder)
    try:
        server.start()
        yield server
    finally:
        server.close()
