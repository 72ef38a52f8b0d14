"""Embedders and vector indexes behind the semantic stage."""

from index.embedding_cache import CachedEmbedder, SqliteVectorStore
from index.faiss_index import FaissGroupIndex
from index.model_path import packaged_model_path
from index.onnx_embedder import OnnxEmbedder
from index.st_embedder import SentenceTransformerEmbedder

__all__ = [
    "CachedEmbedder",
    "FaissGroupIndex",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "SqliteVectorStore",
    "packaged_model_path",
]
