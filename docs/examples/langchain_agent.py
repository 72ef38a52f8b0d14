"""LangChain and LangGraph: `TooldedupMiddleware` on a prebuilt agent (`create_agent`) and on
the `ToolNode` of a hand-built graph. The model asks for the same transfer twice; it runs once.

Run it against `make run`:  .venv/bin/python docs/examples/langchain_agent.py
"""

import asyncio
import os
import uuid
from collections.abc import Iterator
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from tooldedup_client import AsyncTooldedup, Tooldedup
from tooldedup_client.langchain import TooldedupMiddleware

URL = os.environ.get("TOOLDEDUP_URL", "http://127.0.0.1:8000")
RUN = uuid.uuid4().hex[:8]  # new thread ids per run: each run starts afresh

transfers: list[str] = []  # what really moved


@tool
def transfer(account: str, amount: float) -> str:
    """Move money to an account."""
    transfers.append(account)
    return f"moved {amount:g} to {account}"


class ScriptedModel(GenericFakeChatModel):
    """An offline chat model that answers from a script (it accepts tools and ignores them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        return self


def repeating_model(account: str) -> ScriptedModel:
    """A model that asks for the same transfer twice (its keys the other way round), then
    says it is done."""
    # Swap in your real model, e.g. ChatOpenAI(model="gpt-4o")
    script: Iterator[AIMessage] = iter(
        [
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "transfer", "args": {"account": account, "amount": 100}, "id": "c1"}
                ],
            ),
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "transfer", "args": {"amount": 100, "account": account}, "id": "c2"}
                ],
            ),
            AIMessage(content="done"),
        ]
    )
    return ScriptedModel(messages=script)


def tool_replies(messages: list[AnyMessage]) -> list[str]:
    return [str(m.content) for m in messages if m.type == "tool"]


# 1. The prebuilt agent. The session is the run's thread_id.
td = Tooldedup(URL)
agent = create_agent(repeating_model("ACC-1"), [transfer], middleware=[TooldedupMiddleware(td)])
thread_1 = f"pay-acc-1-{RUN}"
result = agent.invoke(
    {"messages": [HumanMessage("pay ACC-1")]}, {"configurable": {"thread_id": thread_1}}
)
td.close()
print("create_agent tool replies:", tool_replies(result["messages"]))
print(f"session: {thread_1}")
print(f"transfer (create_agent) ran {transfers.count('ACC-1')} time(s)")


# 2. A hand-built graph: the same hooks on a ToolNode, here asynchronous.
async def main() -> None:
    thread_2 = f"pay-acc-2-{RUN}"
    model = repeating_model("ACC-2").bind_tools([transfer])
    async with AsyncTooldedup(URL) as atd:
        tools = ToolNode(
            [transfer], awrap_tool_call=TooldedupMiddleware(aclient=atd).awrap_tool_call
        )

        async def call_model(state: MessagesState) -> dict[str, list[AnyMessage]]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("model", call_model)
        graph.add_node("tools", tools)
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", tools_condition)  # to "tools", or the end
        graph.add_edge("tools", "model")
        app = graph.compile()
        state = await app.ainvoke(
            {"messages": [HumanMessage("pay ACC-2")]}, {"configurable": {"thread_id": thread_2}}
        )
    print("ToolNode graph tool replies:", tool_replies(state["messages"]))
    print(f"session: {thread_2}")
    print(f"transfer (ToolNode graph) ran {transfers.count('ACC-2')} time(s)")


asyncio.run(main())
