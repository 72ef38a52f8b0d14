"""The OpenAI Agents SDK hooks in a real ``Runner`` with a scripted offline model, against a
real `tooldedup serve`, and (for MCP tools) a real counting upstream MCP server."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
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

from tests.server import serve

pytestmark = pytest.mark.slow
UPSTREAM = str(Path(__file__).with_name("mcp_upstream.py"))


class ScriptedModel(Model):
    """Answers each turn from a script: tool calls, then a final message. No network."""

    def __init__(self, tool: str, arguments: list[dict[str, Any]]) -> None:
        self._turns = iter([*([a] for a in arguments), []])
        self._ids = itertools.count()
        self._tool = tool

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        turn = next(self._turns)
        output: list[TResponseOutputItem] = []
        for arguments in turn:
            n = next(self._ids)
            output.append(
                ResponseFunctionToolCall(
                    id=f"fc_{n}",
                    call_id=f"call_{n}",
                    name=self._tool,
                    arguments=json.dumps(arguments),
                    type="function_call",
                    status="completed",
                )
            )
        if not turn:
            text = ResponseOutputText(text="done", type="output_text", annotations=[])
            output.append(
                ResponseOutputMessage(
                    id="msg", content=[text], role="assistant", status="completed", type="message"
                )
            )
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[str]:
    set_tracing_disabled(True)  # tracing would export to a hosted endpoint
    with serve(tmp_path_factory.mktemp("agents") / "ledger.db", model_cache) as client:
        yield str(client.base_url)


def test_a_guarded_function_tool_runs_a_repeated_call_once(base_url: str) -> None:
    runs: list[float] = []

    def transfer(account: str, amount: float) -> str:
        """Move money between accounts."""
        runs.append(amount)
        return f"moved {amount:g} to {account} (#{len(runs)})"

    async def scenario() -> list[str]:
        # --8<-- [start:agents]
        td = AsyncTooldedup(base_url)
        tool = guard_function_tool(function_tool(transfer, failure_error_function=None), td)
        model = ScriptedModel(
            "transfer",
            [{"account": "A", "amount": 100}, {"amount": 100, "account": "A"}],
        )
        agent = Agent(name="payer", model=model, tools=[tool])
        result = await Runner.run(agent, "pay A", context={"session_id": "s-" + uuid.uuid4().hex})
        # --8<-- [end:agents]
        await td.aclose()
        return [str(item.output) for item in result.new_items if hasattr(item, "output")]

    outputs = asyncio.run(scenario())
    assert outputs == ["moved 100 to A (#1)", "moved 100 to A (#1)"]
    assert runs == [100]


def test_guardrails_put_mcp_server_tools_behind_tooldedup(base_url: str, tmp_path: Path) -> None:
    counts = tmp_path / "counts.txt"

    async def scenario() -> None:
        async with AsyncTooldedup(base_url) as td:
            dedup = TooldedupGuardrails(td, session_id="s-" + uuid.uuid4().hex)
            server = MCPServerStdio(
                {"command": sys.executable, "args": [UPSTREAM, str(counts)]},
                client_session_timeout_seconds=30,
                tool_input_guardrails=[dedup.input],
                tool_output_guardrails=[dedup.output],
            )
            async with server:
                model = ScriptedModel(
                    "transfer",
                    [
                        {"account": "B", "amount": 7},
                        {"amount": 7, "account": "B"},
                        {"account": "B", "amount": 8},
                    ],
                )
                agent = Agent(name="payer", model=model, mcp_servers=[server])
                result = await Runner.run(agent, "pay B")
            outputs = [str(i.output) for i in result.new_items if hasattr(i, "output")]
            assert len(outputs) == 3
            assert "execution 1" in outputs[0]
            assert "execution 1" in outputs[1]  # the stored output, replayed
            assert "execution 2" in outputs[2]

    asyncio.run(scenario())
    assert counts.read_text().splitlines() == ["transfer", "transfer"]
