"""The LangChain middleware in a real ``create_agent`` and a real ``ToolNode``, driven by
langchain-core's offline fake chat model, against a real `tooldedup serve`."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic import Field
from tooldedup_client import AsyncTooldedup, Tooldedup
from tooldedup_client.langchain import TooldedupMiddleware, with_confirm_arg

from tests.server import serve

pytestmark = pytest.mark.slow


class ScriptedModel(GenericFakeChatModel):
    """The fake chat model, accepting tools (it answers from its script regardless)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def _calls(*args: dict[str, Any]) -> Iterator[AIMessage]:
    """The model asks for ``transfer`` once per args, then says it is done."""
    for n, arguments in enumerate(args):
        yield AIMessage(
            content="", tool_calls=[{"name": "transfer", "args": arguments, "id": f"call-{n}"}]
        )
    yield AIMessage(content="done")


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[str]:
    with serve(tmp_path_factory.mktemp("lc") / "ledger.db", model_cache) as client:
        yield str(client.base_url)


def _tool_messages(messages: list[Any]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def test_create_agent_middleware_runs_a_repeated_call_once(base_url: str) -> None:
    runs: list[float] = []

    @tool
    def transfer(account: str, amount: float) -> str:
        """Move money between accounts."""
        runs.append(amount)
        return f"moved {amount:g} to {account} (#{len(runs)})"

    # --8<-- [start:langchain]
    td = Tooldedup(base_url)
    model = ScriptedModel(
        messages=_calls(
            {"account": "ACC-1", "amount": 100},
            {"amount": 100, "account": "ACC-1"},  # the model repeats itself
            {"account": "ACC-1", "amount": 250},
        )
    )
    agent = create_agent(model, [transfer], middleware=[TooldedupMiddleware(td)])
    thread = {"configurable": {"thread_id": "thread-" + uuid.uuid4().hex[:8]}}
    result = agent.invoke({"messages": [("user", "pay ACC-1")]}, thread)
    # --8<-- [end:langchain]
    first, repeat, other = _tool_messages(result["messages"])
    assert (first, other) == ("moved 100 to ACC-1 (#1)", "moved 250 to ACC-1 (#2)")
    # The repeat tells the model what it already did, with the earlier result.
    assert repeat.startswith('You already called transfer(account="ACC-1", amount=100)')
    assert repeat.endswith(
        "It was not run again; use that result instead of calling it again."
        "\nThe earlier call's result: moved 100 to ACC-1 (#1)"
    )
    assert runs == [100, 250]
    td.close()


def test_tool_node_async_hook_and_the_thread_as_session(base_url: str) -> None:
    runs: list[str] = []

    @tool
    async def transfer(account: str, amount: float) -> str:
        """Move money between accounts."""
        runs.append(account)
        return f"moved {amount:g} to {account}"

    async def scenario() -> None:
        async with AsyncTooldedup(base_url) as td:
            middleware = TooldedupMiddleware(aclient=td)
            node = ToolNode([transfer], awrap_tool_call=middleware.awrap_tool_call)
            graph = StateGraph(MessagesState)
            graph.add_node("tools", node)
            graph.add_edge(START, "tools")
            graph.add_edge("tools", END)
            app = graph.compile()
            call = next(_calls({"account": "ACC-2", "amount": 5}))
            for thread in ("t-a", "t-a", "t-b"):
                config = {"configurable": {"thread_id": f"{thread}-{base_url[-5:]}"}}
                await app.ainvoke({"messages": [call]}, config)

    asyncio.run(scenario())
    # The same call twice in thread t-a ran once; thread t-b is another session.
    assert runs == ["ACC-2", "ACC-2"]


def test_a_lost_connection_in_a_tool_asks_repeats_to_reconcile(base_url: str) -> None:
    attempts: list[int] = []

    @tool
    def transfer(account: str, amount: float) -> str:
        """Move money between accounts."""
        attempts.append(1)
        raise ConnectionResetError("bank hung up")

    td = Tooldedup(base_url)
    model = ScriptedModel(messages=_calls({"account": "ACC-3", "amount": 1}))
    agent = create_agent(model, [transfer], middleware=[TooldedupMiddleware(td)])
    thread = {"configurable": {"thread_id": "thread-" + uuid.uuid4().hex[:8]}}
    with pytest.raises(ConnectionResetError):
        agent.invoke({"messages": [("user", "pay")]}, thread)
    # A lost connection may have moved the money: a repeat must reconcile, not run.
    check = td.check(
        "transfer",
        {"account": "ACC-3", "amount": 1},
        session_id=thread["configurable"]["thread_id"],
        dry_run=True,
    )
    assert check.decision.value == "reconcile"
    assert attempts == [1]
    td.close()


BODY = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
# The verifier cannot account for the dropped "any": the service asks the agent.
UNSURE = "Hi Bob, the Q3 report is attached. Please let me know if you have questions."


class ReadingModel(BaseChatModel):
    """A scripted model that reads the conversation: step n sees every message so far.

    Bound to tools, it holds to their schemas as a strict provider does: a tool call with
    an argument its tool's schema does not offer fails the run.
    """

    steps: list[Any]
    # Each bound tool's parameters, as a provider is sent them.
    schemas: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "reading-model"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ReadingModel:
        functions = [convert_to_openai_tool(t)["function"] for t in tools]
        self.schemas.update({f["name"]: f["parameters"] for f in functions})
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        step = sum(isinstance(m, AIMessage) for m in messages)
        message = self.steps[step](messages)
        for call in message.tool_calls:
            offered = self.schemas[call["name"]]["properties"]
            unknown = set(call["args"]) - set(offered)
            assert not unknown, f"{call['name']} offers no {unknown}"
        return ChatResult(generations=[ChatGeneration(message=message)])


def _email(body: str, n: int, **extra: str) -> Any:
    args = {"to": "bob@example.com", "body": body, **extra}
    return lambda _: AIMessage(
        content="", tool_calls=[{"name": "send_email", "args": args, "id": f"mail-{n}"}]
    )


def _confirm(n: int) -> Any:
    """Read the token from the last tool message and send the call again with it."""

    def step(messages: list[BaseMessage]) -> AIMessage:
        note = str(messages[-1].content)
        token = re.search(r'confirm_token "(cfm_[0-9a-f]+)"', note)
        assert token is not None, note
        return _email(UNSURE, n, confirm_token=token.group(1))(messages)

    return step


@pytest.mark.parametrize("confirms", [False, True])
def test_the_model_reads_the_ask_and_stops_or_confirms(base_url: str, confirms: bool) -> None:
    sent: list[str] = []

    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        sent.append(body)
        return f"sent #{len(sent)}"

    steps = [_email(BODY, 0), _email(UNSURE, 1)]
    steps += [_confirm(2)] if confirms else []
    steps += [lambda _: AIMessage(content="done")]
    model = ReadingModel(steps=steps)
    with Tooldedup(base_url) as td:
        agent = create_agent(model, [send_email], middleware=[TooldedupMiddleware(td)])
        thread = {"configurable": {"thread_id": "ask-" + uuid.uuid4().hex[:8]}}
        result = agent.invoke({"messages": [("user", "mail Bob")]}, thread)
    # The model was offered the confirm argument (the strict model checks each call by it);
    # the tool itself was not changed.
    assert "confirm_token" in model.schemas["send_email"]["properties"]
    assert "confirm_token" not in send_email.args
    replies = _tool_messages(result["messages"])
    assert replies[0] == "sent #1"
    assert "This call may be the same request again" in replies[1]
    if confirms:
        assert replies[2] == "sent #2"
        assert sent == [BODY, UNSURE]  # the confirmed call ran once, without the token
    else:
        assert sent == [BODY]


def test_a_tools_own_confirm_argument_is_left_alone(base_url: str) -> None:
    tokens: list[str] = []

    @tool
    def approve(request_id: str, confirm_token: str) -> str:
        """Approve a request with the approver's own confirmation code."""
        tokens.append(confirm_token)
        return f"approved {request_id}"

    (offered,) = with_confirm_arg([approve])
    assert offered is approve  # its own argument, its own description
    call = {"request_id": "R-1", "confirm_token": "code-7"}
    steps = [
        lambda _: AIMessage(content="", tool_calls=[{"name": "approve", "args": call, "id": "a"}]),
        lambda _: AIMessage(content="done"),
    ]
    with Tooldedup(base_url) as td:
        agent = create_agent(
            ReadingModel(steps=steps), [approve], middleware=[TooldedupMiddleware(td)]
        )
        thread = {"configurable": {"thread_id": "own-" + uuid.uuid4().hex[:8]}}
        result = agent.invoke({"messages": [("user", "approve R-1")]}, thread)
    assert _tool_messages(result["messages"]) == ["approved R-1"]
    assert tokens == ["code-7"]  # passed to the tool, not taken as tooldedup's token


def test_with_confirm_arg_offers_an_optional_string_and_changes_no_tool() -> None:
    @tool
    def transfer(account: str, amount: float) -> str:
        """Move money between accounts."""
        return account

    web_search = {"type": "web_search"}  # a provider's built-in tool
    offered, builtin = with_confirm_arg([transfer, web_search])
    assert builtin is web_search
    assert isinstance(offered, BaseTool)
    assert offered.name == transfer.name
    parameters = convert_to_openai_tool(offered)["function"]["parameters"]
    assert parameters["properties"]["confirm_token"] == {
        "type": "string",
        "description": "only when tooldedup asked to confirm this call: the token it gave",
    }
    assert parameters["required"] == ["account", "amount"]
    assert (
        "confirm_token"
        not in convert_to_openai_tool(transfer)["function"]["parameters"]["properties"]
    )
