"""The store's secrets: made once, by whichever process asks first, and read by all."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tooldedup.dedup.errors import ConfigurationError
from tooldedup.dedup.ledger import SqliteLedger, SqlLedger, server_secrets
from tooldedup.dedup.ledger.postgres import PostgresLedger
from tooldedup.dedup.ledger.server_secrets import server_secret


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], SqlLedger]]:
    """Opens ledgers on one fresh store (a SQLite file, or a new PostgreSQL database), each
    with connections of its own, as separate processes would; closes them after."""
    url = (
        request.getfixturevalue("postgres").create_database()
        if request.param == "postgres"
        else None
    )
    opened: list[SqlLedger] = []

    def open_one() -> SqlLedger:
        ledger = SqliteLedger(tmp_path / "ledger.db") if url is None else PostgresLedger(url)
        opened.append(ledger)
        return ledger

    yield open_one
    for ledger in opened:
        ledger.close()


def test_a_secret_is_made_once_and_read_again(open_store: Callable[[], SqlLedger]) -> None:
    first = server_secret(open_store().db, "confirm_tokens")
    assert len(first) == 32
    # Another process, or this one after a restart, reads the same; another name is another.
    assert server_secret(open_store().db, "confirm_tokens") == first
    assert server_secret(open_store().db, "other") != first


def test_processes_racing_on_a_fresh_store_agree(
    open_store: Callable[[], SqlLedger], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every process finds no secret and makes one: one insert wins, and all read it."""
    ledgers = [open_store() for _ in range(4)]
    start = threading.Barrier(len(ledgers))
    read = server_secrets._read
    looked = threading.local()

    def nothing_yet_then_read(db: object, name: str) -> bytes | None:
        if not getattr(looked, "once", False):
            looked.once = True
            start.wait()  # all of them have looked, and found nothing
            return None
        return read(db, name)  # type: ignore[arg-type]

    monkeypatch.setattr(server_secrets, "_read", nothing_yet_then_read)
    with ThreadPoolExecutor(len(ledgers)) as pool:
        made = list(pool.map(lambda ledger: server_secret(ledger.db, "confirm_tokens"), ledgers))
    assert len(set(made)) == 1
    rows = ledgers[0].db.execute("SELECT COUNT(*) AS n FROM server_secrets").rows
    assert rows[0]["n"] == 1


@pytest.mark.parametrize("stored", ["not hex", "ab" * 8, ""])
def test_a_damaged_secret_stops_the_start(open_store: Callable[[], SqlLedger], stored: str) -> None:
    db = open_store().db
    with db.write():
        db.execute(
            "INSERT INTO server_secrets (name, secret, created_at) VALUES (?, ?, 0)",
            ("confirm_tokens", stored),
        )
    with pytest.raises(ConfigurationError, match="server_secrets"):
        server_secret(db, "confirm_tokens")
