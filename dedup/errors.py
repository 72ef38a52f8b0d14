"""The error tree.

DedupError
 +-- InvalidInput            bad arguments, policy or request (422)
 |    +-- IdempotencyKeyReused   same key, different payload (422)
 |    |    +-- AttemptTokenReused  same attempt token, different payload (422)
 |    +-- CheckTooLarge          over the policy's per-check budget (422)
 +-- Unauthorized            no key, or an unknown or revoked one (401)
 +-- Forbidden               the key's role may not do this (403)
 +-- NotFound                unknown call id, or another tenant's (404)
 +-- Conflict                a completion that contradicts the stored one (409)
 |    +-- LeaseNotHeld        a lease extension from a check that did not claim the call (409)
 |    +-- LeaseExpired        a lease extension after the lease ran out (409)
 |    +-- ConfirmTokenRejected  an ask's confirm token that is unknown, used, expired,
 |                              or for another session, tool or args (409)
 +-- ConfigurationError      the service cannot start as configured (start-up only)
 +-- Throttled               too many requests for a key, or too many calls stored (429)
 |    +-- TenantCallLimit     the tenant holds as many calls as its cap allows (429)
 +-- StoreUnavailable        the database cannot be reached (503)
      +-- StoreBusy           it answers, but no connection or lock came in time (503)
"""

from __future__ import annotations

__all__ = [
    "AttemptTokenReused",
    "CheckTooLarge",
    "ConfigurationError",
    "ConfirmTokenRejected",
    "Conflict",
    "DedupError",
    "Forbidden",
    "IdempotencyKeyReused",
    "InvalidInput",
    "LeaseExpired",
    "LeaseNotHeld",
    "NotFound",
    "StoreBusy",
    "StoreUnavailable",
    "TenantCallLimit",
    "Throttled",
    "Unauthorized",
]


class DedupError(Exception):
    """Root of every error tooldedup raises on purpose."""

    code = "dedup_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(DedupError):
    """The request, arguments or policy are not acceptable."""

    code = "invalid_input"


class IdempotencyKeyReused(InvalidInput):
    """An idempotency key was reused with a different payload."""

    code = "idempotency_key_reused"


class AttemptTokenReused(IdempotencyKeyReused):
    """An attempt token was reused with a different payload."""

    code = "attempt_token_reused"


class CheckTooLarge(InvalidInput):
    """A check asks for more work than the tool's policy allows (free-text leaves, text)."""

    code = "check_too_large"


class Unauthorized(DedupError):
    """No API key, or one that is unknown or revoked."""

    code = "unauthorized"


class Forbidden(DedupError):
    """The key is valid, but its role may not do this."""

    code = "forbidden"


class Throttled(DedupError):
    """Too many requests for one key; ``retry_after_seconds`` says when to try again."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after_seconds: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class TenantCallLimit(Throttled):
    """The tenant stores as many calls as its cap allows; older ones leave with retention."""

    code = "tenant_call_limit"


class NotFound(DedupError):
    """The named call does not exist in this ledger."""

    code = "not_found"


class Conflict(DedupError):
    """The request contradicts what the ledger already holds."""

    code = "conflict"


class LeaseNotHeld(Conflict):
    """Only the check that claimed a call may extend its lease."""

    code = "not_lease_holder"


class LeaseExpired(Conflict):
    """The claim's lease ran out: other checks may already have been told to reconcile."""

    code = "lease_expired"


class ConfirmTokenRejected(Conflict):
    """A confirm token that cannot confirm this call; ``code`` says why (nothing ran)."""

    code = "confirm_token_rejected"

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        # confirm_token_unknown, _used, _expired or _mismatch: a client may act on each.
        self.code = f"confirm_token_{reason}"


class ConfigurationError(DedupError):
    """A setting, model file or optional dependency the service needs is missing or broken."""

    code = "configuration_error"


class StoreUnavailable(DedupError):
    """The ledger's database did not answer in time; nothing was decided or stored."""

    code = "store_unavailable"


class StoreBusy(StoreUnavailable):
    """The database answers, but no pooled connection or lock was free in time."""

    code = "store_unavailable"
