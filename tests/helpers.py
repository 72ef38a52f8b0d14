"""Small helpers shared by the HTTP tests."""

from __future__ import annotations

from typing import Any, Protocol

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tooldedup.api.settings import Settings
from tooldedup.dedup.canonical import Canonicalizer
from tooldedup.dedup.english import EnglishPack
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.protocols import TextReader
from tooldedup.dedup.records import CanonicalCall

EMAIL = {
    "to": "bob@example.com",
    "subject": "Q3 report",
    "body": "Hi Bob, the Q3 report is attached. Let me know if you have any questions.",
}


class MakeApp(Protocol):
    """The ``make_app`` fixture: ``create_app`` with the run's shared models."""

    def __call__(self, settings: Settings, **options: Any) -> FastAPI: ...


def check(client: TestClient, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """POST /v1/check and return the JSON answer, asserting a 200."""
    body = {"session_id": "s1", "tool": "send_email", "args": args, **extra}
    response = client.post("/v1/check", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def complete(client: TestClient, call_id: str, **outcome: Any) -> dict[str, Any]:
    """POST a completion and return the JSON answer, asserting a 200."""
    response = client.post(f"/v1/calls/{call_id}/complete", json=outcome)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def canonicalize(
    args: Any,
    policy: ToolPolicy,
    *,
    received_at: float | None = None,
    tool: str | None = None,
    reader: TextReader | None = None,
) -> CanonicalCall:
    """The canonical form the server makes: through the English pack, and ``reader``."""
    canonicalizer = Canonicalizer(EnglishPack(), reader)
    return canonicalizer.canonicalize(args, policy, received_at=received_at, tool=tool)
