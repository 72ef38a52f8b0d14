"""Asks and their confirm tokens (by hash), in the ledger's database."""

from __future__ import annotations

from collections.abc import Sequence

from tooldedup.dedup.ledger.base import AskRecord
from tooldedup.dedup.ledger.database import Database, Row

__all__ = ["SqlAskStore"]

_COLUMNS = (
    "token_hash, check_id, tenant, scope, session_id, tool, args_hash, sent_hash,"
    " matched_call_id, created_at, expires_at, used_at, used_by"
)


class SqlAskStore:
    """Confirm tokens: stored at the ask, marked used once by the check they confirm."""

    db: Database

    def open_ask(self, ask: AskRecord) -> None:
        """Store a new ask and its confirm token's hash (in the caller's write)."""
        self.db.execute(
            f"INSERT INTO asks ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                ask.token_hash,
                ask.check_id,
                ask.tenant,
                ask.scope,
                ask.session_id,
                ask.tool,
                ask.args_hash,
                ask.sent_hash,
                ask.matched_call_id,
                ask.created_at,
                ask.expires_at,
                ask.used_at,
                ask.used_by,
            ),
        )

    def find_ask(self, tenant: str, token_hash: str) -> AskRecord | None:
        """One of ``tenant``'s asks by its token's hash (another tenant's is not found)."""
        row = self.db.execute(
            f"SELECT {_COLUMNS} FROM asks WHERE token_hash = ? AND tenant = ?",
            (token_hash, tenant),
        ).one()
        return None if row is None else _ask_from_row(row)

    def use_ask(self, token_hash: str, check_id: str, now: float) -> bool:
        """Mark the token used by ``check_id``; one statement, so only one check ever wins."""
        with self.db.write():
            changed = self.db.execute(
                "UPDATE asks SET used_at = ?, used_by = ? WHERE token_hash = ? AND used_at IS NULL",
                (now, check_id, token_hash),
            ).rowcount
        return changed == 1

    def unuse_ask(self, token_hash: str, check_id: str) -> None:
        """Give back a token ``check_id`` marked used, when its claim was not stored."""
        with self.db.write():
            self.db.execute(
                "UPDATE asks SET used_at = NULL, used_by = NULL"
                " WHERE token_hash = ? AND used_by = ?",
                (token_hash, check_id),
            )

    def ask_ends(
        self, tenant: str, since: float, now: float, check_ids: Sequence[str] | None = None
    ) -> dict[str, tuple[str, str]]:
        """``tenant``'s asks since ``since`` (or those of ``check_ids``): check id -> (tool,
        how it ended). ``confirmed``; ``open`` while its token is good; once it expired
        unused, ``abandoned`` if the session sent another check after it, else ``expired``."""
        only: tuple[str, ...] = ()
        where = ""
        if check_ids is not None:
            if not check_ids:
                return {}
            only = tuple(check_ids)
            where = f" AND a.check_id IN ({','.join('?' * len(only))})"
        rows = self.db.execute(
            "SELECT a.check_id, a.tool, CASE"
            " WHEN a.used_at IS NOT NULL THEN 'confirmed'"
            " WHEN a.expires_at > ? THEN 'open'"
            " WHEN EXISTS (SELECT 1 FROM decisions d WHERE d.tenant = a.tenant"
            " AND d.session_id = a.session_id AND d.ts > a.created_at"
            " AND d.check_id <> a.check_id) THEN 'abandoned'"
            " ELSE 'expired' END AS ending"
            f" FROM asks a WHERE a.tenant = ? AND a.created_at >= ?{where}",
            (now, tenant, since, *only),
        ).rows
        return {row["check_id"]: (row["tool"], row["ending"]) for row in rows}

    def purge_asks(self, before: float) -> int:
        """Delete asks whose tokens expired before ``before``; return how many."""
        with self.db.write():
            return self.db.execute("DELETE FROM asks WHERE expires_at < ?", (before,)).rowcount


def _ask_from_row(row: Row) -> AskRecord:
    return AskRecord(
        token_hash=row["token_hash"],
        check_id=row["check_id"],
        tenant=row["tenant"],
        scope=row["scope"],
        session_id=row["session_id"],
        tool=row["tool"],
        args_hash=row["args_hash"],
        sent_hash=row["sent_hash"],
        matched_call_id=row["matched_call_id"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        used_at=row["used_at"],
        used_by=row["used_by"],
    )
