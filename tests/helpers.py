"""Small helpers shared by the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tooldedup.api.settings import Settings
from tooldedup.dedup.canonical import Canonicalizer
from tooldedup.dedup.english import EnglishPack
from tooldedup.dedup.ledger.database import Database
from tooldedup.dedup.ledger.migrations import MIGRATIONS
from tooldedup.dedup.ledger.postgres_db import PostgresDatabase
from tooldedup.dedup.ledger.sqlite_db import SqliteDatabase
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.protocols import TextReader
from tooldedup.dedup.records import CanonicalCall

EMAIL = {
    "to": "bob@example.com",
    "subject": "Q3 report",
    "body": "Hi Bob, the Q3 report is attached. Let me know if you have any questions.",
}


class MakeApp(Protocol):
    """The ``make_app`` fixture: ``create_app`` with the run's shared models."""

    def __call__(self, settings: Settings, **options: Any) -> FastAPI: ...


def check(client: TestClient, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """POST /v1/check and return the JSON answer, asserting a 200."""
    body = {"session_id": "s1", "tool": "send_email", "args": args, **extra}
    response = client.post("/v1/check", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def complete(client: TestClient, call_id: str, **outcome: Any) -> dict[str, Any]:
    """POST a completion and return the JSON answer, asserting a 200."""
    response = client.post(f"/v1/calls/{call_id}/complete", json=outcome)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def canonicalize(
    args: Any,
    policy: ToolPolicy,
    *,
    received_at: float | None = None,
    tool: str | None = None,
    reader: TextReader | None = None,
) -> CanonicalCall:
    """The canonical form the server makes: through the English pack, and ``reader``."""
    canonicalizer = Canonicalizer(EnglishPack(), reader)
    return canonicalizer.canonicalize(args, policy, received_at=received_at, tool=tool)


def store_as_left_by(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str, migrations: int
) -> Database:
    """A fresh database on ``backend`` ("sqlite" or "postgres") with only its first
    ``migrations`` migrations applied and recorded, as an older build left it."""
    db: Database
    if backend == "postgres":
        db = PostgresDatabase(request.getfixturevalue("postgres_url"))
    else:
        db = SqliteDatabase(tmp_path / "ledger.db")
    db.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    for step in MIGRATIONS[:migrations]:
        with db.write():
            for statement in step(db.dialect):
                db.execute(statement)
            db.execute("INSERT INTO schema_migrations VALUES (?, 0)", (step.__name__,))
    return db
