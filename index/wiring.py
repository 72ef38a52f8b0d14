"""The one place that builds the service from settings: embedder, vector index, judge, ledger.

The HTTP app, the calibration command, the benchmarks and the tests all build through here,
so they run the same stages with the same defaults.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldedup.dedup.canonical import Canonicalizer
from tooldedup.dedup.caps import CallCaps
from tooldedup.dedup.english import EnglishPack
from tooldedup.dedup.errors import ConfigurationError, InvalidInput
from tooldedup.dedup.funnel import EquivalentStage, ExactStage, FuzzyStage
from tooldedup.dedup.judge import GuardedJudge
from tooldedup.dedup.ledger import SqliteLedger, SqlLedger
from tooldedup.dedup.ledger.keys import SqlKeyStore
from tooldedup.dedup.ledger.server_secrets import server_secret
from tooldedup.dedup.model_verifier import ModelVerifier
from tooldedup.dedup.policy import PolicySet, ToolPolicy, load_policy_file
from tooldedup.dedup.protocols import Embedder, LanguagePack, PairScorer, TextReader
from tooldedup.dedup.records import DEFAULT_TENANT
from tooldedup.dedup.semantic import SemanticStage
from tooldedup.dedup.service import DedupService
from tooldedup.dedup.short_cache import ShortTextCache
from tooldedup.dedup.verifier import Verifier, Verifiers
from tooldedup.index.coverage import TokenizerCoverage
from tooldedup.index.embedding_cache import CachedEmbedder, SqlVectorStore
from tooldedup.index.faiss_index import FaissGroupIndex
from tooldedup.index.llm_judge import OpenAIChatJudge
from tooldedup.index.onnx_embedder import OnnxEmbedder
from tooldedup.index.pair_model import OnnxPairScorer, load_pair_model
from tooldedup.index.settings import EmbedderBackend, ServiceSettings
from tooldedup.index.source_model import source_model_dir
from tooldedup.index.word_vectors import WordVectors

__all__ = [
    "Service",
    "build_embedder",
    "build_judge",
    "build_ledger",
    "build_reader",
    "build_service",
    "build_verifier",
    "load_policies",
    "word_cosine",
]

_CACHED_WORD_CHARS = 32

logger = logging.getLogger(__name__)


def build_embedder(settings: ServiceSettings, environ: Mapping[str, str] | None = None) -> Embedder:
    """The configured model embedder.

    The default is the shipped int8 model, which needs neither torch nor a download. An own
    ``model_path``, ``onnx`` (fp32) or ``torch`` needs ``pip install 'tooldedup[torch]'``.
    """
    env = os.environ if environ is None else environ
    if settings.embedder is EmbedderBackend.ONNX_INT8 and settings.model_path is None:
        return OnnxEmbedder.packaged(threads=settings.embed_threads)
    model_dir = settings.model_path or source_model_dir()
    if settings.embedder is EmbedderBackend.TORCH:
        return _torch_embedder(model_dir)
    quantize = settings.embedder is EmbedderBackend.ONNX_INT8
    try:
        return OnnxEmbedder.exported(
            model_dir,
            settings.resolved_cache_dir(env),
            quantize=quantize,
            threads=settings.embed_threads,
        )
    except ImportError:
        raise ConfigurationError(
            f"exporting {model_dir} to ONNX needs the torch extra: pip install 'tooldedup[torch]'"
        ) from None
    except Exception:
        logger.exception(
            "ONNX export of %s failed; falling back to sentence-transformers", model_dir
        )
        return _torch_embedder(model_dir)


def _torch_embedder(model_dir: Path) -> Embedder:
    try:
        from tooldedup.index.st_embedder import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(model_dir)
    except ImportError:
        raise ConfigurationError(
            "--embedder torch needs the torch extra: pip install 'tooldedup[torch]'"
        ) from None


def build_reader(embedder: Embedder) -> TextReader:
    """What the service compares by meaning, read through the embedder's own tokenizer.

    The ONNX embedders share theirs (loaded once); any other embedder is read through the
    shipped model's tokenizer, the same vocabulary as the default source model's.
    """
    if isinstance(embedder, OnnxEmbedder):
        return TokenizerCoverage(
            embedder.tokenizer, max_tokens=embedder.max_seq_length, tokens=embedder.tokens
        )
    return TokenizerCoverage.packaged()


def build_judge(settings: ServiceSettings) -> GuardedJudge | None:
    """The configured chat-completions judge behind a cache and circuit breaker, if any."""
    if settings.judge_base_url is None:
        return None
    if not settings.judge_model:
        raise InvalidInput("a judge needs a model name (--judge-model)")
    inner = OpenAIChatJudge(
        settings.judge_base_url,
        settings.judge_model,
        api_key_env=settings.judge_api_key_env,
        timeout_seconds=settings.judge_timeout_seconds,
        max_tokens=settings.judge_max_tokens,
    )
    return GuardedJudge(
        inner,
        cooldown_seconds=settings.judge_cooldown_seconds,
        deadline_seconds=settings.judge_timeout_seconds,
    )


def build_ledger(settings: ServiceSettings) -> SqlLedger:
    """The configured ledger: PostgreSQL when a URL is given, else the SQLite file."""
    if settings.postgres_url is None:
        return SqliteLedger(settings.db_path)
    from tooldedup.dedup.ledger.postgres import PostgresLedger

    return PostgresLedger(
        settings.postgres_url,
        max_connections=settings.db_pool_size,
        timeout_seconds=settings.db_timeout_seconds,
    )


def load_policies(settings: ServiceSettings, ledger: SqlLedger) -> PolicySet:
    """Stored policies with the ``--policy`` file on top (the file wins, and is stored)."""
    defaults = ToolPolicy()
    tools_data: dict[str, dict[str, Any]] = {}
    if settings.policy_path is not None:
        defaults, tools_data = load_policy_file(settings.policy_path)
    for name, data in tools_data.items():
        ledger.save_policy(DEFAULT_TENANT, name, data)
    stored = ledger.load_policies().get(DEFAULT_TENANT, {})
    return PolicySet.build(defaults, {**stored, **tools_data})


def word_cosine(
    embedder: Embedder, table: WordVectors | None = None
) -> Callable[[str, str], float]:
    """Cosine of two single words: from ``table`` where it holds both and was made by this
    embedder's model, else through the service's own (cached) embedder."""
    if table is not None and table.model_id != embedder.model_id:
        table = None

    def computed(a: str, b: str) -> float:
        if table is not None:
            first, second = table.get(a), table.get(b)
            if first is not None and second is not None:
                return float(first @ second)
        vectors = embedder.embed([a, b])
        return float(vectors[0] @ vectors[1])

    # The verifier asks the same few pairs again and again ("buy" / "purchase"): each is
    # worked out once. Only words of a usual length are kept, so the cache stays small.
    return ShortTextCache(computed, maxsize=65_536, max_chars=_CACHED_WORD_CHARS)


@dataclass(frozen=True, slots=True)
class Service:
    """A built service and the parts the caller may need to reach or close."""

    service: DedupService
    ledger: SqlLedger
    embedder: CachedEmbedder
    keys: SqlKeyStore
    # The pair model's id, or None when the rules decide alone.
    pair_model: str | None = None

    def close(self) -> None:
        """Stop the service's threads, write the last vectors, then close the ledger."""
        self.service.close()
        self.embedder.close()
        self.ledger.close()


