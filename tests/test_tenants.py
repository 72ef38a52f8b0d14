"""Tenants and keys through HTTP, on both ledgers: nothing of one tenant reaches another."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import EMAIL, MakeApp
from tooldedup.api.cli import main
from tooldedup.api.settings import Settings


@pytest.fixture
def settings(settings_on_both: Settings) -> Settings:
    """Every test here runs on a fresh SQLite file and on a fresh PostgreSQL database."""
    return settings_on_both


def _db(settings: Settings) -> str:
    return settings.postgres_url or str(settings.db_path)


def make_key(
    settings: Settings, capsys: pytest.CaptureFixture[str], tenant: str, role: str, *extra: str
) -> str:
    """A key made by ``tooldedup keys create``, as its one line of output."""
    capsys.readouterr()
    assert (
        main(["keys", "create", "--tenant", tenant, "--role", role, "--db", _db(settings), *extra])
        == 0
    )
    token = capsys.readouterr().out.strip()
    assert token.startswith("tdk_")
    return token


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def keys(settings: Settings, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """Two tenants, acme and beta, with a key of each role; and the default tenant's admin."""
    made = {
        f"{tenant}-{role}": make_key(settings, capsys, tenant, role)
        for tenant in ("acme", "beta")
        for role in ("agent", "reader", "admin")
    }
    made["default-admin"] = make_key(settings, capsys, "default", "admin")
    return made


@pytest.fixture
def client(settings: Settings, make_app: MakeApp, keys: dict[str, str]) -> Iterator[TestClient]:
    with TestClient(make_app(settings)) as client:
        yield client


def _check(client: TestClient, token: str, args: dict[str, Any], **extra: Any) -> Any:
    body = {"session_id": "s1", "tool": "send_email", "args": args, **extra}
    return client.post("/v1/check", json=body, headers=auth(token))


def _not_found_like_unknown(response: Any, unknown: Any) -> None:
    """Another tenant's id answers exactly as an id nobody ever made."""
    assert response.status_code == unknown.status_code == 404
    assert response.json()["error"]["code"] == unknown.json()["error"]["code"]


