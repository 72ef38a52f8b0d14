"""A ledger written by release 0.1 opens with this release, and its calls are still found."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import EMAIL, canonicalize
from tests.server import export_log, serve
from tooldedup.dedup.canonical import canonical_json, stable_hash
from tooldedup.dedup.english.legacy import legacy_args_hash
from tooldedup.dedup.ledger import SqliteLedger
from tooldedup.dedup.ledger.migrations import MIGRATIONS
from tooldedup.dedup.policy import ToolPolicy

# Written by `tooldedup serve` at 0.1 (commit 62aca04): the README email, completed with
# {"message_id": "m-42"}, its paraphrase (a borderline duplicate), a ticket sent with
# "queue": "IT" (stored as "it"), and a ticket in another session.
FIXTURE = Path(__file__).resolve().parent / "data" / "ledger-v0.1.sqlite"
SENT = dict(EMAIL)


def _copy(tmp_path: Path) -> Path:
    """The 0.1 ledger, with its calls moved to an hour ago: inside the 24 h dedup window,
    past their 300 s leases, whenever the test runs."""
    db = tmp_path / "ledger.db"
    shutil.copyfile(FIXTURE, db)
    with sqlite3.connect(db) as conn:
        (newest,) = conn.execute("SELECT MAX(created_at) FROM calls").fetchone()
        shift = time.time() - 3600 - newest
        conn.execute(
            "UPDATE calls SET created_at = created_at + ?,"
            " lease_expires_at = lease_expires_at + ?, completed_at = completed_at + ?",
            (shift, shift, shift),
        )
    conn.close()
    return db


def _check(client: httpx.Client, args: dict[str, Any]) -> dict[str, Any]:
    body = {"session_id": "s1", "tool": "send_email", "args": args}
    response = client.post("/v1/check", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_migrations_are_recorded_by_name(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    with sqlite3.connect(FIXTURE) as old:
        assert old.execute("PRAGMA user_version").fetchone() == (3,)
    ledger = SqliteLedger(db)
    ledger.close()
    with sqlite3.connect(db) as conn:
        names = [n for (n,) in conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")]
        calls = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        vectors = conn.execute("SELECT COUNT(*), MIN(used_at) FROM embeddings").fetchone()
    conn.close()
    # 0.1's cached vectors count as used at the upgrade: the first purge keeps them.
    assert vectors[0] > 0
    assert vectors[1] > 1_700_000_000
    assert names == [m.__name__ for m in MIGRATIONS]
    assert calls == 3
    # Opening again applies nothing twice.
    SqliteLedger(db).close()


def test_old_calls_are_found_and_old_borderline_checks_are_marked(
    tmp_path: Path, model_cache: Path
) -> None:
    db = _copy(tmp_path)
    with serve(db, model_cache) as client:
        retry = _check(client, {**SENT, "request_id": "r-9"})
        assert (retry["decision"], retry["match"]["stage"]) == ("duplicate", "exact")
        assert retry["match"]["result"] == {"message_id": "m-42"}
        reworded = {
            **SENT,
            "body": "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
        }
        para = _check(client, reworded)
        assert (para["decision"], para["match"]["stage"]) == ("duplicate", "semantic")
        # The agent retries the ticket as it sent it ("IT"); 0.1 stored "it", and the
        # service finds the call by the canonical form 0.1 made.
        ticket = {"queue": "IT", "title": "Laptop screen flickers"}
        old = client.post(
            "/v1/check", json={"session_id": "s1", "tool": "create_ticket", "args": ticket}
        ).json()
        # Its claim was never completed, and its lease ran out long ago.
        assert old["decision"] == "reconcile"
        assert old["match"]["stage"] == "exact"
        # 0.1 kept only the canonical form, so an old call reads back canonical.
        stored = client.get(f"/v1/calls/{old['call_id']}").json()
        assert stored["args"] == {"queue": "it", "title": "Laptop screen flickers"}
        # 0.1 dropped every nonce; this release keeps it, so no 0.1 row may stand for it.
        with_nonce = client.post(
            "/v1/check",
            json={"session_id": "s1", "tool": "create_ticket", "args": {**ticket, "nonce": 8}},
        ).json()
        assert with_nonce["decision"] == "proceed"
        fresh = _check(client, {**SENT, "to": "dana@example.com", "queue": "IT"})
        assert fresh["decision"] == "proceed"
        assert client.get(f"/v1/calls/{fresh['call_id']}").json()["args"]["queue"] == "IT"
    out = tmp_path / "log.jsonl"
    export_log(db, out)
    entries = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    old = entries[:4]
    assert [e["decision"] for e in old] == ["proceed", "duplicate", "proceed", "proceed"]
    assert [e["borderline"] for e in old] == [False, True, False, False]


@pytest.mark.parametrize(
    ("sent", "stored_by_0_1"),
    [
        (
            {"queue": "IT", "title": "Laptop screen flickers"},
            {"queue": "it", "title": "Laptop screen flickers"},
        ),
        # 0.1 read four words as prose and kept their case; this release reads a place as a
        # value, but the 0.1 form it looks up must still be 0.1's.
        (
            {"location": "San Luis Obispo County", "n": 2},
            {"location": "San Luis Obispo County", "n": 2},
        ),
    ],
)
def test_the_0_1_form_is_0_1s(sent: dict[str, Any], stored_by_0_1: dict[str, Any]) -> None:
    policy = ToolPolicy()
    kept = canonicalize(sent, policy).args
    assert legacy_args_hash(sent, policy, kept) == stable_hash(canonical_json(stored_by_0_1))
