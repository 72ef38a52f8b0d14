"""The ``tooldedup`` command: serve the API, export the decision log."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from tooldedup.api.admin_cli import add_commands, burst, per_second
from tooldedup.api.settings import EmbedderBackend, Settings
from tooldedup.index.settings import parse_db

__all__ = ["main"]


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from tooldedup.api.app import create_app
    from tooldedup.dedup.errors import DedupError

    try:
        api_key = Settings.api_key_from(os.environ, args.api_key_file)
        db_path, postgres_url = parse_db(args.db)
    except (OSError, ValueError) as exc:
        print(f"tooldedup: {exc}", file=sys.stderr)
        return 2
    try:
        settings = Settings(
            db_path=Path("tooldedup.db") if db_path is None else db_path,
            postgres_url=postgres_url,
            db_pool_size=args.db_pool_size,
            db_timeout_seconds=args.db_timeout,
            policy_path=args.policy,
            api_key=api_key,
            model_path=args.model_path,
            embedder=EmbedderBackend(args.embedder),
            embed_threads=args.embed_threads,
            pair_model=args.pair_model,
            pair_model_path=args.pair_model_path,
            min_logit_same=args.min_logit_same,
            min_logit_confirm=args.min_logit_confirm,
            cache_dir=args.cache_dir,
            retention_seconds=args.retention_seconds,
            log_retention_seconds=args.log_retention_seconds,
            judge_base_url=args.judge_base_url,
            judge_model=args.judge_model,
            judge_api_key_env=args.judge_api_key_env,
            judge_timeout_seconds=args.judge_timeout,
            rate_per_second=args.rate_per_second,
            rate_burst=args.rate_burst,
        )
    except DedupError as exc:
        print(f"tooldedup: {exc.message}", file=sys.stderr)
        return 2
    refusal = _open_to_the_network(args.host, settings)
    if refusal is not None:
        print(f"tooldedup: {refusal}", file=sys.stderr)
        return 2
    if args.workers > 1:
        from tooldedup.api.workers import SETTINGS_ENV, settings_file
        from tooldedup.index.wiring import build_service

        try:
            # Everything a worker builds is built once here first: a bad setting fails
            # now, with a message, not in every worker the supervisor restarts.
            build_service(settings).close()
        except DedupError as exc:
            print(f"tooldedup: {exc.message}", file=sys.stderr)
            return 2
        # Each worker builds its own app from these settings; the parent only holds the
        # socket and restarts a worker that dies. The settings (an API key, a database
        # password) go by a private file, not through the environment.
        with settings_file(settings) as path:
            os.environ[SETTINGS_ENV] = str(path)
            uvicorn.run(
                "tooldedup.api.workers:app_from_environment",
                factory=True,
                workers=args.workers,
                host=args.host,
                port=args.port,
                log_level=args.log_level,
                access_log=False,
            )
        return 0
    try:
        app = create_app(settings)
    except DedupError as exc:
        print(f"tooldedup: {exc.message}", file=sys.stderr)
        return 2
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    return 0


def _open_to_the_network(host: str, settings: Settings) -> str | None:
    """Why serving on ``host`` would let anyone in, if it would: with no key anywhere the
    service answers loopback callers without one, so it listens only there."""
    import ipaddress

    from tooldedup.dedup.errors import DedupError
    from tooldedup.dedup.ledger.keys import SqlKeyStore
    from tooldedup.index.wiring import build_ledger

    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback or settings.api_key is not None:
        return None
    try:
        ledger = build_ledger(settings)
    except DedupError:
        return None  # the start itself reports an unreachable store
    try:
        if SqlKeyStore(ledger.db).has_keys():
            return None
    finally:
        ledger.close()
    return (
        f"refusing to listen on {host} with no API key: create one first"
        " (tooldedup keys create --role admin), or set TOOLDEDUP_API_KEY"
    )


def _export_log(args: argparse.Namespace) -> int:
    from tooldedup.api.admin_cli import opened_or_said

    ledger = opened_or_said(args.db, create=False)
    if ledger is None:
        return 2
    out = sys.stdout if args.out is None else args.out.open("w", encoding="utf-8")
    try:
        count = 0
        for entry in ledger.iter_log(args.tenant):
            out.write(json.dumps(asdict(entry), ensure_ascii=False) + "\n")
            count += 1
    finally:
        if out is not sys.stdout:
            out.close()
        ledger.close()
    print(f"exported {count} decisions", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, shared by ``main`` and the README."""
    parser = argparse.ArgumentParser(prog="tooldedup", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--db",
        default="tooldedup.db",
        help="a SQLite file (a path or sqlite:///path) or a postgresql:// URL",
    )
    serve.add_argument(
        "--workers",
        type=_at_least_one,
        default=1,
        help="worker processes on one port; they share the ledger (either backend)",
    )
    serve.add_argument(
        "--db-pool-size", type=_at_least_one, default=10, help="PostgreSQL connections per worker"
    )
    serve.add_argument(
        "--db-timeout",
        type=_positive,
        default=2.0,
        help="seconds to wait for the database (or a pooled connection) before answering 503",
    )
    serve.add_argument("--policy", type=Path, default=None, help="policy TOML file")
    serve.add_argument(
        "--api-key-file",
        type=Path,
        default=None,
        help="a key (its first line) that is the default tenant's admin key",
    )
    serve.add_argument(
        "--rate-per-second",
        type=per_second,
        default=None,
        help="request rate limit of each key that has none of its own (default: none)",
    )
    serve.add_argument(
        "--rate-burst", type=burst, default=None, help="requests a key may send at once"
    )
    serve.add_argument(
        "--model-path",
        type=Path,
        default=None,
        help="a sentence-transformers folder instead of the shipped model (tooldedup[torch])",
    )
    serve.add_argument(
        "--embedder", choices=[b.value for b in EmbedderBackend], default="onnx-int8"
    )
    serve.add_argument(
        "--embed-threads", type=int, default=2, help="threads per model call (embedder, pair model)"
    )
    _pair_model_arguments(serve)
    serve.add_argument(
        "--cache-dir", type=Path, default=None, help="where an ONNX export of --model-path is kept"
    )
    serve.add_argument(
        "--retention-seconds",
        type=_positive,
        default=7 * 86_400.0,
        help="keep calls, their keys and vectors this long (never less than a dedup window)",
    )
    serve.add_argument(
        "--log-retention-seconds",
        type=_positive,
        default=30 * 86_400.0,
        help="keep decision log entries and their labels this long",
    )
    serve.add_argument("--log-level", default="info")
    _judge_arguments(serve)
    serve.set_defaults(run=_serve)

    export = commands.add_parser("export-log", help="write the decision log as JSONL")
    export.add_argument("--db", default="tooldedup.db", help="SQLite file or postgresql:// URL")
    export.add_argument("--out", type=Path, default=None, help="file (default: stdout)")
    export.add_argument("--tenant", default=None, help="only this tenant's entries")
    export.set_defaults(run=_export_log)
    add_commands(commands)
    calibrate = commands.add_parser(
        "calibrate", help="choose thresholds from labelled traffic; write a policy and a report"
    )
    _calibration_arguments(calibrate)
    calibrate.set_defaults(run=_calibrate)
    check = commands.add_parser(
        "judge-check", help="send known pairs to a judge endpoint and print its agreement"
    )
    check.add_argument("--base-url", required=True, help="OpenAI-compatible API base URL")
    check.add_argument("--model", required=True)
    check.add_argument("--api-key-env", default="TOOLDEDUP_JUDGE_API_KEY")
    check.add_argument("--timeout", type=float, default=10.0)
    check.set_defaults(run=_judge_check)
    return parser


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text}")
    return value


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


