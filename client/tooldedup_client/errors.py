"""The service's JSON error codes as exception classes, and the answers a guard raises."""

from __future__ import annotations

from typing import Any

__all__ = [
    "CheckTooLarge",
    "ConfirmTokenRejected",
    "Conflict",
    "Forbidden",
    "IdempotencyKeyReused",
    "InProgress",
    "InvalidInput",
    "LeaseLost",
    "NotFound",
    "RateLimited",
    "Reconcile",
    "ServiceUnavailable",
    "StoreUnavailable",
    "TenantCallLimit",
    "TooldedupError",
    "Unauthorized",
    "error_from_response",
]


class TooldedupError(Exception):
    """Root of every error this client raises."""

    def __init__(self, message: str, *, code: str = "error", status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


class InvalidInput(TooldedupError):
    """The service refused the request as invalid (422, 400)."""


class IdempotencyKeyReused(InvalidInput):
    """An idempotency key or attempt token came back with another payload."""


class CheckTooLarge(InvalidInput):
    """The call has more free text than the tool's policy allows."""


class NotFound(TooldedupError):
    """No such call or check."""


class Conflict(TooldedupError):
    """A completion that contradicts the stored one."""


class LeaseLost(Conflict):
    """A lease extension was refused: the lease ran out, or this check never held it."""


class Unauthorized(TooldedupError):
    """The API key is missing or wrong."""


class Forbidden(TooldedupError):
    """The API key is valid, but its role may not do this (403)."""


class RateLimited(TooldedupError):
    """Too many requests for this key (429): nothing was decided or stored.

    ``retry_after_seconds`` is the service's ``Retry-After``, when it sent one.
    """

    retry_after_seconds: float | None = None


class TenantCallLimit(RateLimited):
    """The tenant stores as many calls as its cap allows (429): no new call may be claimed."""


class ServiceUnavailable(TooldedupError):
    """The service could not be reached, or did not answer in time.

    ``maybe_reached`` is False only when the request surely changed nothing: it never left
    (no connection), or the service said so (503 ``store_unavailable``). Otherwise the
    service may have stored a claim the caller never heard of.
    """

    maybe_reached = True


class StoreUnavailable(ServiceUnavailable):
    """The service answered, but its database could not be reached (503): nothing stored."""

    maybe_reached = False


class InProgress(TooldedupError):
    """The same call is running elsewhere now: wait, then check again."""

    def __init__(self, call_id: str, message: str | None = None, note: str | None = None) -> None:
        super().__init__(message or f"call {call_id} is in progress", code="in_progress")
        self.call_id = call_id
        # The service's note for the model, if it sent one.
        self.note = note


class Reconcile(TooldedupError):
    """The same call's outcome is unknown: find out whether it took effect, then report it."""

    def __init__(self, call_id: str, message: str | None = None, note: str | None = None) -> None:
        super().__init__(message or f"call {call_id} has an unknown outcome", code="reconcile")
        self.call_id = call_id
        self.note = note


class ConfirmTokenRejected(Conflict):
    """An ask's confirm token that is unknown, used, expired, or for another call; the
    call did not run (``code`` says which: ``confirm_token_used``, ...)."""


_BY_CODE: dict[str, type[TooldedupError]] = {
    "idempotency_key_reused": IdempotencyKeyReused,
    "attempt_token_reused": IdempotencyKeyReused,
    "check_too_large": CheckTooLarge,
    "invalid_input": InvalidInput,
    "invalid_request": InvalidInput,
    "malformed_json": InvalidInput,
    "not_found": NotFound,
    "conflict": Conflict,
    "not_lease_holder": LeaseLost,
    "lease_expired": LeaseLost,
    "confirm_token_unknown": ConfirmTokenRejected,
    "confirm_token_used": ConfirmTokenRejected,
    "confirm_token_expired": ConfirmTokenRejected,
    "confirm_token_mismatch": ConfirmTokenRejected,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "rate_limited": RateLimited,
    "tenant_call_limit": TenantCallLimit,
    "store_unavailable": StoreUnavailable,
}


def error_from_response(status: int, body: Any, retry_after: str | None = None) -> TooldedupError:
    """The exception for an error answer ``{"error": {"code", "message"}}``."""
    error = body.get("error") if isinstance(body, dict) else None
    code = str(error.get("code", "error")) if isinstance(error, dict) else "error"
    message = str(error.get("message", "")) if isinstance(error, dict) else ""
    kind = _BY_CODE.get(code)
    if kind is None:
        if status == 401:
            kind = Unauthorized
        elif status == 403:
            kind = Forbidden
        elif status == 429:
            kind = RateLimited
        elif status >= 500:
            kind = ServiceUnavailable
        elif status == 404:
            kind = NotFound
        elif status == 409:
            kind = Conflict
        else:
            kind = InvalidInput
    exc = kind(message or f"HTTP {status}", code=code, status=status)
    if isinstance(exc, RateLimited) and retry_after is not None:
        try:
            exc.retry_after_seconds = max(0.0, float(retry_after))
        except ValueError:
            pass  # an HTTP date, which this service never sends
    return exc
