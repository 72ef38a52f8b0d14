"""``tooldedup keys …`` and ``tooldedup tenants …``: an operator's commands on the store."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from tooldedup.dedup.access import (
    MAX_BURST,
    MAX_RATE_PER_SECOND,
    MIN_RATE_PER_SECOND,
    Role,
    make_key,
    validate_tenant,
)
from tooldedup.dedup.errors import DedupError
from tooldedup.dedup.ledger import SqlLedger
from tooldedup.dedup.ledger.keys import SqlKeyStore
from tooldedup.dedup.records import DEFAULT_TENANT
from tooldedup.index.settings import parse_db

__all__ = ["add_commands", "burst", "open_ledger", "opened_or_said", "per_second"]

_MAX_CALLS = 2**62


def open_ledger(db: str, *, create: bool) -> SqlLedger:
    """The ledger named by ``--db``; raises ``ValueError`` with a message for the user."""
    from tooldedup.dedup.ledger import PostgresLedger, SqliteLedger

    db_path, postgres_url = parse_db(db)
    if db_path is not None:
        if not create and not db_path.exists():
            raise ValueError(f"no database at {db_path}")
        return SqliteLedger(db_path)
    assert postgres_url is not None
    return PostgresLedger(postgres_url)


def opened_or_said(db: str, *, create: bool) -> SqlLedger | None:
    """The ledger named by ``--db``, or None once the reason it cannot open is printed."""
    try:
        return open_ledger(db, create=create)
    except ValueError as exc:
        print(f"tooldedup: {exc}", file=sys.stderr)
    except DedupError as exc:
        print(f"tooldedup: {exc.message}", file=sys.stderr)
    return None


def _with_store(
    run: Callable[[argparse.Namespace, SqlKeyStore], int], *, create: bool = False
) -> Callable[..., int]:
    def command(args: argparse.Namespace) -> int:
        ledger = opened_or_said(args.db, create=create)
        if ledger is None:
            return 2
        try:
            return run(args, SqlKeyStore(ledger.db))
        except DedupError as exc:
            print(f"tooldedup: {exc.message}", file=sys.stderr)
            return 2
        finally:
            ledger.close()

    return command


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _create(args: argparse.Namespace, store: SqlKeyStore) -> int:
    new, secret_hash = make_key(
        args.tenant, Role(args.role), args.name, time.time(), args.rate_per_second, args.burst
    )
    store.add_key(new, secret_hash)
    print(
        f"created key {new.key.key_id} ({new.key.role.value} of tenant {new.key.tenant})"
        f" in {_store_name(args.db)}; it is shown once, here:",
        file=sys.stderr,
    )
    print(new.token)
    return 0


def _store_name(db: str) -> str:
    db_path, url = parse_db(db)
    if db_path is not None:
        return str(db_path.resolve())
    return "the PostgreSQL database " + (url or "").rsplit("/", 1)[-1].split("?", 1)[0]


def _list(args: argparse.Namespace, store: SqlKeyStore) -> int:
    keys = store.list_keys(args.tenant)
    print(f"{'key id':<16}  {'tenant':<20} {'role':<6} {'created':<20} {'revoked':<20} name")
    for key in keys:
        print(
            f"{key.key_id:<16}  {key.tenant[:20]:<20} {key.role.value:<6}"
            f" {_when(key.created_at):<20} {_when(key.revoked_at):<20} {_shown(key.name)}"
        )
    return 0


def _revoke(args: argparse.Namespace, store: SqlKeyStore) -> int:
    key = store.revoke_key(args.key_id, time.time())
    print(f"revoked key {key.key_id} ({key.role.value} of tenant {key.tenant})", file=sys.stderr)
    return 0


def _cap(args: argparse.Namespace, store: SqlKeyStore) -> int:
    validate_tenant(args.tenant)
    cap = None if args.max_calls < 0 else args.max_calls
    store.set_call_cap(args.tenant, cap)
    said = "no cap" if cap is None else f"at most {cap} stored calls"
    print(f"tenant {args.tenant}: {said}", file=sys.stderr)
    return 0


def _tenants(args: argparse.Namespace, store: SqlKeyStore) -> int:
    caps = store.call_caps()
    print(f"{'tenant':<32} {'calls':>10} {'cap':>10} {'keys':>5}")
    for tenant in store.tenants():
        live = [k for k in store.list_keys(tenant) if k.revoked_at is None]
        cap = caps.get(tenant)
        print(
            f"{tenant[:32]:<32} {store.count_calls(tenant):>10}"
            f" {'-' if cap is None else cap:>10} {len(live):>5}"
        )
    return 0


def _tenant(text: str) -> str:
    try:
        return validate_tenant(text)
    except DedupError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def per_second(text: str) -> float:
    """An argument that is a rate limit in requests per second."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text}") from None
    if not MIN_RATE_PER_SECOND <= value <= MAX_RATE_PER_SECOND:
        raise argparse.ArgumentTypeError(
            f"must be from {MIN_RATE_PER_SECOND} to {MAX_RATE_PER_SECOND:g}, not {text}"
        )
    return value


def burst(text: str) -> int:
    """An argument that is a token bucket's size."""
    return _whole(text, 1, MAX_BURST)


def _max_calls(text: str) -> int:
    return _whole(text, -1, _MAX_CALLS)


def _whole(text: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must be from {low} to {high}, not {text}")
    return value


def _shown(text: str | None) -> str:
    """A name as one line of plain text, whatever it holds."""
    return "".join(c if c.isprintable() else "?" for c in text or "")


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``keys`` and ``tenants`` to the ``tooldedup`` command."""
    db_help = "SQLite file or postgresql:// URL (the store the service uses)"
    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    verbs = keys.add_subparsers(dest="verb", required=True)

    create = verbs.add_parser("create", help="make a key; its secret is printed once")
    create.add_argument("--tenant", type=_tenant, default=DEFAULT_TENANT)
    create.add_argument("--role", choices=[r.value for r in Role], required=True)
    create.add_argument("--name", default=None, help="what the key is for, for people")
    create.add_argument(
        "--rate-per-second", type=per_second, default=None, help="this key's request rate limit"
    )
    create.add_argument("--burst", type=burst, default=None, help="requests allowed at once")
    create.add_argument("--db", default="tooldedup.db", help=db_help)
    # The one command that may start a store: the first key comes before the first serve.
    create.set_defaults(run=_with_store(_create, create=True))

    listing = verbs.add_parser("list", help="keys without their secrets")
    listing.add_argument("--tenant", type=_tenant, default=None)
    listing.add_argument("--db", default="tooldedup.db", help=db_help)
    listing.set_defaults(run=_with_store(_list))

    revoke = verbs.add_parser("revoke", help="refuse a key from now on, everywhere")
    revoke.add_argument("key_id")
    revoke.add_argument("--db", default="tooldedup.db", help=db_help)
    revoke.set_defaults(run=_with_store(_revoke))

    tenants = commands.add_parser("tenants", help="list tenants, cap their stored calls")
    tenant_verbs = tenants.add_subparsers(dest="verb", required=True)
    shown = tenant_verbs.add_parser("list", help="tenants, their calls, caps and live keys")
    shown.add_argument("--db", default="tooldedup.db", help=db_help)
    shown.set_defaults(run=_with_store(_tenants))
    cap = tenant_verbs.add_parser("cap", help="cap a tenant's stored calls (-1 lifts the cap)")
    cap.add_argument("tenant")
    cap.add_argument("--max-calls", type=_max_calls, required=True)
    cap.add_argument("--db", default="tooldedup.db", help=db_help)
    cap.set_defaults(run=_with_store(_cap))