def _judge_check(args: argparse.Namespace) -> int:
    from tooldedup.calibration.judge_labels import agreement
    from tooldedup.dedup.policy import PolicySet
    from tooldedup.index.llm_judge import OpenAIChatJudge

    judge = OpenAIChatJudge(
        args.base_url, args.model, api_key_env=args.api_key_env, timeout_seconds=args.timeout
    )
    rows = agreement(judge, PolicySet())
    agreed = 0
    for pair, expected, said in rows:
        ok = said.startswith("duplicate" if expected else "distinct")
        agreed += ok
        print(
            f"{'ok  ' if ok else 'MISS'} expected {'duplicate' if expected else 'distinct':9}"
            f" said {said:22} {pair[:90]}"
        )
    print(f"agreement: {agreed}/{len(rows)} ({agreed / len(rows):.0%})")
    return 0


def _pair_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pair-model",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="after the rules, read each fuzzy or semantic match with the pair model",
    )
    parser.add_argument(
        "--pair-model-path",
        type=Path,
        default=None,
        help="a folder from calibration.train_pair_model instead of the shipped model",
    )
    parser.add_argument(
        "--min-logit-same",
        type=_finite,
        default=-2.5,
        help="under this pair-model logit a match is ruled out",
    )
    parser.add_argument(
        "--min-logit-confirm",
        type=_finite,
        default=None,
        help="at or above this pair-model logit a match is confirmed (default: never)",
    )


def _judge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge-base-url", default=None, help="OpenAI-compatible API base URL")
    parser.add_argument("--judge-model", default=None)
    parser.add_argument("--judge-api-key-env", default="TOOLDEDUP_JUDGE_API_KEY")
    parser.add_argument("--judge-timeout", type=float, default=2.0, help="seconds")


def _calibration_arguments(parser: argparse.ArgumentParser) -> None:
    from tooldedup.calibration.arguments import add_arguments

    add_arguments(parser)


def _calibrate(args: argparse.Namespace) -> int:
    try:
        from tooldedup.calibration.command import run
    except ImportError as exc:
        print(
            f"tooldedup calibrate needs the calibrate extra ({exc.name} is missing):"
            " pip install 'tooldedup[calibrate]'",
            file=sys.stderr,
        )
        return 2
    return run(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line."""
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
