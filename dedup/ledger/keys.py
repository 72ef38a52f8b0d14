"""API keys (by hash) and per-tenant limits, in the ledger's database."""

from __future__ import annotations

from tooldedup.dedup.access import ApiKey, NewKey, Role
from tooldedup.dedup.errors import InvalidInput, NotFound
from tooldedup.dedup.ledger.database import Database, Row

__all__ = ["SqlKeyStore"]

_KEY_COLUMNS = "key_id, tenant, role, name, created_at, revoked_at, rate_per_second, burst"


def _key(row: Row) -> ApiKey:
    return ApiKey(
        key_id=row["key_id"],
        tenant=row["tenant"],
        role=Role(row["role"]),
        name=row["name"],
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
        rate_per_second=row["rate_per_second"],
        burst=None if row["burst"] is None else int(row["burst"]),
    )


class SqlKeyStore:
    """Keys stored as hashes of their secrets, and the cap on each tenant's stored calls."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add_key(self, new: NewKey, secret_hash: str) -> ApiKey:
        """Store a key made by ``make_key``."""
        key = new.key
        with self.db.write():
            self.db.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}, secret_hash) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    key.key_id,
                    key.tenant,
                    key.role.value,
                    key.name,
                    key.created_at,
                    key.revoked_at,
                    key.rate_per_second,
                    key.burst,
                    secret_hash,
                ),
            )
        return key

    def all_keys(self) -> list[tuple[ApiKey, str]]:
        """Every key, revoked ones too, each with its secret's hash."""
        rows = self.db.execute(f"SELECT {_KEY_COLUMNS}, secret_hash FROM api_keys").rows
        return [(_key(row), str(row["secret_hash"])) for row in rows]

    def has_keys(self) -> bool:
        """Whether any key was ever created (a revoked one counts)."""
        return self.db.execute("SELECT 1 FROM api_keys LIMIT 1").one() is not None

    def list_keys(self, tenant: str | None = None) -> list[ApiKey]:
        """Keys, oldest first (one tenant's, if named)."""
        only, params = ("", ()) if tenant is None else (" WHERE tenant = ?", (tenant,))
        rows = self.db.execute(
            f"SELECT {_KEY_COLUMNS} FROM api_keys{only} ORDER BY created_at, key_id", params
        ).rows
        return [_key(row) for row in rows]

    def revoke_key(self, key_id: str, now: float, tenant: str | None = None) -> ApiKey:
        """Revoke a key (of ``tenant``, if named); revoking it again changes nothing."""
        only, params = ("", ()) if tenant is None else (" AND tenant = ?", (tenant,))
        with self.db.write():
            self.db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL" + only,
                (now, key_id, *params),
            )
            row = self.db.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = ?{only}", (key_id, *params)
            ).one()
        if row is None:
            raise NotFound(f"no API key with id {key_id!r}")
        return _key(row)

    def call_cap(self, tenant: str) -> int | None:
        """How many calls ``tenant`` may store (None: no cap)."""
        row = self.db.execute(
            "SELECT max_calls FROM tenant_limits WHERE tenant = ?", (tenant,)
        ).one()
        return None if row is None or row["max_calls"] is None else int(row["max_calls"])

    def call_caps(self) -> dict[str, int]:
        """Every tenant's cap on stored calls."""
        rows = self.db.execute(
            "SELECT tenant, max_calls FROM tenant_limits WHERE max_calls IS NOT NULL"
        ).rows
        return {row["tenant"]: int(row["max_calls"]) for row in rows}

    def count_calls(self, tenant: str) -> int:
        """How many calls ``tenant`` has stored."""
        row = self.db.execute("SELECT COUNT(*) AS n FROM calls WHERE tenant = ?", (tenant,)).one()
        return 0 if row is None else int(row["n"])

    def set_call_cap(self, tenant: str, max_calls: int | None) -> None:
        """Cap ``tenant``'s stored calls at ``max_calls`` (0 stops new claims; None lifts it)."""
        if max_calls is not None and max_calls < 0:
            raise InvalidInput("max_calls must be 0 or more")
        with self.db.write():
            self.db.execute(
                "INSERT INTO tenant_limits (tenant, max_calls) VALUES (?, ?)"
                " ON CONFLICT (tenant) DO UPDATE SET max_calls = excluded.max_calls",
                (tenant, max_calls),
            )

    def tenants(self) -> list[str]:
        """Every tenant that holds a key, a cap or a call."""
        rows = self.db.execute(
            "SELECT tenant FROM api_keys UNION SELECT tenant FROM tenant_limits"
            " UNION SELECT DISTINCT tenant FROM calls ORDER BY tenant"
        ).rows
        return [row["tenant"] for row in rows]
