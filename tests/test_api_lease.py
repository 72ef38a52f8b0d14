"""POST /v1/calls/{id}/lease on both ledgers: the claim's holder keeps it alive, nobody else."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import EMAIL, MakeApp, check, complete
from tests.test_tenants import auth, make_key
from tooldedup.api.settings import Settings


class _Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def client(settings_on_both: Settings, make_app: MakeApp, clock: _Clock) -> Iterator[TestClient]:
    """A fresh app on SQLite, then on PostgreSQL, with send_email leased for 10 s."""
    app = make_app(settings_on_both, clock=clock)
    with TestClient(app) as test_client:
        put = test_client.put("/v1/tools/send_email/policy", json={"lease_seconds": 10})
        assert put.status_code == 200, put.text
        yield test_client


def _lease(client: TestClient, call_id: str, body: Any) -> Any:
    return client.post(f"/v1/calls/{call_id}/lease", json=body)


def test_the_holder_keeps_its_claim_past_the_first_lease(client: TestClient, clock: _Clock) -> None:
    first = check(client, EMAIL)
    assert first["decision"] == "proceed"
    clock.now += 8
    extended = _lease(client, first["call_id"], {"check_id": first["check_id"], "seconds": 30})
    assert extended.status_code == 200, extended.text
    assert extended.json()["lease_expires_at"] == pytest.approx(clock.now + 30)
    # Past the first lease, a repeat is still told the call is running, not to reconcile.
    clock.now += 20
    assert check(client, EMAIL)["decision"] == "in_progress"
    # Without seconds, the tool's lease_seconds (10) again, from now.
    clock.now += 5
    again = _lease(client, first["call_id"], {"check_id": first["check_id"]})
    assert again.json()["lease_expires_at"] == pytest.approx(clock.now + 10)
    complete(client, first["call_id"], status="succeeded", result={"id": 1})
    assert check(client, EMAIL)["decision"] == "duplicate"


def test_a_shorter_extension_never_shortens_the_lease(client: TestClient, clock: _Clock) -> None:
    first = check(client, EMAIL)
    long = _lease(client, first["call_id"], {"check_id": first["check_id"], "seconds": 100})
    short = _lease(client, first["call_id"], {"check_id": first["check_id"], "seconds": 1})
    assert short.json()["lease_expires_at"] == long.json()["lease_expires_at"]


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [
        ("in_progress_check", 409, "not_lease_holder"),
        ("unknown_check", 409, "not_lease_holder"),
        ("unknown_call", 404, "not_found"),
        ("completed", 409, "conflict"),
        ("expired", 409, "lease_expired"),
    ],
)
def test_anyone_but_a_live_holder_is_refused_clearly(
    client: TestClient, clock: _Clock, who: str, status: int, code: str
) -> None:
    first = check(client, EMAIL)
    call_id, check_id = first["call_id"], first["check_id"]
    if who == "in_progress_check":
        # A second checker is shown the call id in its match, but its check claimed nothing.
        second = check(client, EMAIL)
        assert second["decision"] == "in_progress"
        assert second["match"]["call_id"] == call_id
        check_id = second["check_id"]
    elif who == "unknown_check":
        check_id = "chk_" + "0" * 32
    elif who == "unknown_call":
        call_id = "call_" + "0" * 32
    elif who == "completed":
        complete(client, call_id, status="succeeded", result=None)
    else:
        clock.now += 11
    response = _lease(client, call_id, {"check_id": check_id})
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"check_id": ""},
        {"check_id": "   "},
        {"check_id": 7},
        {"check_id": "chk_x", "seconds": 0},
        {"check_id": "chk_x", "seconds": -5},
        {"check_id": "chk_x", "seconds": 10**9},
        {"check_id": "chk_x", "seconds": True},
        {"check_id": "chk_x", "seconds": "soon"},
        {"check_id": "chk_x", "other": 1},
        [],
    ],
)
def test_bad_bodies_are_422_json(client: TestClient, body: Any) -> None:
    first = check(client, EMAIL)
    response = _lease(client, first["call_id"], body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_request"


def test_a_body_that_is_not_json_is_400(client: TestClient) -> None:
    first = check(client, EMAIL)
    response = client.post(
        f"/v1/calls/{first['call_id']}/lease",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_json"


def test_another_tenant_or_a_reader_cannot_extend_a_lease(
    settings_on_both: Settings, make_app: MakeApp, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_on_both
    keys = {
        name: make_key(settings, capsys, tenant, role)
        for name, tenant, role in [
            ("acme", "acme", "agent"),
            ("acme-reader", "acme", "reader"),
            ("beta", "beta", "agent"),
        ]
    }
    with TestClient(make_app(settings)) as client:
        body = {"session_id": "s1", "tool": "send_email", "args": EMAIL}
        claimed = client.post("/v1/check", json=body, headers=auth(keys["acme"])).json()
        path = f"/v1/calls/{claimed['call_id']}/lease"
        lease = {"check_id": claimed["check_id"]}
        # Another tenant's call is not found, exactly as an id nobody made.
        other = client.post(path, json=lease, headers=auth(keys["beta"]))
        assert (other.status_code, other.json()["error"]["code"]) == (404, "not_found")
        reader = client.post(path, json=lease, headers=auth(keys["acme-reader"]))
        assert (reader.status_code, reader.json()["error"]["code"]) == (403, "forbidden")
        nobody = client.post(path, json=lease)
        assert nobody.status_code == 401
        holder = client.post(path, json=lease, headers=auth(keys["acme"]))
        assert holder.status_code == 200, holder.text
