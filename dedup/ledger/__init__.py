"""Ledgers: where claims, outcomes and the decision log are kept.

``PostgresLedger`` is imported on first use, so the SQLite default never loads psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tooldedup.dedup.ledger.base import ClaimConflict, Feedback, Ledger, LogEntry
from tooldedup.dedup.ledger.database import Database
from tooldedup.dedup.ledger.sql import SqlLedger
from tooldedup.dedup.ledger.sqlite import SqliteLedger

if TYPE_CHECKING:
    from tooldedup.dedup.ledger.postgres import PostgresLedger

__all__ = [
    "ClaimConflict",
    "Database",
    "Feedback",
    "Ledger",
    "LogEntry",
    "PostgresLedger",
    "SqlLedger",
    "SqliteLedger",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresLedger":
        from tooldedup.dedup.ledger.postgres import PostgresLedger

        return PostgresLedger
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
