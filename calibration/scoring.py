"""Score labelled pairs through the real funnel: the same code the service runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from tooldedup.calibration.samples import VETOES, LabelledPair, Sample
from tooldedup.dedup.errors import DedupError
from tooldedup.dedup.policy import PolicySet
from tooldedup.dedup.protocols import Embedder
from tooldedup.dedup.records import DEFAULT_TENANT, CallStatus, Outcome, Stage, ToolCall
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_service

__all__ = ["score_pairs"]


def score_pairs(
    pairs: Sequence[LabelledPair],
    policies: PolicySet,
    embedder: Embedder,
    workdir: Path,
    *,
    label: str = "scoring pairs",
    pair_model: bool | None = None,
) -> tuple[list[Sample], list[str]]:
    """Check ``a``, record it as done, dry-run ``b``: the scores the service would see.

    ``pair_model`` True or False reads every tool with the pair model or with the rules
    alone; None (the default) as each tool's policy says.
    Returns the samples and the refs of pairs the service rejected as invalid input.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "scoring.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if pair_model is not None:
        policies = PolicySet(
            replace(policies.defaults, pair_model=pair_model),
            {tool: replace(p, pair_model=pair_model) for tool, p in policies.tools.items()},
        )
    settings = ServiceSettings(db_path=db, pair_model=pair_model is not False)
    built = build_service(settings, embedder=embedder, policies=policies)
    service = built.service
    samples: list[Sample] = []
    rejected: list[str] = []
    try:
        for pair in tqdm(pairs, desc=label, unit="pair", leave=False):
            try:
                first = service.check(ToolCall(pair.ref, pair.tool, pair.a))
                if first.call is not None:
                    service.complete(
                        DEFAULT_TENANT, first.call.call_id, Outcome(CallStatus.SUCCEEDED)
                    )
                second = service.check(ToolCall(pair.ref, pair.tool, pair.b), dry_run=True)
            except DedupError:
                rejected.append(pair.ref)
                continue
            match = second.match
            fixed = None
            if match is not None and match.stage in (Stage.EXACT, Stage.EQUIVALENT, Stage.FUZZY):
                fixed = match.stage.value
            semantic = [r for r in second.reports if r.stage is Stage.SEMANTIC]
            cosine = semantic[0].score if semantic else None
            vetoed = bool(semantic) and semantic[0].verdict in VETOES
            samples.append(
                Sample(
                    pair.ref,
                    pair.tool,
                    pair.duplicate,
                    fixed,
                    cosine,
                    pair.kind,
                    "pairs",
                    vetoed,
                    pair.group,
                    bool(semantic) and semantic[0].verdict == "confirmed",
                )
            )
    finally:
        built.close()
    return samples, rejected
