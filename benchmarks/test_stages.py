"""Microbenchmarks of each stage of a check. Run with ``make bench``; they are not tests."""

from __future__ import annotations

import itertools
import time
import uuid
from typing import Any

import numpy as np
import pytest

from tooldedup.dedup.canonical import Canonicalizer, intent_key
from tooldedup.dedup.english import EnglishPack, RuleVerifier
from tooldedup.dedup.funnel import ExactStage, FuzzyStage, Proposal
from tooldedup.dedup.ledger import SqliteLedger
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.protocols import Embedder
from tooldedup.dedup.records import DEFAULT_TENANT, CallRecord, CallStatus, Outcome, Scope, ToolCall
from tooldedup.dedup.verifier import Verifiers
from tooldedup.index.coverage import TokenizerCoverage
from tooldedup.index.faiss_index import FaissGroupIndex

EMAIL = {
    "to": "bob@example.com",
    "subject": "Q3 report",
    "request_id": "r-1",
    "body": "Hi Bob, the Q3 report is attached. Let me know if you have any questions.",
}
_POLICY = ToolPolicy()
# What the server reads: the English pack, through the shipped model's tokenizer.
_CANON = Canonicalizer(EnglishPack(), TokenizerCoverage.packaged())
_SESSION = "micro"
_SCOPE = Scope(DEFAULT_TENANT, _SESSION)


def _record(args: dict[str, Any], session: str = _SESSION) -> CallRecord:
    canonical = _CANON.canonicalize(args, _POLICY)
    now = time.time()
    return CallRecord(
        call_id="call_" + uuid.uuid4().hex,
        row_id=0,
        scope=session,
        session_id=session,
        tool="send_email",
        args=canonical.args,
        args_hash=canonical.args_hash,
        exact_signature=canonical.exact_signature,
        exact_leaves=canonical.exact_leaves,
        semantic_leaves=canonical.semantic_leaves,
        intent_key=intent_key(Scope(DEFAULT_TENANT, session), "send_email", canonical, None, None),
        idempotency_key=None,
        status=CallStatus.PENDING,
        created_at=now,
        lease_expires_at=now + 300,
    )


def _session(ledger: SqliteLedger, texts: list[str], size: int) -> list[dict[str, Any]]:
    """Store ``size`` calls that share one exact signature (same recipient, no numbers)."""
    bodies = (f"{a} {b}" for a, b in itertools.permutations(texts, 2))
    calls = [{"to": "bob@example.com", "body": body} for body in itertools.islice(bodies, size)]
    for args in calls:
        ledger.claim(_record(args))
    return calls


def _proposal(args: dict[str, Any]) -> Proposal:
    call = ToolCall(session_id=_SESSION, tool="send_email", args=args)
    return Proposal(call, _CANON.canonicalize(args, _POLICY), _POLICY)


# Built to make backtracking regular expressions quadratic: long runs without the
# character a pattern waits for, unclosed quotes with escapes, dotted words.
_HOSTILE = {
    "body": "word " * 12_000,
    "note": "a." * 30_000,
    "cmd": '"a\\' * 30_000,
    "query": "f(" * 30_000,
    "x": "a" * 60_000 + "://x",
    "to": "x@" + "a." * 30_000,
    "message": "A-" * 30_000,
}


def test_canonical_form(benchmark: Any) -> None:
    """Canonical form of the README's email: sort, normalise, classify, split, hash."""
    benchmark(_CANON.canonicalize, EMAIL, _POLICY)


def test_canonical_form_of_a_hostile_body(benchmark: Any) -> None:
    """A hostile body near the 1 MiB limit: linear work, not quadratic backtracking."""
    benchmark.pedantic(_CANON.canonicalize, (_HOSTILE, _POLICY), rounds=10, iterations=1)


