"""ASGI middleware: the request body limit."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["JsonBodyMiddleware"]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


async def _send_error(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _is_json(content_type: bytes) -> bool:
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (
        media.startswith(b"application/") and media.endswith(b"+json")
    )


class JsonBodyMiddleware:
    """Bodies are JSON and bounded: 413 over ``max_bytes`` (declared or streamed), 415 for
    another media type, 400 for an empty body where one is needed."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Buffer the body up to the limit, then hand it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"request body exceeds {self.max_bytes} bytes"
        headers = dict(scope.get("headers", []))
        needs_body = scope.get("method") in _BODY_METHODS
        if needs_body and not _is_json(headers.get(b"content-type", b"")):
            await _send_error(
                send, 415, "unsupported_media_type", "the body must be application/json"
            )
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _send_error(send, 400, "bad_request", "invalid Content-Length")
                    return
                if declared > self.max_bytes:
                    await _send_error(send, 413, "payload_too_large", too_large)
                    return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _send_error(send, 413, "payload_too_large", too_large)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if needs_body and not body.strip():
            await _send_error(send, 400, "empty_body", "the request body is empty")
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
