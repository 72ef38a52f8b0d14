"""The error tree.

DedupError
 +-- InvalidInput            bad arguments, policy or request (422)
 |    +-- IdempotencyKeyReused   same key, different payload (422)
 |    |    +-- AttemptTokenReused  same attempt token, different payload (422)
 |    +-- CheckTooLarge          over the policy's per-check budget (422)
 +-- NotFound                unknown call id (404)
 +-- Conflict                a completion that contradicts the stored one (409)
 +-- ConfigurationError      the service cannot start as configured (start-up only)
 +-- StoreUnavailable        the database cannot be reached (503)
      +-- StoreBusy           it answers, but no connection or lock came in time (503)
"""

from __future__ import annotations

__all__ = [
    "AttemptTokenReused",
    "CheckTooLarge",
    "ConfigurationError",
    "Conflict",
    "DedupError",
    "IdempotencyKeyReused",
    "InvalidInput",
    "NotFound",
    "StoreBusy",
    "StoreUnavailable",
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


class NotFound(DedupError):
    """The named call does not exist in this ledger."""

    code = "not_found"


class Conflict(DedupError):
    """The request contradicts what the ledger already holds."""

    code = "conflict"


class ConfigurationError(DedupError):
    """A setting, model file or optional dependency the service needs is missing or broken."""

    code = "configuration_error"


class StoreUnavailable(DedupError):
    """The ledger's database did not answer in time; nothing was decided or stored."""

    code = "store_unavailable"


class StoreBusy(StoreUnavailable):
    """The database answers, but no pooled connection or lock was free in time."""

    code = "store_unavailable"
