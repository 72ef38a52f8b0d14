"""The HTTP edge: FastAPI app, settings and CLI.

``create_app`` is imported on first use, so the CLI's light commands (``export-log``) never
load the model runtime or faiss.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tooldedup.api.settings import EmbedderBackend, Settings

if TYPE_CHECKING:
    from tooldedup.api.app import create_app

__all__ = ["EmbedderBackend", "Settings", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from tooldedup.api.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
