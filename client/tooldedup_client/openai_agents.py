"""The OpenAI Agents SDK: a guarded ``FunctionTool``, and guardrails for MCP-server tools.

    tool = guard_function_tool(function_tool(send_email, failure_error_function=None), td)
    dedup = TooldedupGuardrails(td)
    server = MCPServerStdio(params, tool_input_guardrails=[dedup.input],
                            tool_output_guardrails=[dedup.output])

The session is ``session_id`` given here, else the run context's ``session_id`` (an
attribute or a key of the object passed as ``Runner.run(..., context=...)``). A repeat
answers the model with the service's note and the earlier output. A guarded function tool
also handles ``ask``: its schema gains an optional ``confirm_token``, the note is the
output, and the call sent again with the token runs (the tool never sees the token).

The guardrail pair never asks. A tool input guardrail may only allow a call, reject it with
a message, or raise: the SDK then runs the tool with the arguments exactly as the model sent
them, and an MCP tool's schema is the server's own. So a confirm token could be neither
offered to the model nor kept from the server. Where the agent would be asked, the pair
gets the tool's ``unsure_action`` (``proceed`` by default). For asks, wrap function tools
with ``guard_function_tool``, and put MCP servers behind ``tooldedup-mcp``.
Needs ``pip install 'tooldedup-client[openai-agents]'``.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from agents import (
    FunctionTool,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolOutputGuardrailData,
    tool_input_guardrail,
    tool_output_guardrail,
)
from agents.tool_context import ToolContext

from tooldedup_client.client import AsyncTooldedup
from tooldedup_client.errors import InProgress, Reconcile, ServiceUnavailable, TooldedupError
from tooldedup_client.guard import (
    CONFIRM_ARG,
    Classify,
    Guard,
    OnUnavailable,
    ReplayedFailure,
    default_classify,
    for_the_model,
    session_scope,
)
from tooldedup_client.records import Decision, Status

__all__ = ["TooldedupGuardrails", "guard_function_tool", "session_of_run_context"]

SessionOf = Callable[[ToolContext[Any]], str | None]


def session_of_run_context(context: ToolContext[Any]) -> str | None:
    """The run context's ``session_id``: an attribute, or a key of a mapping."""
    run_context = context.context
    if isinstance(run_context, Mapping):
        value = run_context.get("session_id")
    else:
        value = getattr(run_context, "session_id", None)
    return str(value) if value else None


def _session(context: ToolContext[Any], session_id: str | None, session_of: SessionOf) -> str:
    session = session_id or session_of(context)
    if not session:
        raise ValueError(
            "no session: pass session_id=, or run with a context that has a session_id"
        )
    return session


def _arguments(raw: str | None) -> dict[str, Any]:
    value = json.loads(raw) if raw else {}
    return value if isinstance(value, dict) else {"input": value}


def _with_confirm(schema: dict[str, Any], strict: bool) -> dict[str, Any]:
    """The tool's JSON schema with an optional ``confirm_token`` (nullable and required
    under a strict schema, which allows no optional property)."""
    properties = dict(schema.get("properties") or {})
    if CONFIRM_ARG in properties:
        return schema  # the tool's own argument: left alone
    properties[CONFIRM_ARG] = {
        "type": ["string", "null"] if strict else "string",
        "description": "only when tooldedup asked to confirm this call: the token it gave",
    }
    required = list(schema.get("required") or [])
    return (
        {**schema, "properties": properties, "required": [*required, CONFIRM_ARG]}
        if strict
        else {
            **schema,
            "properties": properties,
        }
    )


def _split_confirm(raw: str | None, own: bool) -> tuple[str | None, str | None]:
    """The raw arguments without the confirm token, and the token (None if not given)."""
    if own or not raw:
        return raw, None
    try:
        value = json.loads(raw)
    except ValueError:
        return raw, None
    if not isinstance(value, dict) or CONFIRM_ARG not in value:
        return raw, None
    token = value.pop(CONFIRM_ARG)
    return json.dumps(value), token if isinstance(token, str) and token else None


