"""``tooldedup-consumer``: run a handler behind tooldedup on a Redis stream, a RabbitMQ queue or
a NATS JetStream consumer."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from tooldedup_client.client import AsyncTooldedup
from tooldedup_client.consumer.broker import Broker, ConsumerRefused
from tooldedup_client.consumer.key_recipes import field_key, parse_key_fields
from tooldedup_client.consumer.retries import StopRequested
from tooldedup_client.consumer.runner import ConsumerRunner, Handler
from tooldedup_client.consumer.runner_settings import ConsumerSettings
from tooldedup_client.errors import TooldedupError

__all__ = ["build_parser", "load_handler", "main"]

logger = logging.getLogger("tooldedup_client.consumer")
_SCHEMES = {
    "redis-streams": ("redis://", "rediss://", "unix://"),
    "rabbitmq": ("amqp://", "amqps://"),
    "nats": ("nats://", "tls://"),
}


def load_handler(spec: str) -> Handler:
    """``MODULE:FUNCTION`` as the function it names."""
    module_name, sep, function = spec.partition(":")
    if not sep or not module_name or not function:
        raise ValueError(f"--handler {spec!r} is not MODULE:FUNCTION")
    # As uvicorn and gunicorn do: a handler module in the current folder is found.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        # Not only ImportError: a relative name (TypeError), a module with a SyntaxError, or
        # one that raises while it loads all leave no handler to run.
        reason = str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
        reason = " ".join(reason.split())
        raise ValueError(f"--handler: cannot import {module_name!r}: {reason}") from exc
    handler = getattr(module, function, None)
    if not callable(handler):
        raise ValueError(f"--handler: {module_name!r} has no function {function!r}")
    found: Handler = handler
    return found


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--handler", required=True, metavar="MODULE:FUNCTION")
    parser.add_argument(
        "--key-field",
        metavar="FIELD",
        help="a logical key from the body: one field, or several joined with ':'",
    )
    parser.add_argument(
        "--server", default=os.environ.get("TOOLDEDUP_URL", "http://127.0.0.1:8000")
    )
    parser.add_argument("--tool", help="the tool name of the checks (default: the handler's)")
    parser.add_argument("--session", help="the session of the checks")
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--tokens-per-minute", type=int)
    parser.add_argument(
        "--api-key-env",
        default="TOOLDEDUP_API_KEY",
        metavar="VAR",
        help="the environment variable holding tooldedup's API key",
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per broker."""
    parser = argparse.ArgumentParser(
        prog="tooldedup-consumer",
        description="Consume a stream or queue, running the handler once per message key.",
    )
    brokers = parser.add_subparsers(dest="broker", required=True)
    redis = brokers.add_parser("redis-streams", help="a Redis stream's consumer group")
    redis.add_argument("--url", required=True, help="redis://HOST:PORT/0")
    redis.add_argument("--stream", required=True)
    redis.add_argument("--group", required=True)
    redis.add_argument("--consumer", default=socket.gethostname())
    redis.add_argument("--dead-letter", metavar="STREAM", help="default: <stream>:dead")
    _common(redis)
    rabbit = brokers.add_parser("rabbitmq", help="a RabbitMQ queue")
    rabbit.add_argument("--url", required=True, help="amqp://USER:PASSWORD@HOST:PORT/")
    rabbit.add_argument("--queue", required=True)
    rabbit.add_argument("--consumer", help="the consumer tag (default: the broker's)")
    rabbit.add_argument("--dead-letter", metavar="QUEUE", help="default: <queue>.dead")
    _common(rabbit)
    nats = brokers.add_parser("nats", help="a NATS JetStream durable pull consumer")
    nats.add_argument("--url", required=True, help="nats://HOST:PORT")
    nats.add_argument("--stream", required=True)
    nats.add_argument("--durable", required=True, help="the durable consumer's name")
    nats.add_argument("--dead-letter", metavar="SUBJECT", help="default: deadletter.<stream>")
    _common(nats)
    return parser


