"""Ledgers: where claims, outcomes and the decision log are kept."""

from tooldedup.dedup.ledger.base import ClaimConflict, Feedback, Ledger, LogEntry
from tooldedup.dedup.ledger.sqlite import SqliteLedger

__all__ = ["ClaimConflict", "Feedback", "Ledger", "LogEntry", "SqliteLedger"]
