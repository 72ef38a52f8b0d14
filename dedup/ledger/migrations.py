"""Named schema migrations, recorded by name in ``schema_migrations``, for either database.

Each migration is a function of the dialect returning its statements; its name is the
record. SQLite files made before names were recorded carry only ``PRAGMA user_version``:
their first N migrations are recorded by name once. Then every migration not yet recorded
runs, in order, each in its own exclusive write transaction, so two processes opening one
store never apply a step twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tooldedup.dedup.ledger.database import Database, Dialect
from tooldedup.dedup.records import DEFAULT_TENANT

__all__ = ["MIGRATIONS", "migrate"]

Migration = Callable[[Dialect], tuple[str, ...]]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration; its name is what the database records."""
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_calls_and_log(d: Dialect) -> tuple[str, ...]:
    """Calls, the decision log and stored policies."""
    script = f"""
        CREATE TABLE calls (
            row_id {d.row_id},
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
            created_at {d.real} NOT NULL,
            lease_expires_at {d.real} NOT NULL,
            completed_at {d.real},
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
            row_id {d.row_id},
            check_id TEXT NOT NULL UNIQUE,
            ts {d.real} NOT NULL,
            scope TEXT NOT NULL,
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_json TEXT NOT NULL,
            decision TEXT NOT NULL,
            stage TEXT,
            score {d.real},
            call_id TEXT,
            matched_call_id TEXT,
            latency_ms {d.real} NOT NULL,
            dry_run INTEGER NOT NULL,
            explain_json TEXT NOT NULL
        );
        CREATE TABLE policies (
            tool TEXT PRIMARY KEY,
            policy_json TEXT NOT NULL,
            updated_at {d.real} NOT NULL
        );
    """
    return (*_statements(script), *d.append_only)


@migration
def m002_feedback(d: Dialect) -> tuple[str, ...]:
    """Labels on checks, and the matches a 'distinct' label rules out from then on."""
    return _statements(f"""
        CREATE TABLE feedback (
            row_id {d.row_id},
            check_id TEXT NOT NULL,
            label TEXT NOT NULL,
            note TEXT,
            source TEXT NOT NULL,
            ts {d.real} NOT NULL
        );
        CREATE INDEX feedback_check ON feedback (check_id, row_id);
        CREATE TABLE excluded_matches (
            scope TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_hash TEXT NOT NULL,
            call_id TEXT NOT NULL,
            PRIMARY KEY (scope, tool, args_hash, call_id)
        ){d.without_rowid};
    """)


@migration
def m003_exact_lookup(d: Dialect) -> tuple[str, ...]:
    """An index for the exact fast path: one scope, one tool, one canonical args hash."""
    return ("CREATE INDEX calls_exact ON calls (scope, tool, args_hash, created_at)",)


@migration
def m004_sent_args_and_borderline(d: Dialect) -> tuple[str, ...]:
    """Calls keep the args as sent; log entries mark a borderline match in a column.

    Older entries said "borderline" only in a stage's detail text; that text is read here,
    once, so nothing downstream ever depends on its wording again.
    """
    return (
        "ALTER TABLE calls ADD COLUMN sent_args_json TEXT",
        "ALTER TABLE decisions ADD COLUMN borderline INTEGER NOT NULL DEFAULT 0",
        *d.drop_append_only,
        "UPDATE decisions SET borderline = 1"
        """ WHERE explain_json LIKE '%"detail":"borderline: at or above%'""",
        *d.append_only,
    )


@migration
def m005_embeddings(d: Dialect) -> tuple[str, ...]:
    """Vectors by (model, text hash); files from before 0.2 already have this table."""
    return (
        f"""CREATE TABLE IF NOT EXISTS embeddings (
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector {d.blob} NOT NULL,
            PRIMARY KEY (model, text_hash)
        ){d.without_rowid}""",
    )


@migration
def m006_keys_and_embedding_use(d: Dialect) -> tuple[str, ...]:
    """Explicit keys bound to one intent, replays found by what was sent, and when a vector
    was last needed by a stored call."""
    return (
        _key_table("idempotency_keys", d),
        # A byte-for-byte replay (a queue's redelivery, a runtime's replay) is found by the
        # hash of what was sent, whatever its timestamps say by now.
        "ALTER TABLE calls ADD COLUMN sent_hash TEXT",
        "CREATE INDEX calls_sent ON calls (scope, tool, sent_hash, created_at)"
        " WHERE sent_hash IS NOT NULL",
        "CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)",
        f"ALTER TABLE embeddings ADD COLUMN used_at {d.real} NOT NULL DEFAULT 0",
        # Vectors cached before this migration count as used now, so the first purge
        # keeps them for a full retention period instead of deleting them at start.
        f"UPDATE embeddings SET used_at = {d.now_epoch}",
        "CREATE INDEX embeddings_used ON embeddings (used_at)",
    )


