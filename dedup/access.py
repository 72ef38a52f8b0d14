"""Tenants, API keys and roles: who may do what, and in which tenant."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from tooldedup.dedup.errors import InvalidInput, Unauthorized
from tooldedup.dedup.records import DEFAULT_TENANT

__all__ = [
    "MAX_BURST",
    "MAX_RATE_PER_SECOND",
    "MIN_RATE_PER_SECOND",
    "RESTORE_COMMAND",
    "SETTING_KEY_ID",
    "ApiKey",
    "KeyRing",
    "KeyStore",
    "NewKey",
    "Principal",
    "Role",
    "bucket",
    "hash_secret",
    "make_key",
    "validate_rate",
    "validate_tenant",
]

_PREFIX = "tdk"
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")
# The key given by TOOLDEDUP_API_KEY or --api-key-file: the default tenant's admin.
SETTING_KEY_ID = "api-key-setting"
# Below one request in about 17 minutes a limit is a revocation; above a million per
# second, none.
MIN_RATE_PER_SECOND = 0.001
MAX_RATE_PER_SECOND = 1_000_000.0
MAX_BURST = 1_000_000
_MAX_NAME = 200
# With no live key, no request can make one: only the host's command line lets anyone in.
RESTORE_COMMAND = "tooldedup keys create --tenant default --role admin"


class Role(StrEnum):
    """What a key may do inside its tenant."""

    AGENT = "agent"  # check, complete, feedback, read calls
    READER = "reader"  # read calls, sessions and the decision log
    ADMIN = "admin"  # all of that, plus policies and keys


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored key as anyone may see it: never its secret, not even its hash."""

    key_id: str
    tenant: str
    role: Role
    name: str | None
    created_at: float
    revoked_at: float | None = None
    rate_per_second: float | None = None
    burst: int | None = None


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just made: ``token`` is shown once and stored only as a hash."""

    key: ApiKey
    token: str


@dataclass(frozen=True, slots=True)
class Principal:
    """Who sent a request: a tenant, a role, and the key's id (None without keys)."""

    tenant: str
    role: Role
    key_id: str | None
    rate_per_second: float | None = None
    burst: int | None = None


class KeyStore(Protocol):
    """Where keys are kept (the ledger's database)."""

    def all_keys(self) -> list[tuple[ApiKey, str]]:
        """Every key, revoked ones too, each with its secret's hash."""
        ...


def validate_tenant(name: str) -> str:
    """A tenant name: 1 to 64 letters, digits, '.', '_' or '-', not starting with a symbol."""
    if not _TENANT.fullmatch(name):
        raise InvalidInput(
            "a tenant name is 1 to 64 letters, digits, '.', '_' or '-', starting with a"
            " letter or digit"
        )
    return name


def validate_rate(rate_per_second: float | None, burst: int | None) -> None:
    """A key's rate limit: a rate in range, and a burst only with a rate."""
    if rate_per_second is not None and not (
        MIN_RATE_PER_SECOND <= rate_per_second <= MAX_RATE_PER_SECOND
    ):
        raise InvalidInput(
            f"rate_per_second must be from {MIN_RATE_PER_SECOND} to {MAX_RATE_PER_SECOND:g}"
        )
    if burst is not None:
        if rate_per_second is None:
            raise InvalidInput("burst needs rate_per_second")
        if not 1 <= burst <= MAX_BURST:
            raise InvalidInput(f"burst must be from 1 to {MAX_BURST}")


def bucket(rate_per_second: float, burst: int | None) -> tuple[float, int]:
    """A rate limit as (requests per second, bucket size): a burst not given is one
    second's worth of requests, and at least one."""
    return rate_per_second, burst or max(1, int(rate_per_second))


