"""The ``tooldedup`` command: serve the API, manage keys and tenants, export the log."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from tooldedup.api.admin_cli import add_commands
from tooldedup.api.serve_options import (
    BadEnvironment,
    ServeOption,
    add_serve_options,
    apply_environment,
)
from tooldedup.api.settings import EmbedderBackend, Settings
from tooldedup.api.version import VERSION
from tooldedup.index.settings import parse_db

__all__ = ["main"]


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from tooldedup.api.app import create_app
    from tooldedup.api.heap import settle_heap
    from tooldedup.api.startup import access_at_start, refusal, startup_lines
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
    access = access_at_start(settings)
    refused = refusal(args.host, access)
    if refused is not None:
        print(f"tooldedup: {refused}", file=sys.stderr)
        return 2
    for line in startup_lines(args.host, args.port, settings, access):
        print(line, file=sys.stderr, flush=True)
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
    settle_heap()
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    return 0


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
    """The argument parser."""
    return _parsers()[0]


def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser, list[ServeOption]]:
    """The whole parser, ``serve``'s own, and ``serve``'s options."""
    parser = argparse.ArgumentParser(prog="tooldedup", description=__doc__)
    parser.add_argument("--version", action="version", version=f"tooldedup {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve",
        help="run the HTTP service",
        description="Run the HTTP service. Every option can also be set by the environment"
        " variable named after it; the command line wins.",
    )
    serve_options = add_serve_options(serve)
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
    return parser, serve, serve_options


def _judge_check(args: argparse.Namespace) -> int:
    from tooldedup.calibration.judge_labels import agreement
    from tooldedup.dedup.policy import PolicySet
    from tooldedup.index.llm_judge import OpenAIChatJudge

    judge = OpenAIChatJudge(
        args.base_url, args.model, api_key_env=args.api_key_env, timeout_seconds=args.timeout
    )
    try:
        answers = agreement(judge, PolicySet())
    finally:
        judge.close()
    for answer in answers:
        mark = "FAIL" if answer.duplicate is None else "ok  " if answer.agrees else "MISS"
        print(
            f"{mark} expected {'duplicate' if answer.expected else 'distinct':9}"
            f" said {answer.said:22} {answer.pair[:90]}"
        )
    failed = [answer for answer in answers if answer.duplicate is None]
    if failed:
        # An agreement over pairs never asked would read as a judge that is always wrong.
        print(
            f"tooldedup judge-check: no verdict for {len(failed)} of {len(answers)} pairs"
            f" from {args.base_url} (first: {failed[0].said}); check --base-url, --model"
            " and that the endpoint is up",
            file=sys.stderr,
        )
        return 1
    agreed = sum(answer.agrees for answer in answers)
    print(f"agreement: {agreed}/{len(answers)} ({agreed / len(answers):.0%})")
    return 0


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
    parser, serve, serve_options = _parsers()
    args = parser.parse_args(argv)
    if args.command == "serve":
        try:
            apply_environment(serve, serve_options, os.environ)
        except BadEnvironment as exc:
            print(f"tooldedup: {exc}", file=sys.stderr)
            return 2
        # Parsed again so the command line wins over what the environment set.
        args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
