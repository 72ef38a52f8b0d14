"""Numbered schema migrations for the SQLite ledger; ``PRAGMA user_version`` holds the number."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

__all__ = ["MIGRATIONS", "migrate"]

Migration = Callable[[], str]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration."""
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_calls_and_log() -> str:
    """Calls, the decision log and stored policies."""
    return """
        CREATE TABLE calls (
            row_id INTEGER PRIMARY KEY,
            call_id TEXT NOT NULL UNIQUE,
            scope TEXT NOT NULL,
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_json TEXT NOT NULL,
            args_hash TEXT NOT NULL,
            exact_sig TEXT NOT NULL,
            exact_leaves TEXT NOT NULL,
            semantic_leaves TEXT NOT NULL,
            intent_key TEXT NOT NULL,
            idempotency_key TEXT,
            status TEXT NOT NULL,
            failure_class TEXT,
            result_json TEXT,
            error_json TEXT,
            created_at REAL NOT NULL,
            lease_expires_at REAL NOT NULL,
            completed_at REAL,
            attempt_of TEXT,
            superseded INTEGER NOT NULL DEFAULT 0,
            run_id TEXT,
            step TEXT
        );
        CREATE INDEX calls_candidates ON calls (scope, tool, exact_sig, created_at);
        CREATE INDEX calls_scope_tool ON calls (scope, tool, created_at);
        CREATE INDEX calls_session ON calls (session_id, row_id);
        CREATE INDEX calls_created ON calls (created_at);
        CREATE INDEX calls_idem ON calls (scope, idempotency_key)
            WHERE idempotency_key IS NOT NULL;
        CREATE UNIQUE INDEX calls_pending_intent ON calls (intent_key)
            WHERE status = 'pending';
        CREATE UNIQUE INDEX calls_pending_idem ON calls (scope, idempotency_key)
            WHERE status = 'pending' AND idempotency_key IS NOT NULL;

        CREATE TABLE decisions (
            row_id INTEGER PRIMARY KEY,
            check_id TEXT NOT NULL UNIQUE,
            ts REAL NOT NULL,
            scope TEXT NOT NULL,
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_json TEXT NOT NULL,
            decision TEXT NOT NULL,
            stage TEXT,
            score REAL,
            call_id TEXT,
            matched_call_id TEXT,
            latency_ms REAL NOT NULL,
            dry_run INTEGER NOT NULL,
            explain_json TEXT NOT NULL
        );
        CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
            BEGIN SELECT RAISE(ABORT, 'the decision log is append-only'); END;

        CREATE TABLE policies (
            tool TEXT PRIMARY KEY,
            policy_json TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
    """


@migration
def m002_feedback() -> str:
    """Labels on checks, and the matches a 'distinct' label rules out from then on."""
    return """
        CREATE TABLE feedback (
            row_id INTEGER PRIMARY KEY,
            check_id TEXT NOT NULL,
            label TEXT NOT NULL,
            note TEXT,
            source TEXT NOT NULL,
            ts REAL NOT NULL
        );
        CREATE INDEX feedback_check ON feedback (check_id, row_id);
        CREATE TABLE excluded_matches (
            scope TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_hash TEXT NOT NULL,
            call_id TEXT NOT NULL,
            PRIMARY KEY (scope, tool, args_hash, call_id)
        ) WITHOUT ROWID;
    """


@migration
def m003_exact_lookup() -> str:
    """An index for the exact fast path: one scope, one tool, one canonical args hash."""
    return "CREATE INDEX calls_exact ON calls (scope, tool, args_hash, created_at)"


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every migration newer than the file's version; return the new version."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
        # executescript commits any open transaction first, so each step carries its own.
        conn.executescript(f"BEGIN IMMEDIATE; {step()}; PRAGMA user_version = {number}; COMMIT;")
    return len(MIGRATIONS)
