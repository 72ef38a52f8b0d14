"""The README's client and framework examples, run as written against a real server."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import set_tracing_disabled
from langchain_core.tools import tool
from tooldedup_client import Decision, Tooldedup

from tests.server import serve, serve_command
from tests.test_langchain import ScriptedModel as ChatScript
from tests.test_langchain import _calls as _chat_calls
from tests.test_openai_agents import ScriptedModel as AgentScript

pytestmark = pytest.mark.slow
README = Path(__file__).parent.parent / "README.md"


def _block(heading: str) -> str:
    """The first ```python block under ``heading``."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, heading
    return found.group(1)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[str]:
    with serve(tmp_path_factory.mktemp("readme") / "ledger.db", model_cache) as client:
        yield str(client.base_url)


def test_the_guard_example(base_url: str) -> None:
    session = "readme-" + uuid.uuid4().hex[:8]
    code = _block("### Python: `Tooldedup` and `guard`")
    code = code.replace("http://127.0.0.1:8000", base_url).replace('"s1"', repr(session))
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    client = namespace["td"]
    assert isinstance(client, Tooldedup)
    client.close()
    with Tooldedup(base_url) as td:
        args = {"to": "bob@example.com", "subject": "Q3", "body": "Hi Bob"}
        again = td.check("send_email", args, session_id=session, dry_run=True)
    assert again.decision is Decision.DUPLICATE
    assert again.match is not None
    assert again.match.result == {"message_id": "m-42"}


def test_the_langchain_example(base_url: str) -> None:
    runs: list[float] = []

    @tool
    def transfer(account: str, amount: float) -> str:
        """Move money between accounts."""
        runs.append(amount)
        return f"moved {amount:g} to {account}"

    repeat = {"account": "ACC-1", "amount": 100}
    code = _block("### LangChain and LangGraph").replace("http://127.0.0.1:8000", base_url)
    code = code.replace('"thread-1"', repr("readme-" + uuid.uuid4().hex[:8]))
    namespace: dict[str, Any] = {
        "model": ChatScript(messages=_chat_calls(repeat, dict(reversed(list(repeat.items()))))),
        "tools": [transfer],
    }
    exec(compile(code, "README.md", "exec"), namespace)
    namespace["td"].close()
    asyncio.run(namespace["atd"].aclose())
    assert runs == [100]
    replies = [m.content for m in namespace["result"]["messages"] if m.type == "tool"]
    assert replies == ["moved 100 to ACC-1", "moved 100 to ACC-1"]


def test_the_openai_agents_example(base_url: str) -> None:
    runs: list[float] = []

    def transfer(account: str, amount: float) -> str:
        """Move money between accounts."""
        runs.append(amount)
        return f"moved {amount:g} to {account}"

    code = _block("### OpenAI Agents SDK").replace("http://127.0.0.1:8000", base_url)
    code = code.replace('"s1"', repr("readme-" + uuid.uuid4().hex[:8]))
    namespace: dict[str, Any] = {
        "transfer": transfer,
        "model": AgentScript("transfer", [{"account": "A", "amount": 5}] * 2),
        "params": {"command": sys.executable, "args": ["-c", "pass"]},
    }
    compiled = compile(code, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)

    async def run() -> None:
        pending = eval(compiled, namespace)
        if pending is not None:
            await pending
        await namespace["td"].aclose()

    set_tracing_disabled(True)
    asyncio.run(run())
    assert runs == [5]


def test_the_access_example(tmp_path: Path, model_cache: Path) -> None:
    """The shell session of "Access: tenants and keys", run by bash in the server's folder."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Access: tenants and keys") :]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found is not None
    with serve_command(
        [sys.executable, "-m", "tooldedup.api.cli", "serve", "--cache-dir", str(model_cache)],
        cwd=tmp_path,
    ) as server:
        port = str(server.base_url.port)
        script = found.group(1).replace("localhost:8000", f"127.0.0.1:{port}")
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert ran.returncode == 0, ran.stderr
    answers = [line for line in ran.stdout.splitlines() if line.startswith("{")]
    assert json.loads(answers[0])["decision"] == "proceed"
    assert json.loads(answers[-1])["error"]["code"] == "unauthorized"
    assert "revoked" in json.loads(answers[-1])["error"]["message"]
    assert "billing agent" in ran.stdout  # the listing
