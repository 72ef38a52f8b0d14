"""Routes of a tenant's keys: ``/v1/keys`` (admin)."""

from __future__ import annotations

import dataclasses
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends

from tooldedup.api.access import ADMINS, LOG_READERS, allow
from tooldedup.api.schemas import ErrorBody, KeyCreate, KeyList, KeyOut, NewKeyOut
from tooldedup.dedup.access import ApiKey, KeyRing, Principal, Role, bucket, make_key
from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.ledger.keys import SqlKeyStore
from tooldedup.dedup.service import DedupService

__all__ = ["MAX_LIVE_KEYS", "admin_router"]

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 403, 404, 422, 429)
}
Admin = Annotated[Principal, Depends(allow(ADMINS))]
LogReader = Annotated[Principal, Depends(allow(LOG_READERS))]
Decision = Literal["proceed", "duplicate", "in_progress", "reconcile"]
# Keys a tenant's admin may hold live at once through the API (the operator's command line
# is not limited): enough for every agent, few enough that keys cannot multiply a rate.
MAX_LIVE_KEYS = 100


def _key_out(key: ApiKey) -> KeyOut:
    return KeyOut(**{**dataclasses.asdict(key), "role": key.role.value})


def _within(
    principal: Principal, body: KeyCreate, default_rate: tuple[float, int] | None
) -> tuple[float | None, int | None]:
    """The rate of a key an admin makes: never above the admin's own (or the operator's
    default for keys), so making keys never buys a faster rate."""
    ceiling = default_rate
    if principal.rate_per_second is not None:
        ceiling = (principal.rate_per_second, principal.burst or 1)
    if ceiling is None:
        return body.rate_per_second, body.burst
    if body.rate_per_second is None:
        return ceiling
    # A burst not asked for is one second's worth, within the maker's.
    burst = body.burst or min(ceiling[1], bucket(body.rate_per_second, None)[1])
    if body.rate_per_second > ceiling[0] or burst > ceiling[1]:
        raise InvalidInput(
            f"a key made through the API is limited to {ceiling[0]:g} requests per second"
            f" (burst {ceiling[1]}), the rate of the key that makes it"
        )
    return body.rate_per_second, burst


def admin_router(
    service: DedupService,
    keys: SqlKeyStore,
    ring: KeyRing,
    default_rate: tuple[float, int] | None = None,
) -> APIRouter:
    """Key routes, each inside the caller's tenant."""
    router = APIRouter()

    @router.post("/v1/keys", response_model=NewKeyOut, status_code=201, responses=_ERRORS)
    def create_key(body: KeyCreate, principal: Admin) -> NewKeyOut:
        """Make a key of the caller's tenant; its secret is in this answer only."""
        rate, burst = _within(principal, body, default_rate)
        live = [k for k in keys.list_keys(principal.tenant) if k.revoked_at is None]
        if len(live) >= MAX_LIVE_KEYS:
            raise InvalidInput(
                f"tenant {principal.tenant!r} has {len(live)} live keys, the most the API"
                " makes; revoke one first"
            )
        new, secret_hash = make_key(
            principal.tenant, Role(body.role), body.name, time.time(), rate, burst
        )
        stored = keys.add_key(new, secret_hash)
        ring.reload()
        return NewKeyOut(**_key_out(stored).model_dump(), key=new.token)

    @router.get("/v1/keys", response_model=KeyList, responses=_ERRORS)
    def list_keys(principal: Admin) -> KeyList:
        """The caller's tenant's keys, revoked ones included, without secrets."""
        return KeyList(keys=[_key_out(k) for k in keys.list_keys(principal.tenant)])

    @router.delete("/v1/keys/{key_id}", response_model=KeyOut, responses=_ERRORS)
    def revoke_key(key_id: str, principal: Admin) -> KeyOut:
        """Revoke a key of the caller's tenant: refused everywhere within a second."""
        revoked = keys.revoke_key(key_id, time.time(), principal.tenant)
        ring.reload()
        return _key_out(revoked)

    return router
