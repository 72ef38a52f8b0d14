"""The int8 model shipped in the package: checksums, reproducible build, same vectors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tooldedup.dedup.errors import ConfigurationError
from tooldedup.index import OnnxEmbedder, PackagedModel, packaged_model_dir
from tooldedup.index.build_model import build

PAIRS = Path(__file__).resolve().parent.parent / "calibration" / "data" / "pairs.jsonl"


def _texts(count: int) -> list[str]:
    texts: list[str] = []
    for line in PAIRS.read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        for side in (pair["a"], pair["b"]):
            texts += [v for v in side.values() if isinstance(v, str) and len(v) > 3]
    return list(dict.fromkeys(texts))[:count]


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> PackagedModel:
    """Today's export, rebuilt from the sentence-transformers weights with torch."""
    folder = tmp_path_factory.mktemp("rebuilt-model")
    build(folder)
    return PackagedModel.load(folder)


def test_shipped_files_match_their_manifest() -> None:
    model = PackagedModel.load()
    model.verify()
    assert model.folder == packaged_model_dir()
    assert model.dims == 384
    assert model.max_seq_length == 256
    for name in ("LICENSE", "NOTICE.md"):
        assert (model.folder / name).stat().st_size > 0
    assert "Apache License" in (model.folder / "LICENSE").read_text(encoding="utf-8")


def test_the_build_script_reproduces_the_shipped_model(rebuilt: PackagedModel) -> None:
    shipped = PackagedModel.load()
    assert rebuilt.model_id == shipped.model_id
    assert rebuilt.tokenizer_sha256 == shipped.tokenizer_sha256
    assert rebuilt.onnx_sha256 == shipped.onnx_sha256


def test_vectors_stay_within_cosine_099_of_todays_export(rebuilt: PackagedModel) -> None:
    texts = _texts(300)
    assert len(texts) == 300
    shipped = OnnxEmbedder.packaged().embed(texts)
    exported = OnnxEmbedder.packaged(rebuilt).embed(texts)
    cosines = np.sum(shipped * exported, axis=1)
    assert cosines.shape == (300,)
    assert float(cosines.min()) >= 0.99


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("flip_byte", "does not match its manifest"),
        ("drop_onnx", "cannot read model file"),
        ("drop_manifest", "no usable model manifest"),
    ],
)
def test_a_damaged_model_folder_fails_loudly(tmp_path: Path, damage: str, message: str) -> None:
    folder = tmp_path / "model"
    shutil.copytree(packaged_model_dir(), folder)
    model = PackagedModel.load(folder)
    if damage == "flip_byte":
        data = bytearray(model.onnx_path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        model.onnx_path.write_bytes(bytes(data))
    elif damage == "drop_onnx":
        model.onnx_path.unlink()
    else:
        (folder / "manifest.json").unlink()
    with pytest.raises(ConfigurationError, match=message):
        OnnxEmbedder.packaged(PackagedModel.load(folder))
