"""Message bodies as bytes on the wire and as what a handler reads."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["decode_body"]


def decode_body(raw: bytes) -> Any:
    """A JSON body as its value; any other body as its text (so a handler that expects an
    object fails on it, and the message is dead-lettered as poison)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text
