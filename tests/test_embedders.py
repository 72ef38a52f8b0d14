"""The real packaged model through each backend, and the embedding cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tooldedup.dedup.canonical import stable_hash
from tooldedup.dedup.ledger import SqliteLedger
from tooldedup.dedup.protocols import Embedder
from tooldedup.index import CachedEmbedder, SentenceTransformerEmbedder, SqlVectorStore
from tooldedup.index.onnx_embedder import OnnxEmbedder
from tooldedup.index.source_model import source_model_dir
from tooldedup.index.wiring import build_reader

TEXTS = [
    "Hi Bob, the Q3 report is attached.",
    "Please cancel my subscription effective immediately.",
]


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    return SentenceTransformerEmbedder(source_model_dir())


def test_vectors_are_unit_length(embedder: Embedder) -> None:
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_onnx_int8_agrees_with_torch(embedder: Embedder, torch_embedder: Embedder) -> None:
    cosines = np.sum(embedder.embed(TEXTS) * torch_embedder.embed(TEXTS), axis=1)
    assert np.all(cosines >= 0.98)


def test_single_and_batched_calls_agree(embedder: Embedder) -> None:
    batched = embedder.embed(TEXTS)
    single = np.stack([embedder.embed([t])[0] for t in TEXTS])
    assert np.array_equal(batched, single)


def test_paraphrase_scores_above_unrelated(embedder: Embedder) -> None:
    a, b, c = embedder.embed(
        [
            "Hi Bob, the Q3 report is attached. Let me know if you have any questions.",
            "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
            "Your pizza order is on its way and will arrive soon.",
        ]
    )
    assert float(a @ b) > 0.85
    assert float(a @ c) < 0.3


def test_cache_embeds_only_new_texts(embedder: Embedder, tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "vectors.db")
    cached = CachedEmbedder(embedder, SqlVectorStore(ledger.db))
    first = cached.embed(TEXTS)
    assert cached.model_calls == 1
    again = cached.embed([TEXTS[1], TEXTS[0], TEXTS[0]])
    assert cached.model_calls == 1
    assert np.array_equal(again[0], first[1])
    # A claim's texts are stored; the others (a duplicate's, say) stay in memory.
    cached.persist(TEXTS[:1])
    cached.close()
    ledger.close()
    # A new process finds the stored vectors in SQLite and never calls the model for them.
    reopened = SqliteLedger(tmp_path / "vectors.db")
    fresh = CachedEmbedder(embedder, SqlVectorStore(reopened.db))
    assert np.array_equal(fresh.embed(TEXTS[:1]), first[:1])
    assert fresh.model_calls == 0
    assert np.allclose(fresh.embed(TEXTS[1:]), first[1:], atol=1e-6)
    assert fresh.model_calls == 1
    reopened.close()


def test_a_checks_own_texts_skip_the_store(embedder: Embedder, tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "vectors.db")
    cached = CachedEmbedder(embedder, SqlVectorStore(ledger.db))
    first = cached.embed(TEXTS)
    cached.persist(TEXTS)
    cached.close()
    fresh = CachedEmbedder(embedder, SqlVectorStore(ledger.db))
    # A check's texts: memory or the model, never a lookup in the store.
    assert np.allclose(fresh.embed_new(TEXTS[:1]), first[:1], atol=1e-6)
    assert fresh.model_calls == 1
    # A stored call's texts (loading its group): the store, then memory for the check.
    assert np.array_equal(fresh.embed(TEXTS[1:]), first[1:])
    assert np.array_equal(fresh.embed_new(TEXTS[1:]), first[1:])
    assert fresh.model_calls == 1
    fresh.close()
    ledger.close()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Hi Bob, the Q3 report is attached.",
        "déjà vu at the café, 3 PM",
        "🙂 thanks!",
        "word " * 600,  # past the model's input: truncated as a plain encode truncates
        "ยกเลิกคำสั่งซื้อของฉัน",
    ],
)
def test_the_model_reads_the_tokens_the_coverage_test_read(embedder: Embedder, text: str) -> None:
    assert isinstance(embedder, OnnxEmbedder)
    tokenizer = embedder.tokenizer
    shared = tokenizer.post_process(embedder.tokens(text))
    plain = tokenizer.encode(text)
    assert (shared.ids, shared.attention_mask) == (plain.ids, plain.attention_mask)


def test_a_text_is_tokenized_once_for_the_coverage_test_and_the_model(
    embedder: Embedder,
) -> None:
    assert isinstance(embedder, OnnxEmbedder)
    text = "Please move the standup to Thursday at 10, the room is booked."
    before = embedder._tokens.cache_info()
    assert build_reader(embedder).unread(text) is None
    embedder.embed([text])
    after = embedder._tokens.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)


def test_a_stored_calls_vector_computed_again_goes_back_to_the_store(
    embedder: Embedder, tmp_path: Path
) -> None:
    ledger = SqliteLedger(tmp_path / "vectors.db")
    cached = CachedEmbedder(embedder, SqlVectorStore(ledger.db))
    # Embedded to load a group (its stored vector purged): handed back by ``keep``.
    cached.embed(TEXTS)
    cached.keep(TEXTS[:1])
    cached.keep(["never embedded here"])
    cached.close()  # the background writer stores what it was handed
    rows = ledger.db.execute("SELECT text_hash FROM embeddings").rows
    assert [row["text_hash"] for row in rows] == [stable_hash(TEXTS[0])]
    ledger.close()
