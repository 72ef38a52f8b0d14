"""LangChain / LangGraph: a tool-call middleware for ``create_agent`` and ``ToolNode``.

    agent = create_agent(model, tools, middleware=[TooldedupMiddleware(Tooldedup(url))])
    ToolNode(tools, wrap_tool_call=mw.wrap_tool_call, awrap_tool_call=mw.awrap_tool_call)

The session is the LangGraph ``thread_id`` of the run (``config["configurable"]``), or the
``session_id`` given here. A repeat answers the model with the service's note and the
earlier result; a call the service asks about answers with the note, and runs when the
model calls it again with ``confirm_token`` (taken off before the tool sees the args).
Under ``create_agent`` the tools' schemas, as the model sees them, offer that optional
argument; a hand-built graph binds ``with_confirm_arg(tools)`` to its model for the same.
Needs ``pip install 'tooldedup-client[langchain]'``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.types import Command

from tooldedup_client.client import AsyncTooldedup, Tooldedup
from tooldedup_client.errors import InProgress, Reconcile, ServiceUnavailable
from tooldedup_client.guard import (
    CONFIRM_ARG,
    Attempt,
    Classify,
    Guard,
    OnUnavailable,
    ReplayedFailure,
    default_classify,
    for_the_model,
    session_scope,
)
from tooldedup_client.records import FailureClass

__all__ = ["TooldedupMiddleware", "with_confirm_arg"]

Result = ToolMessage | Command[Any]


def _stored(message: Result) -> Any:
    if isinstance(message, ToolMessage):
        return {"content": message.content}
    return {"command": repr(message)[:2000]}  # a graph command is not replayed


def _reply(request: ToolCallRequest, content: Any, *, error: bool = False) -> ToolMessage:
    text = content.get("content", content) if isinstance(content, dict) else content
    return ToolMessage(
        content=text if isinstance(text, str | list) else str(text),
        tool_call_id=request.tool_call["id"] or "",
        name=request.tool_call["name"],
        status="error" if error else "success",
    )


def _not_run(request: ToolCallRequest, exc: Exception) -> ToolMessage:
    """What the model reads when the call was not run (and why)."""
    if isinstance(exc, ReplayedFailure):
        return _reply(request, {"content": f"this call failed before: {exc.error}"}, error=True)
    note = getattr(exc, "note", None)
    return _reply(request, {"content": note or f"not run: {exc}"}, error=True)


def _answer(attempt: Attempt) -> Any:
    """What the model reads for a call that did not run: the note, and the earlier reply."""
    stored = attempt.result
    text = stored.get("content", stored) if isinstance(stored, dict) else stored
    return for_the_model(dataclasses.replace(attempt, result=text))


def _parameters(tool: BaseTool) -> dict[str, Any]:
    """The JSON schema of ``tool``'s arguments as a model is given them (no injected ones)."""
    parameters = convert_to_openai_tool(tool)["function"].get("parameters") or {}
    return dict(parameters)


def _own_confirm(tool: BaseTool | None) -> bool:
    """Whether ``tool`` itself takes an argument named ``confirm_token``."""
    return tool is not None and CONFIRM_ARG in (_parameters(tool).get("properties") or {})


def _offering_confirm(tool: BaseTool) -> BaseTool:
    """``tool`` for binding to a model: its schema with an optional ``confirm_token``."""
    parameters = _parameters(tool)
    properties = dict(parameters.get("properties") or {})
    if CONFIRM_ARG in properties:
        return tool  # the tool's own argument: left alone, and passed to it
    properties[CONFIRM_ARG] = {
        "type": "string",
        "description": "only when tooldedup asked to confirm this call: the token it gave",
    }
    # A copy for the model's eyes only: the agent runs the tool it was given, by name.
    schema = {"type": "object", **parameters, "properties": properties}
    return tool.model_copy(update={"args_schema": schema})


def with_confirm_arg(tools: Sequence[BaseTool | dict[str, Any]]) -> list[BaseTool | dict[str, Any]]:
    """``tools`` to bind to a model, each tool's schema with an optional ``confirm_token``."""
    # A provider's built-in tool, given as a dict, runs at the provider: left alone.
    return [_offering_confirm(t) if isinstance(t, BaseTool) else t for t in tools]


