"""The shared ledger: one PostgreSQL database for every worker and replica."""

from __future__ import annotations

from tooldedup.dedup.ledger.postgres_db import PostgresDatabase
from tooldedup.dedup.ledger.sql import SqlLedger

__all__ = ["PostgresLedger"]


class PostgresLedger(SqlLedger):
    """Calls, outcomes, policies and the decision log in PostgreSQL, migrated on open."""

    def __init__(
        self, url: str, *, max_connections: int = 10, timeout_seconds: float = 2.0
    ) -> None:
        db = PostgresDatabase(url, max_connections=max_connections, timeout_seconds=timeout_seconds)
        try:
            super().__init__(db)
        except BaseException:
            db.close()
            raise
