"""Keys over time and across processes, the service without keys, stores from before
tenants, and a property: random interleavings of two tenants never cross."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import EMAIL, MakeApp, store_as_left_by
from tests.server import serve
from tooldedup.api.cli import main
from tooldedup.api.settings import Settings
from tooldedup.dedup.ledger import SqliteLedger
from tooldedup.dedup.ledger.database import Database
from tooldedup.dedup.ledger.sql import SqlLedger
from tooldedup.dedup.policy import policy_from_mapping
from tooldedup.dedup.protocols import Embedder, PairScorer
from tooldedup.dedup.records import Scope, ToolCall
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_service
from tooldedup.index.word_vectors import WordVectors

_CLI = [sys.executable, "-m", "tooldedup.api.cli"]


def _key(db: str, capsys: pytest.CaptureFixture[str], tenant: str, role: str) -> str:
    capsys.readouterr()
    assert main(["keys", "create", "--tenant", tenant, "--role", role, "--db", db]) == 0
    return capsys.readouterr().out.strip()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_without_keys_local_callers_are_served_as_before(
    tmp_path: Path, model_cache: Path, make_app: MakeApp, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(db_path=tmp_path / "ledger.db", cache_dir=model_cache)
    app = make_app(settings)
    body = {"session_id": "s1", "tool": "send_email", "args": EMAIL}
    with TestClient(app, client=("127.0.0.1", 5000)) as local:
        assert local.post("/v1/check", json=body).json()["decision"] == "proceed"
        assert local.get("/metrics").status_code == 200
    with TestClient(app, client=("203.0.113.9", 5000)) as remote:
        refused = remote.post("/v1/check", json=body)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "unauthorized"
    # Once a key exists, no caller goes without one, local or not.
    token = _key(str(settings.db_path), capsys, "default", "agent")
    with TestClient(make_app(settings), client=("127.0.0.1", 5000)) as local:
        assert local.post("/v1/check", json=body).status_code == 401
        again = local.post("/v1/check", json=body, headers=_auth(token)).json()
        assert again["decision"] == "in_progress"  # the default tenant's call, from before


def test_the_api_key_setting_is_the_default_admin(
    tmp_path: Path, model_cache: Path, make_app: MakeApp
) -> None:
    settings = Settings(db_path=tmp_path / "ledger.db", cache_dir=model_cache, api_key="s3cret")
    with TestClient(make_app(settings)) as client:
        assert client.get("/v1/keys").status_code == 401
        made = client.post("/v1/keys", json={"role": "reader"}, headers=_auth("s3cret"))
        assert made.status_code == 201
        assert made.json()["tenant"] == "default"
        assert client.get("/v1/log", headers=_auth(made.json()["key"])).status_code == 200


def test_a_public_address_without_keys_refuses_to_start(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    command = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(db)]
    done = subprocess.run(
        [*command, "--host", "0.0.0.0", "--port", "9"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 with no API key" in done.stderr


def test_a_revoked_key_is_refused_by_another_process_within_a_second(
    tmp_path: Path, model_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "ledger.db")
    token = _key(db, capsys, "acme", "agent")
    key_id = token.split("_")[1]
    with serve(db, model_cache) as client:
        assert client.get("/v1/sessions/s1/calls", headers=_auth(token)).status_code == 200
        # The server has just read the key: it is cached there now.
        revoked = subprocess.run(
            [sys.executable, "-m", "tooldedup.api.cli", "keys", "revoke", key_id, "--db", db],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert revoked.returncode == 0, revoked.stderr
        time.sleep(1.0)  # the bound the issue sets, not a measurement
        refused = client.get("/v1/sessions/s1/calls", headers=_auth(token))
        assert refused.status_code == 401
        assert "revoked" in refused.json()["error"]["message"]


_RESTORE = "tooldedup keys create --tenant default --role admin"


@pytest.mark.parametrize(
    ("sent", "revoke_all", "names_the_command"),
    [
        ("none", True, True),
        ("wrong", True, True),
        ("revoked", True, True),
        ("none", False, False),
    ],
)
def test_with_every_key_revoked_the_401_says_how_to_get_back_in(
    tmp_path: Path,
    model_cache: Path,
    make_app: MakeApp,
    capsys: pytest.CaptureFixture[str],
    sent: str,
    revoke_all: bool,
    names_the_command: bool,
) -> None:
    settings = Settings(db_path=tmp_path / "ledger.db", cache_dir=model_cache)
    db = str(settings.db_path)
    admin = _key(db, capsys, "default", "admin")
    spare = _key(db, capsys, "default", "agent")
    headers = {"none": {}, "wrong": _auth("tdk_0123456789abcdef_nope"), "revoked": _auth(spare)}
    with TestClient(make_app(settings), client=("127.0.0.1", 5000)) as local:
        spared = local.delete(f"/v1/keys/{spare.split('_')[1]}", headers=_auth(admin))
        assert spared.status_code == 200
        if revoke_all:
            gone = local.delete(f"/v1/keys/{admin.split('_')[1]}", headers=_auth(admin))
            assert gone.status_code == 200
        refused = local.get("/v1/sessions/s1/calls", headers=headers[sent])
        assert refused.status_code == 401
        message = refused.json()["error"]["message"]
        assert (_RESTORE in message) is names_the_command, message
    if names_the_command:
        # The command named is the way back in.
        restored = _key(db, capsys, "default", "admin")
        with TestClient(make_app(settings)) as local:
            assert local.get("/v1/keys", headers=_auth(restored)).status_code == 200


@pytest.mark.parametrize(
    ("client_address", "key_role", "sent", "key_needed"),
    [
        ("127.0.0.1", None, None, False),
        ("203.0.113.9", None, None, True),
        ("127.0.0.1", "agent", None, True),
        ("127.0.0.1", "agent", "agent", True),  # an agent may not read the log
        ("203.0.113.9", "reader", "reader", False),
        ("127.0.0.1", "reader", "tdk_0123456789abcdef_nope", True),
    ],
)
def test_the_review_page_asks_whether_it_needs_a_key_and_is_never_refused(
    tmp_path: Path,
    model_cache: Path,
    make_app: MakeApp,
    capsys: pytest.CaptureFixture[str],
    client_address: str,
    key_role: str | None,
    sent: str | None,
    key_needed: bool,
) -> None:
    settings = Settings(db_path=tmp_path / "ledger.db", cache_dir=model_cache)
    token = None
    if key_role is not None:
        token = _key(str(settings.db_path), capsys, "default", key_role)
    headers = {}
    if sent is not None:
        headers = _auth(token if sent == key_role and token is not None else sent)
    app = make_app(settings)
    with TestClient(app, client=(client_address, 5000)) as caller:
        answer = caller.get("/ui/access", headers=headers)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"key_needed": key_needed}
        assert answer.headers["cache-control"] == "no-store"
        # What it says is what the log itself answers.
        assert (caller.get("/v1/log", headers=headers).status_code != 200) is key_needed


def _at_m007(db: Database) -> None:
    """Fill a store as release 0.3 left it (migrations up to m007) with a call, a bound key
    and a policy."""
    with db.write():
        db.execute(
            "INSERT INTO calls (call_id, scope, session_id, tool, args_json, args_hash,"
            " exact_sig, exact_leaves, semantic_leaves, intent_key, idempotency_key, status,"
            " created_at, lease_expires_at, sent_args_json) VALUES"
            " ('call_old', 's1', 's1', 'pay', '{}', 'h', 'sig', '[]', '[]', 'ik_old', 'K1',"
            " 'pending', ?, ?, '{}')",
            (time.time(), time.time() + 300),
        )
        db.execute(
            "INSERT INTO idempotency_keys VALUES ('s1', 'K1', 'pay', 'ik_old', 'sent', ?)",
            (time.time(),),
        )
        db.execute("INSERT INTO policies VALUES ('pay', '{\"side_effect\": \"irreversible\"}', 0)")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_store_from_before_tenants_becomes_the_default_tenants(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str
) -> None:
    db = store_as_left_by(request, tmp_path, backend, 7)
    try:
        _at_m007(db)
        ledger = SqlLedger(db)  # applies m008
        old = ledger.get("default", "call_old")
        assert old is not None
        assert old.tenant == "default"
        assert ledger.get("acme", "call_old") is None
        assert ledger.by_idempotency_key(Scope("default", "s1"), "K1", 0.0) is not None
        assert ledger.by_idempotency_key(Scope("acme", "s1"), "K1", 0.0) is None
        assert ledger.load_policies() == {"default": {"pay": {"side_effect": "irreversible"}}}
    finally:
        db.close()


@pytest.fixture(scope="module")
def two_tenants(
    tmp_path_factory: pytest.TempPathFactory, model_cache: Path, make_app: MakeApp
) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """One service shared by the examples of the property below, with an agent key each."""
    db = tmp_path_factory.mktemp("tenants") / "ledger.db"
    ledger = SqliteLedger(db)
    ledger.close()
    tokens: dict[str, str] = {}
    for tenant in ("acme", "beta"):
        out = subprocess.run(
            [*_CLI, "keys", "create", "--tenant", tenant, "--role", "agent", "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        tokens[tenant] = out.stdout.strip()
    app = make_app(Settings(db_path=db, cache_dir=model_cache))
    with TestClient(app) as client:
        yield client, tokens


_OWNER: dict[str, str] = {}
_SESSIONS = st.sampled_from(["s1", "s2"])
_BODIES = st.sampled_from(
    [
        EMAIL["body"],
        EMAIL["body"].replace("Let me know", "Tell me"),
        "Please cancel my order.",
    ]
)
_OPS = st.lists(
    st.tuples(
        st.sampled_from(["acme", "beta"]),
        st.sampled_from(["check", "complete", "get", "session", "label"]),
        _SESSIONS,
        _BODIES,
        st.integers(0, 50),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=_OPS)
def test_interleaved_tenants_never_cross(
    two_tenants: tuple[TestClient, dict[str, str]], ops: list[tuple[str, str, str, str, int]]
) -> None:
    client, tokens = two_tenants
    # Every call and check id any example was given, and its tenant: the service (and so
    # what may leak) outlives one example.
    owner = _OWNER
    for tenant, op, session, body, pick in ops:
        headers = _auth(tokens[tenant])
        mine = sorted(i for i, t in owner.items() if t == tenant)
        theirs = sorted(i for i, t in owner.items() if t != tenant)
        target = (theirs or mine or ["call_none"])[pick % max(1, len(theirs or mine))]
        response: Any
        if op == "check":
            # The same arguments in both tenants: only the tenant keeps them apart.
            args = {**EMAIL, "body": body}
            response = client.post(
                "/v1/check",
                json={"session_id": session, "tool": "send_email", "args": args},
                headers=headers,
            )
        elif op == "complete":
            response = client.post(
                f"/v1/calls/{target}/complete",
                json={"status": "succeeded", "result": {"by": tenant}},
                headers=headers,
            )
        elif op == "get":
            response = client.get(f"/v1/calls/{target}", headers=headers)
        elif op == "session":
            response = client.get(f"/v1/sessions/{session}/calls", headers=headers)
        else:
            response = client.post(
                "/v1/feedback", json={"check_id": target, "label": "distinct"}, headers=headers
            )
        assert response.status_code in (200, 201, 404, 409), response.text
        text = response.text
        # Nothing of the other tenant: none of its ids, none of its results or arguments.
        other = "beta" if tenant == "acme" else "acme"
        assert f'"by":"{other}"' not in text.replace(" ", "")
        # (The id the caller sent may be echoed in a "not found" message: nothing more.)
        assert not any(i in text.replace(target, "") for i in theirs)
        if target in theirs and op in ("complete", "get", "label"):
            assert response.status_code == 404
        data = response.json()
        if op == "check" and response.status_code == 200:
            for key in ("call_id", "check_id"):
                if data.get(key) is not None:
                    owner.setdefault(data[key], tenant)
        if op == "session" and response.status_code == 200:
            assert all(owner.get(c["call_id"], tenant) == tenant for c in data["calls"])


def test_a_tenants_long_window_keeps_only_its_own_calls(
    tmp_path: Path,
    model_cache: Path,
    embedder: Embedder,
    pair_scorer: PairScorer,
    word_vectors: WordVectors,
) -> None:
    now = [1_000_000.0]
    built = build_service(
        ServiceSettings(db_path=tmp_path / "ledger.db", cache_dir=model_cache),
        embedder=embedder,
        pair_scorer=pair_scorer,
        word_vectors=word_vectors,
        clock=lambda: now[0],
    )
    service = built.service
    try:
        for tenant in ("acme", "beta"):
            service.check(ToolCall("s1", "send_email", EMAIL, tenant=tenant))
        # beta keeps its calls for ten years; the store's retention is seven days.
        decade = policy_from_mapping({"window_seconds": 10 * 365 * 86_400.0})
        service.set_policy("beta", "send_email", decade, {"window_seconds": 10 * 365 * 86_400.0})
        now[0] += 8 * 86_400.0
        assert service.purge(7 * 86_400.0) == 1
        assert service.session_calls("acme", "s1", 10, 0) == []
        assert len(service.session_calls("beta", "s1", 10, 0)) == 1
    finally:
        built.close()


@pytest.mark.parametrize(
    "argv",
    [
        ["tenants", "cap", "acme", "--max-calls", "99999999999999999999"],
        ["keys", "create", "--role", "agent", "--burst", "99999999999999999999"],
        ["keys", "create", "--role", "agent", "--rate-per-second", "1e-310"],
        ["keys", "create", "--role", "agent", "--tenant", "../x"],
        ["keys", "create", "--role", "agent", "--burst", "3"],  # a burst needs a rate
        ["tenants", "cap", "acme", "--max-calls", "5", "--db", "{missing}"],
        ["keys", "revoke", "0123456789abcdef", "--db", "{missing}"],
    ],
)
def test_operator_commands_refuse_nonsense_with_a_message(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "typo.db"
    args = [a.replace("{missing}", str(missing)) for a in argv]
    if "--db" not in args:
        args += ["--db", str(tmp_path / "ledger.db")]
    with pytest.raises(SystemExit) if _rejected_by_argparse(args) else nullcontext():
        assert main(args) == 2
    assert capsys.readouterr().err.strip()
    assert not missing.exists()  # a mistyped store is never created


def _rejected_by_argparse(args: list[str]) -> bool:
    values = {"99999999999999999999", "1e-310", "../x"}
    return any(v in args for v in values)
