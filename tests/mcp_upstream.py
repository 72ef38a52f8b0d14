"""A small upstream MCP server for the proxy tests: it counts how often each tool really ran.

Run as ``python tests/mcp_upstream.py COUNT_FILE [--http PORT]``; every execution appends one
line (the tool's name) to COUNT_FILE.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fastmcp import FastMCP
from mcp.types import ToolAnnotations

COUNTS = Path(sys.argv[1])
server = FastMCP("counting-upstream")


def _ran(tool: str) -> int:
    with COUNTS.open("a", encoding="utf-8") as out:
        out.write(tool + "\n")
    return sum(1 for line in COUNTS.read_text().splitlines() if line == tool)


@server.tool
def transfer(account: str, amount: float) -> str:
    """Move money (a side effect)."""
    n = _ran("transfer")
    return f"transferred {amount:g} to {account} (execution {n})"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def balance(account: str) -> str:
    """Read a balance (no side effect)."""
    n = _ran("balance")
    return f"{account}: 100 (read {n})"


@server.tool
def log_event(text: str) -> str:
    """Append to a log (no hint; the service's policy may call it a read)."""
    n = _ran("log_event")
    return f"logged {n}"


@server.tool
def send_email(to: str, body: str) -> str:
    """Send an email (a side effect); each body sent is counted too."""
    n = _ran("send_email")
    with COUNTS.open("a", encoding="utf-8") as out:
        out.write(f"body: {body}\n")
    return f"sent to {to} (execution {n})"


@server.tool(output_schema=None)
def post_message(to: str, body: str) -> str:
    """Post a message (a side effect), with no output schema; each body is counted too."""
    n = _ran("post_message")
    with COUNTS.open("a", encoding="utf-8") as out:
        out.write(f"body: {body}\n")
    return f"posted to {to} (execution {n})"


@server.tool
def refuse(reason: str) -> str:
    """Always fails."""
    _ran("refuse")
    raise ValueError(f"refused: {reason}")


if __name__ == "__main__":
    if "--http" in sys.argv:
        server.run(transport="http", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        server.run(transport="stdio", show_banner=False)
