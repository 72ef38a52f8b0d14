"""Settings handed to worker processes, and the app factory each worker calls.

``tooldedup serve --workers N`` lets uvicorn start N processes on one socket; each builds
its own app from the settings the parent put in its environment.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from tooldedup.api.app import create_app
from tooldedup.api.settings import EmbedderBackend, Settings

__all__ = ["SETTINGS_ENV", "app_from_environment", "settings_from_json", "settings_to_json"]

SETTINGS_ENV = "TOOLDEDUP_WORKER_SETTINGS"
_PATHS = {"db_path", "policy_path", "model_path", "cache_dir"}


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    return value


def settings_to_json(settings: Settings) -> str:
    """The settings as JSON, for a worker's environment."""
    data = {f.name: _plain(getattr(settings, f.name)) for f in dataclasses.fields(settings)}
    return json.dumps(data)


def settings_from_json(text: str) -> Settings:
    """Settings back from ``settings_to_json``."""
    data: dict[str, Any] = json.loads(text)
    for name in _PATHS:
        if data.get(name) is not None:
            data[name] = Path(data[name])
    data["embedder"] = EmbedderBackend(data["embedder"])
    return Settings(**data)


def app_from_environment(environ: Mapping[str, str] | None = None) -> FastAPI:
    """A worker's app, from the settings its parent process passed down."""
    env = os.environ if environ is None else environ
    return create_app(settings_from_json(env[SETTINGS_ENV]))
