"""A judge backed by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, ...)."""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

from tooldedup.dedup.canonical import canonical_json
from tooldedup.dedup.judge import JudgeFailure, JudgeRequest, JudgeVerdict, OutcomeKind

__all__ = ["OpenAIChatJudge", "build_prompt", "parse_verdict"]

SYSTEM_PROMPT = (
    "You guard an AI agent against running the same side-effecting tool call twice. "
    "You see a stored call that already ran and a new proposed call to the same tool. "
    "Exact fields were already compared and are equal. Decide whether the new call "
    "asks for the same effect as the stored one (a re-issue, possibly reworded) or a "
    "genuinely different action (for example a follow-up message, a different request, "
    "a negation). Answer with one JSON object and nothing else: "
    '{"duplicate": true|false, "confidence": <number from 0 to 1>, "reason": "<one sentence>"}'
)
_KEYS = {"duplicate", "confidence", "reason"}


def build_prompt(request: JudgeRequest) -> str:
    """The user message: both calls in canonical form, the policy and the field kinds."""
    body = {
        "tool": request.tool,
        "side_effect": request.side_effect,
        "exact_fields_compared_equal": list(request.exact_fields),
        "free_text_fields_compared_by_meaning": list(request.semantic_fields),
        "embedding_cosine": round(request.cosine, 4),
        "stored_call_args": request.stored,
        "proposed_call_args": request.proposal,
    }
    return canonical_json(body)


def parse_verdict(content: str) -> JudgeVerdict:
    """Parse the model's reply strictly: one JSON object with exactly the three keys."""
    try:
        data = json.loads(content)
    except (ValueError, TypeError, RecursionError):
        raise JudgeFailure(OutcomeKind.MALFORMED, "reply is not JSON") from None
    if not isinstance(data, dict) or set(data) != _KEYS:
        raise JudgeFailure(OutcomeKind.MALFORMED, f"reply must have exactly {sorted(_KEYS)}")
    duplicate, confidence, reason = data["duplicate"], data["confidence"], data["reason"]
    if not isinstance(duplicate, bool) or not isinstance(reason, str):
        raise JudgeFailure(OutcomeKind.MALFORMED, "duplicate must be a boolean, reason a string")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise JudgeFailure(OutcomeKind.MALFORMED, "confidence must be a number")
    # Compared before any float(): a 400-digit integer would overflow it.
    if not 0 <= confidence <= 1:
        raise JudgeFailure(OutcomeKind.MALFORMED, "confidence must be in [0, 1]")
    return JudgeVerdict(duplicate, float(confidence), reason[:500])


class OpenAIChatJudge:
    """POSTs to ``{base_url}/chat/completions`` with a hard timeout."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = "TOOLDEDUP_JUDGE_API_KEY",
        timeout_seconds: float = 2.0,
        max_tokens: int = 200,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if timeout_seconds <= 0 or max_tokens <= 0:
            raise ValueError("timeout_seconds and max_tokens must be positive")
        headers = {"content-type": "application/json"}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["authorization"] = f"Bearer {key}"
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(timeout_seconds),
            transport=transport,
        )
        self._model = model
        self._max_tokens = max_tokens

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        """Ask the model; timeouts, HTTP errors and bad replies raise ``JudgeFailure``."""
        payload: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": build_prompt(request)},
            ],
        }
        try:
            response = self._client.post("/chat/completions", json=payload)
        except httpx.TimeoutException:
            raise JudgeFailure(OutcomeKind.TIMEOUT, "no answer within the timeout") from None
        except httpx.HTTPError as exc:
            raise JudgeFailure(OutcomeKind.UNAVAILABLE, type(exc).__name__) from None
        if response.status_code != 200:
            raise JudgeFailure(OutcomeKind.UNAVAILABLE, f"HTTP {response.status_code}")
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError, RecursionError):
            raise JudgeFailure(OutcomeKind.MALFORMED, "not a chat-completions answer") from None
        return parse_verdict(content)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()
