"""GPTCache's side of the comparison: the call as one prompt, and a bulk-built sqlite+faiss store.

A semantic cache has no canonical form and no exact fields, so it sees a tool call as one text:
the tool name and its arguments as key-sorted JSON, with the request id left out (kinder to it
than the raw request, whose fresh id would change every retry's text). The store is written
straight into GPTCache's own files: its SQLAlchemy models create the tables, rows go in through
sqlite3, and the ``IDMap,Flat`` L2 index is the one GPTCache's ``Faiss`` store builds and reads.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.corpus import Layout, Pool, stored_call
from tooldedup.dedup.protocols import Embedder

__all__ = ["VOLATILE", "build_gptcache_store", "gptcache_prompt", "prototype_vectors"]

VOLATILE = frozenset({"request_id"})
_DIM = 384


def gptcache_prompt(tool: str, args: dict[str, Any]) -> str:
    """The text a semantic cache embeds for one tool call."""
    kept = {k: v for k, v in args.items() if k not in VOLATILE}
    return json.dumps({"tool": tool, "args": kept}, sort_keys=True, separators=(",", ":"))


def prototype_vectors(embedder: Embedder, pool: Pool, cache: Path) -> np.ndarray[Any, Any]:
    """One whole-call vector per pool item (the item's call in session 0), kept in ``cache``."""
    if cache.exists():
        vectors: np.ndarray[Any, Any] = np.load(cache)
        if vectors.shape[0] == len(pool.items):
            return vectors
    layout = Layout(len(pool.items), 1)
    rows: list[np.ndarray[Any, Any]] = [np.zeros(0)] * len(pool.items)
    for session in range(len(pool.items)):
        tool, args, number = stored_call(layout, pool, session, 0)
        rows[number] = embedder.embed([gptcache_prompt(tool, args)])[0]
    vectors = np.stack(rows).astype(np.float32)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors)
    return vectors


def _create_tables(db: Path) -> None:
    from gptcache.manager.scalar_data.sql_storage import SQLStorage

    SQLStorage(db_type="sqlite", url=f"sqlite:///{db}")


def build_gptcache_store(
    data_dir: Path,
    layout: Layout,
    pool: Pool,
    prototypes: np.ndarray[Any, Any],
    exact: dict[tuple[int, int], np.ndarray[Any, Any]],
    *,
    progress: Callable[[int], None] | None = None,
) -> float:
    """Write ``layout``'s calls into GPTCache's sqlite.db and faiss.index; return seconds taken.

    Calls named in ``exact`` (session, index) get their own whole-call vector; the others reuse
    their pool item's prototype vector, as the tooldedup preload reuses pool vectors.
    """
    import faiss

    started = time.perf_counter()
    data_dir.mkdir(parents=True, exist_ok=True)
    db = data_dir / "sqlite.db"
    for path in (db, data_dir / "faiss.index"):
        path.unlink(missing_ok=True)
    _create_tables(db)
    vectors = np.empty((layout.total, _DIM), dtype=np.float32)
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("BEGIN")
        now = datetime.now().isoformat(sep=" ")
        batch: list[tuple[Any, ...]] = []
        answers: list[tuple[Any, ...]] = []
        for row_id, (tool, args, vector) in enumerate(_calls(layout, pool, prototypes, exact), 1):
            vector = vector / np.linalg.norm(vector)
            vectors[row_id - 1] = vector
            batch.append((row_id, gptcache_prompt(tool, args), now, now, vector.tobytes()))
            answers.append((row_id, json.dumps({"call_id": f"call_{row_id}"}), 0))
            if len(batch) == 10_000:
                _flush(conn, batch, answers, progress)
        _flush(conn, batch, answers, progress)
        conn.execute("COMMIT")
    finally:
        conn.close()
    index = faiss.index_factory(_DIM, "IDMap,Flat", faiss.METRIC_L2)
    index.add_with_ids(vectors, np.arange(1, layout.total + 1, dtype=np.int64))
    faiss.write_index(index, str(data_dir / "faiss.index"))
    return time.perf_counter() - started


def _calls(
    layout: Layout,
    pool: Pool,
    prototypes: np.ndarray[Any, Any],
    exact: dict[tuple[int, int], np.ndarray[Any, Any]],
) -> Iterable[tuple[str, dict[str, Any], np.ndarray[Any, Any]]]:
    for session in range(layout.sessions):
        for index in range(layout.session_size):
            tool, args, number = stored_call(layout, pool, session, index)
            vector = exact.get((session, index))
            yield tool, args, prototypes[number] if vector is None else vector


def _flush(
    conn: sqlite3.Connection,
    batch: list[tuple[Any, ...]],
    answers: list[tuple[Any, ...]],
    progress: Callable[[int], None] | None,
) -> None:
    conn.executemany(
        "INSERT INTO gptcache_question (id, question, create_on, last_access, embedding_data,"
        " deleted) VALUES (?,?,?,?,?,0)",
        batch,
    )
    conn.executemany(
        "INSERT INTO gptcache_answer (question_id, answer, answer_type) VALUES (?,?,?)", answers
    )
    if progress is not None:
        progress(len(batch))
    batch.clear()
    answers.clear()
