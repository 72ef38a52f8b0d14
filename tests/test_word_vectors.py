"""The shipped single-word table: the model's own vectors, checked, and used by the verifier."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from tooldedup.index import OnnxEmbedder, PackagedModel, packaged_model_dir
from tooldedup.index.packaged_model import file_sha256
from tooldedup.index.wiring import word_cosine
from tooldedup.index.word_vectors import WORD_VECTORS_NAME, WordVectors, build, vocabulary_words


@pytest.fixture(scope="module")
def model() -> OnnxEmbedder:
    return OnnxEmbedder.packaged()


def test_shipped_files_match_their_header(word_vectors: WordVectors) -> None:
    folder = packaged_model_dir()
    meta = json.loads((folder / WORD_VECTORS_NAME).read_text(encoding="utf-8"))
    assert file_sha256(folder / meta["vectors"]) == meta["vectors_sha256"]
    assert file_sha256(folder / meta["words"]) == meta["words_sha256"]
    assert meta["model_id"] == PackagedModel.load().model_id == word_vectors.model_id
    assert len(word_vectors) == len(vocabulary_words(PackagedModel.load().tokenizer_path)) > 20_000


# onnxruntime's int8 kernels round differently by CPU: the table was built where they
# agree with it within 2e-3 a component; on an AVX2 CPU without VNNI (where the u8s8 kernel
# saturates) a word's vector is the table's at cosine 0.93 to 1.0 (median 0.986, 3,000
# words), and a pair's cosine moves by up to 0.05 (p99 of 5,000 pairs; 0.077 at most).
_KERNEL_DRIFT_COSINE = 0.05


def test_each_vector_is_the_models_own(model: OnnxEmbedder, word_vectors: WordVectors) -> None:
    """Each stored vector is nearer the model's vector of its own word than of any other."""
    words = vocabulary_words(PackagedModel.load().tokenizer_path)
    sample = random.Random(7).sample(words, 200)
    computed = model.embed(sample)
    stored = [word_vectors.get(word) for word in sample]
    assert all(vector is not None and vector.dtype == np.float32 for vector in stored)
    table = np.stack([vector for vector in stored if vector is not None])
    table /= np.linalg.norm(table, axis=1, keepdims=True)
    cosines = table @ computed.T
    assert list(cosines.argmax(axis=1)) == list(range(len(sample)))
    assert cosines.diagonal().min() > 0.9


def test_cosines_from_the_table_equal_the_models(model: OnnxEmbedder) -> None:
    from_table = word_cosine(model, WordVectors.load())
    from_model = word_cosine(model)
    pairs = [("buy", "purchase"), ("send", "forward"), ("cancel", "confirm"), ("dog", "cat")]
    for a, b in pairs:
        assert from_table(a, b) == pytest.approx(from_model(a, b), abs=_KERNEL_DRIFT_COSINE)


@pytest.mark.parametrize("word", ["Buy", "e-mail", "x", "qzxqzxqzx", "café", ""])
def test_words_outside_the_table_go_to_the_model(
    model: OnnxEmbedder, word_vectors: WordVectors, word: str
) -> None:
    assert word_vectors.get(word) is None
    cosine = word_cosine(model, word_vectors)(word, "purchase")
    vectors = model.embed([word, "purchase"])
    assert cosine == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-6)


def test_a_table_of_another_model_is_not_used(model: OnnxEmbedder) -> None:
    words = ["buy", "purchase"]
    wrong = WordVectors("another-model", words, np.array([[1.0, 0.0], [0.0, 1.0]], np.float16))
    vectors = model.embed(words)
    assert word_cosine(model, wrong)("buy", "purchase") == pytest.approx(
        float(vectors[0] @ vectors[1]), abs=1e-6
    )


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir(parents=True)
    meta = json.loads((packaged_model_dir() / WORD_VECTORS_NAME).read_text(encoding="utf-8"))
    for name in (WORD_VECTORS_NAME, meta["words"], meta["vectors"]):
        shutil.copyfile(packaged_model_dir() / name, folder / name)
    return folder


@pytest.mark.parametrize(
    "damage",
    [
        "no header",
        "header not json",
        "words edited",
        "vectors truncated",
        "no vectors",
        "dims missing",
        "dims not a number",
        "model id missing",
        "vectors not of unit length",
        "vectors an archive",
    ],
)
def test_a_damaged_table_is_not_loaded(tmp_path: Path, damage: str) -> None:
    folder = _copy(tmp_path)
    meta = json.loads((folder / WORD_VECTORS_NAME).read_text(encoding="utf-8"))
    if damage == "no header":
        (folder / WORD_VECTORS_NAME).unlink()
    elif damage == "header not json":
        (folder / WORD_VECTORS_NAME).write_text("{", encoding="utf-8")
    elif damage == "words edited":
        words = folder / meta["words"]
        words.write_text(words.read_text(encoding="utf-8").replace("purchase", "purchaze"))
    elif damage == "vectors truncated":
        np.save(folder / meta["vectors"], np.zeros((3, 384), np.float16))
    elif damage == "no vectors":
        (folder / meta["vectors"]).unlink()
    elif damage in ("dims missing", "dims not a number", "model id missing"):
        if damage == "dims missing":
            del meta["dims"]
        elif damage == "dims not a number":
            meta["dims"] = "x"
        else:
            del meta["model_id"]
        (folder / WORD_VECTORS_NAME).write_text(json.dumps(meta), encoding="utf-8")
    elif damage == "vectors not of unit length":
        vectors = np.load(folder / meta["vectors"])
        np.save(folder / meta["vectors"], (vectors * 2).astype(np.float16))
    else:
        np.savez(folder / "v.npz", np.load(folder / meta["vectors"]))
        (folder / meta["vectors"]).unlink()
        (folder / "v.npz").rename(folder / meta["vectors"])
    assert WordVectors.load(folder) is None
    assert WordVectors.load(_copy(tmp_path / "intact")) is not None


def test_build_writes_a_table_that_loads(tmp_path: Path, model: OnnxEmbedder) -> None:
    meta = build(tmp_path, model, ["buy", "purchase", "send"])
    table = WordVectors.load(tmp_path)
    assert table is not None
    assert len(table) == 3
    assert meta["model_id"] == model.model_id
    bought = table.get("buy")
    assert bought is not None
    assert np.max(np.abs(bought - model.embed(["buy"])[0])) < 2e-3


def test_a_table_of_another_model_is_not_even_read(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    assert WordVectors.load(folder, model_id="another-model") is None
    loaded = WordVectors.load(folder, model_id=PackagedModel.load().model_id)
    assert loaded is not None


def test_long_words_are_answered_but_not_remembered(model: OnnxEmbedder) -> None:
    calls: list[tuple[str, ...]] = []

    class Counting:
        model_id, dims = model.model_id, model.dims

        def embed(self, texts: list[str]) -> np.ndarray:
            calls.append(tuple(texts))
            return model.embed(texts)

    cosine = word_cosine(Counting(), None)
    long_word = "a" * 40
    for _ in range(3):
        cosine("buy", "purchase")
        cosine(long_word, "purchase")
    assert calls.count(("buy", "purchase")) == 1
    assert calls.count((long_word, "purchase")) == 3
