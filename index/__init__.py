"""Embedders and vector indexes behind the semantic stage, and the wiring of the service.

Names are imported on first use: reading settings must not load onnxruntime or faiss.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooldedup.index.embedding_cache import CachedEmbedder, SqlVectorStore
    from tooldedup.index.faiss_index import FaissGroupIndex
    from tooldedup.index.onnx_embedder import OnnxEmbedder
    from tooldedup.index.packaged_model import PackagedModel, packaged_model_dir
    from tooldedup.index.pair_model import OnnxPairScorer, load_pair_model, pair_model_dir
    from tooldedup.index.settings import EmbedderBackend, ServiceSettings
    from tooldedup.index.source_model import source_model_dir
    from tooldedup.index.st_embedder import SentenceTransformerEmbedder
    from tooldedup.index.wiring import Service, build_embedder, build_judge, build_service

_HOMES = {
    "CachedEmbedder": "embedding_cache",
    "SqlVectorStore": "embedding_cache",
    "FaissGroupIndex": "faiss_index",
    "OnnxEmbedder": "onnx_embedder",
    "PackagedModel": "packaged_model",
    "packaged_model_dir": "packaged_model",
    "OnnxPairScorer": "pair_model",
    "load_pair_model": "pair_model",
    "pair_model_dir": "pair_model",
    "EmbedderBackend": "settings",
    "ServiceSettings": "settings",
    "source_model_dir": "source_model",
    "SentenceTransformerEmbedder": "st_embedder",
    "Service": "wiring",
    "build_embedder": "wiring",
    "build_judge": "wiring",
    "build_service": "wiring",
}

__all__ = [
    "CachedEmbedder",
    "EmbedderBackend",
    "FaissGroupIndex",
    "OnnxEmbedder",
    "OnnxPairScorer",
    "PackagedModel",
    "SentenceTransformerEmbedder",
    "Service",
    "ServiceSettings",
    "SqlVectorStore",
    "build_embedder",
    "build_judge",
    "build_service",
    "load_pair_model",
    "packaged_model_dir",
    "pair_model_dir",
    "source_model_dir",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
