"""An ``Embedder`` wrapper that caches vectors by text hash, in memory and in the database."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from tooldedup.dedup.canonical import stable_hash
from tooldedup.dedup.ledger.database import Database
from tooldedup.dedup.protocols import Embedder, Vectors

__all__ = ["CachedEmbedder", "SqlVectorStore"]

logger = logging.getLogger(__name__)
_BATCH_SECONDS = 0.05


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
        # In key order: two writers inserting overlapping sets then never wait on each
        # other in opposite orders (a deadlock PostgreSQL would break with an error).
        rows = [
            (model, key, int(v.shape[-1]), np.asarray(v, np.float32).tobytes(), now)
            for key, v in sorted(items, key=lambda item: item[0])
        ]
        if rows:
            # Inside a claim's transaction this is a savepoint: a failure here cannot
            # spoil the claim.
            with self._db.write():
                self._db.executemany(
                    "INSERT INTO embeddings (model, text_hash, dim, vector, used_at)"
                    " VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING",
                    rows,
                )


class CachedEmbedder:
    """Embeds only texts it has not seen, in one call to the wrapped embedder.

    Vectors are kept in memory; ``persist`` writes a claimed call's to the store at once, so
    another replica loading that call never calls the model for it. A check's other vectors
    stay in memory only: most checks end as duplicates, whose texts no group ever loads, and
    storing each would cost every check a write. A background thread writes what ``keep``
    hands it (a stored call's vector computed again) and retries a failed ``persist``, off
    the request path.
    """

    def __init__(
        self, inner: Embedder, store: SqlVectorStore | None = None, max_entries: int = 50_000
    ) -> None:
        self._inner = inner
        self._store = store
        self._max_entries = max_entries
        self._memory: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self.model_calls = 0
        self._unwritten: dict[str, Vectors] = {}
        # Computed here and not yet stored: what ``persist`` and ``keep`` may write.
        self._unstored: dict[str, None] = {}
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._closing = threading.Event()
        self._writer: threading.Thread | None = None

    @property
    def model_id(self) -> str:
        """The wrapped embedder's model id."""
        return self._inner.model_id

    @property
    def dims(self) -> int:
        """The wrapped embedder's vector size."""
        return self._inner.dims

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``: from memory, else the store, else one batch of the model."""
        return self._vectors(texts, self._store)

    def embed_new(self, texts: Sequence[str]) -> Vectors:
        """Vectors for the texts a check compares: from memory, else the model, never the store."""
        # The store holds claimed calls' texts; a check that repeats one whole is found by
        # its hash before any vector, so for a compared check's texts the store's answer is
        # nearly always "none", at the price of a statement per check.
        return self._vectors(texts, None)

    def _vectors(self, texts: Sequence[str], store: SqlVectorStore | None) -> Vectors:
        keys = [stable_hash(t) for t in texts]
        found: dict[str, Vectors] = {}
        with self._lock:
            for key in keys:
                vector = self._memory.get(key)
                if vector is not None:
                    self._memory.move_to_end(key)
                    found[key] = vector
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing and store is not None:
            found.update(store.get_many(self.model_id, missing))
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if todo:
            self.model_calls += 1
            computed = self._inner.embed(list(todo.values()))
            found.update(zip(todo, computed, strict=True))
        with self._lock:
            for key in missing:
                self._memory[key] = found[key]
            while len(self._memory) > self._max_entries:
                self._memory.popitem(last=False)
            if len(self._unstored) + len(todo) > self._max_entries:
                self._unstored.clear()  # a cache: the oldest are computed again if needed
            self._unstored.update(dict.fromkeys(todo))
        if not keys:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def persist(self, texts: Sequence[str]) -> None:
        """Write these texts' vectors to the store now (a second write of one is a no-op).

        Best effort: the claim these texts belong to is already stored, so a failure here
        only leaves the vectors to the background writer.
        """
        if self._store is None:
            return
        keys = dict.fromkeys(stable_hash(t) for t in texts)
        with self._lock:
            due = {k: self._memory[k] for k in keys if k in self._memory}
            for key in due:
                self._unwritten.pop(key, None)
                self._unstored.pop(key, None)
        if not due:
            return
        try:
            self._store.put_many(self.model_id, due.items())
        except Exception:
            logger.warning("could not store %d vectors now; retrying later", len(due))
            with self._lock:
                if not self._closed:
                    if len(self._unwritten) < self._max_entries:  # else: a cache, let them go
                        self._unwritten.update(due)
                    self._start_writer()
                    self._wake.notify()

    def keep(self, texts: Sequence[str]) -> None:
        """Write behind the vectors of ``texts`` that were computed here and never stored
        (a stored call's text embedded again: its stored vector was purged, or never
        written); the others are in the store already."""
        if self._store is None:
            return
        with self._lock:
            if self._closed:
                return
            for key in dict.fromkeys(stable_hash(t) for t in texts):
                if key in self._unstored and key in self._memory:
                    del self._unstored[key]
                    if len(self._unwritten) < self._max_entries:  # else: a cache, let go
                        self._unwritten[key] = self._memory[key]
            if self._unwritten:
                self._start_writer()
                self._wake.notify()

    def _start_writer(self) -> None:
        if self._writer is None:
            self._writer = threading.Thread(
                target=self._write_behind, name="tooldedup-vectors", daemon=True
            )
            self._writer.start()

    def _write_behind(self) -> None:
        assert self._store is not None
        while True:
            with self._lock:
                while not self._unwritten and not self._closed:
                    self._wake.wait()
                if not self._unwritten:
                    return
            # Let a batch gather: one write of many vectors costs the database far less than
            # one per check.
            self._closing.wait(_BATCH_SECONDS)
            with self._lock:
                batch, self._unwritten = self._unwritten, {}
            try:
                self._store.put_many(self.model_id, batch.items())
            except Exception:
                # A cache write: the vectors stay in memory, and are computed again elsewhere.
                logger.warning("could not store %d vectors", len(batch), exc_info=True)

    def close(self) -> None:
        """Write what is left, then stop the writer (before the store's database closes)."""
        with self._lock:
            self._closed = True
            self._closing.set()
            self._wake.notify()
            writer = self._writer
        if writer is not None:
            writer.join()
