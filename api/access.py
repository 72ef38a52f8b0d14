"""Who is calling: the bearer key as a ``Principal`` (middleware), and which roles may use
a route (a dependency)."""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from functools import lru_cache

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from tooldedup.api.errors import dedup_error_response
from tooldedup.dedup.access import KeyRing, Principal, Role, bucket
from tooldedup.dedup.errors import DedupError, Forbidden, Throttled, Unauthorized

__all__ = [
    "ACCESS_PROBE_PATH",
    "ADMINS",
    "AGENTS",
    "CALL_READERS",
    "EVERYONE",
    "LOG_READERS",
    "AccessMiddleware",
    "RateLimiter",
    "allow",
    "is_local_client",
    "probed_principal",
]

_PRINCIPAL = "tooldedup.principal"
# Answered with or without a valid key: the review page asks it whether it needs a key, so
# that it shows the log at once where none is needed and makes no refused request elsewhere.
ACCESS_PROBE_PATH = "/ui/access"
_MAX_WAIT_SECONDS = 86_400.0

EVERYONE = frozenset(Role)
AGENTS = frozenset({Role.AGENT, Role.ADMIN})
CALL_READERS = frozenset({Role.AGENT, Role.READER, Role.ADMIN})
LOG_READERS = frozenset({Role.READER, Role.ADMIN})
ADMINS = frozenset({Role.ADMIN})


def is_local_client(client: tuple[str, int] | None) -> bool:
    """A loopback address, a Unix socket, or Starlette's in-process test client."""
    if client is None:
        return True  # a Unix socket: only processes of this host reach it
    if client[0] == "testclient":
        return True
    return _is_loopback(client[0])


@lru_cache(maxsize=1024)
def _is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (parsed once per address: every request asks)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name of unknown origin (a proxy's header): never trusted


class RateLimiter:
    """A token bucket per key: ``rate_per_second`` refills, ``burst`` is the bucket's size.

    Kept in this process: with several workers or replicas, each grants a key its own rate.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000):
        self._clock = clock
        self._max_keys = max_keys
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key_id: str, rate_per_second: float, burst: int) -> None:
        """Spend one token of ``key_id``'s bucket, or raise ``Throttled``."""
        now = self._clock()
        with self._lock:
            tokens, at = self._buckets.get(key_id, (float(burst), now))
            tokens = min(float(burst), tokens + (now - at) * rate_per_second)
            spent = tokens >= 1.0
            self._buckets[key_id] = (tokens - 1.0 if spent else tokens, now)
            self._buckets.move_to_end(key_id)
            while len(self._buckets) > self._max_keys:
                # The least recently used bucket has refilled the longest: dropping it
                # forgives the least.
                self._buckets.popitem(last=False)
        if not spent:
            wait = min((1.0 - tokens) / rate_per_second, _MAX_WAIT_SECONDS)
            raise Throttled(
                f"API key {key_id} is over its rate limit of {rate_per_second:g} requests"
                f" per second (burst {burst})",
                retry_after_seconds=wait,
            )


# What a browser on this machine calls the service (and Starlette's in-process client).
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "testserver"})


def _names_this_host(scope: Scope) -> bool:
    """Whether the Host header names this machine: a page another site serves, whose name
    a rebinding DNS answer points at 127.0.0.1, sends its own name and is refused."""
    for name, value in scope.get("headers", []):
        if name == b"host":
            host = value.decode("latin-1").lower()
            if not host.startswith("["):
                host = host.rsplit(":", 1)[0]
            else:
                host = host.split("]", 1)[0] + "]"
            return host in _LOCAL_HOSTS
    return True  # HTTP/1.0 with no Host: not a browser


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            text: str = value.decode("latin-1")
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return ""  # a header that is not a bearer key is a wrong key, not no key
    return None


class AccessMiddleware:
    """Resolve the bearer key to a ``Principal`` before anything reads the body; 401 without
    a valid key (where keys are required), 429 over the key's rate."""

    def __init__(
        self,
        app: ASGIApp,
        ring: KeyRing,
        limiter: RateLimiter,
        open_paths: frozenset[str],
        default_rate: tuple[float, int] | None = None,
    ) -> None:
        self.app = app
        self._ring = ring
        self._limiter = limiter
        self._open = open_paths
        self._default_rate = default_rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Attach the principal to the request scope, or answer the error."""
        if scope["type"] != "http" or scope.get("path") in self._open:
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        local = is_local_client(scope.get("client")) and _names_this_host(scope)
        try:
            if self._ring.needs_store():
                principal = await run_in_threadpool(self._ring.authenticate, token, loopback=local)
            else:
                principal = self._ring.authenticate(token, loopback=local)
            self._limit(principal)
        except Unauthorized as exc:
            if scope.get("path") != ACCESS_PROBE_PATH:
                await dedup_error_response(exc)(scope, receive, send)
                return
            await self.app(scope, receive, send)  # no principal: the probe says so
            return
        except DedupError as exc:
            response = dedup_error_response(exc)
            await response(scope, receive, send)
            return
        scope[_PRINCIPAL] = principal
        await self.app(scope, receive, send)

    def _limit(self, principal: Principal) -> None:
        if principal.key_id is None:
            return
        rate: tuple[float, int] | None = self._default_rate
        if principal.rate_per_second is not None:
            rate = bucket(principal.rate_per_second, principal.burst)
        if rate is not None:
            self._limiter.take(principal.key_id, *rate)


def probed_principal(request: Request) -> Principal | None:
    """The caller's ``Principal`` on ``ACCESS_PROBE_PATH``, or None if it would get 401."""
    found = request.scope.get(_PRINCIPAL)
    return found if isinstance(found, Principal) else None


def allow(roles: frozenset[Role]) -> Callable[[Request], Awaitable[Principal]]:
    """A dependency: the caller's ``Principal``, if its role is one of ``roles``; else 403."""
    names = ", ".join(sorted(role.value for role in roles))

    # Async, though it never waits: FastAPI runs a plain function dependency in the thread
    # pool, a hand-off per request that cost more than the whole exact check.
    async def principal(request: Request) -> Principal:
        found = request.scope.get(_PRINCIPAL)
        if not isinstance(found, Principal):
            raise Forbidden("no principal: the access middleware is not installed")
        if found.role not in roles:
            raise Forbidden(f"this needs a key with the role {names}; yours is {found.role.value}")
        return found

    return principal
