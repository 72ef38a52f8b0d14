"""A small MCP server to put behind `tooldedup-mcp`: one side-effecting tool, one read.

Run as `python mcp_upstream_server.py LEDGER_FILE`: it serves MCP over stdio, and every real
execution of `transfer` appends a line to LEDGER_FILE, so you can count them.
"""

import sys
from pathlib import Path

from fastmcp import FastMCP
from mcp.types import ToolAnnotations

LEDGER = Path(sys.argv[1])
server = FastMCP("bank")


@server.tool
def transfer(account: str, amount: float) -> str:
    """Move money to an account (a side effect)."""
    with LEDGER.open("a", encoding="utf-8") as ledger:
        ledger.write(f"{account} {amount:g}\n")
    return f"transferred {amount:g} to {account}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def balance(account: str) -> str:
    """Read an account's balance (read-only: the proxy forwards it every time)."""
    return f"{account}: 100"


if __name__ == "__main__":
    server.run(transport="stdio", show_banner=False)
