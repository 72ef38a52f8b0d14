"""`tooldedup-consumer`'s command line: the documented options, and clear refusals."""

from __future__ import annotations

import asyncio
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest
from tooldedup_client.consumer.broker import BrokerUnavailable
from tooldedup_client.consumer.command import build_parser, main
from tooldedup_client.consumer.retries import StopRequested, until_answered

CONSUMER = Path(sys.executable).parent / "tooldedup-consumer"
REDIS = ["redis-streams", "--url", "redis://127.0.0.1:1/0", "--stream", "s", "--group", "g"]
RABBIT = ["rabbitmq", "--queue", "q", "--handler", "json:loads", "--url"]
NATS = ["nats", "--stream", "s", "--durable", "d", "--handler", "json:loads", "--url"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*REDIS, "--handler", "nocolon"], "is not MODULE:FUNCTION"),
        ([*REDIS, "--handler", ":f"], "is not MODULE:FUNCTION"),
        ([*REDIS, "--handler", "no_such_module_for_tests:f"], "cannot import"),
        ([*REDIS, "--handler", "json:no_such_function"], "has no function"),
        ([*REDIS, "--handler", "json:loads", "--batch", "0"], "--batch must be 1 or more"),
        ([*REDIS, "--handler", "json:loads", "--tokens-per-minute", "0"], "1 or more"),
        ([*REDIS, "--handler", "json:loads", "--key-field", "a::b"], "blank"),
        ([*REDIS, "--handler", "json:loads", "--batch", "many"], "invalid int value"),
        (["redis-streams", "--url", "redis://x", "--handler", "json:loads"], "required"),
        (["kafka", "--handler", "json:loads"], "invalid choice"),
        (
            [
                "redis-streams",
                "--url",
                "localhost:6379",
                "--stream",
                "s",
                "--group",
                "g",
                "--handler",
                "json:loads",
            ],
            "--url must start with redis://",
        ),
        (
            [
                "nats",
                "--url",
                "amqp://x",
                "--stream",
                "s",
                "--durable",
                "d",
                "--handler",
                "json:loads",
            ],
            "--url must start with nats://",
        ),
        ([*REDIS, "--handler", "json:loads", "--server", "localhost:8000"], "--server must be"),
        # A relative module name: a TypeError from import_module, not an ImportError.
        ([*REDIS, "--handler", ".x:f"], "--handler: cannot import '.x'"),
        ([*REDIS, "--handler", "..x:f"], "--handler: cannot import '..x'"),
        ([*REDIS, "--handler", "json:loads", "--tool", "   "], "--tool must not be blank"),
        (
            [*REDIS[:2], "redis://127.0.0.1:notaport/0", *REDIS[3:], "--handler", "json:loads"],
            "--url 'redis://127.0.0.1:notaport/0' is not a valid URL",
        ),
        (
            [*REDIS[:2], "redis://127.0.0.1:99999/0", *REDIS[3:], "--handler", "json:loads"],
            "--url 'redis://127.0.0.1:99999/0' is not a valid URL",
        ),
        ([*REDIS[:2], "redis:///0", *REDIS[3:], "--handler", "json:loads"], "names no host"),
        ([*RABBIT, "amqp://h:notaport/"], "--url 'amqp://h:notaport/' is not a valid URL"),
        ([*RABBIT, "amqp://guest:guest@:5672/"], "names no host"),
        ([*NATS, "nats://h:notaport"], "--url 'nats://h:notaport' is not a valid URL"),
        ([*NATS, "nats://h:0"], "port must be 1 to 65535"),
    ],
)
def test_bad_arguments_exit_2_with_a_reason(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # argparse's usage, then the reason on one line of its own.
    assert message in err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def broken(:\n", "SyntaxError"),
        ("raise RuntimeError('no config at import')\n", "RuntimeError: no config at import"),
        ("import no_such_module_for_tests\n", "No module named"),
    ],
)
def test_a_handler_module_that_fails_to_load_exits_2_with_a_reason(
    source: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A name of its own per case: a failed import leaves nothing in sys.modules, but be sure.
    name = f"bad_handler_{abs(hash(source))}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SystemExit) as exited:
        main([*REDIS, "--handler", f"{name}:handle"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert f"--handler: cannot import {name!r}" in last
    assert message in last


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_consumer_while_the_broker_is_unreachable(
    sig: signal.Signals,
) -> None:
    # Port 1 refuses connections: the consumer waits out the broker, and must still stop.
    argv = [str(CONSUMER), *REDIS, "--handler", "json:dumps", "--server", "http://127.0.0.1:1"]
    lines: queue.Queue[str | None] = queue.Queue()

    def read(stream: IO[str]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    seen: list[str] = []
    with subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stderr is not None
        reader = threading.Thread(target=read, args=(process.stderr,), daemon=True)
        reader.start()
        try:
            # Signalled once it says it waits for the broker (its handlers are set by then),
            # not after a fixed sleep, which a slow start could outlast.
            while not any("could not connect to the broker" in line for line in seen):
                line = lines.get(timeout=60)  # a hang guard, not a timing assertion
                assert line is not None, "".join(seen)
                seen.append(line)
            process.send_signal(sig)
            process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            reader.join(timeout=10)
    while (line := lines.get_nowait()) is not None:
        seen.append(line)
    err = "".join(seen)
    assert process.returncode == 0, err
    assert "could not connect to the broker" in err
    assert "stopped while trying to connect to the broker" in err
    assert "Traceback" not in err


def test_a_stop_ends_the_wait_for_an_unreachable_step() -> None:
    tries = 0

    async def unreachable() -> None:
        nonlocal tries
        tries += 1
        raise BrokerUnavailable("down")

    async def scenario() -> None:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.3, stop.set)
        # Without the stop the retries never end: wait_for would time out instead.
        await asyncio.wait_for(until_answered("read", unreachable, 60.0, stop=stop), 10)

    with pytest.raises(StopRequested, match="stopped while trying to read"):
        asyncio.run(scenario())
    assert tries >= 1


@pytest.mark.parametrize(
    ("broker", "options"),
    [
        ("redis-streams", {"--url", "--stream", "--group", "--consumer", "--dead-letter"}),
        ("rabbitmq", {"--url", "--queue", "--consumer", "--dead-letter"}),
        ("nats", {"--url", "--stream", "--durable", "--dead-letter"}),
    ],
)
def test_each_broker_takes_the_documented_options(broker: str, options: set[str]) -> None:
    common = {
        "--handler",
        "--key-field",
        "--server",
        "--tool",
        "--session",
        "--batch",
        "--tokens-per-minute",
        "--api-key-env",
        "--help",
    }
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[broker]  # type: ignore[union-attr]
    flags = {flag for action in sub._actions for flag in action.option_strings}
    assert flags == {*options, *common, "-h"}


def test_the_command_is_installed() -> None:
    ran = subprocess.run([str(CONSUMER), "--help"], capture_output=True, text=True, check=True)
    assert "redis-streams" in ran.stdout
    assert "rabbitmq" in ran.stdout
    assert "nats" in ran.stdout


def test_the_consumer_package_imports_no_broker_library() -> None:
    probe = (
        "import sys, tooldedup_client.consumer, tooldedup_client.consumer.command; "
        "print(sorted(m for m in ('redis', 'aio_pika', 'nats') if m in sys.modules))"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "[]"