def guard_function_tool(
    tool: FunctionTool,
    client: AsyncTooldedup,
    *,
    session_id: str | None = None,
    session_of: SessionOf = session_of_run_context,
    classify: Classify = default_classify,
    on_unavailable: OnUnavailable | None = None,
) -> FunctionTool:
    """``tool`` checked with tooldedup before each run; a repeat returns the first output.

    Build the tool with ``failure_error_function=None`` for exceptions to reach the guard
    (the SDK's default turns them into text, which reads as a success).
    """
    invoke = tool.on_invoke_tool
    guard = Guard(
        client, tool.name, classify=classify, on_unavailable=on_unavailable, for_model=True
    )
    own = CONFIRM_ARG in (tool.params_json_schema.get("properties") or {})

    async def guarded(context: ToolContext[Any], raw: str) -> Any:
        raw_args, token = _split_confirm(raw, own)
        raw = raw_args or ""
        try:
            with session_scope(_session(context, session_id, session_of)):
                async with guard.aattempt(_arguments(raw), token) as attempt:
                    if not attempt.should_run:
                        return for_the_model(attempt)
                    output = await invoke(context, raw)
                    attempt.succeeded(output)
                    return output
        except (InProgress, Reconcile) as exc:
            return exc.note or f"not run: {exc}"
        except (ReplayedFailure, ServiceUnavailable) as exc:
            return f"not run: {exc}"

    schema = _with_confirm(tool.params_json_schema, tool.strict_json_schema)
    return dataclasses.replace(tool, on_invoke_tool=guarded, params_json_schema=schema)


class TooldedupGuardrails:
    """An input and an output guardrail that put MCP-server tools behind tooldedup.

    The input guardrail checks: on ``proceed`` the tool runs; a duplicate's stored output
    (or why a call was not run) becomes the tool's output instead. The output guardrail
    stores the output of a call that ran. A tool that raises never reaches the output
    guardrail: its claim stays pending until its lease ends, and repeats are then asked
    to reconcile. It never asks the agent (see the module's docstring for why).
    """

    def __init__(
        self,
        client: AsyncTooldedup,
        *,
        session_id: str | None = None,
        session_of: SessionOf = session_of_run_context,
    ) -> None:
        self._client = client
        self._session_id = session_id
        self._session_of = session_of
        # (session, tool, tool call id) -> claimed call id: runs sharing these guardrails
        # may reuse a provider's call ids.
        self._claims: dict[tuple[str, str, str], str] = {}
        self._lock = threading.Lock()
        self.input = tool_input_guardrail(self._check)
        self.output = tool_output_guardrail(self._complete)

    async def _check(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        session = _session(context, self._session_id, self._session_of)
        try:
            # No answers=("ask",): the confirmed call would reach the tool with the token
            # in its arguments (a guardrail cannot take it off), so the tool's
            # unsure_action answers instead.
            answer = await self._client.check(
                context.tool_name, _arguments(context.tool_arguments), session_id=session
            )
        except ServiceUnavailable as exc:
            return ToolGuardrailFunctionOutput.reject_content(f"not run: {exc}")
        if answer.decision is Decision.PROCEED:
            if answer.call_id is not None:
                with self._lock:
                    self._claims[(session, context.tool_name, context.tool_call_id)] = (
                        answer.call_id
                    )
            return ToolGuardrailFunctionOutput.allow()
        match = answer.match
        if answer.decision is Decision.DUPLICATE and match is not None:
            stored = match.result if match.status is Status.SUCCEEDED else match.error
            text = stored if isinstance(stored, str) else json.dumps(stored)
            if answer.note is not None:
                text = f"{answer.note}\nThe earlier call's result: {text}"
            return ToolGuardrailFunctionOutput.reject_content(text)
        if answer.note is not None:
            return ToolGuardrailFunctionOutput.reject_content(answer.note)
        call = match.call_id if match is not None else "?"
        reason = answer.decision.value.replace("_", " ")
        return ToolGuardrailFunctionOutput.reject_content(f"not run: call {call} is {reason}")

    async def _complete(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        key = (_session(context, self._session_id, self._session_of), context.tool_name)
        with self._lock:
            call_id = self._claims.pop((*key, context.tool_call_id), None)
        if call_id is not None:
            try:
                output = data.output if isinstance(data.output, str) else str(data.output)
                await self._client.complete(call_id, Status.SUCCEEDED, result=output)
            except TooldedupError:
                pass  # the claim stays pending; repeats will be asked to reconcile
        return ToolGuardrailFunctionOutput.allow()
