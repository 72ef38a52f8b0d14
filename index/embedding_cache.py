"""An ``Embedder`` wrapper that caches vectors by text hash, in memory and in the database."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from tooldedup.dedup.canonical import stable_hash
from tooldedup.dedup.ledger.database import Database
from tooldedup.dedup.protocols import Embedder, Vectors

__all__ = ["CachedEmbedder", "SqlVectorStore"]


class SqlVectorStore:
    """Vectors by (model, text hash) in the ledger's database, shared by every replica.

    Restarts and other replicas need no re-embedding. The table comes from the ledger's
    migrations; the store borrows the ledger's database and leaves closing it to the ledger.
    """

    def __init__(self, db: Database, *, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, Vectors]:
        """The stored vectors among ``hashes``."""
        found: dict[str, Vectors] = {}
        for start in range(0, len(hashes), 500):
            chunk = list(hashes[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT text_hash, vector FROM embeddings"
                f" WHERE model = ? AND text_hash IN ({marks})",
                [model, *chunk],
            ).rows
            for row in rows:
                found[row["text_hash"]] = np.frombuffer(row["vector"], dtype=np.float32)
        return found

    def put_many(self, model: str, items: Iterable[tuple[str, Vectors]]) -> None:
        """Store vectors; existing ones are kept."""
        now = self._clock()
        rows = [
            (model, key, int(v.shape[-1]), np.asarray(v, np.float32).tobytes(), now)
            for key, v in items
        ]
        if rows:
            self._db.executemany(
                "INSERT INTO embeddings (model, text_hash, dim, vector, used_at)"
                " VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING",
                rows,
            )


class CachedEmbedder:
    """Embeds only texts it has not seen, in one call to the wrapped embedder."""

    def __init__(
        self, inner: Embedder, store: SqlVectorStore | None = None, max_entries: int = 50_000
    ) -> None:
        self._inner = inner
        self._store = store
        self._max_entries = max_entries
        self._memory: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self.model_calls = 0

    @property
    def model_id(self) -> str:
        """The wrapped embedder's model id."""
        return self._inner.model_id

    @property
    def dims(self) -> int:
        """The wrapped embedder's vector size."""
        return self._inner.dims

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``, computing at most one batch of misses."""
        keys = [stable_hash(t) for t in texts]
        found: dict[str, Vectors] = {}
        with self._lock:
            for key in keys:
                vector = self._memory.get(key)
                if vector is not None:
                    self._memory.move_to_end(key)
                    found[key] = vector
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing and self._store is not None:
            found.update(self._store.get_many(self.model_id, missing))
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if todo:
            self.model_calls += 1
            computed = self._inner.embed(list(todo.values()))
            fresh = dict(zip(todo, computed, strict=True))
            found.update(fresh)
            if self._store is not None:
                self._store.put_many(self.model_id, fresh.items())
        with self._lock:
            for key in missing:
                self._memory[key] = found[key]
            while len(self._memory) > self._max_entries:
                self._memory.popitem(last=False)
        if not keys:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.stack([found[k] for k in keys])
