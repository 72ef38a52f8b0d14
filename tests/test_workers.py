"""Settings cross into worker processes unchanged."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tooldedup.api.settings import EmbedderBackend, Settings
from tooldedup.api.workers import (
    SETTINGS_ENV,
    app_from_environment,
    settings_file,
    settings_from_json,
    settings_to_json,
)


def test_settings_survive_the_trip_to_a_worker() -> None:
    settings = Settings(
        db_path=Path("/tmp/x.db"),
        postgres_url="postgresql://u@/db?host=/tmp",
        db_pool_size=3,
        db_timeout_seconds=0.5,
        policy_path=Path("p.toml"),
        embedder=EmbedderBackend.ONNX,
        api_key="k",
        judge_base_url=None,
    )
    assert settings_from_json(settings_to_json(settings)) == settings


def test_defaults_survive_too() -> None:
    assert settings_from_json(settings_to_json(Settings())) == Settings()


def test_the_settings_file_is_private_and_removed() -> None:
    settings = Settings(api_key="secret-key", postgres_url="postgresql://u:pw@/db?host=/tmp")
    with settings_file(settings) as path:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
        with open(path, encoding="utf-8") as source:
            assert settings_from_json(source.read()) == settings
    assert not os.path.exists(path)
    assert not os.path.exists(os.path.dirname(path))


# A worker settles its collector (``api/heap.py``); this process is the tests'.
@pytest.mark.usefixtures("restored_gc")
def test_a_worker_never_runs_a_check_on_its_event_loop(tmp_path: Path) -> None:
    """Workers share the store's locks: a check may wait on another process."""
    settings = Settings(db_path=tmp_path / "w.db", pair_model=False)
    with settings_file(settings) as path:
        app = app_from_environment({SETTINGS_ENV: path})
    assert app.state.dispatcher.inline is False
    with TestClient(app) as client:
        body = {"session_id": "s", "tool": "t", "args": {"note": "a short note"}}
        assert client.post("/v1/check", json=body).json()["decision"] == "proceed"