def _confirmed(request: ToolCallRequest) -> tuple[ToolCallRequest, str | None]:
    """The request without the model's confirm argument, and the token it gave."""
    args = request.tool_call["args"]
    if CONFIRM_ARG not in args or _own_confirm(request.tool):
        return request, None
    token = args[CONFIRM_ARG]
    rest = {k: v for k, v in args.items() if k != CONFIRM_ARG}
    stripped = request.override(tool_call={**request.tool_call, "args": rest})
    return stripped, token if isinstance(token, str) and token else None


class TooldedupMiddleware(AgentMiddleware):  # type: ignore[type-arg]
    """Check each tool call with tooldedup; run it on ``proceed``, replay a duplicate."""

    def __init__(
        self,
        client: Tooldedup | None = None,
        aclient: AsyncTooldedup | None = None,
        *,
        session_id: str | None = None,
        classify: Classify = default_classify,
        on_unavailable: OnUnavailable | None = None,
    ) -> None:
        super().__init__()
        if client is None and aclient is None:
            raise ValueError("give a Tooldedup client, an AsyncTooldedup client, or both")
        self._client, self._aclient = client, aclient
        self._session_id = session_id
        self._classify, self._on_unavailable = classify, on_unavailable
        # One guard per (client, tool): it reads the tool's policy once, not per call.
        self._guards: dict[tuple[int, str], Guard] = {}

    def _guard(self, request: ToolCallRequest, client: Tooldedup | AsyncTooldedup) -> Guard:
        key = (id(client), request.tool_call["name"])
        guard = self._guards.get(key)
        if guard is None:
            guard = Guard(
                client,
                request.tool_call["name"],
                classify=self._classify,
                on_unavailable=self._on_unavailable,
                for_model=True,
            )
            self._guards[key] = guard
        return guard

    def _session(self, request: ToolCallRequest) -> str:
        config = getattr(request.runtime, "config", None) or {}
        thread = (config.get("configurable") or {}).get("thread_id")
        session = self._session_id or (str(thread) if thread is not None else None)
        if not session:
            raise ValueError("no session: run the graph with a thread_id, or pass session_id=")
        return session

    @staticmethod
    def _record(attempt: Attempt, message: Result) -> Result:
        if isinstance(message, ToolMessage) and message.status == "error":
            # Only the text of the error is left (the framework caught the exception): it
            # may have been a timeout after the effect, so a repeat must reconcile.
            attempt.failed(_stored(message), FailureClass.AMBIGUOUS)
        else:
            attempt.succeeded(_stored(message))
        return message

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        """The model sees each tool's schema with the optional ``confirm_token``."""
        return handler(request.override(tools=with_confirm_arg(request.tools)))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """``wrap_model_call`` for asyncio."""
        return await handler(request.override(tools=with_confirm_arg(request.tools)))

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Result]
    ) -> Result:
        """The blocking hook."""
        if self._client is None:
            raise TypeError("this middleware has no blocking Tooldedup client")
        guard = self._guard(request, self._client)
        request, token = _confirmed(request)
        try:
            with (
                session_scope(self._session(request)),
                guard.attempt(request.tool_call["args"], token) as attempt,
            ):
                if not attempt.should_run:
                    return _reply(request, _answer(attempt))
                return self._record(attempt, handler(request))
        except (InProgress, Reconcile, ReplayedFailure, ServiceUnavailable) as exc:
            return _not_run(request, exc)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Result]]
    ) -> Result:
        """The asyncio hook."""
        if self._aclient is None:
            raise TypeError("this middleware has no AsyncTooldedup client")
        guard = self._guard(request, self._aclient)
        request, token = _confirmed(request)
        try:
            with session_scope(self._session(request)):
                return await self._arun(guard, request, handler, token)
        except (InProgress, Reconcile, ReplayedFailure, ServiceUnavailable) as exc:
            return _not_run(request, exc)

    async def _arun(
        self,
        guard: Guard,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[Result]],
        token: str | None,
    ) -> Result:
        async with guard.aattempt(request.tool_call["args"], token) as attempt:
            if not attempt.should_run:
                return _reply(request, _answer(attempt))
            return self._record(attempt, await handler(request))