@pytest.mark.parametrize("session_size", [10, 1000])
def test_exact_lookup(
    benchmark: Any, ledger: SqliteLedger, plain_texts: list[str], session_size: int
) -> None:
    """Fetch the candidates sharing the exact signature, then the exact stage over them."""
    calls = _session(ledger, plain_texts, session_size)
    proposal = _proposal(calls[len(calls) // 2])
    canonical = proposal.canonical

    def lookup() -> None:
        found = ledger.candidates(
            Scope(DEFAULT_TENANT, _SESSION), "send_email", canonical.exact_signature, 0.0, 1000
        )
        assert ExactStage().check(proposal, found).match is not None

    benchmark(lookup)


@pytest.mark.parametrize("session_size", [10, 1000])
def test_fuzzy_stage(
    benchmark: Any, ledger: SqliteLedger, plain_texts: list[str], session_size: int
) -> None:
    """rapidfuzz over every candidate's free text, for a proposal that matches none."""
    _session(ledger, plain_texts, session_size)
    proposal = _proposal({"to": "bob@example.com", "body": "A completely different message."})
    found = ledger.candidates(
        Scope(DEFAULT_TENANT, _SESSION), "send_email", proposal.canonical.exact_signature, 0.0, 1000
    )
    assert len(found) == session_size
    benchmark(FuzzyStage(Verifiers(RuleVerifier())).check, proposal, found)


@pytest.mark.parametrize("backend", ["onnx-int8", "torch"])
def test_embed_one_text(
    benchmark: Any,
    request: pytest.FixtureRequest,
    backend: str,
) -> None:
    """One model call for one email body, no cache in front."""
    fixture = "onnx_embedder" if backend == "onnx-int8" else "torch_embedder"
    embedder: Embedder = request.getfixturevalue(fixture)
    embedder.embed([EMAIL["body"]])
    benchmark(embedder.embed, [EMAIL["body"]])


@pytest.mark.parametrize("group_size", [10, 1_000, 100_000])
def test_faiss_search(benchmark: Any, group_size: int) -> None:
    """Cosine of one query against a session's group, for the newest <=1000 candidates.

    The worst case: every call in the session shares tool and exact signature, so the
    whole session is one group. The service passes at most ``max_candidates`` (1000) keys.
    """
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((group_size, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = FaissGroupIndex(384)
    index.load("g", list(range(group_size)), vectors)
    keys = list(range(max(0, group_size - 1000), group_size))
    query = vectors[-1]
    assert index.search("g", query, keys)[group_size - 1] > 0.99
    benchmark(index.search, "g", query, keys)


def test_ledger_claim(benchmark: Any, ledger: SqliteLedger) -> None:
    """Store one pending claim (one write transaction in WAL mode)."""
    counter = itertools.count()

    def setup() -> tuple[tuple[CallRecord], dict[str, Any]]:
        args = {**EMAIL, "subject": f"Report {next(counter)}"}
        return (_record(args),), {}

    benchmark.pedantic(ledger.claim, setup=setup, rounds=2000)


def test_ledger_complete(benchmark: Any, ledger: SqliteLedger) -> None:
    """Record a claimed call's outcome: read, update and re-read in one transaction."""
    counter = itertools.count()
    outcome = Outcome(CallStatus.SUCCEEDED, result={"message_id": "m-42"})

    def setup() -> tuple[tuple[str, str, Outcome, float], dict[str, Any]]:
        claimed = ledger.claim(_record({**EMAIL, "subject": f"Report {next(counter)}"}))
        assert isinstance(claimed, CallRecord)
        return (claimed.tenant, claimed.call_id, outcome, time.time()), {}

    benchmark.pedantic(ledger.complete, setup=setup, rounds=2000)


@pytest.mark.parametrize(
    ("stored", "proposed"),
    [
        (
            EMAIL["body"],
            "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
        ),
        ("I enjoy hiking, swimming and reading", "I enjoy hiking, swimming and cooking"),
        ("Please book a big room for the team offsite", "Please book a large room for the offsite"),
        (
            "Please put Kofi on forklift 2 and Sanne on the receiving desk tomorrow",
            "Please put Kofi on reach truck 2 and Sanne on the receiving desk tomorrow",
        ),
        (
            "Dinner at 7 PM: Leo brings the wine, Ada brings the dessert without nuts",
            "Dinner at 7 PM: Leo brings the dessert without nuts, Ada brings the wine",
        ),
        # Near the alignment bound: 144 words in 18 sentences, one sentence's act changed.
        (
            " ".join(f"Please check item {i} of the list today." for i in range(18)),
            " ".join(f"Please check item {i} of the list today." for i in range(17))
            + " We have checked item 17 of the list today.",
        ),
    ],
    ids=["reworded", "word-swapped", "synonym", "phrase-swapped", "traded", "144-words"],
)
@pytest.mark.parametrize("pair_model", [True, False], ids=["with-pair-model", "rules-only"])
def test_verifier(
    benchmark: Any, onnx_embedder: Embedder, stored: str, proposed: str, pair_model: bool
) -> None:
    """The verifier on one matched pair: the rules (word cosines through the cached model),
    then, by default, the pair model unless a rule settled it."""
    from tooldedup.dedup.model_verifier import ModelVerifier
    from tooldedup.index.embedding_cache import CachedEmbedder
    from tooldedup.index.pair_model import OnnxPairScorer
    from tooldedup.index.wiring import word_cosine

    rules = RuleVerifier(word_cosine(CachedEmbedder(onnx_embedder)))
    if not pair_model:
        benchmark(rules.compare, stored, proposed)
        return
    scorer = OnnxPairScorer.packaged()

    def fresh() -> tuple[tuple[ModelVerifier], dict[str, Any]]:
        # A new verifier each round: its score cache would otherwise answer every round.
        return (ModelVerifier(rules, scorer),), {}

    benchmark.pedantic(lambda verifier: verifier.compare(stored, proposed), setup=fresh, rounds=300)
