"""Spent confirm tokens, and how asks ended, in the ledger's database.

An ask stores nothing but its decision log line (with its token's expiry): the token
carries its own binding. Only a confirmation writes here.
"""

from __future__ import annotations

from collections.abc import Sequence

from tooldedup.dedup.ledger.base import SpentToken
from tooldedup.dedup.ledger.database import Database

__all__ = ["SqlAskStore"]


class SqlAskStore:
    """Each spent confirm token under its ask's check id: the second spender loses."""

    db: Database

    def spend_confirm_token(self, spent: SpentToken) -> bool:
        """Record the token spent; one statement on the primary key, so only one check ever
        wins."""
        with self.db.write():
            changed = self.db.execute(
                "INSERT INTO spent_confirm_tokens (ask_check_id, tenant, used_by, used_at,"
                " expires_at) VALUES (?,?,?,?,?) ON CONFLICT (ask_check_id) DO NOTHING",
                (spent.ask_check_id, spent.tenant, spent.used_by, spent.used_at, spent.expires_at),
            ).rowcount
        return changed == 1

    def confirm_token_spent_by(self, tenant: str, ask_check_id: str) -> str | None:
        """The check that spent the token of one of ``tenant``'s asks, if one did."""
        row = self.db.execute(
            "SELECT used_by FROM spent_confirm_tokens WHERE ask_check_id = ? AND tenant = ?",
            (ask_check_id, tenant),
        ).one()
        return None if row is None else str(row["used_by"])

    def unspend_confirm_token(self, ask_check_id: str, used_by: str) -> None:
        """Give back a token ``used_by`` spent, when its claim was not stored."""
        with self.db.write():
            self.db.execute(
                "DELETE FROM spent_confirm_tokens WHERE ask_check_id = ? AND used_by = ?",
                (ask_check_id, used_by),
            )

    def ask_ends(
        self, tenant: str, since: float, now: float, check_ids: Sequence[str] | None = None
    ) -> dict[str, tuple[str, str]]:
        """``tenant``'s asks since ``since`` (or those of ``check_ids``): check id -> (tool,
        how it ended). ``confirmed``; ``open`` while its token is good; once it expired
        unconfirmed, ``abandoned`` if the session sent another check after it, else
        ``expired``.

        An ask is a log line that handed out a token. It was confirmed if its token is spent,
        or (once the spent token is purged) if its caller labelled it: the confirmation's
        ``distinct`` label, source ``caller``, which only the service writes.
        """
        only: tuple[str, ...] = ()
        where = ""
        if check_ids is not None:
            if not check_ids:
                return {}
            only = tuple(check_ids)
            where = f" AND d.check_id IN ({','.join('?' * len(only))})"
        rows = self.db.execute(
            "SELECT d.check_id, d.tool, CASE"
            " WHEN EXISTS (SELECT 1 FROM spent_confirm_tokens s"
            " WHERE s.ask_check_id = d.check_id)"
            " OR EXISTS (SELECT 1 FROM feedback f WHERE f.check_id = d.check_id"
            " AND f.source = 'caller') THEN 'confirmed'"
            " WHEN d.ask_expires_at > ? THEN 'open'"
            " WHEN EXISTS (SELECT 1 FROM decisions e WHERE e.tenant = d.tenant"
            " AND e.session_id = d.session_id AND e.ts > d.ts"
            " AND e.check_id <> d.check_id) THEN 'abandoned'"
            " ELSE 'expired' END AS ending"
            " FROM decisions d WHERE d.tenant = ? AND d.decision = 'ask' AND d.dry_run = 0"
            f" AND d.ts >= ?{where}",
            (now, tenant, since, *only),
        ).rows
        return {row["check_id"]: (row["tool"], row["ending"]) for row in rows}

    def purge_spent_confirm_tokens(self, before: float) -> int:
        """Forget spent tokens that expired before ``before``; return how many."""
        with self.db.write():
            return self.db.execute(
                "DELETE FROM spent_confirm_tokens WHERE expires_at < ?", (before,)
            ).rowcount
