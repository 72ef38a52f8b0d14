"""``tooldedup serve``'s options: each one also read from a ``TOOLDEDUP_…`` variable.

The command line wins over the environment, and the environment over the built-in default,
as a service configured by systemd or a container expects.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldedup.api.admin_cli import burst, per_second
from tooldedup.index.settings import EmbedderBackend

__all__ = [
    "ENV_PREFIX",
    "BadEnvironment",
    "ServeOption",
    "add_serve_options",
    "apply_environment",
    "env_name",
]

ENV_PREFIX = "TOOLDEDUP_"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class BadEnvironment(ValueError):
    """A ``TOOLDEDUP_…`` variable holds a value its option refuses."""


@dataclass(frozen=True, slots=True)
class ServeOption:
    """One ``serve`` option as the docs list it."""

    flag: str
    env: str
    default: str
    help: str
    action: argparse.Action


def env_name(flag: str) -> str:
    """``--db-pool-size`` -> ``TOOLDEDUP_DB_POOL_SIZE``."""
    return ENV_PREFIX + flag.removeprefix("--").replace("-", "_").upper()


def positive_seconds(text: str) -> float:
    """An argument that is a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def finite(text: str) -> float:
    """An argument that is a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text}")
    return value


def at_least_one(text: str) -> int:
    """An argument that is a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


def port(text: str) -> int:
    """An argument that is a TCP port (0 lets the system choose one)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a port number, not {text!r}") from None
    if not 0 <= value <= 65_535:
        raise argparse.ArgumentTypeError(f"must be from 0 to 65535, not {text}")
    return value


class _Options:
    """Adds options to one parser and keeps what the docs and the environment need."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser
        self.added: list[ServeOption] = []

    def add(
        self,
        flag: str,
        *,
        default: Any,
        help: str,
        shown: str | None = None,
        **kwargs: Any,
    ) -> None:
        env = env_name(flag)
        shown = ("none" if default is None else str(default)) if shown is None else shown
        # "%" would be read as a format by argparse's help.
        text = f"{help} (default: {shown}; env {env})".replace("%", "%%")
        action = self.parser.add_argument(flag, default=default, help=text, **kwargs)
        self.added.append(ServeOption(flag, env, shown, help, action))


def add_serve_options(parser: argparse.ArgumentParser) -> list[ServeOption]:
    """Add every ``serve`` option to ``parser``; returns them in order."""
    options = _Options(parser)
    add = options.add
    add("--host", default="127.0.0.1", help="address to listen on")
    add("--port", type=port, default=8000, help="TCP port to listen on")
    add(
        "--db",
        default="tooldedup.db",
        help="the store: a SQLite file (a path or sqlite:///path) or a postgresql:// URL",
    )
    add(
        "--workers",
        type=at_least_one,
        default=1,
        help="worker processes on one port; they share the store (either backend)",
    )
    add("--db-pool-size", type=at_least_one, default=10, help="PostgreSQL connections per worker")
    add(
        "--db-timeout",
        type=positive_seconds,
        default=2.0,
        help="seconds to wait for the database (or a pooled connection) before answering 503",
    )
    add("--policy", type=Path, default=None, help="policy TOML file")
    add(
        "--api-key-file",
        type=Path,
        default=None,
        help="a file whose first line is the default tenant's admin key"
        " (TOOLDEDUP_API_KEY gives the key itself)",
    )
    add(
        "--rate-per-second",
        type=per_second,
        default=None,
        help="request rate limit of each key that has none of its own",
    )
    add("--rate-burst", type=burst, default=None, help="requests a key may send at once")
    add(
        "--model-path",
        type=Path,
        default=None,
        shown="the packaged model",
        help="a sentence-transformers folder instead of the packaged model (tooldedup[torch])",
    )
    add(
        "--embedder",
        choices=[b.value for b in EmbedderBackend],
        default=EmbedderBackend.ONNX_INT8.value,
        help="embedding backend",
    )
    add(
        "--embed-threads",
        type=at_least_one,
        default=2,
        help="threads per model call (embedder, pair model)",
    )
    add(
        "--pair-model",
        action=argparse.BooleanOptionalAction,
        default=True,
        shown="on",
        help="load the pair model, for the tools whose policy sets pair_model = true",
    )
    add(
        "--pair-model-path",
        type=Path,
        default=None,
        shown="the packaged pair model",
        help="a folder from calibration.train_pair_model instead of the packaged pair model",
    )
    add(
        "--min-logit-same",
        type=finite,
        default=-2.5,
        help="under this pair-model logit a match is ruled out",
    )
    add(
        "--min-logit-confirm",
        type=finite,
        default=None,
        shown="never",
        help="at or above this pair-model logit a match is confirmed",
    )
    add(
        "--cache-dir",
        type=Path,
        default=None,
        shown="$XDG_CACHE_HOME/tooldedup (~/.cache/tooldedup)",
        help="where an ONNX export of --model-path is kept",
    )
    add(
        "--retention-seconds",
        type=positive_seconds,
        default=7 * 86_400.0,
        shown="604800 (7 days)",
        help="keep calls, their keys and vectors this long (never less than a dedup window)",
    )
    add(
        "--log-retention-seconds",
        type=positive_seconds,
        default=30 * 86_400.0,
        shown="2592000 (30 days)",
        help="keep decision log entries and their labels this long",
    )
    add(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug", "trace"],
        help="server log level",
    )
    add(
        "--judge-base-url",
        default=None,
        help="OpenAI-compatible API base URL of the optional judge (off when unset)",
    )
    add("--judge-model", default=None, help="the judge's model name")
    add(
        "--judge-api-key-env",
        default="TOOLDEDUP_JUDGE_API_KEY",
        help="the environment variable that holds the judge's API key",
    )
    add(
        "--judge-timeout",
        type=positive_seconds,
        default=2.0,
        help="seconds to wait for the judge before the borderline action applies",
    )
    return options.added


def _read(option: ServeOption, text: str) -> Any:
    action = option.action
    if not text.strip():
        # Set but blank is a mistake, never "the default" nor "listen on every address".
        raise BadEnvironment(f"{option.env} is set but empty; unset it or give a value")
    if isinstance(action, argparse.BooleanOptionalAction):
        word = text.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise BadEnvironment(f"{option.env} must be true or false (1/0, yes/no), not {text!r}")
    convert: Callable[[str], Any] = action.type if callable(action.type) else str
    try:
        value = convert(text)
    except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
        raise BadEnvironment(f"{option.env}: {exc}") from None
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise BadEnvironment(f"{option.env} must be one of {choices}, not {text!r}")
    return value


def apply_environment(
    parser: argparse.ArgumentParser, options: Sequence[ServeOption], environ: Mapping[str, str]
) -> None:
    """Make each set ``TOOLDEDUP_…`` variable its option's default; raises on a bad value."""
    values = {o.action.dest: _read(o, environ[o.env]) for o in options if o.env in environ}
    parser.set_defaults(**values)


def options_table(options: Sequence[ServeOption]) -> str:
    """The options as the Markdown table of docs/configuration.md."""
    rows = ["| option | environment variable | default | what it sets |", "|---|---|---|---|"]
    for o in options:
        flag = f"`{o.flag}` / `--no-{o.flag[2:]}`" if _is_switch(o) else f"`{o.flag}`"
        rows.append(f"| {flag} | `{o.env}` | {o.default} | {o.help.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def _is_switch(option: ServeOption) -> bool:
    return isinstance(option.action, argparse.BooleanOptionalAction)


if __name__ == "__main__":
    print(options_table(add_serve_options(argparse.ArgumentParser())), end="")
