"""The runnable examples under docs/examples/: each one run as written, as a script, against a
real server, and each one included by a docs page."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.server import serve, serve_command

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
# Run by the other examples, not on their own.
HELPERS = frozenset({"mcp_upstream_server.py"})
# What docs/integrations.md shows, each section with its runnable example.
INTEGRATIONS = frozenset(
    {
        "guard.py",
        "mcp_proxy.py",
        "mcp_upstream_server.py",
        "langchain_agent.py",
        "openai_agents.py",
    }
)
SCRIPTS = sorted(path.name for path in EXAMPLES.glob("*.py") if path.name not in HELPERS)
INCLUDE = re.compile(r'^[ \t]*```python[^\n]*\n[ \t]*--8<-- "docs/examples/([^"]+)"$', re.M)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[httpx.Client]:
    with serve(tmp_path_factory.mktemp("docs") / "ledger.db", model_cache) as client:
        yield client


def _json(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _included(page: Path) -> set[str]:
    """The example files a page includes, each at the top of a ```python fence."""
    return set(INCLUDE.findall(page.read_text(encoding="utf-8")))


def test_the_examples_are_there() -> None:
    assert {"quickstart.py", *INTEGRATIONS} <= {path.name for path in EXAMPLES.glob("*.py")}


@pytest.mark.parametrize("name", SCRIPTS)
def test_an_example_runs_each_side_effect_once(
    name: str, service: httpx.Client, tmp_path: Path
) -> None:
    env = {**os.environ, "TOOLDEDUP_URL": str(service.base_url)}
    ran = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # Every side effect the example repeats really happened once...
    runs = [int(n) for n in re.findall(r" ran (\d+) time\(s\)$", ran.stdout, re.M)]
    assert runs, ran.stdout
    assert runs == [1] * len(runs), ran.stdout
    # ...the server holds one completed call for each...
    sessions = re.findall(r"^session: (\S+)$", ran.stdout, re.M)
    assert sessions, ran.stdout
    calls: list[dict[str, Any]] = []
    for session in sessions:
        calls += _json(service.get(f"/v1/sessions/{quote(session, safe='')}/calls"))["calls"]
    assert len(calls) == len(runs), calls
    assert [call["status"] for call in calls] == ["succeeded"] * len(calls)
    # ...and answered each one's repeat as a duplicate of it.
    log = _json(service.get("/v1/log", params={"limit": 1000}))["entries"]
    repeated = {
        entry["matched_call_id"]
        for entry in log
        if entry["session_id"] in sessions and entry["decision"] == "duplicate"
    }
    assert repeated == {call["call_id"] for call in calls}
    # The examples leave nothing in the folder they run from.
    assert list(tmp_path.iterdir()) == []


def test_every_example_is_on_a_docs_page() -> None:
    pages = sorted(DOCS.rglob("*.md"))
    included = set().union(*(_included(page) for page in pages))
    missing = {path.name for path in EXAMPLES.glob("*.py")} - included
    assert not missing, f"no page under docs/ includes {sorted(missing)}"


def test_the_integrations_page_includes_each_integration_example() -> None:
    included = _included(DOCS / "integrations.md")
    assert INTEGRATIONS <= included, sorted(INTEGRATIONS - included)
    for name in included:
        assert (EXAMPLES / name).is_file(), name


def _access_sessions() -> dict[str, str]:
    """The shell session under the "… tenants and keys" heading of each page that has one
    (the README and the docs pages), by page."""
    found: dict[str, str] = {}
    for page in [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]:
        text = page.read_text(encoding="utf-8")
        heading = re.search(r"^#+ .*tenants and keys\s*$", text, re.M | re.I)
        if heading is None:
            continue
        block = re.search(r"^```(?:sh|bash)\n(.*?)^```", text[heading.end() :], re.S | re.M)
        if block is not None:
            found[str(page.relative_to(ROOT))] = block.group(1)
    return found


def test_the_access_example(tmp_path: Path, model_cache: Path) -> None:
    """The shell session of "Access: tenants and keys", run by bash in the server's folder."""
    sessions = _access_sessions()
    assert sessions, "no page has a shell session under a 'tenants and keys' heading"
    for page, script in sessions.items():
        folder = tmp_path / page.replace("/", "_")
        folder.mkdir()
        with serve_command(
            [sys.executable, "-m", "tooldedup.api.cli", "serve", "--cache-dir", str(model_cache)],
            cwd=folder,
        ) as server:
            port = str(server.base_url.port)
            env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
            ran = subprocess.run(
                [
                    "bash",
                    "-euo",
                    "pipefail",
                    "-c",
                    script.replace("localhost:8000", f"127.0.0.1:{port}"),
                ],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
        assert ran.returncode == 0, f"{page}: {ran.stderr}"
        answers = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
        assert answers[0]["decision"] == "proceed", page
        assert answers[-1]["error"]["code"] == "unauthorized", page
        assert "revoked" in answers[-1]["error"]["message"], page
        assert "billing agent" in ran.stdout, page  # the listing
