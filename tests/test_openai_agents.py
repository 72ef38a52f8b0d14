"""The OpenAI Agents SDK hooks in a real ``Runner`` with a scripted offline model, against a
real `tooldedup serve`, and (for MCP tools) a real counting upstream MCP server."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
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
    assert outputs[0] == "moved 100 to A (#1)"
    # The repeat tells the model what it already did, with the earlier output.
    assert outputs[1].startswith('You already called transfer(account="A", amount=100)')
    assert outputs[1].endswith("\nThe earlier call's result: moved 100 to A (#1)")
    assert runs == [100]


def _guarded_upstream(td: AsyncTooldedup, counts: Path) -> MCPServerStdio:
    """The test upstream over stdio, its tools behind one fresh session's guardrail pair."""
    dedup = TooldedupGuardrails(td, session_id="s-" + uuid.uuid4().hex)
    return MCPServerStdio(
        {"command": sys.executable, "args": [UPSTREAM, str(counts)]},
        client_session_timeout_seconds=30,
        tool_input_guardrails=[dedup.input],
        tool_output_guardrails=[dedup.output],
    )


def test_guardrails_put_mcp_server_tools_behind_tooldedup(base_url: str, tmp_path: Path) -> None:
    counts = tmp_path / "counts.txt"

    async def scenario() -> None:
        async with AsyncTooldedup(base_url) as td:
            server = _guarded_upstream(td, counts)
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


BODY = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
# The verifier cannot account for the dropped "any": the service asks the agent.
UNSURE = "Hi Bob, the Q3 report is attached. Please let me know if you have questions."


class ReadingModel(Model):
    """A scripted model that reads the run's input: each turn is made from what the tools
    said so far (``None``: the final message)."""

    def __init__(self, steps: list[Any]) -> None:
        self._steps = iter(steps)
        self._ids = itertools.count()

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        given = kwargs.get("input", args[1] if len(args) > 1 else None)
        outputs = [
            str(item.get("output"))
            for item in (given if isinstance(given, list) else [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        arguments = next(self._steps)(outputs)
        if arguments is None:
            text = ResponseOutputText(text="done", type="output_text", annotations=[])
            message = ResponseOutputMessage(
                id="msg", content=[text], role="assistant", status="completed", type="message"
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)
        n = next(self._ids)
        call = ResponseFunctionToolCall(
            id=f"fc_{n}",
            call_id=f"call_{n}",
            name="send_email",
            arguments=json.dumps(arguments),
            type="function_call",
            status="completed",
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def _confirmed(outputs: list[str]) -> dict[str, Any]:
    token = re.search(r'confirm_token "(cfm_[0-9a-f]+)"', outputs[-1])
    assert token is not None, outputs[-1]
    return {"to": "bob@example.com", "body": UNSURE, "confirm_token": token.group(1)}


@pytest.mark.parametrize("confirms", [False, True])
def test_the_model_reads_the_ask_and_stops_or_confirms(base_url: str, confirms: bool) -> None:
    sent: list[str] = []

    def send_email(to: str, body: str) -> str:
        """Send an email."""
        sent.append(body)
        return f"sent #{len(sent)}"

    steps: list[Any] = [
        lambda _: {"to": "bob@example.com", "body": BODY, "confirm_token": None},
        lambda _: {"to": "bob@example.com", "body": UNSURE, "confirm_token": None},
    ]
    steps += [_confirmed] if confirms else []
    steps += [lambda _: None]

    async def scenario() -> list[str]:
        async with AsyncTooldedup(base_url) as td:
            tool = guard_function_tool(function_tool(send_email, failure_error_function=None), td)
            assert "confirm_token" in tool.params_json_schema["properties"]
            agent = Agent(name="mailer", model=ReadingModel(steps), tools=[tool])
            context = {"session_id": "s-" + uuid.uuid4().hex}
            result = await Runner.run(agent, "mail Bob", context=context)
        return [str(item.output) for item in result.new_items if hasattr(item, "output")]

    outputs = asyncio.run(scenario())
    assert outputs[0] == "sent #1"
    assert "This call may be the same request again" in outputs[1]
    if confirms:
        assert outputs[2] == "sent #2"
        assert sent == [BODY, UNSURE]  # the confirmed call ran once, without the token
    else:
        assert sent == [BODY]


@pytest.mark.parametrize(("unsure_action", "runs"), [("proceed", 2), ("duplicate", 1)])
def test_the_guardrail_pair_is_never_asked(
    base_url: str, tmp_path: Path, unsure_action: str, runs: int
) -> None:
    """A guardrail cannot take a confirm token off a call, so the pair does not handle
    ``ask``: where the agent would be asked, it gets the tool's ``unsure_action``."""
    counts = tmp_path / "counts.txt"
    policy = {"unsure_action": unsure_action}
    put = httpx.put(f"{base_url}/v1/tools/post_message/policy", json=policy, timeout=30)
    assert put.status_code == 200, put.text
    mail = [{"to": "bob@example.com", "body": body} for body in (BODY, UNSURE)]

    async def scenario() -> list[str]:
        async with AsyncTooldedup(base_url) as td:
            server = _guarded_upstream(td, counts)
            async with server:
                agent = Agent(
                    name="poster", model=ScriptedModel("post_message", mail), mcp_servers=[server]
                )
                result = await Runner.run(agent, "post to Bob")
            # The same two calls from a caller that handles ask: the second is asked about.
            session = "control-" + uuid.uuid4().hex
            first = await td.check("post_message", mail[0], session_id=session)
            assert first.call_id is not None
            await td.complete(first.call_id, "succeeded", result="posted")
            control = await td.check(
                "post_message", mail[1], session_id=session, answers=("ask",), dry_run=True
            )
            assert control.decision.value == "ask"
        return [str(i.output) for i in result.new_items if hasattr(i, "output")]

    outputs = asyncio.run(scenario())
    assert len(outputs) == 2
    assert "confirm_token" not in outputs[1]
    assert f"(execution {runs})" in outputs[1]  # run again, or the first output replayed
    assert counts.read_text().splitlines().count("post_message") == runs
