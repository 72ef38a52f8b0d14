"""The HTTP edge: FastAPI app, settings and CLI."""

from api.app import build_embedder, create_app
from api.settings import EmbedderBackend, Settings

__all__ = ["EmbedderBackend", "Settings", "build_embedder", "create_app"]
