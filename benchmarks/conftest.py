"""Fixtures for the stage microbenchmarks, and a p50/p99 summary after pytest-benchmark's table."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.corpus import Pool
from benchmarks.report import percentile
from tooldedup.dedup.english.critical import critical_tokens
from tooldedup.dedup.ledger import SqliteLedger
from tooldedup.dedup.protocols import Embedder


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the ONNX export is kept: the user's cache, so the export happens once per machine."""
    return Path.home() / ".cache" / "tooldedup"


@pytest.fixture(scope="session")
def onnx_embedder(model_cache: Path) -> Embedder:
    """The service's default embedder: the shipped int8 MiniLM on onnxruntime."""
    from tooldedup.index.settings import ServiceSettings
    from tooldedup.index.wiring import build_embedder

    return build_embedder(ServiceSettings(cache_dir=model_cache))


@pytest.fixture(scope="session")
def torch_embedder() -> Embedder:
    """The fallback embedder: sentence-transformers on torch."""
    from tooldedup.index.source_model import source_model_dir
    from tooldedup.index.st_embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(source_model_dir())


@pytest.fixture(scope="session")
def plain_texts() -> list[str]:
    """Email bodies from the benchmark corpus with no numbers or days in them."""
    pool = Pool(3000)
    texts = [i.text() for i in pool.items if i.tool == "send_email"]
    return [t for t in texts if not critical_tokens(t)]


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[SqliteLedger]:
    """A fresh SQLite ledger file."""
    store = SqliteLedger(tmp_path / "ledger.db")
    yield store
    store.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print each benchmark's median and p99 per call (pytest-benchmark shows no p99)."""
    session = getattr(terminalreporter.config, "_benchmarksession", None)
    benchmarks = [b for b in getattr(session, "benchmarks", []) if b.stats.data]
    if not benchmarks:
        return
    terminalreporter.section("p50 and p99 per call")
    width = max(len(b.fullname.split("::")[-1]) for b in benchmarks)
    terminalreporter.write_line(f"{'benchmark':<{width}}  {'p50':>10}  {'p99':>10}  rounds")
    for bench in benchmarks:
        data = bench.stats.data
        name = bench.fullname.split("::")[-1]
        p50, p99 = percentile(data, 0.5), percentile(data, 0.99)
        terminalreporter.write_line(
            f"{name:<{width}}  {_human(p50):>10}  {_human(p99):>10}  {len(data)}"
        )


def _human(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"
