"""Ledgers: where claims, outcomes and the decision log are kept."""

from dedup.ledger.base import ClaimConflict, Feedback, Ledger, LogEntry
from dedup.ledger.sqlite import SqliteLedger

__all__ = ["ClaimConflict", "Feedback", "Ledger", "LogEntry", "SqliteLedger"]