def hash_secret(secret: str) -> str:
    """The stored form of a key's secret (a random 256-bit secret needs no slow hash)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def make_key(
    tenant: str,
    role: Role,
    name: str | None,
    now: float,
    rate_per_second: float | None = None,
    burst: int | None = None,
) -> tuple[NewKey, str]:
    """A new key and its secret's hash: ``tdk_<key id>_<secret>``."""
    validate_tenant(tenant)
    validate_rate(rate_per_second, burst)
    if name is not None and (
        len(name) > _MAX_NAME or any(unicodedata.category(c).startswith("C") for c in name)
    ):
        raise InvalidInput(f"a key's name is at most {_MAX_NAME} printable characters")
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    key = ApiKey(key_id, tenant, role, name, now, None, rate_per_second, burst)
    return NewKey(key, f"{_PREFIX}_{key_id}_{secret}"), hash_secret(secret)


def _split(token: str) -> tuple[str, str] | None:
    prefix, _, rest = token.partition("_")
    key_id, _, secret = rest.partition("_")
    if prefix != _PREFIX or not _KEY_ID.fullmatch(key_id) or not secret:
        return None
    return key_id, secret


class KeyRing:
    """Turns a bearer token into a ``Principal``.

    Every key is read from the store in one query, again once the copy is
    ``cache_seconds`` old: a key revoked anywhere (another worker, another replica, the
    command line) is refused here that soon, and no request, whatever key it makes up,
    reads the store on its own.
    """

    def __init__(
        self,
        store: KeyStore,
        setting_key: str | None = None,
        *,
        cache_seconds: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not cache_seconds >= 0:
            raise InvalidInput("cache_seconds must be 0 or more")
        self._store = store
        self._setting = None if setting_key is None else setting_key.encode()
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._reload = threading.Lock()
        self._keys: dict[str, tuple[ApiKey, str]] = {}
        self._loaded_at: float | None = None

    def needs_store(self) -> bool:
        """Whether ``authenticate`` would read the store (run it off the event loop then)."""
        with self._lock:
            return not self._fresh(self._clock())

    def authenticate(self, token: str | None, *, loopback: bool) -> Principal:
        """The principal of ``token``; with no key anywhere, a loopback caller is the
        default tenant's admin, as before keys existed."""
        keys = self._current()
        if token is None:
            if self._setting is None and loopback and not keys:
                return Principal(DEFAULT_TENANT, Role.ADMIN, None)
            raise self._refused(keys, "a valid bearer API key is required")
        if self._setting is not None and hmac.compare_digest(token.encode(), self._setting):
            return Principal(DEFAULT_TENANT, Role.ADMIN, SETTING_KEY_ID)
        parts = _split(token)
        found = None if parts is None else keys.get(parts[0])
        if parts is None or found is None:
            raise self._refused(keys, "a valid bearer API key is required")
        key, stored_hash = found
        if not hmac.compare_digest(hash_secret(parts[1]), stored_hash):
            raise self._refused(keys, "a valid bearer API key is required")
        if key.revoked_at is not None:
            raise self._refused(keys, f"API key {key.key_id} was revoked")
        return Principal(key.tenant, key.role, key.key_id, key.rate_per_second, key.burst)

    def _refused(self, keys: dict[str, tuple[ApiKey, str]], message: str) -> Unauthorized:
        if self._setting is None and all(key.revoked_at is not None for key, _ in keys.values()):
            message += (
                f"; no API key is active: run `{RESTORE_COMMAND}` on the server's host"
                " (with its --db) to make one"
            )
        return Unauthorized(message)

    def reload(self) -> None:
        """Read the keys again on the next request (this process just made or revoked one)."""
        with self._lock:
            self._loaded_at = None

    def _fresh(self, now: float) -> bool:
        return self._loaded_at is not None and now - self._loaded_at < self._cache_seconds

    def _current(self) -> dict[str, tuple[ApiKey, str]]:
        with self._lock:
            if self._fresh(self._clock()):
                return self._keys
        # One reader at a time: the others wait for its copy rather than query too.
        with self._reload:
            with self._lock:
                if self._fresh(self._clock()):
                    return self._keys
            started = self._clock()
            keys = {key.key_id: (key, stored) for key, stored in self._store.all_keys()}
            with self._lock:
                self._keys, self._loaded_at = keys, started
            return keys
