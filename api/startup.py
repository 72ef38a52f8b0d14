"""What ``tooldedup serve`` checks and says before it listens: the store it opened, where
the review page is, and whether callers need a key."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from tooldedup.api.settings import Settings
from tooldedup.api.version import VERSION
from tooldedup.dedup.access import RESTORE_COMMAND
from tooldedup.dedup.errors import DedupError

__all__ = ["Access", "access_at_start", "refusal", "startup_lines", "store_name"]


@dataclass(frozen=True, slots=True)
class Access:
    """Whether callers need a bearer key, and why, as the store says at start."""

    keys_required: bool | None  # None: the store did not answer
    reason: str


def store_name(settings: Settings) -> str:
    """The store, as an operator would name it: a SQLite file's absolute path, or the
    PostgreSQL URL without its password."""
    if settings.postgres_url is None:
        return f"SQLite {settings.db_path.resolve()}"
    parts = urlsplit(settings.postgres_url)
    netloc = parts.netloc
    if parts.password is not None:
        user = parts.username or ""
        host = netloc.rsplit("@", 1)[1]
        netloc = f"{user}:***@{host}"
    return f"PostgreSQL {urlunsplit(parts._replace(netloc=netloc))}"


def access_at_start(settings: Settings) -> Access:
    """Read the store's keys once: with none anywhere, loopback callers need no key."""
    from tooldedup.dedup.ledger.keys import SqlKeyStore
    from tooldedup.index.wiring import build_ledger

    if settings.api_key is not None:
        return Access(True, "bearer API keys required (TOOLDEDUP_API_KEY or --api-key-file set)")
    try:
        ledger = build_ledger(settings)
    except DedupError as exc:
        return Access(None, f"unknown until the store answers ({exc.message})")
    try:
        has_keys = SqlKeyStore(ledger.db).has_keys()
    except DedupError as exc:
        return Access(None, f"unknown until the store answers ({exc.message})")
    finally:
        ledger.close()
    if has_keys:
        return Access(True, "bearer API keys required (keys exist in the store)")
    return Access(
        False,
        "open to loopback callers without a key (no keys exist;"
        f" create one with: {RESTORE_COMMAND})",
    )


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refusal(host: str, access: Access) -> str | None:
    """Why listening on ``host`` would let anyone in, if it would: with no key anywhere the
    service answers loopback callers without one, so it then listens only there."""
    if _is_loopback(host) or access.keys_required is not False:
        return None  # an unreachable store is reported by the start itself
    return (
        f"refusing to listen on {host} with no API key: create one first"
        f" ({RESTORE_COMMAND}), or set TOOLDEDUP_API_KEY"
    )


def startup_lines(host: str, port: int, settings: Settings, access: Access) -> list[str]:
    """The lines printed before serving."""
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    return [
        f"tooldedup {VERSION} serving on {base}",
        f"  store:       {store_name(settings)}",
        f"  review page: {base}/ui",
        f"  API docs:    {base}/docs",
        f"  access:      {access.reason}",
    ]
