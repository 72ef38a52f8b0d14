"""The service's settings: a frozen value object with no imports of model or index code."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = ["EmbedderBackend", "ServiceSettings", "default_cache_dir", "parse_db"]


class EmbedderBackend(StrEnum):
    """Which embedding backend serves the semantic stage."""

    ONNX_INT8 = "onnx-int8"
    ONNX = "onnx"
    TORCH = "torch"


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/tooldedup``, or ``~/.cache/tooldedup``."""
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tooldedup"


def parse_db(value: str) -> tuple[Path | None, str | None]:
    """``--db``: a ``postgresql://`` URL, a ``sqlite:///path`` URL, or a plain file path.

    Returns (SQLite path, PostgreSQL URL), exactly one of them set.
    """
    text = value.strip()
    if not text:
        raise ValueError("--db is empty")
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in ("postgresql", "postgres"):
        return None, text
    if scheme == "sqlite":
        path = text[len("sqlite://") :]
        if not path.startswith("/") or path == "/":
            raise ValueError(
                "a SQLite URL names a file: sqlite:///relative.db or sqlite:////abs.db"
            )
        return Path(path[1:]), None
    if scheme:
        raise ValueError(
            f"--db: unknown scheme {scheme!r} (use postgresql://, sqlite:/// or a path)"
        )
    return Path(text), None


@dataclass(frozen=True, kw_only=True)
class ServiceSettings:
    """What the service needs, short of HTTP: storage, policies, model and judge."""

    db_path: Path = Path("tooldedup.db")
    # A PostgreSQL URL (any libpq URL); when set, the ledger lives there, not in ``db_path``.
    postgres_url: str | None = None
    # Per process: connections in the pool, and how long a request waits for one (or for
    # an unreachable database) before it is answered 503.
    db_pool_size: int = 10
    db_timeout_seconds: float = 2.0
    policy_path: Path | None = None
    # A sentence-transformers folder; None means the int8 model shipped in the package.
    model_path: Path | None = None
    embedder: EmbedderBackend = EmbedderBackend.ONNX_INT8
    embed_threads: int = 2
    # The pair model (a cross-encoder) reads each fuzzy or semantic match the rules let
    # through: under ``min_logit_same`` it rules the match out, at ``min_logit_confirm`` it
    # confirms it (which a match under the borderline band needs). ``pair_model_path``: a
    # folder from ``calibration.train_pair_model`` instead of the shipped one. Loaded by
    # default, and read only for the tools whose policy says ``pair_model = true`` (off by
    # default: a read costs about 5 ms, more than 0.1's whole semantic check); off here, no
    # tool gets it.
    pair_model: bool = True
    pair_model_path: Path | None = None
    min_logit_same: float = -2.5
    # None: the pair model never confirms, and a judge decides every open borderline match.
    min_logit_confirm: float | None = None
    # Where an ONNX export of ``model_path`` is kept (only used for exports).
    cache_dir: Path | None = None
    # Calls (and the vectors and keys only they use) are kept this long, and never less
    # than any tool's dedup window; the decision log has its own retention.
    retention_seconds: float = 7 * 86_400.0
    log_retention_seconds: float = 30 * 86_400.0
    purge_interval_seconds: float = 600.0
    # Health, policies set elsewhere, and purges are looked at this often.
    refresh_interval_seconds: float = 2.0
    # How often the maintenance thread looks whether a checkpoint is due (SQLite: after 100
    # commits or a second). Often, so that each is small: every 2 s, under a thousand checks
    # a second, each copied tens of megabytes and stalled the checks of those moments by
    # 20-50 ms (p99 of an exact duplicate at c1: 24 ms every 2 s, 2.6 ms every 0.1 s).
    checkpoint_interval_seconds: float = 0.1
    judge_base_url: str | None = None
    judge_model: str | None = None
    judge_api_key_env: str | None = "TOOLDEDUP_JUDGE_API_KEY"
    judge_timeout_seconds: float = 2.0
    judge_max_tokens: int = 200
    judge_cooldown_seconds: float = 30.0

    def resolved_cache_dir(self, environ: Mapping[str, str]) -> Path:
        """Where ONNX exports are kept."""
        return self.cache_dir if self.cache_dir is not None else default_cache_dir(environ)
