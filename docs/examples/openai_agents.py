"""The OpenAI Agents SDK: a guarded function tool, and a pair of tool guardrails for the tools
of an MCP server. The model asks for the same transfer twice; it runs once.

Run it against `make run`:  .venv/bin/python docs/examples/openai_agents.py
"""

import asyncio
import itertools
import json
import os
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse, TResponseOutputItem
from agents.mcp import MCPServerStdio
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from tooldedup_client import AsyncTooldedup
from tooldedup_client.openai_agents import TooldedupGuardrails, guard_function_tool

URL = os.environ.get("TOOLDEDUP_URL", "http://127.0.0.1:8000")
RUN = uuid.uuid4().hex[:8]  # new sessions per run: each run starts afresh
UPSTREAM = Path(__file__).with_name("mcp_upstream_server.py")

transfers: list[str] = []  # what the function tool really moved


def transfer(account: str, amount: float) -> str:
    """Move money to an account."""
    transfers.append(account)
    return f"moved {amount:g} to {account}"


class ScriptedModel(Model):
    """An offline model: it calls `transfer` with each of its arguments in turn, then says it
    is done. No network."""

    def __init__(self, arguments: list[dict[str, Any]]) -> None:
        self._turns = iter([*arguments, None])
        self._ids = itertools.count()

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        arguments = next(self._turns)
        n = next(self._ids)
        output: list[TResponseOutputItem]
        if arguments is None:
            text = ResponseOutputText(text="done", type="output_text", annotations=[])
            output = [
                ResponseOutputMessage(
                    id="msg", content=[text], role="assistant", status="completed", type="message"
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    id=f"fc_{n}",
                    call_id=f"call_{n}",
                    name="transfer",
                    arguments=json.dumps(arguments),
                    type="function_call",
                    status="completed",
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("this example does not stream")


def repeating_model(account: str) -> ScriptedModel:
    """The same transfer twice, its keys the other way round the second time."""
    # Swap in your real model, e.g. Agent(..., model="gpt-4o") with OPENAI_API_KEY set
    return ScriptedModel([{"account": account, "amount": 100}, {"amount": 100, "account": account}])


def outputs(result: Any) -> list[str]:
    return [str(item.output) for item in result.new_items if hasattr(item, "output")]


async def main(ledger: Path) -> None:
    async with AsyncTooldedup(URL) as td:
        # 1. A function tool, guarded. The session is the run context's session_id.
        session_1 = f"payer-{RUN}"
        tool = guard_function_tool(function_tool(transfer, failure_error_function=None), td)
        agent = Agent(name="payer", model=repeating_model("A"), tools=[tool])
        result = await Runner.run(agent, "pay A", context={"session_id": session_1})
        print("function tool outputs:", outputs(result))
        print(f"session: {session_1}")
        print(f"transfer (function tool) ran {len(transfers)} time(s)")

        # 2. The tools of an MCP server, which the SDK does not let you wrap: a pair of tool
        # guardrails. The input guardrail checks, the output guardrail stores the output.
        session_2 = f"mcp-payer-{RUN}"
        dedup = TooldedupGuardrails(td, session_id=session_2)
        server = MCPServerStdio(
            {"command": sys.executable, "args": [str(UPSTREAM), str(ledger)]},
            client_session_timeout_seconds=30,
            tool_input_guardrails=[dedup.input],
            tool_output_guardrails=[dedup.output],
        )
        async with server:
            agent = Agent(name="payer", model=repeating_model("B"), mcp_servers=[server])
            result = await Runner.run(agent, "pay B")
        print("MCP tool outputs:", outputs(result))
        runs = ledger.read_text(encoding="utf-8").splitlines() if ledger.exists() else []
        print(f"session: {session_2}")
        print(f"transfer (MCP server) ran {len(runs)} time(s)")


set_tracing_disabled(True)  # offline: the SDK would export traces to OpenAI
with tempfile.TemporaryDirectory() as folder:
    asyncio.run(main(Path(folder) / "transfers.txt"))
