"""`tooldedup-mcp` in front of an MCP server: a real MCP client calls `transfer` twice
through the proxy, and the upstream runs it once.

Run it against `make run`:  .venv/bin/python docs/examples/mcp_proxy.py
"""

import asyncio
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

URL = os.environ.get("TOOLDEDUP_URL", "http://127.0.0.1:8000")
SESSION = "mcp-" + uuid.uuid4().hex[:8]  # a new session per run: each run starts afresh
UPSTREAM = Path(__file__).with_name("mcp_upstream_server.py")

# `pip install './client[mcp]'` puts tooldedup-mcp next to the interpreter.
_beside = Path(sys.executable).with_name("tooldedup-mcp")
PROXY = str(_beside) if _beside.exists() else shutil.which("tooldedup-mcp") or "tooldedup-mcp"


def text(result: object) -> str:
    return "\n".join(getattr(block, "text", "") for block in getattr(result, "content", []))


async def main(ledger: Path) -> None:
    # What an MCP client (Claude Desktop, an IDE, an agent SDK) would launch: the proxy,
    # which launches the real server after `--`.
    proxy = StdioTransport(
        command=PROXY,
        args=[
            *("--service", URL, "--session", SESSION),
            *("--", sys.executable, str(UPSTREAM), str(ledger)),
        ],
    )
    async with Client(proxy) as client:
        print("tools:", sorted(tool.name for tool in await client.list_tools()))
        first = await client.call_tool("transfer", {"account": "ACC-7", "amount": 100})
        print("first: ", text(first))
        # The agent repeats the call, its arguments in another order: replayed, not run.
        again = await client.call_tool("transfer", {"amount": 100, "account": "ACC-7"})
        print("again: ", text(again))
        # A read-only tool is forwarded every time, unchecked.
        print("balance:", text(await client.call_tool("balance", {"account": "ACC-7"})))


with tempfile.TemporaryDirectory() as folder:
    ledger = Path(folder) / "transfers.txt"
    asyncio.run(main(ledger))
    runs = ledger.read_text(encoding="utf-8").splitlines() if ledger.exists() else []
    print(f"session: {SESSION}")
    print(f"transfer ran {len(runs)} time(s)")