@migration
def m007_attempt_tokens(d: Dialect) -> tuple[str, ...]:
    """Attempt tokens: bound to one payload like keys, and kept on the call they claimed."""
    return (
        _key_table("attempt_tokens", d),
        "CREATE INDEX attempt_tokens_created ON attempt_tokens (created_at)",
        "ALTER TABLE calls ADD COLUMN attempt_token TEXT",
        "CREATE INDEX calls_attempt ON calls (scope, attempt_token)"
        " WHERE attempt_token IS NOT NULL",
    )


@migration
def m008_tenants(d: Dialect) -> tuple[str, ...]:
    """Every row belongs to a tenant (what was stored before is the default tenant's); API
    keys by hash, with a role; per-tenant limits. Tables keyed by scope are rebuilt keyed
    by tenant and scope. Every tenant column defaults to the default tenant, so a replica
    of the release before, still running during a rolling upgrade, writes rows that read
    back as its own."""
    tenant = f"tenant TEXT NOT NULL DEFAULT '{DEFAULT_TENANT}'"
    return (
        f"ALTER TABLE calls ADD COLUMN {tenant}",
        "CREATE INDEX calls_tenant ON calls (tenant, created_at)",
        # Two tenants may both name a scope "s1" and send the same key.
        "DROP INDEX calls_pending_idem",
        "CREATE UNIQUE INDEX calls_pending_idem ON calls (tenant, scope, idempotency_key)"
        " WHERE status = 'pending' AND idempotency_key IS NOT NULL",
        f"ALTER TABLE decisions ADD COLUMN {tenant}",
        "ALTER TABLE decisions ADD COLUMN key_id TEXT",
        "CREATE INDEX decisions_tenant ON decisions (tenant, row_id)",
        "ALTER TABLE feedback ADD COLUMN key_id TEXT",
        f"ALTER TABLE excluded_matches ADD COLUMN {tenant}",
        *_rekeyed(
            "policies",
            f"""{tenant}, tool TEXT NOT NULL, policy_json TEXT NOT NULL,
            updated_at {d.real} NOT NULL, PRIMARY KEY (tenant, tool)""",
            "tool, policy_json, updated_at",
        ),
        *(
            statement
            for table in ("idempotency_keys", "attempt_tokens")
            for statement in (
                *_rekeyed(
                    table,
                    f"""{tenant}, scope TEXT NOT NULL, key TEXT NOT NULL,
                    tool TEXT NOT NULL, intent_key TEXT NOT NULL, sent_hash TEXT NOT NULL,
                    created_at {d.real} NOT NULL, PRIMARY KEY (tenant, scope, key)""",
                    "scope, key, tool, intent_key, sent_hash, created_at",
                    d.without_rowid,
                ),
                f"CREATE INDEX {table}_created ON {table} (created_at)",
            )
        ),
        f"""CREATE TABLE api_keys (
            key_id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            role TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            name TEXT,
            created_at {d.real} NOT NULL,
            revoked_at {d.real},
            rate_per_second {d.real},
            burst INTEGER
        )""",
        "CREATE INDEX api_keys_tenant ON api_keys (tenant, created_at)",
        """CREATE TABLE tenant_limits (
            tenant TEXT PRIMARY KEY,
            max_calls BIGINT
        )""",
    )


@migration
def m009_log_review(d: Dialect) -> tuple[str, ...]:
    """Indexes that page one tenant's log by tool, decision, stage, score or time, and find
    its borderline checks, without walking the rest of the log."""
    return (
        "CREATE INDEX decisions_tool ON decisions (tenant, tool, row_id)",
        "CREATE INDEX decisions_kind ON decisions (tenant, decision, row_id)",
        "CREATE INDEX decisions_stage ON decisions (tenant, stage, row_id)",
        "CREATE INDEX decisions_ts ON decisions (tenant, ts)",
        "CREATE INDEX decisions_score ON decisions (tenant, score)",
        "CREATE INDEX decisions_borderline ON decisions (tenant, row_id) WHERE borderline = 1",
    )


