"""Bad input gets a clear 4xx with a JSON error body, never a 5xx."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import EMAIL, MakeApp, check, complete
from tooldedup.api.settings import Settings


def _error(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["message"]
    code: str = body["error"]["code"]
    return code


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    root = node
    for _ in range(levels - 1):
        node["a"] = {}
        node = node["a"]
    return root


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, "malformed_json"),
        (b"", 400, "empty_body"),
        (b"  \n", 400, "empty_body"),
        (b"[" * 5000 + b"]" * 5000, 400, "malformed_json"),
        (b'{"tool": "t", "args": {}}', 422, "invalid_request"),
        (b'{"session_id": "", "tool": "t", "args": {}}', 422, "invalid_request"),
        (b'{"session_id": "   ", "tool": "t", "args": {}}', 422, "invalid_request"),
        (b'{"session_id": "s", "tool": "t", "args": []}', 422, "invalid_request"),
        (b'{"session_id": "s", "tool": "t", "args": "x"}', 422, "invalid_request"),
        (b'{"session_id": "s", "tool": "t", "args": {"x": NaN}}', 422, "invalid_input"),
        (b'{"session_id": "s", "tool": "t", "args": {"x": "\\ud800"}}', 422, "invalid_input"),
        (b'{"session_id": "\\ud800", "tool": "t", "args": {}}', 422, "invalid_request"),
        (b'{"session_id": "s", "tool": "t", "args": {}, "extra": 1}', 422, "invalid_request"),
        (b'{"session_id": "s", "tool": "t", "args": {}, "dry_run": "yes"}', 422, "invalid_request"),
        (b'{"session_id": "s", "tool": "t", "args": {}, "dry_run": 1}', 422, "invalid_request"),
        (b'{"session_id": "s", "tool": "t", "args": {}, "step": true}', 422, "invalid_request"),
    ],
)
def test_bad_check_bodies(client: TestClient, body: bytes, status: int, code: str) -> None:
    response = client.post("/v1/check", content=body, headers={"content-type": "application/json"})
    assert _error(response, status) == code


@pytest.mark.parametrize("field", ["session_id", "tool"])
def test_names_over_256_characters(client: TestClient, field: str) -> None:
    body = {"session_id": "s", "tool": "t", "args": {}, field: "x" * 257}
    assert _error(client.post("/v1/check", json=body), 422) == "invalid_request"


def test_nesting_deeper_than_32(client: TestClient) -> None:
    ok = client.post("/v1/check", json={"session_id": "s", "tool": "t", "args": _deep(32)})
    assert ok.status_code == 200
    deep = client.post("/v1/check", json={"session_id": "s", "tool": "t", "args": _deep(33)})
    assert "deeper" in deep.json()["error"]["message"]
    assert _error(deep, 422) == "invalid_input"


def test_body_over_one_mebibyte(client: TestClient) -> None:
    big = {"session_id": "s", "tool": "t", "args": {"blob": "x" * (1 << 20)}}
    assert _error(client.post("/v1/check", json=big), 413) == "payload_too_large"


def test_streamed_body_over_limit(client: TestClient) -> None:
    def chunks() -> Any:
        for _ in range(20):
            yield b"x" * 65536

    response = client.post(
        "/v1/check", content=chunks(), headers={"content-type": "application/json"}
    )
    assert _error(response, 413) == "payload_too_large"


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/v1/check", "POST"),
        ("/v1/calls/call_x/complete", "POST"),
        ("/v1/feedback", "POST"),
        ("/v1/tools/t/policy", "PUT"),
    ],
)
@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x"],
)
def test_bodies_must_be_json(
    client: TestClient, path: str, method: str, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    body = json.dumps({"session_id": "s", "tool": "t", "args": {}}).encode()
    response = client.request(method, path, content=body, headers=headers)
    assert _error(response, 415) == "unsupported_media_type"


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "application/x+json"]
)
def test_json_media_types_are_accepted(client: TestClient, content_type: str) -> None:
    body = json.dumps({"session_id": "s", "tool": "t", "args": {}}).encode()
    response = client.post("/v1/check", content=body, headers={"content-type": content_type})
    assert response.status_code == 200, response.text


def test_unknown_call_id(client: TestClient) -> None:
    assert _error(client.get("/v1/calls/call_nope"), 404) == "not_found"
    missing = client.post("/v1/calls/call_nope/complete", json={"status": "succeeded"})
    assert _error(missing, 404) == "not_found"


def test_completing_twice(client: TestClient) -> None:
    call_id = check(client, EMAIL)["call_id"]
    complete(client, call_id, status="succeeded", result=1)
    same = complete(client, call_id, status="succeeded", result=1)
    assert same["status"] == "succeeded"
    clash = client.post(
        f"/v1/calls/{call_id}/complete", json={"status": "failed", "failure_class": "poison"}
    )
    assert _error(clash, 409) == "conflict"


@pytest.mark.parametrize(
    "outcome",
    [
        {"status": "pending"},
        {"status": "failed"},
        {"status": "succeeded", "failure_class": "poison"},
        {"status": "done"},
    ],
)
def test_bad_completions(client: TestClient, outcome: dict[str, str]) -> None:
    call_id = check(client, EMAIL)["call_id"]
    response = client.post(f"/v1/calls/{call_id}/complete", json=outcome)
    assert _error(response, 422) in {"invalid_input", "invalid_request"}


@pytest.mark.parametrize(
    "policy",
    [
        {"min_cosine_duplicate": 1.5},
        {"min_cosine_borderline": -1.01},
        {"min_cosine_duplicate": 0.8, "min_cosine_borderline": 0.85},
        {"min_fuzzy_ratio": 101},
        {"window_seconds": 0},
        {"side_effect": "delete"},
        {"exact_fields": ["body"], "semantic_fields": ["body"]},
        {"exact_fields": ["bad path!"]},
        {"surprise": 1},
    ],
)
def test_bad_policies(client: TestClient, policy: dict[str, Any]) -> None:
    response = client.put("/v1/tools/t/policy", json=policy)
    assert _error(response, 422) in {"invalid_input", "invalid_request"}


@pytest.mark.parametrize(
    ("policy", "ok"),
    [
        ({"min_cosine_duplicate": 1.0, "min_cosine_borderline": 1.0}, True),
        ({"min_cosine_duplicate": -1.0, "min_cosine_borderline": -1.0}, True),
        ({"min_cosine_duplicate": 0.0, "min_cosine_borderline": 0.0}, True),
        ({"min_cosine_duplicate": 1.0000001}, False),
    ],
)
def test_cosine_threshold_boundaries(client: TestClient, policy: dict[str, Any], ok: bool) -> None:
    response = client.put("/v1/tools/t/policy", json=policy)
    assert (response.status_code == 200) is ok


def test_unknown_route_is_json(client: TestClient) -> None:
    assert _error(client.get("/v1/nothing"), 404) == "not_found"
    assert _error(client.get("/v1/check"), 405) == "method_not_allowed"


def test_api_key(settings: Settings, make_app: MakeApp) -> None:
    secured = Settings(db_path=settings.db_path, cache_dir=settings.cache_dir, api_key="s3cret")
    with TestClient(make_app(secured)) as client:
        assert client.get("/healthz").status_code == 200
        body = {"session_id": "s", "tool": "t", "args": {}}
        assert _error(client.post("/v1/check", json=body), 401) == "unauthorized"
        wrong = client.post("/v1/check", json=body, headers={"Authorization": "Bearer nope"})
        assert _error(wrong, 401) == "unauthorized"
        assert "s3cret" not in wrong.text
        good = client.post("/v1/check", json=body, headers={"Authorization": "Bearer s3cret"})
        assert good.status_code == 200
        metrics = client.get("/metrics")
        assert metrics.status_code == 401


@pytest.mark.parametrize(
    "outcome",
    [
        {"status": "succeeded", "result": _deep(40)},
        {"status": "succeeded", "result": {"x": "\ud800"}},
        {"status": "failed", "failure_class": "poison", "error": {"\ud800": 1}},
    ],
)
def test_unstorable_results_are_rejected(client: TestClient, outcome: dict[str, Any]) -> None:
    call_id = check(client, EMAIL)["call_id"]
    body = json.dumps(outcome)  # escapes lone surrogates as \ud800, as a client would
    response = client.post(
        f"/v1/calls/{call_id}/complete", content=body, headers={"content-type": "application/json"}
    )
    assert _error(response, 422) == "invalid_input"
    assert client.get(f"/v1/calls/{call_id}").json()["status"] == "pending"


def test_nan_result_is_rejected(client: TestClient) -> None:
    call_id = check(client, EMAIL)["call_id"]
    body = b'{"status": "succeeded", "result": NaN}'
    response = client.post(
        f"/v1/calls/{call_id}/complete", content=body, headers={"content-type": "application/json"}
    )
    assert _error(response, 422) == "invalid_input"
