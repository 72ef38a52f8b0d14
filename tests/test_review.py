"""The review page's reads through HTTP, on both ledgers: filters, one decision in detail,
the summary, and the page's own files."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import EMAIL, MakeApp
from tooldedup.api.cli import main
from tooldedup.api.settings import Settings
from tooldedup.dedup.ledger.base import LogEntry

REWORDED = "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear."


@pytest.fixture
def settings(settings_on_both: Settings) -> Settings:
    """Every test here runs on a fresh SQLite file and on a fresh PostgreSQL database."""
    return settings_on_both


def _key(settings: Settings, capsys: pytest.CaptureFixture[str], tenant: str, role: str) -> str:
    db = settings.postgres_url or str(settings.db_path)
    capsys.readouterr()
    assert main(["keys", "create", "--tenant", tenant, "--role", role, "--db", db]) == 0
    return capsys.readouterr().out.strip()


@pytest.fixture
def keys(settings: Settings, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    return {
        name: _key(settings, capsys, tenant, role)
        for name, tenant, role in (
            ("agent", "acme", "agent"),
            ("reader", "acme", "reader"),
            ("other", "beta", "reader"),
        )
    }


@pytest.fixture
def client(settings: Settings, make_app: MakeApp, keys: dict[str, str]) -> Iterator[TestClient]:
    with TestClient(make_app(settings)) as client:
        yield client


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def traffic(client: TestClient, keys: dict[str, str]) -> dict[str, dict[str, Any]]:
    def check(args: dict[str, Any], tool: str = "send_email") -> dict[str, Any]:
        body = {"session_id": "s1", "tool": tool, "args": args}
        answer = client.post("/v1/check", json=body, headers=_as(keys["agent"]))
        assert answer.status_code == 200, answer.text
        data: dict[str, Any] = answer.json()
        return data

    first = check(EMAIL)
    done = {"status": "succeeded", "result": {"message_id": "m-42"}}
    client.post(f"/v1/calls/{first['call_id']}/complete", json=done, headers=_as(keys["agent"]))
    return {
        "first": first,
        "exact": check({**EMAIL, "request_id": "r-2"}),
        "semantic": check({**EMAIL, "body": REWORDED}),
        "other": check({**EMAIL, "to": "carol@example.com"}),
        "ticket": check({"title": "VPN down", "queue": "IT"}, tool="create_ticket"),
    }


def _log(client: TestClient, key: str, **params: Any) -> list[str]:
    answer = client.get("/v1/log", params=params, headers=_as(key))
    assert answer.status_code == 200, answer.text
    return [e["check_id"] for e in answer.json()["entries"]]


def test_the_log_filters(
    client: TestClient, keys: dict[str, str], traffic: dict[str, dict[str, Any]]
) -> None:
    ids = {name: answer["check_id"] for name, answer in traffic.items()}
    reader = keys["reader"]
    assert _log(client, reader) == [
        ids[n] for n in ("ticket", "other", "semantic", "exact", "first")
    ]
    assert _log(client, reader, stage="semantic") == [ids["semantic"]]
    assert _log(client, reader, stage="exact") == [ids["exact"]]
    assert _log(client, reader, stage="none", tool="send_email") == [ids["other"], ids["first"]]
    assert _log(client, reader, decision="duplicate") == [ids["semantic"], ids["exact"]]
    assert _log(client, reader, tool="create_ticket") == [ids["ticket"]]
    assert _log(client, reader, min_score=0.85, max_score=0.95) == [ids["semantic"]]
    assert _log(client, reader, borderline=True) == [ids["semantic"]]
    hour = timedelta(hours=1)
    now = datetime.now(UTC)
    assert len(_log(client, reader, since=(now - hour).isoformat())) == 5
    assert _log(client, reader, until=(now - hour).isoformat()) == []
    label = {"check_id": ids["semantic"], "label": "duplicate"}
    assert client.post("/v1/feedback", json=label, headers=_as(keys["agent"])).status_code == 201
    assert _log(client, reader, labelled=True) == [ids["semantic"]]
    assert ids["semantic"] not in _log(client, reader, labelled=False)
    # Another tenant's reader sees none of it, with any filter.
    assert _log(client, keys["other"]) == []
    assert _log(client, keys["other"], stage="semantic") == []


@pytest.mark.parametrize(
    "params",
    [
        {"stage": "bogus"},
        {"min_score": "2"},
        {"since": "yesterday"},
        {"limit": "0"},
        {"borderline": "perhaps"},
        {"tool": ""},
    ],
)
def test_a_filter_that_makes_no_sense_is_a_422(
    client: TestClient, keys: dict[str, str], params: dict[str, str]
) -> None:
    answer = client.get("/v1/log", params=params, headers=_as(keys["reader"]))
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "invalid_request"


def test_one_decision_beside_its_match(
    client: TestClient, keys: dict[str, str], traffic: dict[str, dict[str, Any]]
) -> None:
    semantic = traffic["semantic"]
    view = client.get(f"/v1/log/{semantic['check_id']}", headers=_as(keys["reader"])).json()
    assert view["relation"] == "match"
    assert view["compared_with"]["call_id"] == traffic["first"]["call_id"]
    assert view["compared_with"]["result"] == {"message_id": "m-42"}
    fields = {f["path"]: f for f in view["fields"]}
    assert fields["to"]["compared"] == "exact"
    assert fields["to"]["same"] is True
    assert fields["body"]["compared"] == "meaning"
    assert fields["body"]["same"] is False
    assert fields["body"]["cosine"] == pytest.approx(semantic["match"]["score"], abs=1e-4)
    # Nothing matched: the closest call of the tool, with the field that set it apart.
    other = client.get(f"/v1/log/{traffic['other']['check_id']}", headers=_as(keys["reader"]))
    closest = other.json()
    assert closest["relation"] == "closest"
    assert [f["path"] for f in closest["fields"] if not f["same"]] == ["to"]
    # Another tenant's check answers as an unknown one; an agent may not read the log.
    for key in (keys["other"],):
        theirs = client.get(f"/v1/log/{semantic['check_id']}", headers=_as(key))
        assert theirs.status_code == 404
    assert client.get("/v1/log/chk_unknown", headers=_as(keys["reader"])).status_code == 404
    denied = client.get(f"/v1/log/{semantic['check_id']}", headers=_as(keys["agent"]))
    assert denied.status_code == 403


def test_the_summary(
    client: TestClient, keys: dict[str, str], traffic: dict[str, dict[str, Any]]
) -> None:
    label = {"check_id": traffic["semantic"]["check_id"], "label": "duplicate"}
    client.post("/v1/feedback", json=label, headers=_as(keys["agent"]))
    summary = client.get("/v1/review/summary", headers=_as(keys["reader"])).json()
    assert summary["checks"] == 5
    by_stage: dict[tuple[str, str], int] = {}
    for _, decision, stage, count in summary["series"]:
        by_stage[(decision, stage)] = by_stage.get((decision, stage), 0) + count
    assert by_stage == {
        ("proceed", "none"): 3,
        ("duplicate", "exact"): 1,
        ("duplicate", "semantic"): 1,
    }
    tools = {t["tool"]: t for t in summary["tools"]}
    assert (tools["send_email"]["checks"], tools["send_email"]["duplicates"]) == (4, 2)
    # One labelled duplicate of the 299 that precision 0.99 at 95 % needs.
    assert (tools["send_email"]["labels"], tools["send_email"]["labels_to_go"]) == (1, 298)
    assert summary["scores"] == [
        [pytest.approx(traffic["semantic"]["match"]["score"]), "duplicate"]
    ]
    assert (summary["min_cosine_duplicate"], summary["min_cosine_borderline"]) == (0.9, 0.85)
    assert set(summary["latency_ms"]) == {"p50", "p90", "p99"}
    other = client.get("/v1/review/summary", headers=_as(keys["other"])).json()
    assert other["checks"] == 0


def test_the_page_is_served_with_a_strict_policy(client: TestClient) -> None:
    for path, media in (
        ("/ui", "text/html"),
        ("/ui/app.js", "text/javascript"),
        ("/ui/app.css", "text/css"),
    ):
        answer = client.get(path)  # no key: the files hold no data
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith(media)
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy
        assert "default-src 'none'" in policy
        assert "unsafe" not in policy
    page = client.get("/ui").text
    assert "<script>" not in page  # no inline script
    assert " style=" not in page  # no inline style
    assert "innerHTML" not in client.get("/ui/app.js").text


@pytest.mark.parametrize("when", ["0001-01-01", "0001-01-01T00:00:00", "9999-12-31T23:59:59"])
def test_a_time_at_the_ends_of_the_calendar_is_a_422_or_an_empty_page(
    client: TestClient, keys: dict[str, str], when: str
) -> None:
    for name in ("since", "until"):
        answer = client.get("/v1/log", params={name: when}, headers=_as(keys["reader"]))
        assert answer.status_code in (200, 422), answer.text
        assert answer.status_code == 200 or answer.json()["error"]["code"] == "invalid_input"


def test_time_filters_keep_a_slow_check_and_those_that_finished_while_it_ran(
    settings: Settings, make_app: MakeApp, keys: dict[str, str]
) -> None:
    """Rows are logged in the order checks finished; times are when they arrived."""
    app = make_app(settings)
    with TestClient(app) as client:
        ledger = app.state.service._ledger
        # Recent times: the log's retention purges old entries.
        t = time.time() - 1000.0
        arrived = {"f0": t - 1, "f1": t + 1, "f2": t + 2, "slow": t, "f3": t + 3}
        for name, ts in arrived.items():  # logged in this order: "slow" finished after f2
            ledger.append_log(_entry(name, ts))
        since = client.get("/v1/log", params={"since": _iso(t - 0.5)}, headers=_as(keys["reader"]))
        assert [e["check_id"] for e in since.json()["entries"]] == ["f3", "f2", "f1", "slow"]
        until = client.get("/v1/log", params={"until": _iso(t + 2.5)}, headers=_as(keys["reader"]))
        assert [e["check_id"] for e in until.json()["entries"]] == ["f2", "f1", "slow", "f0"]
        # Paging by cursor keeps that order.
        first = client.get(
            "/v1/log", params={"since": _iso(t - 10), "limit": 2}, headers=_as(keys["reader"])
        ).json()
        rest = client.get(
            "/v1/log",
            params={"since": _iso(t - 10), "limit": 10, "before": first["next_before"]},
            headers=_as(keys["reader"]),
        ).json()
        order = [e["check_id"] for e in first["entries"] + rest["entries"]]
        assert order == ["f3", "f2", "f1", "slow", "f0"]


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


def _entry(check_id: str, ts: float) -> LogEntry:
    return LogEntry(
        check_id=check_id,
        ts=ts,
        scope="s1",
        session_id="s1",
        tool="send_email",
        args={},
        decision="proceed",
        stage=None,
        score=None,
        call_id=None,
        matched_call_id=None,
        latency_ms=1.0,
        dry_run=False,
        explain={"stages": []},
        tenant="acme",
    )


def test_a_keyless_service_answers_only_its_own_host_names(
    tmp_path: Path, model_cache: Path, make_app: MakeApp
) -> None:
    settings = Settings(db_path=tmp_path / "ledger.db", cache_dir=model_cache)
    with TestClient(make_app(settings)) as client:
        assert client.get("/v1/log").status_code == 200
        assert client.get("/v1/log", headers={"Host": "localhost:8000"}).status_code == 200
        # A rebinding page's own name, pointed at 127.0.0.1: no data without a key.
        rebound = client.get("/v1/log", headers={"Host": "evil.example:8000"})
        assert rebound.status_code == 401
        assert client.get("/ui/", follow_redirects=False).headers["location"] == "/ui"
