"""HTTP settings: the service's settings plus what only the HTTP edge needs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tooldedup.index.settings import EmbedderBackend, ServiceSettings

__all__ = ["EmbedderBackend", "Settings"]


@dataclass(frozen=True, kw_only=True)
class Settings(ServiceSettings):
    """Everything ``create_app`` needs; no global state, no files opened on import."""

    api_key: str | None = None
    max_body_bytes: int = 1 << 20

    @staticmethod
    def api_key_from(environ: Mapping[str, str], key_file: Path | None) -> str | None:
        """The API key from a file (first line) or ``TOOLDEDUP_API_KEY``; file wins."""
        if key_file is not None:
            key = key_file.read_text(encoding="utf-8").strip()
            if not key:
                raise ValueError(f"API key file {key_file} is empty")
            return key
        return environ.get("TOOLDEDUP_API_KEY") or None
