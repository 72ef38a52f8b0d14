"""Settings cross into worker processes unchanged."""

from __future__ import annotations

from pathlib import Path

from tooldedup.api.settings import EmbedderBackend, Settings
from tooldedup.api.workers import settings_from_json, settings_to_json


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
