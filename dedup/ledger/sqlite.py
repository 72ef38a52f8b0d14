"""The default ledger: one SQLite file in WAL mode."""

from __future__ import annotations

from pathlib import Path

from tooldedup.dedup.ledger.sql import SqlLedger
from tooldedup.dedup.ledger.sqlite_db import SqliteDatabase

__all__ = ["SqliteLedger"]


class SqliteLedger(SqlLedger):
    """Calls, outcomes, policies and the decision log in one SQLite file, migrated on open."""

    def __init__(self, path: Path) -> None:
        db = SqliteDatabase(path)
        try:
            super().__init__(db)
        except BaseException:
            db.close()
            raise
        self.path = path
