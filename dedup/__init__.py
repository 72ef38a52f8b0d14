"""tooldedup core: canonical form, policies, the matching funnel and the ledger."""

from tooldedup.dedup.canonical import Canonicalizer, intent_key
from tooldedup.dedup.errors import (
    Conflict,
    DedupError,
    IdempotencyKeyReused,
    InvalidInput,
    NotFound,
)
from tooldedup.dedup.funnel import (
    EquivalentStage,
    ExactStage,
    FunnelHooks,
    FunnelStage,
    FuzzyStage,
    Proposal,
    run_funnel,
)
from tooldedup.dedup.ledger import Ledger, LogEntry, SqliteLedger
from tooldedup.dedup.model_verifier import ModelVerifier
from tooldedup.dedup.policy import BorderlineAction, CompareMode, PolicySet, ToolPolicy
from tooldedup.dedup.protocols import Embedder, LanguagePack, PairScorer, TextReader, VectorIndex
from tooldedup.dedup.records import (
    CallRecord,
    CallStatus,
    CanonicalCall,
    Decision,
    DecisionKind,
    FailureClass,
    Match,
    Outcome,
    SemanticLeaf,
    SideEffect,
    Stage,
    StageReport,
    ToolCall,
    ValueKind,
)
from tooldedup.dedup.semantic import SemanticStage
from tooldedup.dedup.service import DedupService
from tooldedup.dedup.verifier import Verdict, VerdictKind, Verifier

__all__ = [
    "BorderlineAction",
    "CallRecord",
    "CallStatus",
    "CanonicalCall",
    "Canonicalizer",
    "CompareMode",
    "Conflict",
    "Decision",
    "DecisionKind",
    "DedupError",
    "DedupService",
    "Embedder",
    "EquivalentStage",
    "ExactStage",
    "FailureClass",
    "FunnelHooks",
    "FunnelStage",
    "FuzzyStage",
    "IdempotencyKeyReused",
    "InvalidInput",
    "LanguagePack",
    "Ledger",
    "LogEntry",
    "Match",
    "ModelVerifier",
    "NotFound",
    "Outcome",
    "PairScorer",
    "PolicySet",
    "Proposal",
    "SemanticLeaf",
    "SemanticStage",
    "SideEffect",
    "SqliteLedger",
    "Stage",
    "StageReport",
    "TextReader",
    "ToolCall",
    "ToolPolicy",
    "ValueKind",
    "VectorIndex",
    "Verdict",
    "VerdictKind",
    "Verifier",
    "intent_key",
    "run_funnel",
]
