"""Tenants, API keys and roles: who may do what, and in which tenant."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from tooldedup.dedup.errors import InvalidInput, Unauthorized
from tooldedup.dedup.records import DEFAULT_TENANT

__all__ = [
    "SETTING_KEY_ID",
    "ApiKey",
    "KeyRing",
    "KeyStore",
    "NewKey",
    "Principal",
    "Role",
    "hash_secret",
    "make_key",
    "validate_tenant",
]

_PREFIX = "tdk"
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")
# The key given by TOOLDEDUP_API_KEY or --api-key-file: the default tenant's admin.
SETTING_KEY_ID = "api-key-setting"


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

    def find_key(self, key_id: str) -> tuple[ApiKey, str] | None:
        """A key and its secret's hash, revoked or not."""
        ...

    def has_keys(self) -> bool:
        """Whether any key was ever created (a revoked one counts)."""
        ...


def validate_tenant(name: str) -> str:
    """A tenant name: 1 to 64 letters, digits, '.', '_' or '-', not starting with a symbol."""
    if not _TENANT.fullmatch(name):
        raise InvalidInput(
            "a tenant name is 1 to 64 letters, digits, '.', '_' or '-', starting with a"
            " letter or digit"
        )
    return name


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
    if rate_per_second is not None and not rate_per_second > 0:
        raise InvalidInput("rate_per_second must be above 0")
    if burst is not None and burst < 1:
        raise InvalidInput("burst must be at least 1")
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
    """Turns a bearer token into a ``Principal``, with keys cached briefly.

    A key revoked anywhere (another worker, another replica, the command line) is refused
    here once its cached entry is ``cache_seconds`` old.
    """

    def __init__(
        self,
        store: KeyStore,
        setting_key: str | None = None,
        *,
        cache_seconds: float = 0.5,
        max_cached: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not cache_seconds >= 0:
            raise InvalidInput("cache_seconds must be 0 or more")
        self._store = store
        self._setting = None if setting_key is None else setting_key.encode()
        self._cache_seconds = cache_seconds
        self._max_cached = max_cached
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: OrderedDict[str, tuple[float, tuple[ApiKey, str] | None]] = OrderedDict()
        self._has_keys: tuple[float, bool] | None = None

    def needs_store(self, token: str | None) -> bool:
        """Whether ``authenticate`` would read the store (run it off the event loop then)."""
        now = self._clock()
        with self._lock:
            if token is None:
                return self._setting is None and not self._fresh(self._has_keys, now)
            parts = _split(token)
            return parts is not None and not self._fresh(self._keys.get(parts[0]), now)

    def authenticate(self, token: str | None, *, loopback: bool) -> Principal:
        """The principal of ``token``; with no key anywhere, a loopback caller is the
        default tenant's admin, as before keys existed."""
        if token is None:
            if self._setting is None and loopback and not self._any_keys():
                return Principal(DEFAULT_TENANT, Role.ADMIN, None)
            raise Unauthorized("a valid bearer API key is required")
        if self._setting is not None and hmac.compare_digest(token.encode(), self._setting):
            return Principal(DEFAULT_TENANT, Role.ADMIN, SETTING_KEY_ID)
        parts = _split(token)
        found = None if parts is None else self._find(parts[0])
        if parts is None or found is None:
            raise Unauthorized("a valid bearer API key is required")
        key, stored_hash = found
        if not hmac.compare_digest(hash_secret(parts[1]), stored_hash):
            raise Unauthorized("a valid bearer API key is required")
        if key.revoked_at is not None:
            raise Unauthorized(f"API key {key.key_id} was revoked")
        return Principal(key.tenant, key.role, key.key_id, key.rate_per_second, key.burst)

    def forget(self, key_id: str) -> None:
        """Drop one cached key (this process just revoked it)."""
        with self._lock:
            self._keys.pop(key_id, None)
            self._has_keys = None

    def _fresh(self, entry: tuple[float, object] | None, now: float) -> bool:
        return entry is not None and now - entry[0] < self._cache_seconds

    def _any_keys(self) -> bool:
        now = self._clock()
        with self._lock:
            if self._has_keys is not None and self._fresh(self._has_keys, now):
                return self._has_keys[1]
        found = self._store.has_keys()
        with self._lock:
            self._has_keys = (now, found)
        return found

    def _find(self, key_id: str) -> tuple[ApiKey, str] | None:
        now = self._clock()
        with self._lock:
            entry = self._keys.get(key_id)
            if entry is not None and self._fresh(entry, now):
                return entry[1]
        found = self._store.find_key(key_id)
        with self._lock:
            # Unknown ids are cached too (briefly): guessing costs the store nothing more.
            self._keys[key_id] = (now, found)
            self._keys.move_to_end(key_id)
            while len(self._keys) > self._max_cached:
                self._keys.popitem(last=False)
        return found
