"""The LLM judge against a scripted local chat-completions server."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from tests.fake_llm import FakeLLM, Reply, fake_llm, verdict
from tooldedup.dedup.judge import GuardedJudge, JudgeFailure, JudgeRequest, OutcomeKind
from tooldedup.index.llm_judge import OpenAIChatJudge, parse_verdict

REQUEST = JudgeRequest(
    tool="send_email",
    side_effect="irreversible",
    proposal={"to": "bob@example.com", "body": "Hello Bob, the report is attached."},
    stored={"to": "bob@example.com", "body": "Hi Bob, I attached the report."},
    exact_fields=("to",),
    semantic_fields=("body",),
    cosine=0.87,
)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


@pytest.mark.parametrize(
    ("content", "ok"),
    [
        ('{"duplicate": true, "confidence": 0.8, "reason": "same"}', True),
        ('{"duplicate": false, "confidence": 0, "reason": ""}', True),
        ('{"duplicate": true, "confidence": 1, "reason": "x"}', True),
        ('{"duplicate": "yes", "confidence": 0.8, "reason": "x"}', False),
        ('{"duplicate": true, "confidence": 1.2, "reason": "x"}', False),
        ('{"duplicate": true, "confidence": true, "reason": "x"}', False),
        ('{"duplicate": true, "confidence": 0.5}', False),
        ('{"duplicate": true, "confidence": 0.5, "reason": "x", "extra": 1}', False),
        ('```json\n{"duplicate": true, "confidence": 0.5, "reason": "x"}\n```', False),
        ("[true, 0.5, 'x']", False),
        ("", False),
    ],
)
def test_verdicts_are_parsed_strictly(content: str, ok: bool) -> None:
    if ok:
        assert parse_verdict(content).reason is not None
    else:
        with pytest.raises(JudgeFailure) as failure:
            parse_verdict(content)
        assert failure.value.kind is OutcomeKind.MALFORMED


@pytest.mark.parametrize("duplicate", [True, False])
def test_verdict_each_way(llm: FakeLLM, duplicate: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "sk-test")
    llm.script.append(verdict(duplicate, 0.75, "because"))
    judge = OpenAIChatJudge(llm.url, "tiny-model", api_key_env="JUDGE_KEY_FOR_TEST")
    result = judge.judge(REQUEST)
    assert result.duplicate is duplicate
    assert result.confidence == 0.75
    sent = llm.requests[0]
    assert sent["model"] == "tiny-model"
    prompt = json.loads(sent["messages"][1]["content"])
    assert prompt["stored_call_args"] == REQUEST.stored
    assert prompt["proposed_call_args"] == REQUEST.proposal
    assert prompt["exact_fields_compared_equal"] == ["to"]
    assert prompt["free_text_fields_compared_by_meaning"] == ["body"]
    assert llm.headers[0]["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (Reply(content="not json at all"), OutcomeKind.MALFORMED),
        (Reply(body='{"unexpected": "shape"}'), OutcomeKind.MALFORMED),
        (Reply(status=429, body='{"error": "rate limited"}'), OutcomeKind.UNAVAILABLE),
        (Reply(status=500, body="oops"), OutcomeKind.UNAVAILABLE),
        (
            Reply(content='{"duplicate": true, "confidence": 0.9, "reason": "x"}', delay=1.0),
            OutcomeKind.TIMEOUT,
        ),
    ],
)
def test_failures(llm: FakeLLM, reply: Reply, kind: OutcomeKind) -> None:
    llm.script.append(reply)
    judge = OpenAIChatJudge(llm.url, "m", timeout_seconds=0.3)
    with pytest.raises(JudgeFailure) as failure:
        judge.judge(REQUEST)
    assert failure.value.kind is kind


def test_unreachable_endpoint() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    judge = OpenAIChatJudge(f"http://127.0.0.1:{port}/v1", "m", timeout_seconds=0.5)
    with pytest.raises(JudgeFailure) as failure:
        judge.judge(REQUEST)
    assert failure.value.kind is OutcomeKind.UNAVAILABLE


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_circuit_breaker_opens_and_closes(llm: FakeLLM) -> None:
    clock = Clock()
    guarded = GuardedJudge(
        OpenAIChatJudge(llm.url, "m"), failures_to_open=2, cooldown_seconds=10, clock=clock
    )
    llm.script.extend([Reply(status=500, body="x"), Reply(status=503, body="x")])
    assert guarded.ask(REQUEST).kind is OutcomeKind.UNAVAILABLE
    assert not guarded.circuit_open
    assert guarded.ask(REQUEST).kind is OutcomeKind.UNAVAILABLE
    assert guarded.circuit_open
    refused = guarded.ask(REQUEST)
    assert refused.detail == "circuit open"
    assert len(llm.requests) == 2  # the open circuit sent nothing
    clock.now = 10.5
    llm.script.append(verdict(False))
    recovered = guarded.ask(REQUEST)
    assert recovered.kind is OutcomeKind.VERDICT
    assert not guarded.circuit_open
    assert len(llm.requests) == 3


def test_verdicts_are_cached_by_pair(llm: FakeLLM) -> None:
    guarded = GuardedJudge(OpenAIChatJudge(llm.url, "m"))
    llm.script.append(verdict(True, 0.6))
    first = guarded.ask(REQUEST)
    second = guarded.ask(REQUEST)
    assert first.verdict == second.verdict
    assert second.cached
    assert len(llm.requests) == 1
    other = replace(REQUEST, proposal={"to": "x@y.z", "body": "b"})
    guarded.ask(other)
    assert len(llm.requests) == 2


class Exploding:
    """A judge whose client fails in a way it did not foresee."""

    def judge(self, request: JudgeRequest) -> None:
        raise OverflowError("not a JudgeFailure")


def test_unexpected_errors_become_outcomes() -> None:
    outcome = GuardedJudge(Exploding()).ask(REQUEST)  # type: ignore[arg-type]
    assert outcome.kind is OutcomeKind.UNAVAILABLE
    assert outcome.detail == "OverflowError"


@pytest.mark.parametrize(
    "content",
    ['{"duplicate": true, "confidence": 1' + "0" * 400 + ', "reason": "x"}', "[" * 100_000],
)
def test_hostile_replies_are_malformed(content: str) -> None:
    with pytest.raises(JudgeFailure) as failure:
        parse_verdict(content)
    assert failure.value.kind is OutcomeKind.MALFORMED


def test_deadline_bounds_a_trickling_endpoint(llm: FakeLLM) -> None:
    # Each phase of the HTTP call is within its own timeout, but the whole call is not.
    llm.script.append(
        Reply(content='{"duplicate": true, "confidence": 1, "reason": "x"}', delay=1.5)
    )
    guarded = GuardedJudge(OpenAIChatJudge(llm.url, "m", timeout_seconds=5), deadline_seconds=0.3)
    outcome = guarded.ask(REQUEST)
    assert outcome.kind is OutcomeKind.TIMEOUT
    guarded.close()


def test_half_open_lets_one_probe_through(llm: FakeLLM) -> None:
    clock = Clock()
    slow = Reply(content='{"duplicate": true, "confidence": 1, "reason": "x"}', delay=0.5)
    guarded = GuardedJudge(
        OpenAIChatJudge(llm.url, "m"), failures_to_open=1, cooldown_seconds=1, clock=clock
    )
    llm.script.append(Reply(status=500, body="x"))
    guarded.ask(REQUEST)
    assert guarded.circuit_open
    clock.now = 2.0
    llm.script.append(slow)
    other = replace(REQUEST, proposal={"to": "x@y.z", "body": "b"})
    with ThreadPoolExecutor(2) as pool:
        probe = pool.submit(guarded.ask, REQUEST)
        time.sleep(0.1)
        refused = guarded.ask(other)
        assert probe.result().kind is OutcomeKind.VERDICT
    assert refused.detail == "circuit half-open"
    assert len(llm.requests) == 2


@pytest.mark.parametrize(
    ("change", "same"),
    [
        ({"cosine": 0.88}, True),  # the score is not part of what the judge is shown
        ({"tenant": "acme"}, False),  # a verdict is reused inside one tenant only
        ({"side_effect": "write"}, False),
        ({"exact_fields": ()}, False),
    ],
)
def test_the_verdict_cache_key(change: dict[str, object], same: bool) -> None:
    assert (replace(REQUEST, **change).cache_key == REQUEST.cache_key) is same  # type: ignore[arg-type]