@migration
def m010_asks_and_observed(d: Dialect) -> tuple[str, ...]:
    """Asks: each confirm token (by hash) with what it is bound to and how it ended; log
    entries keep what observe mode would have answered, in a column a filter can use."""
    return (
        f"""CREATE TABLE asks (
            token_hash TEXT PRIMARY KEY,
            check_id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            scope TEXT NOT NULL,
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_hash TEXT NOT NULL,
            sent_hash TEXT NOT NULL,
            matched_call_id TEXT,
            created_at {d.real} NOT NULL,
            expires_at {d.real} NOT NULL,
            used_at {d.real},
            used_by TEXT
        )""",
        "CREATE INDEX asks_check ON asks (check_id)",
        "CREATE INDEX asks_tenant ON asks (tenant, tool, created_at)",
        "CREATE INDEX asks_expires ON asks (expires_at)",
        # Whether a session went on after an unconfirmed ask (abandoned) or fell silent.
        "CREATE INDEX decisions_session ON decisions (tenant, session_id, ts)",
        "ALTER TABLE decisions ADD COLUMN observed TEXT",
        "CREATE INDEX decisions_observed ON decisions (tenant, observed, row_id)"
        " WHERE observed IS NOT NULL",
    )


@migration
def m011_signed_confirm_tokens(d: Dialect) -> tuple[str, ...]:
    """Confirm tokens carry their own binding, signed with a secret the store keeps: an ask
    writes only its log line (with its token's expiry), and a confirmation records the token
    it spent under the ask's check id. The asks table of development builds goes; the tokens
    it held are no longer accepted."""
    return (
        f"""CREATE TABLE server_secrets (
            name TEXT PRIMARY KEY,
            secret TEXT NOT NULL,
            created_at {d.real} NOT NULL
        )""",
        f"""CREATE TABLE spent_confirm_tokens (
            ask_check_id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            used_by TEXT NOT NULL,
            used_at {d.real} NOT NULL,
            expires_at {d.real} NOT NULL
        ){d.without_rowid}""",
        "CREATE INDEX spent_confirm_tokens_expires ON spent_confirm_tokens (expires_at)",
        f"ALTER TABLE decisions ADD COLUMN ask_expires_at {d.real}",
        "DROP TABLE asks",
    )


@migration
def m012_intent_lookup(d: Dialect) -> tuple[str, ...]:
    """The live call of an intent, found by its key: a claim looks it up, and without this
    index the lookup walked every live call of the tenant in the window."""
    return ("CREATE INDEX calls_intent ON calls (intent_key, created_at)",)


def _rekeyed(table: str, columns: str, copied: str, suffix: str = "") -> tuple[str, ...]:
    """Rebuild ``table`` with ``columns``, its rows moved into the default tenant (neither
    database can change a primary key in place)."""
    return (
        f"CREATE TABLE {table}_rekeyed ({columns}){suffix}",
        f"INSERT INTO {table}_rekeyed (tenant, {copied})"
        f" SELECT '{DEFAULT_TENANT}', {copied} FROM {table}",
        f"DROP TABLE {table}",
        f"ALTER TABLE {table}_rekeyed RENAME TO {table}",
    )


def _key_table(name: str, d: Dialect) -> str:
    """A table of caller-made keys, each bound to one tool and payload (as of m006)."""
    return f"""CREATE TABLE {name} (
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            tool TEXT NOT NULL,
            intent_key TEXT NOT NULL,
            sent_hash TEXT NOT NULL,
            created_at {d.real} NOT NULL,
            PRIMARY KEY (scope, key)
        ){d.without_rowid}"""


def _statements(script: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in script.split(";") if part.strip())


def _applied(db: Database) -> set[str]:
    return {row["name"] for row in db.execute("SELECT name FROM schema_migrations").rows}


def migrate(db: Database) -> list[str]:
    """Apply every migration not yet recorded; return the names now applied, in order."""
    with db.serialized("tooldedup schema migrations"):
        db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations"
            f" (name TEXT PRIMARY KEY, applied_at {db.dialect.real})"
        )
        with db.write():
            if not _applied(db) and db.dialect.name == "sqlite":
                legacy = int(db.execute("PRAGMA user_version").rows[0]["user_version"])
                db.executemany(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                    [(step.__name__, time.time()) for step in MIGRATIONS[:legacy]],
                )
        for step in MIGRATIONS:
            with db.write():
                # Read again in the write transaction: another process may have applied it.
                if step.__name__ not in _applied(db):
                    for statement in step(db.dialect):
                        db.execute(statement)
                    db.execute(
                        "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                        (step.__name__, time.time()),
                    )
    return [step.__name__ for step in MIGRATIONS]
