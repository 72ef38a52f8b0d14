"""Settings handed to worker processes, and the app factory each worker calls.

``tooldedup serve --workers N`` lets uvicorn start N processes on one socket; each builds
its own app from the settings the parent wrote to a private file (mode 0600), whose path is
the only thing in the environment.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from tooldedup.api.app import create_app
from tooldedup.api.heap import settle_heap
from tooldedup.api.settings import EmbedderBackend, Settings
from tooldedup.dedup.errors import DedupError

__all__ = [
    "SETTINGS_ENV",
    "app_from_environment",
    "settings_file",
    "settings_from_json",
    "settings_to_json",
]

logger = logging.getLogger(__name__)
# uvicorn's exit code for a worker that failed to start: its supervisor stops, not respawns.
_STARTUP_FAILURE = 3

SETTINGS_ENV = "TOOLDEDUP_WORKER_SETTINGS"
_PATHS = {"db_path", "policy_path", "model_path", "pair_model_path", "cache_dir"}


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


@contextmanager
def settings_file(settings: Settings) -> Iterator[str]:
    """The settings in a file only this user can read, deleted after the block."""
    folder = tempfile.mkdtemp(prefix="tooldedup-workers-")  # mode 0700
    path = os.path.join(folder, "settings.json")
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(settings_to_json(settings))
        yield path
    finally:
        if os.path.exists(path):
            os.unlink(path)
        os.rmdir(folder)


def app_from_environment(environ: Mapping[str, str] | None = None) -> FastAPI:
    """A worker's app, from the settings file its parent process named."""
    env = os.environ if environ is None else environ
    with open(env[SETTINGS_ENV], encoding="utf-8") as source:
        settings = settings_from_json(source.read())
    try:
        app = create_app(settings)
    except DedupError as exc:
        logger.error("worker cannot start: %s", exc.message)
        sys.exit(_STARTUP_FAILURE)
    # Workers share the store's locks: a check may wait on another process's, so none runs
    # on the event loop's thread.
    app.state.dispatcher.inline = False
    settle_heap()
    return app
