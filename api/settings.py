"""HTTP settings: the service's settings plus what only the HTTP edge needs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tooldedup.dedup.access import bucket, validate_rate
from tooldedup.dedup.errors import InvalidInput
from tooldedup.index.settings import EmbedderBackend, ServiceSettings

__all__ = ["EmbedderBackend", "Settings"]


@dataclass(frozen=True, kw_only=True)
class Settings(ServiceSettings):
    """Everything ``create_app`` needs; no global state, no files opened on import."""

    api_key: str | None = None
    max_body_bytes: int = 1 << 20
    # The rate limit of a key created without one of its own: requests per second and the
    # bucket's size. None: no limit.
    rate_per_second: float | None = None
    rate_burst: int | None = None
    # How long a key stays cached: a key revoked elsewhere is refused this soon.
    key_cache_seconds: float = 0.5

    def __post_init__(self) -> None:
        validate_rate(self.rate_per_second, self.rate_burst)
        if not 0 <= self.key_cache_seconds <= 60:
            raise InvalidInput("key_cache_seconds must be between 0 and 60")

    @property
    def default_rate(self) -> tuple[float, int] | None:
        """(requests per second, burst) for keys without a rate of their own."""
        if self.rate_per_second is None:
            return None
        return bucket(self.rate_per_second, self.rate_burst)

    @staticmethod
    def api_key_from(environ: Mapping[str, str], key_file: Path | None) -> str | None:
        """The API key from a file (its first line) or ``TOOLDEDUP_API_KEY``; file wins.

        A key that is given but blank is an error, never "no authentication".
        """
        if key_file is not None:
            lines = key_file.read_text(encoding="utf-8").splitlines()
            key = lines[0].strip() if lines else ""
            if not key:
                raise ValueError(f"the first line of API key file {key_file} is empty")
            return key
        if "TOOLDEDUP_API_KEY" not in environ:
            return None
        key = environ["TOOLDEDUP_API_KEY"].strip()
        if not key:
            raise ValueError("TOOLDEDUP_API_KEY is set but empty; unset it or give a key")
        return key
