"""Bulk preload of a tooldedup ledger: rows written straight into SQLite before the server starts.

Every stored call goes through the real ``canonicalize()`` and ``intent_key()``, so its row is
exactly what ``SqliteLedger.claim`` would have written. Its free text comes from a pool of a
few thousand texts (``corpus.Pool``) that are embedded once with the real model; the vectors go
into the ``embeddings`` table under the server's model id, keyed by ``stable_hash(text)`` as
``CachedEmbedder`` keys them. Embedding a million distinct texts would take about an hour on two
cores; reusing the pool keeps a 1M-call build to a couple of minutes and changes nothing the
server does per check (it sees the same rows, vectors and group sizes either way).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.corpus import Layout, Pool, stored_call
from tooldedup.dedup.canonical import Canonicalizer, canonical_json, intent_key, stable_hash
from tooldedup.dedup.english import EnglishPack
from tooldedup.dedup.ledger import SqliteLedger
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.protocols import Embedder
from tooldedup.dedup.records import DEFAULT_TENANT, Scope
from tooldedup.index.coverage import TokenizerCoverage

__all__ = ["build_ledger", "pool_texts", "pool_vectors"]

_INSERT = (
    "INSERT INTO calls (call_id, scope, session_id, tool, args_json, args_hash, exact_sig,"
    " exact_leaves, semantic_leaves, intent_key, idempotency_key, status, failure_class,"
    " result_json, error_json, created_at, lease_expires_at, completed_at, attempt_of,"
    " superseded, run_id, step, sent_args_json, sent_hash)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,NULL,'succeeded',NULL,?,NULL,?,?,?,NULL,0,NULL,NULL,?,?)"
)
_SPAN_SECONDS = 6 * 3600.0  # stored calls are spread over the last six hours


@cache
def _canonicalizer() -> Canonicalizer:
    """What the server reads (its shipped model's tokenizer): its rows hold the same leaves."""
    return Canonicalizer(EnglishPack(), TokenizerCoverage.packaged())


def pool_texts(pool: Pool) -> list[str]:
    """Every distinct free-text leaf of the pool, in canonical form."""
    texts: dict[str, None] = {}
    policy = ToolPolicy()
    layout = Layout(len(pool.items), 1)
    for session in range(len(pool.items)):
        _, args, _ = stored_call(layout, pool, session, 0)
        for leaf in _canonicalizer().canonicalize(args, policy).semantic_leaves:
            texts[leaf.text] = None
    return list(texts)


def pool_vectors(embedder: Embedder, texts: list[str], cache: Path) -> np.ndarray[Any, Any]:
    """The model's vectors for ``texts``, computed once and kept in ``cache`` (.npy)."""
    if cache.exists():
        vectors: np.ndarray[Any, Any] = np.load(cache)
        if vectors.shape[0] == len(texts):
            return vectors
    rows = [embedder.embed([text])[0] for text in texts]
    vectors = np.stack(rows).astype(np.float32)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors)
    return vectors


def _rows(layout: Layout, pool: Pool, now: float) -> Iterator[tuple[Any, ...]]:
    policy = ToolPolicy()
    start = now - _SPAN_SECONDS
    step = _SPAN_SECONDS / max(1, layout.total)
    number = 0
    for session in range(layout.sessions):
        sid = layout.session_id(session)
        for index in range(layout.session_size):
            tool, args, _ = stored_call(layout, pool, session, index)
            canonical = _canonicalizer().canonicalize(args, policy)
            created = start + number * step
            yield (
                "call_" + stable_hash(f"{sid}:{index}"),
                sid,
                sid,
                tool,
                canonical.args_json,
                canonical.args_hash,
                canonical.exact_signature,
                canonical_json([list(p) for p in canonical.exact_leaves]),
                canonical_json([[x.path, x.text] for x in canonical.semantic_leaves]),
                intent_key(Scope(DEFAULT_TENANT, sid), tool, canonical, None, None),
                canonical_json({"ok": True, "ref": number}),
                created,
                created + policy.lease_seconds,
                created + 0.5,
            )
            number += 1


def build_ledger(
    path: Path,
    layout: Layout,
    pool: Pool,
    model_id: str,
    vectors: dict[str, np.ndarray[Any, Any]],
    *,
    progress: Callable[[int], None] | None = None,
) -> float:
    """Write ``layout``'s calls and the pool's vectors into a fresh ledger; return seconds taken."""
    started = time.perf_counter()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    SqliteLedger(path).close()  # the real migrations create the schema
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA cache_size=-262144")  # 256 MiB while loading
        conn.execute("BEGIN")
        # Used now, as the claims of the stored calls would have marked them: the server's
        # first purge keeps them.
        now = time.time()
        conn.executemany(
            "INSERT OR IGNORE INTO embeddings (model, text_hash, dim, vector, used_at)"
            " VALUES (?,?,?,?,?)",
            [
                (
                    model_id,
                    stable_hash(t),
                    int(v.shape[-1]),
                    np.asarray(v, np.float32).tobytes(),
                    now,
                )
                for t, v in vectors.items()
            ],
        )
        batch: list[tuple[Any, ...]] = []
        for row in _rows(layout, pool, time.time()):
            # The agent sent the canonical form itself: what was sent is the args, and its
            # hash is the args hash.
            batch.append((*row, row[4], row[5]))
            if len(batch) == 10_000:
                conn.executemany(_INSERT, batch)
                if progress is not None:
                    progress(len(batch))
                batch.clear()
        if batch:
            conn.executemany(_INSERT, batch)
            if progress is not None:
                progress(len(batch))
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return time.perf_counter() - started
