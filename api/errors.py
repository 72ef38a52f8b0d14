"""The one place where errors become HTTP answers: ``{"error": {"code", "message"}}``."""

from __future__ import annotations

import logging
import math

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from tooldedup.dedup.errors import (
    Conflict,
    DedupError,
    Forbidden,
    InvalidInput,
    NotFound,
    StoreUnavailable,
    Throttled,
    Unauthorized,
)

__all__ = ["dedup_error_response", "error_response", "install_error_handlers"]

logger = logging.getLogger(__name__)

_STATUS: tuple[tuple[type[DedupError], int], ...] = (
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (InvalidInput, 422),
    (Throttled, 429),
    (StoreUnavailable, 503),
)


def error_response(status: int, code: str, message: str) -> JSONResponse:
    """A JSON error answer."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def dedup_error_response(exc: DedupError) -> JSONResponse:
    """The answer to one of our errors, with the headers its status calls for."""
    response = error_response(_status_of(exc), exc.code, exc.message)
    if isinstance(exc, StoreUnavailable):
        # Nothing was decided or stored: the same check may simply be sent again.
        response.headers["Retry-After"] = "1"
    elif isinstance(exc, Throttled):
        response.headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_seconds)))
    elif isinstance(exc, Unauthorized):
        response.headers["WWW-Authenticate"] = "Bearer"
    return response


def _status_of(exc: DedupError) -> int:
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return status
    return 400


def _describe(exc: RequestValidationError) -> tuple[int, str, str]:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return 400, "malformed_json", "the request body is not valid JSON"
    parts = []
    for e in errors[:5]:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return 422, "invalid_request", "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI) -> None:
    """Map every error to a JSON body with a 4xx status; nothing leaks as a bare 500."""

    async def on_dedup_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, DedupError)
        return dedup_error_response(exc)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(*_describe(exc))

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        # FastAPI raises a bare 400 only when it cannot parse the body (e.g. absurd nesting).
        code, message = {
            400: ("malformed_json", "the request body could not be parsed as JSON"),
            404: ("not_found", "no such route"),
            405: ("method_not_allowed", "method not allowed on this route"),
        }.get(exc.status_code, ("http_error", str(exc.detail)))
        response = error_response(exc.status_code, code, message)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "internal_error", "internal error; see the server log")

    app.add_exception_handler(DedupError, on_dedup_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)
