"""Shared fixtures: one real embedding model, pair model and word table per test run, real
SQLite files under tmp_path, one real PostgreSQL server with a new database per test."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import settings as hypothesis_settings

from tests.helpers import MakeApp
from tests.postgres import LocalPostgres
from tooldedup.api.app import create_app
from tooldedup.api.settings import Settings
from tooldedup.dedup.ledger.postgres import PostgresLedger
from tooldedup.dedup.protocols import Embedder, PairScorer
from tooldedup.index.pair_model import OnnxPairScorer
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_embedder
from tooldedup.index.word_vectors import WordVectors

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Hypothesis keeps no example database in the checkout.
hypothesis_settings.register_profile("tooldedup", database=None)
hypothesis_settings.load_profile("tooldedup")


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """A real PostgreSQL server for the whole run; each test makes its own database."""
    server = LocalPostgres()
    yield server
    server.close()


@pytest.fixture
def postgres_url(postgres: LocalPostgres) -> Iterator[str]:
    """A new, empty PostgreSQL database, dropped after the test (a run makes hundreds)."""
    url = postgres.create_database()
    yield url
    postgres.drop_database(url)


@pytest.fixture(scope="session")
def ledger_template(postgres: LocalPostgres) -> str:
    """A database holding an empty ledger, migrated once per run: ``ledger_url`` copies it."""
    url = postgres.create_database()
    PostgresLedger(url).close()
    return url


@pytest.fixture
def ledger_url(postgres: LocalPostgres, ledger_template: str) -> Iterator[str]:
    """A new PostgreSQL database holding an empty, migrated ledger, dropped after the test.
    (``postgres_url`` is empty: there the migrations run, as on any new store.)"""
    url = postgres.create_database(template=ledger_template)
    yield url
    postgres.drop_database(url)


@pytest.fixture
def restored_gc() -> Iterator[None]:
    """The collector as it was, after a test that settles it as a serving process does."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this run keeps ONNX exports (the shipped model needs none)."""
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The shipped int8 MiniLM on onnxruntime, the service's default backend."""
    return build_embedder(ServiceSettings())


@pytest.fixture(scope="session")
def pair_scorer() -> PairScorer:
    """The shipped pair model, which the default verifier asks after its rules."""
    return OnnxPairScorer.packaged()


@pytest.fixture(scope="session")
def word_vectors() -> WordVectors:
    """The shipped single-word table, read once: every service the tests build shares it."""
    table = WordVectors.load()
    assert table is not None, "the shipped word table did not load"
    return table


@pytest.fixture(scope="session")
def make_app(embedder: Embedder, pair_scorer: PairScorer, word_vectors: WordVectors) -> MakeApp:
    """``create_app`` with this run's shared models; keyword arguments go through to it."""

    def make(settings: Settings, **options: Any) -> FastAPI:
        shared: dict[str, Any] = {
            "embedder": embedder,
            "pair_scorer": pair_scorer,
            "word_vectors": word_vectors,
        }
        return create_app(settings, **{**shared, **options})

    return make


@pytest.fixture
def settings(tmp_path: Path, model_cache: Path) -> Settings:
    """Settings with a fresh SQLite file."""
    return Settings(db_path=tmp_path / "ledger.db", cache_dir=model_cache)


@pytest.fixture(params=["sqlite", "postgres"])
def settings_on_both(request: pytest.FixtureRequest, tmp_path: Path, model_cache: Path) -> Settings:
    """Settings with a fresh SQLite file, then with a fresh PostgreSQL database (its empty
    ledger copied from one migrated once per run)."""
    if request.param == "postgres":
        url = request.getfixturevalue("ledger_url")
        return Settings(db_path=tmp_path / "unused.db", postgres_url=url, cache_dir=model_cache)
    return Settings(db_path=tmp_path / "ledger.db", cache_dir=model_cache)


@pytest.fixture
def client(settings: Settings, make_app: MakeApp) -> Iterator[TestClient]:
    """An HTTP client on a fresh app."""
    with TestClient(make_app(settings)) as test_client:
        yield test_client