def _broker(args: argparse.Namespace) -> Broker:
    # Each adapter imports its client library only when chosen.
    if args.broker == "redis-streams":
        from tooldedup_client.consumer.redis_streams import RedisStreamsBroker

        return RedisStreamsBroker(
            args.url, args.stream, args.group, args.consumer, dead_letter_stream=args.dead_letter
        )
    if args.broker == "rabbitmq":
        from tooldedup_client.consumer.rabbitmq import RabbitMQBroker

        return RabbitMQBroker(
            args.url, args.queue, consumer_tag=args.consumer, dead_letter_queue=args.dead_letter
        )
    from tooldedup_client.consumer.nats_jetstream import NatsJetStreamBroker

    return NatsJetStreamBroker(args.url, args.stream, args.durable, dead_letter=args.dead_letter)


def _url_problem(url: str, schemes: Sequence[str]) -> str | None:
    """Why ``url`` cannot name a broker, or None."""
    if not url.startswith(tuple(schemes)):
        return f"--url must start with {' or '.join(schemes)}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"--url {url!r} is not a valid URL: {exc}"
    if parts.scheme == "unix":
        return None if parts.path else f"--url {url!r} names no socket path"
    if not parts.hostname:
        return f"--url {url!r} names no host"
    if port == 0:
        return f"--url {url!r}: port must be 1 to 65535"
    return None


def _settings(args: argparse.Namespace, handler: Handler) -> ConsumerSettings:
    if args.tool is not None and not args.tool.strip():
        raise ValueError("--tool must not be blank")
    tool = args.tool or getattr(handler, "__name__", "handler")
    try:
        return ConsumerSettings(
            tool=tool,
            session=args.session,
            batch=args.batch,
            tokens_per_minute=args.tokens_per_minute,
        )
    except ValueError as exc:
        raise ValueError(f"bad settings: {exc}") from exc


async def _run(
    args: argparse.Namespace, handler: Handler, broker: Broker, settings: ConsumerSettings
) -> int:
    api_key = os.environ.get(args.api_key_env) or None
    key = None if args.key_field is None else field_key(parse_key_fields(args.key_field))
    async with AsyncTooldedup(args.server, api_key=api_key) as td:
        runner = ConsumerRunner(broker, td, handler, settings, key=key)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, runner.stop)
        try:
            metrics = await runner.run()
        except TooldedupError as exc:
            # A wrong key or a forbidden role: no retry will fix it.
            logger.error("tooldedup refused the consumer: %s (%s)", exc.message, exc.code)
            return 1
        except ConsumerRefused as exc:
            logger.error("cannot consume: %s", exc)
            return 1
        except StopRequested as exc:
            # Raised from a wait the runner itself does not catch: still a requested stop.
            logger.info("%s", exc)
            metrics = runner.metrics()
        finally:
            await broker.close()
    logger.info("stopped: %s", json.dumps(dataclasses.asdict(metrics), sort_keys=True))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tooldedup-consumer``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    url_problem = _url_problem(args.url, _SCHEMES[args.broker])
    if url_problem is not None:
        parser.error(url_problem)
    if not args.server.startswith(("http://", "https://")):
        parser.error("--server must be an http:// or https:// URL")
    if args.batch < 1:
        parser.error("--batch must be 1 or more")
    if args.tokens_per_minute is not None and args.tokens_per_minute < 1:
        parser.error("--tokens-per-minute must be 1 or more")
    if args.key_field is not None and not all(parse_key_fields(args.key_field)):
        parser.error("--key-field names no blank field")
    try:
        handler = load_handler(args.handler)
        settings = _settings(args, handler)
        broker = _broker(args)
    except (ValueError, ImportError) as exc:
        parser.error(str(exc))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # One line per request would drown the consumer's own.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    outcome: Any = asyncio.run(_run(args, handler, broker, settings))
    return int(outcome)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
