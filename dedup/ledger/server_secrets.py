"""Secrets the service keeps in its store, so that every process sharing it holds the same."""

from __future__ import annotations

import secrets
import time

from tooldedup.dedup.errors import ConfigurationError
from tooldedup.dedup.ledger.database import Database

__all__ = ["server_secret"]

_SECRET_BYTES = 32


def server_secret(db: Database, name: str) -> bytes:
    """The store's secret ``name`` (32 random bytes), made by the first process that asks.

    Every worker and replica on one store reads the same, and a restart reads it again.
    Of processes starting together on a fresh store, one insert wins and all read it.
    """
    found = _read(db, name)
    if found is not None:
        return found
    with db.write():
        db.execute(
            "INSERT INTO server_secrets (name, secret, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT (name) DO NOTHING",
            (name, secrets.token_hex(_SECRET_BYTES), time.time()),
        )
        made = _read(db, name)
    assert made is not None  # written, by this process or another, before the read
    return made


def _read(db: Database, name: str) -> bytes | None:
    row = db.execute("SELECT secret FROM server_secrets WHERE name = ?", (name,)).one()
    if row is None:
        return None
    try:
        secret = bytes.fromhex(str(row["secret"]))
    except ValueError:
        secret = b""
    if len(secret) < _SECRET_BYTES:
        raise ConfigurationError(
            f"the store's secret {name!r} is damaged (table server_secrets): delete its row to"
            " have a new one made (what it signed is then refused)"
        )
    return secret
