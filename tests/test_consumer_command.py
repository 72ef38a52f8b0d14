"""`tooldedup-consumer`'s command line: the documented options, and clear refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tooldedup_client.consumer.command import build_parser, main

CONSUMER = Path(sys.executable).parent / "tooldedup-consumer"
REDIS = ["redis-streams", "--url", "redis://127.0.0.1:1/0", "--stream", "s", "--group", "g"]


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
    ],
)
def test_bad_arguments_exit_2_with_a_reason(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


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
