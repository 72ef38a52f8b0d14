"""The review page in a real headless Chromium, against a real `tooldedup serve`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright

from tests.helpers import EMAIL
from tests.server import serve

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Chromium's own calls home are refused by this machine's closed network: switch them off.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The README's paraphrase: a borderline semantic duplicate of EMAIL.
REWORDED = "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear."
# Reads "ACCT-1234" when rendered as is: the page must show the override.
BIDI = "ACCT-\u202e4321\u202c"
XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"><b>bold</b>'


def _cli(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tooldedup.api.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def served(tmp_path: Path, model_cache: Path) -> Iterator[tuple[str, Path, str, str]]:
    """A server on a fresh store, an admin key and an agent key of tenant acme."""
    db = tmp_path / "ledger.db"
    admin = _cli("keys", "create", "--tenant", "acme", "--role", "admin", "--db", str(db)).strip()
    agent = _cli("keys", "create", "--tenant", "acme", "--role", "agent", "--db", str(db)).strip()
    with serve(db, model_cache) as client:
        yield str(client.base_url), db, admin, agent


def _traffic(base: str, agent: str | None) -> dict[str, Any]:
    """A call, its semantic duplicate, and a call whose text is markup (sent with no key
    when ``agent`` is None)."""
    headers = {} if agent is None else {"Authorization": f"Bearer {agent}"}
    with httpx.Client(base_url=base, headers=headers) as client:

        def check(args: dict[str, Any]) -> dict[str, Any]:
            body = {"session_id": "s1", "tool": "send_email", "args": args}
            answer: dict[str, Any] = client.post("/v1/check", json=body).json()
            return answer

        first = check(EMAIL)
        done = {"status": "succeeded", "result": {"message_id": "m-42"}}
        assert client.post(f"/v1/calls/{first['call_id']}/complete", json=done).status_code == 200
        semantic = check({**EMAIL, "body": REWORDED})
        assert semantic["match"]["stage"] == "semantic"
        markup = check({**EMAIL, "to": "carol@example.com", "body": XSS, "account": BIDI})
        assert markup["decision"] == "proceed"
        return {"first": first, "semantic": semantic, "markup": markup}


def _load(browser: Browser, base: str) -> tuple[Page, list[str]]:
    """The page loaded, with every console error or warning and page error it gives."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"{message.type}: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.goto(f"{base}/ui")
    return page, problems


def _open(browser: Browser, base: str, key: str) -> tuple[Page, list[str]]:
    page, problems = _load(browser, base)
    page.fill("#key", key)
    page.click("#key-form button")
    page.wait_for_selector("#log tbody tr")
    return page, problems


def test_find_open_and_label_a_semantic_duplicate(
    browser: Browser, served: tuple[str, Path, str, str], tmp_path: Path
) -> None:
    base, db, admin, agent = served
    made = _traffic(base, agent)
    page, problems = _open(browser, base, admin)
    page.select_option("select[name=stage]", "semantic")
    page.click("#filters button[type=submit]")
    expect(page.locator("#log tbody tr")).to_have_count(1)
    page.click("#log tbody tr")
    page.wait_for_selector("#detail:not([hidden])")
    assert REWORDED in page.inner_text("#proposed")
    assert "Let me know if you have any questions" in page.inner_text("#matched")
    differing = page.locator("#fields tr.differs td:first-child").all_inner_texts()
    assert differing == ["body"]
    # A borderline match the policy answered duplicate reads as matched, as answered.
    semantic_stage = page.locator("#stages tbody tr").filter(has_text="semantic")
    expect(semantic_stage.locator("td").nth(3)).to_have_text("yes")
    assert "m-42" in page.inner_text("#result")
    page.click("#same")
    expect(page.locator("#label-status")).to_have_text("labelled duplicate")
    shot = tmp_path / "review-page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    if os.environ.get("TOOLDEDUP_SCREENSHOT"):
        # `make screenshot` keeps the README's picture made by this very test.
        shutil.copyfile(shot, os.environ["TOOLDEDUP_SCREENSHOT"])
    assert problems == []
    exported = [json.loads(line) for line in _cli("export-log", "--db", str(db)).splitlines()]
    labelled = [e for e in exported if e["check_id"] == made["semantic"]["check_id"]]
    assert labelled[0]["feedback"]["label"] == "duplicate"
    assert labelled[0]["feedback"]["key_id"] == admin.split("_")[1]


