"""A scripted chat-completions server on 127.0.0.1: the one test double, at a network boundary."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: a status, a body, and an optional delay before sending it."""

    status: int = 200
    content: str | None = None
    body: str | None = None
    delay: float = 0.0


def verdict(duplicate: bool, confidence: float = 0.9, reason: str = "scripted") -> Reply:
    """A well-formed chat-completions answer carrying a verdict."""
    content = json.dumps({"duplicate": duplicate, "confidence": confidence, "reason": reason})
    return Reply(content=content)


@dataclass
class FakeLLM:
    """Answers POST /v1/chat/completions from a script; records every request."""

    url: str = ""
    script: deque[Reply] = field(default_factory=deque)
    default: Reply = field(default_factory=lambda: verdict(True))
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def next_reply(self) -> Reply:
        return self.script.popleft() if self.script else self.default


@contextmanager
def fake_llm() -> Iterator[FakeLLM]:
    """Run a fake chat-completions server until the block ends."""
    state = FakeLLM()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            payload = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append(payload)
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            reply = state.next_reply()
            if reply.delay:
                time.sleep(reply.delay)
            if reply.body is not None:
                body = reply.body
            else:
                message = {"role": "assistant", "content": reply.content}
                body = json.dumps({"choices": [{"index": 0, "message": message}]})
            data = body.encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (the timeout tests)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # Polled every 50 ms: shutdown() waits for the next poll (0.5 s by default).
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
