"""Handlers the consumer tests run, in a ``tooldedup-consumer`` process or in the test's own.

Each effect is one row in a real SQLite file (``CONSUMER_SINK``), committed before the handler
returns, so a test counts effects after any number of SIGKILLs.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from tooldedup_client.consumer import Message, Poison

_SCHEMA = "CREATE TABLE IF NOT EXISTS effects (key TEXT NOT NULL, message_id TEXT NOT NULL)"


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(_SCHEMA)
    return conn


def write_effect(sink: Path, key: str, message_id: str) -> None:
    """One effect row, committed and synced."""
    conn = _connect(sink)
    try:
        conn.execute("INSERT INTO effects VALUES (?, ?)", (key, message_id))
    finally:
        conn.close()


def effects(sink: Path) -> list[tuple[str, str]]:
    """Every effect row: (key, message id)."""
    if not sink.exists():
        return []
    conn = _connect(sink)
    try:
        return [(str(k), str(m)) for k, m in conn.execute("SELECT key, message_id FROM effects")]
    finally:
        conn.close()


def record_effect(message: Message) -> dict[str, Any]:
    """The crash tests' handler: the effect, then a moment before the report (the window a
    SIGKILL makes ambiguous), then a decision."""
    body = message.body
    if not isinstance(body, dict) or "order" not in body:
        raise Poison(f"not an order: {body!r}")
    write_effect(Path(os.environ["CONSUMER_SINK"]), message.key, message.id)
    time.sleep(float(os.environ.get("CONSUMER_HANDLER_SLEEP", "0.01")))
    return {"tagged": f"order-{body['order']}", "usage": {"total_tokens": 10}}