def test_markup_in_a_tool_call_renders_as_text(
    browser: Browser, served: tuple[str, Path, str, str]
) -> None:
    base, _, admin, agent = served
    made = _traffic(base, agent)
    page, problems = _open(browser, base, admin)
    page.click(f"#log tbody tr[data-check='{made['markup']['check_id']}']")
    page.wait_for_selector("#detail:not([hidden])")
    assert json.dumps(XSS) in page.inner_text("#proposed")  # as JSON, quotes escaped
    assert "ACCT-\\u202E4321\\u202C" in page.inner_text("#proposed")  # the override shown
    assert XSS in page.inner_text("#fields")  # the text field, character for character
    # Nothing the call carried ran or became an element: one script (the page's own), no
    # injected image, no bold text.
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("document.scripts.length") == 1
    assert page.locator("#detail img, #detail b").count() == 0
    # Nothing matched it: it is shown beside the closest call, and "to" is what differs.
    assert page.inner_text("#other-title") == "Closest call (no match)"
    assert "to" in page.locator("#fields tr.differs td:first-child").all_inner_texts()
    assert page.is_disabled("#same")
    assert problems == []


def test_the_queue_and_the_glance(browser: Browser, served: tuple[str, Path, str, str]) -> None:
    base, db, admin, agent = served
    _traffic(base, agent)
    page, problems = _open(browser, base, admin)
    page.click("button[data-view=queue]")
    page.wait_for_selector("#detail:not([hidden])")
    expect(page.locator("#queue-position")).to_have_text("Match 1 of 1")
    page.keyboard.press("Control+d")  # the browser's bookmark key: never a label
    page.keyboard.press("d")  # different
    expect(page.locator("#queue-position")).to_have_text("Nothing left to label.")
    page.keyboard.press("s")  # nothing is shown: nothing is labelled
    page.click("button[data-view=glance]")
    page.wait_for_selector("#glance-body table")
    text = page.inner_text("#glance-body")
    assert "send_email" in text
    assert page.locator("#glance-body svg rect").count() > 0
    assert problems == []
    exported = [json.loads(line) for line in _cli("export-log", "--db", str(db)).splitlines()]
    assert [e["feedback"]["label"] for e in exported if e["feedback"]] == ["distinct"]


@pytest.mark.parametrize(
    ("with_keys", "rows", "status"),
    [(False, 3, "3 decisions shown"), (True, 0, "Enter an API key")],
)
def test_on_loopback_without_keys_the_page_needs_no_key(
    browser: Browser, tmp_path: Path, model_cache: Path, with_keys: bool, rows: int, status: str
) -> None:
    db = tmp_path / "ledger.db"
    agent = None
    if with_keys:
        agent = _cli("keys", "create", "--tenant", "acme", "--role", "agent", "--db", str(db))
    with serve(db, model_cache) as client:
        base = str(client.base_url)
        _traffic(base, None if agent is None else agent.strip())
        # Nothing pressed: the page reads what it can on its own.
        page, problems = _load(browser, base)
        expect(page.locator("#status")).to_contain_text(status)
        expect(page.locator("#log tbody tr")).to_have_count(rows)
        # Asking whether a key is needed is no refused request in the console.
        assert problems == []


# The verifier cannot account for the dropped "any": the service asks the agent.
UNSURE = "Hi Bob, the Q3 report is attached. Please let me know if you have questions."


def test_asks_and_observed_decisions_on_the_page(
    browser: Browser, served: tuple[str, Path, str, str]
) -> None:
    base, _, admin, agent = served
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {agent}"}) as client:

        def check(args: dict[str, Any], **extra: Any) -> dict[str, Any]:
            body = {"session_id": "s1", "tool": "send_email", "args": args, **extra}
            answer: dict[str, Any] = client.post("/v1/check", json=body).json()
            return answer

        first = check(EMAIL)
        done = {"status": "succeeded", "result": {"message_id": "m-42"}}
        client.post(f"/v1/calls/{first['call_id']}/complete", json=done)
        asked = check({**EMAIL, "body": UNSURE}, answers=["ask"])
        assert asked["decision"] == "ask"
        check({**EMAIL, "body": UNSURE}, confirm_token=asked["ask"]["confirm_token"])
        headers = {"Authorization": f"Bearer {admin}"}
        observe = {"enforcement": "observe"}
        client.put("/v1/tools/send_sms/policy", json=observe, headers=headers)
        sms = {"session_id": "s1", "tool": "send_sms", "args": {"to": "+1555", "text": "hi"}}
        sent = client.post("/v1/check", json=sms).json()
        client.post(f"/v1/calls/{sent['call_id']}/complete", json=done)
        assert client.post("/v1/check", json=sms).json()["observed"]["decision"] == "duplicate"
    page, problems = _open(browser, base, admin)
    decisions = page.locator("#log tbody td.decision").all_inner_texts()
    assert "ask (confirmed)" in decisions
    assert "proceed (observed: duplicate)" in decisions
    page.select_option("select[name=observed]", "any")
    page.click("#filters button[type=submit]")
    expect(page.locator("#log tbody tr")).to_have_count(1)
    page.click("button[data-view=glance]")
    page.wait_for_selector("#glance-body table")
    text = page.inner_text("#glance-body")
    assert "1 confirmed" in text
    assert "1 duplicate" in text
    assert problems == []