def build_verifier(
    settings: ServiceSettings, rules: Verifier, scorer: PairScorer | None = None
) -> Verifiers:
    """The rules, and the rules then the pair model (``scorer`` or the configured one) for
    the tools whose policy asks for it, unless the pair model is off."""
    if not settings.pair_model:
        if settings.pair_model_path is not None:
            raise ConfigurationError("a pair-model path was given with the pair model off")
        return Verifiers(rules)
    try:
        if scorer is None:
            model = load_pair_model(settings.pair_model_path)
            scorer = OnnxPairScorer(model, threads=settings.embed_threads)
        return Verifiers(
            rules,
            ModelVerifier(
                rules,
                scorer,
                min_logit_same=settings.min_logit_same,
                min_logit_confirm=settings.min_logit_confirm,
            ),
        )
    except ValueError as exc:
        raise ConfigurationError(f"pair model: {exc}") from None


def build_service(
    settings: ServiceSettings,
    *,
    embedder: Embedder | None = None,
    pair_scorer: PairScorer | None = None,
    policies: PolicySet | None = None,
    clock: Callable[[], float] = time.time,
    pack: LanguagePack | None = None,
    word_vectors: WordVectors | None = None,
) -> Service:
    """Ledger, policies, the exact-fuzzy-semantic funnel and the judge, from ``settings``.

    Pass ``embedder``, ``pair_scorer`` and ``word_vectors`` (the shipped single-word table,
    else loaded here) to share models between services, ``policies`` to replace the stored
    and file policies (calibration scores pairs under candidate policies this way), ``pack``
    to read words through another language pack than English.
    """
    model = embedder if embedder is not None else build_embedder(settings)
    ledger = build_ledger(settings)
    try:
        chosen = policies if policies is not None else load_policies(settings, ledger)
        cached = CachedEmbedder(model, SqlVectorStore(ledger.db, clock=clock))
        # The one language pack: field names, facts in text, spellings, the verifier's rules.
        pack = pack if pack is not None else EnglishPack()
        if "en" not in pack.languages:
            # The text reader's language test knows English only: with another pack it
            # would send every text of that pack's language to exact comparison.
            raise ConfigurationError(
                f"the text reader detects English only; a pack for {list(pack.languages)}"
                " needs a reader of its own"
            )
        if word_vectors is None:
            word_vectors = WordVectors.load(model_id=cached.model_id)
        # A table of another model than this embedder's is ignored (word_cosine checks).
        rules = pack.verifier(word_cosine(cached, word_vectors))
        verifiers = build_verifier(settings, rules, pair_scorer)
        semantic = SemanticStage(cached, FaissGroupIndex(dim=cached.dims), verifiers)
        keys = SqlKeyStore(ledger.db)
        caps = CallCaps(keys)
        caps.refresh()
        service = DedupService(
            ledger,
            chosen,
            [ExactStage(), EquivalentStage(pack), FuzzyStage(verifiers), semantic],
            canonicalizer=Canonicalizer(pack, build_reader(model)),
            # Read once: every process on this store signs and checks tokens with it.
            confirm_key=server_secret(ledger.db, "confirm_tokens"),
            hooks=[semantic],
            clock=clock,
            judge=build_judge(settings),
            caps=caps,
        )
    except BaseException:
        ledger.close()
        raise
    model_verifier = verifiers.with_pair_model
    pair_model = model_verifier.model_id if isinstance(model_verifier, ModelVerifier) else None
    return Service(service, ledger, cached, keys, pair_model)