def test_two_tenants_never_see_each_other(
    client: TestClient, keys: dict[str, str], settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = keys["acme-agent"], keys["beta-agent"]
    first = _check(client, a, EMAIL, idempotency_key="K1", attempt_token="T1").json()
    assert first["decision"] == "proceed"
    done = client.post(
        f"/v1/calls/{first['call_id']}/complete",
        json={"status": "succeeded", "result": {"message_id": "acme-secret"}},
        headers=auth(a),
    )
    assert done.status_code == 200
    # The same session name, tool, arguments, idempotency key and attempt token in beta:
    # a call of its own, never acme's stored result.
    other = _check(client, b, EMAIL, idempotency_key="K1", attempt_token="T1")
    assert other.status_code == 200, other.text
    assert other.json()["decision"] == "proceed"
    assert other.json()["match"] is None
    assert "acme-secret" not in other.text
    reworded = {**EMAIL, "body": EMAIL["body"].replace("Let me know", "Tell me")}
    mine = _check(client, b, reworded).json()
    assert mine["decision"] == "in_progress"  # beta's own call, still pending
    assert mine["call_id"] == other.json()["call_id"]
    assert _check(client, a, reworded).json()["match"]["result"] == {"message_id": "acme-secret"}

    acme_call, acme_check = first["call_id"], first["check_id"]
    unknown_call = client.get("/v1/calls/call_0000", headers=auth(b))
    for token in (keys["beta-agent"], keys["beta-reader"], keys["beta-admin"]):
        _not_found_like_unknown(
            client.get(f"/v1/calls/{acme_call}", headers=auth(token)), unknown_call
        )
    unknown_done = client.post(
        "/v1/calls/call_0000/complete", json={"status": "unknown"}, headers=auth(b)
    )
    theirs_done = client.post(
        f"/v1/calls/{acme_call}/complete", json={"status": "unknown"}, headers=auth(b)
    )
    _not_found_like_unknown(theirs_done, unknown_done)
    unknown_label = client.post(
        "/v1/feedback", json={"check_id": "chk_0000", "label": "distinct"}, headers=auth(b)
    )
    theirs_label = client.post(
        "/v1/feedback", json={"check_id": acme_check, "label": "distinct"}, headers=auth(b)
    )
    _not_found_like_unknown(theirs_label, unknown_label)

    for token in (keys["beta-agent"], keys["beta-reader"]):
        session = client.get("/v1/sessions/s1/calls", headers=auth(token)).json()
        assert session["calls"]
        assert all(c["call_id"] != acme_call for c in session["calls"])
        assert "acme-secret" not in json.dumps(session)
    log = client.get("/v1/log", headers=auth(keys["beta-reader"])).json()
    assert log["entries"]
    assert {e["tenant"] for e in log["entries"]} == {"beta"}
    assert acme_check not in json.dumps(log)
    # acme's own reader sees acme's entries, each with the key id that sent it.
    acme_log = client.get("/v1/log", headers=auth(keys["acme-reader"])).json()["entries"]
    assert {e["tenant"] for e in acme_log} == {"acme"}
    assert {e["key_id"] for e in acme_log} == {a.split("_")[1]}

    # A policy set by beta's admin is beta's only.
    put = client.put(
        "/v1/tools/send_email/policy",
        json={"side_effect": "read"},
        headers=auth(keys["beta-admin"]),
    )
    assert put.status_code == 200
    policy = client.get("/v1/tools/send_email/policy", headers=auth(a)).json()
    assert policy["custom"] is False
    assert policy["policy"]["side_effect"] == "write"

    # Keys: beta's admin lists beta's keys only, and cannot revoke acme's.
    listed = client.get("/v1/keys", headers=auth(keys["beta-admin"])).json()["keys"]
    assert {k["tenant"] for k in listed} == {"beta"}
    assert len(listed) == 3
    assert all("key" not in k and "secret_hash" not in k for k in listed)
    acme_key_id = a.split("_")[1]
    revoke = client.delete(f"/v1/keys/{acme_key_id}", headers=auth(keys["beta-admin"]))
    assert revoke.status_code == 404
    assert client.get(f"/v1/calls/{acme_call}", headers=auth(a)).status_code == 200

    # The export of one tenant holds its entries only, with key ids and never a key.
    capsys.readouterr()
    assert main(["export-log", "--db", _db(settings), "--tenant", "beta"]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert exported
    assert {e["tenant"] for e in exported} == {"beta"}
    assert {e["key_id"] for e in exported} == {b.split("_")[1]}
    assert not any(token[20:] in json.dumps(exported) for token in keys.values())


@pytest.mark.parametrize(
    ("method", "path", "body", "allowed"),
    [
        (
            "POST",
            "/v1/check",
            {"session_id": "s", "tool": "t", "args": {"x": 1}},
            {"agent", "admin"},
        ),
        ("POST", "/v1/feedback", {"check_id": "chk_x", "label": "distinct"}, {"agent", "admin"}),
        ("POST", "/v1/calls/call_x/complete", {"status": "unknown"}, {"agent", "admin"}),
        ("GET", "/v1/calls/call_x", None, {"agent", "reader", "admin"}),
        ("GET", "/v1/sessions/s/calls", None, {"agent", "reader", "admin"}),
        ("GET", "/v1/log", None, {"reader", "admin"}),
        ("GET", "/v1/tools/t/policy", None, {"agent", "reader", "admin"}),
        ("PUT", "/v1/tools/t/policy", {"side_effect": "write"}, {"admin"}),
        ("GET", "/v1/keys", None, {"admin"}),
        ("POST", "/v1/keys", {"role": "agent"}, {"admin"}),
        ("DELETE", "/v1/keys/0123456789abcdef", None, {"admin"}),
    ],
)
def test_each_role_may_do_what_it_is_for(
    client: TestClient,
    keys: dict[str, str],
    method: str,
    path: str,
    body: Any,
    allowed: set[str],
) -> None:
    for role in ("agent", "reader", "admin"):
        response = client.request(method, path, json=body, headers=auth(keys[f"acme-{role}"]))
        if role in allowed:
            # Allowed: the route ran (a made-up id is simply not found).
            assert response.status_code in (200, 201, 404), (role, response.text)
        else:
            assert response.status_code == 403, (role, response.text)
            assert response.json()["error"]["code"] == "forbidden"
    for headers in (
        {},
        auth("tdk_0123456789abcdef_nope"),
        auth("nonsense"),
        {"Authorization": "Basic eDp5"},
    ):
        response = client.request(method, path, json=body, headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
        assert response.headers["www-authenticate"] == "Bearer"


def test_metrics_are_the_operators(client: TestClient, keys: dict[str, str]) -> None:
    assert client.get("/metrics", headers=auth(keys["acme-admin"])).status_code == 403
    assert client.get("/metrics", headers=auth(keys["default-admin"])).status_code == 200
    assert client.get("/healthz").status_code == 200  # open: a load balancer has no key


def test_keys_made_and_revoked_through_the_api(client: TestClient, keys: dict[str, str]) -> None:
    admin = auth(keys["acme-admin"])
    made = client.post("/v1/keys", json={"role": "agent", "name": "ci bot"}, headers=admin)
    assert made.status_code == 201
    new = made.json()
    assert (new["tenant"], new["role"]) == ("acme", "agent")
    assert new["key"].startswith("tdk_")
    assert _check(client, new["key"], EMAIL).status_code == 200
    listed = client.get("/v1/keys", headers=admin).json()["keys"]
    assert new["key_id"] in {k["key_id"] for k in listed}
    assert all("key" not in k for k in listed)
    revoked = client.delete(f"/v1/keys/{new['key_id']}", headers=admin)
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    # Revoked in this process: refused at once, not after the cache ages.
    refused = _check(client, new["key"], EMAIL)
    assert refused.status_code == 401
    assert "revoked" in refused.json()["error"]["message"]


def test_rate_limit_per_key(
    client: TestClient, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    slow = make_key(settings, capsys, "acme", "agent", "--rate-per-second", "0.01", "--burst", "2")
    other = make_key(settings, capsys, "acme", "agent")
    answers = [client.get("/v1/sessions/s/calls", headers=auth(slow)) for _ in range(3)]
    assert [r.status_code for r in answers] == [200, 200, 429]
    assert answers[2].json()["error"]["code"] == "rate_limited"
    assert int(answers[2].headers["Retry-After"]) >= 1
    # Another key of the same tenant has its own bucket (and no limit at all).
    assert all(
        client.get("/v1/sessions/s/calls", headers=auth(other)).status_code == 200 for _ in range(5)
    )


def test_tenant_call_cap(
    client: TestClient, keys: dict[str, str], settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tenants", "cap", "acme", "--max-calls", "2", "--db", _db(settings)]) == 0
    client.app.state.service.refresh()  # type: ignore[attr-defined]  # the maintenance round
    a = keys["acme-agent"]
    stored = [_check(client, a, {**EMAIL, "to": f"user{n}@example.com"}).json() for n in range(2)]
    assert [s["decision"] for s in stored] == ["proceed", "proceed"]
    full = _check(client, a, {**EMAIL, "to": "user9@example.com"})
    assert full.status_code == 429
    assert full.json()["error"]["code"] == "tenant_call_limit"
    assert "Retry-After" in full.headers
    # Stored claims stay, and a repeat of one is still answered from the ledger.
    again = _check(client, a, {**EMAIL, "to": "user0@example.com"})
    assert again.json()["decision"] == "in_progress"
    for s in stored:
        assert client.get(f"/v1/calls/{s['call_id']}", headers=auth(a)).status_code == 200
    # Another tenant is not capped by acme's cap.
    assert _check(client, keys["beta-agent"], EMAIL).json()["decision"] == "proceed"
    assert main(["tenants", "cap", "acme", "--max-calls", "-1", "--db", _db(settings)]) == 0
    client.app.state.service.refresh()  # type: ignore[attr-defined]
    assert _check(client, a, {**EMAIL, "to": "user9@example.com"}).status_code == 200


def test_concurrent_claims_never_pass_the_cap_in_one_process(
    client: TestClient, keys: dict[str, str], settings: Settings
) -> None:
    assert main(["tenants", "cap", "acme", "--max-calls", "3", "--db", _db(settings)]) == 0
    client.app.state.service.refresh()  # type: ignore[attr-defined]
    a = keys["acme-agent"]

    def claim(n: int) -> int:
        body = {"session_id": f"race-{n}", "tool": "send_email", "args": EMAIL}
        return client.post("/v1/check", json=body, headers=auth(a)).status_code

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(claim, range(20)))
    assert sorted(codes) == [200] * 3 + [429] * 17


@pytest.mark.parametrize(
    ("policy", "allowed"),
    [
        ({"max_text_leaves": 10_000}, False),
        ({"max_comparisons": 10_000_000}, False),
        ({"judge_mode": "inline"}, False),
        # The shared judge and pair model, reached another way.
        ({"unsure_action": "judge"}, False),
        ({"pair_model": True}, False),
        ({"unsure_action": "duplicate", "pair_model": False}, True),
        ({"max_text_leaves": 8, "judge_mode": "off"}, True),
        ({"window_seconds": 3600}, True),
    ],
)
def test_a_tenant_works_within_the_operators_budgets(
    client: TestClient, keys: dict[str, str], policy: dict[str, Any], allowed: bool
) -> None:
    put = client.put("/v1/tools/t/policy", json=policy, headers=auth(keys["beta-admin"]))
    assert put.status_code == (200 if allowed else 422), put.text
    # The operator (the default tenant's admin) sets any budget.
    mine = client.put("/v1/tools/t/policy", json=policy, headers=auth(keys["default-admin"]))
    assert mine.status_code == 200


def test_the_log_pages_by_check_id(client: TestClient, keys: dict[str, str]) -> None:
    a = keys["acme-agent"]
    for n in range(5):
        assert _check(client, a, {**EMAIL, "to": f"u{n}@example.com"}).status_code == 200
    reader = auth(keys["acme-reader"])
    seen: list[str] = []
    before = None
    while True:
        params: dict[str, Any] = {"limit": 2} if before is None else {"limit": 2, "before": before}
        page = client.get("/v1/log", params=params, headers=reader).json()
        seen += [e["check_id"] for e in page["entries"]]
        before = page["next_before"]
        if before is None:
            break
        assert before.startswith("chk_")  # a check id, not a row number
    assert len(seen) == len(set(seen)) == 5
    # Another tenant's cursor gives nothing.
    theirs = client.get("/v1/log", params={"before": seen[0]}, headers=auth(keys["beta-reader"]))
    assert theirs.json()["entries"] == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"role": "agent", "rate_per_second": 1e-310}, 422),
        ({"role": "agent", "burst": 5}, 422),
        ({"role": "agent", "name": "ok\nffff default admin"}, 422),
        ({"role": "agent", "name": "bot \u200b"}, 422),
        ({"role": "root"}, 422),
        ({"role": "agent", "tenant": "beta"}, 422),
        ({"role": "agent", "rate_per_second": 0.5, "burst": 2}, 201),
    ],
)
def test_key_requests_that_make_no_sense_are_refused(
    client: TestClient, keys: dict[str, str], body: dict[str, Any], code: int
) -> None:
    made = client.post("/v1/keys", json=body, headers=auth(keys["acme-admin"]))
    assert made.status_code == code, made.text
    if code == 201:
        assert made.json()["tenant"] == "acme"
    else:
        assert "error" in made.json()


def test_making_keys_never_buys_a_faster_rate(
    settings: Settings, make_app: MakeApp, keys: dict[str, str]
) -> None:
    limited = dataclasses.replace(settings, rate_per_second=100.0, rate_burst=50)
    with TestClient(make_app(limited)) as client:
        admin = auth(keys["acme-admin"])
        faster = client.post(
            "/v1/keys", json={"role": "agent", "rate_per_second": 1e6}, headers=admin
        )
        assert faster.status_code == 422
        plain = client.post("/v1/keys", json={"role": "agent"}, headers=admin).json()
        assert (plain["rate_per_second"], plain["burst"]) == (100.0, 50)
