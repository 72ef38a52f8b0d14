"""The int8 ONNX MiniLM shipped inside the package: its files, manifest and checksum."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tooldedup.dedup.errors import ConfigurationError

__all__ = ["MANIFEST_NAME", "PackagedModel", "file_sha256", "packaged_model_dir"]

MANIFEST_NAME = "manifest.json"


def packaged_model_dir() -> Path:
    """The folder ``tooldedup.index.model`` that holds the shipped model files."""
    return Path(str(resources.files("tooldedup.index") / "model"))


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class PackagedModel:
    """A model folder described by its manifest (``index.build_model``, ``train_pair_model``)."""

    folder: Path
    model_id: str
    onnx_file: str
    onnx_sha256: str
    tokenizer_file: str
    tokenizer_sha256: str
    max_seq_length: int
    # The vector size of an embedder; a pair model has none.
    dims: int | None = None

    @property
    def onnx_path(self) -> Path:
        """The ONNX graph."""
        return self.folder / self.onnx_file

    @property
    def tokenizer_path(self) -> Path:
        """The ``tokenizers`` JSON file."""
        return self.folder / self.tokenizer_file

    @classmethod
    def load(cls, folder: Path | None = None) -> PackagedModel:
        """Read the manifest of ``folder`` (default: the shipped model)."""
        folder = packaged_model_dir() if folder is None else folder
        try:
            data = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
            model = cls(
                folder=folder,
                model_id=str(data["model_id"]),
                onnx_file=str(data["onnx"]["file"]),
                onnx_sha256=str(data["onnx"]["sha256"]),
                tokenizer_file=str(data["tokenizer"]["file"]),
                tokenizer_sha256=str(data["tokenizer"]["sha256"]),
                max_seq_length=int(data["max_seq_length"]),
                dims=None if data.get("dims") is None else int(data["dims"]),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"no usable model manifest in {folder}: {exc}") from None
        if not 8 <= model.max_seq_length <= 512:
            raise ConfigurationError(f"max_seq_length must be 8 to 512 in {folder}")
        return model

    def verify(self) -> None:
        """Check both files against the manifest's checksums; a damaged install fails loudly."""
        for path, expected in (
            (self.onnx_path, self.onnx_sha256),
            (self.tokenizer_path, self.tokenizer_sha256),
        ):
            try:
                actual = file_sha256(path)
            except OSError as exc:
                raise ConfigurationError(f"cannot read model file {path}: {exc}") from None
            if actual != expected:
                raise ConfigurationError(
                    f"model file {path} does not match its manifest (sha256 {actual[:12]}…,"
                    f" expected {expected[:12]}…): reinstall tooldedup"
                )
