"""`tooldedup-mcp` between a real MCP client and a real, counting upstream MCP server."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from tests.server import serve

pytestmark = pytest.mark.slow

UPSTREAM = str(Path(__file__).with_name("mcp_upstream.py"))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[str]:
    db = tmp_path_factory.mktemp("mcp") / "ledger.db"
    with serve(db, model_cache) as client:
        read = client.put("/v1/tools/log_event/policy", json={"side_effect": "read"})
        assert read.status_code == 200
        yield str(client.base_url)


def _runs(counts: Path, tool: str) -> int:
    if not counts.exists():
        return 0
    return sum(1 for line in counts.read_text().splitlines() if line == tool)


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _proxy_args(service: str, session: str) -> list[str]:
    return ["-m", "tooldedup_client.mcp_proxy", "--service", service, "--session", session]


async def _scenario(client: Client[Any], counts: Path) -> None:
    async with client:
        tools = {tool.name for tool in await client.list_tools()}
        assert {"transfer", "balance", "refuse"} <= tools
        first = await client.call_tool("transfer", {"account": "ACC-7", "amount": 100})
        # The model re-issues it with its keys the other way round.
        again = await client.call_tool("transfer", {"amount": 100, "account": "ACC-7"})
        assert _text(first) == "transferred 100 to ACC-7 (execution 1)"
        # The repeat: the service's note for the model, then the stored result unchanged.
        assert again.content[1:] == first.content
        assert _text(again).startswith('You already called transfer(account="ACC-7"')
        assert _runs(counts, "transfer") == 1
        other = await client.call_tool("transfer", {"account": "ACC-7", "amount": 250})
        assert _text(other) == "transferred 250 to ACC-7 (execution 2)"
        assert _runs(counts, "transfer") == 2
        # A client that names its own session in _meta is deduplicated in that session.
        elsewhere = {"tooldedup/session": "another-" + uuid.uuid4().hex[:8]}
        for _ in range(2):
            moved = await client.call_tool(
                "transfer", {"account": "ACC-7", "amount": 100}, meta=elsewhere
            )
        # The second of the two: a repeat, answered with the note and the stored result.
        assert _text(moved).endswith("transferred 100 to ACC-7 (execution 3)")
        assert _runs(counts, "transfer") == 3
        # A read-only tool is forwarded every time.
        await client.call_tool("balance", {"account": "ACC-7"})
        await client.call_tool("balance", {"account": "ACC-7"})
        assert _runs(counts, "balance") == 2
        # An upstream error is a failed call: retryable, so a repeat runs again.
        for _ in range(2):
            failed = await client.call_tool("refuse", {"reason": "no"}, raise_on_error=False)
            assert failed.is_error
        assert _runs(counts, "refuse") == 2
        # A tool the service's policy calls a read is forwarded every time, no claim.
        for _ in range(2):
            logged = await client.call_tool("log_event", {"text": "hello"})
            assert not logged.is_error
        assert _runs(counts, "log_event") == 2


BODY = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
# The verifier cannot account for the dropped "any": the service asks the agent.
UNSURE = "Hi Bob, the Q3 report is attached. Please let me know if you have questions."


def _bodies(counts: Path) -> list[str]:
    lines = counts.read_text().splitlines() if counts.exists() else []
    return [line.removeprefix("body: ") for line in lines if line.startswith("body: ")]


# The upstream's two mail tools: send_email has an output schema (fastmcp wraps its str
# return), post_message has none; the word each one's result starts with.
_MAIL_TOOLS = {"send_email": "sent", "post_message": "posted"}


@pytest.mark.parametrize("confirms", [False, True])
@pytest.mark.parametrize("tool", sorted(_MAIL_TOOLS))
def test_an_ask_is_the_tool_result_and_a_confirmation_runs_once(
    service: str, tmp_path: Path, tool: str, confirms: bool
) -> None:
    counts = tmp_path / "counts.txt"
    session = "mcp-" + uuid.uuid4().hex[:8]
    args = [*_proxy_args(service, session), "--", sys.executable, UPSTREAM, str(counts)]
    transport = StdioTransport(command=sys.executable, args=args, env=dict(os.environ))
    has_schema = tool == "send_email"

    async def scenario() -> None:
        async with Client(transport) as client:
            tools = {listed.name: listed for listed in await client.list_tools()}
            assert (tools[tool].output_schema is not None) == has_schema
            assert "confirm_token" in tools[tool].input_schema["properties"]
            assert "confirm_token" not in tools["balance"].input_schema["properties"]
            await client.call_tool(tool, {"to": "bob@example.com", "body": BODY})
            asked = await client.call_tool(
                tool, {"to": "bob@example.com", "body": UNSURE}, raise_on_error=False
            )
            note = _text(asked)
            # Nothing ran either way; the note is an error result only where a plain one
            # would have to match the tool's output schema.
            assert asked.is_error == has_schema
            assert "This call may be the same request again" in note
            if confirms:
                token = re.search(r'confirm_token "(cfm_[0-9a-f]+)"', note)
                assert token is not None, note
                confirmed = {"to": "bob@example.com", "body": UNSURE, "confirm_token": token[1]}
                sent = await client.call_tool(tool, confirmed)
                assert _text(sent) == f"{_MAIL_TOOLS[tool]} to bob@example.com (execution 2)"
                # The token is single-use: the same confirmation again runs nothing.
                reused = await client.call_tool(tool, confirmed, raise_on_error=False)
                assert reused.is_error
                assert "already used" in _text(reused) or "You already called" in _text(reused)

    asyncio.run(scenario())
    assert _bodies(counts) == ([BODY, UNSURE] if confirms else [BODY])


def test_proxy_over_stdio(service: str, tmp_path: Path) -> None:
    counts = tmp_path / "counts.txt"
    session = "mcp-" + uuid.uuid4().hex[:8]
    args = [*_proxy_args(service, session), "--", sys.executable, UPSTREAM, str(counts)]
    transport = StdioTransport(command=sys.executable, args=args, env=dict(os.environ))
    asyncio.run(_scenario(Client(transport), counts))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"process exited with {proc.returncode}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    pytest.fail(f"nothing listened on {port}")


def test_proxy_over_http_to_an_http_upstream(service: str, tmp_path: Path) -> None:
    counts = tmp_path / "counts.txt"
    upstream_port, proxy_port = _free_port(), _free_port()
    session = "mcp-" + uuid.uuid4().hex[:8]
    upstream = subprocess.Popen(
        [sys.executable, UPSTREAM, str(counts), "--http", str(upstream_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    proxy_cmd = [sys.executable, *_proxy_args(service, session)]
    proxy_cmd += ["--upstream-url", f"http://127.0.0.1:{upstream_port}/mcp"]
    proxy_cmd += ["--transport", "http", "--port", str(proxy_port)]
    proxy = subprocess.Popen(proxy_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_listening(upstream_port, upstream)
        _wait_listening(proxy_port, proxy)
        asyncio.run(_scenario(Client(f"http://127.0.0.1:{proxy_port}/mcp"), counts))
    finally:
        for proc in (proxy, upstream):
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# The console script pip installed beside this interpreter: what a user runs.
_MCP = str(Path(sys.executable).with_name("tooldedup-mcp"))
_OPTIONS = [
    "--service",
    "--session",
    "--api-key-env",
    "--upstream-url",
    "--transport",
    "--host",
    "--port",
    "--fail-open",
    "--version",
]


def _help_entries(text: str) -> dict[str, str]:
    """Each option of ``--help``'s listing with the help text printed for it."""
    entries: dict[str, str] = {}
    current = None
    for line in text.split("options:", 1)[1].splitlines():
        if line.startswith("  -"):
            invocation, _, said = line.strip().partition("  ")
            names = invocation.replace(",", " ").split()
            current = [name for name in names if name.startswith("-")][-1]
            entries[current] = said.strip()
        elif current is not None and line.strip():
            entries[current] = (entries[current] + " " + line.strip()).strip()
    return entries


@pytest.fixture(scope="module")
def help_text() -> str:
    shown = subprocess.run([_MCP, "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def test_help_reads_as_prose(help_text: str) -> None:
    assert "``" not in help_text
    assert "MCP proxy" in help_text


@pytest.mark.parametrize("option", _OPTIONS)
def test_every_option_says_what_it_does(help_text: str, option: str) -> None:
    assert _help_entries(help_text).get(option), f"{option} has no help text"


@pytest.mark.parametrize(
    ("option", "default"),
    [("--transport", "stdio"), ("--host", "127.0.0.1"), ("--port", "8765")],
)
def test_help_shows_the_defaults(help_text: str, option: str, default: str) -> None:
    assert f"(default: {default})" in _help_entries(help_text)[option]


def test_version_is_the_installed_client() -> None:
    shown = subprocess.run([_MCP, "--version"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == f"tooldedup-mcp {importlib.metadata.version('tooldedup-client')}"
