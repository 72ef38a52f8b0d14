"""Service settings: one frozen value object, built from flags and the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = ["EmbedderBackend", "Settings"]


class EmbedderBackend(StrEnum):
    """Which embedding backend serves the semantic stage."""

    ONNX_INT8 = "onnx-int8"
    ONNX = "onnx"
    TORCH = "torch"


def _default_cache_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tooldedup"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything ``create_app`` needs; no global state, no files opened on import."""

    db_path: Path = Path("tooldedup.db")
    policy_path: Path | None = None
    api_key: str | None = None
    model_path: Path | None = None
    embedder: EmbedderBackend = EmbedderBackend.ONNX_INT8
    embed_threads: int = 2
    cache_dir: Path | None = None
    retention_seconds: float = 7 * 86_400.0
    purge_interval_seconds: float = 600.0
    checkpoint_interval_seconds: float = 2.0
    max_body_bytes: int = 1 << 20
    judge_base_url: str | None = None
    judge_model: str | None = None
    judge_api_key_env: str | None = "TOOLDEDUP_JUDGE_API_KEY"
    judge_timeout_seconds: float = 2.0
    judge_max_tokens: int = 200
    judge_cooldown_seconds: float = 30.0

    def resolved_cache_dir(self, environ: Mapping[str, str] = os.environ) -> Path:
        """Where the exported ONNX model is kept."""
        return self.cache_dir if self.cache_dir is not None else _default_cache_dir(environ)

    @staticmethod
    def api_key_from(environ: Mapping[str, str], key_file: Path | None) -> str | None:
        """The API key from a file (first line) or ``TOOLDEDUP_API_KEY``; file wins."""
        if key_file is not None:
            key = key_file.read_text(encoding="utf-8").strip()
            if not key:
                raise ValueError(f"API key file {key_file} is empty")
            return key
        return environ.get("TOOLDEDUP_API_KEY") or None
