"""What each rule family buys and costs, measured on labelled pairs: the family table.

    python -m benchmarks.rule_families [--half calibration|held-out] [--limit N]
                                       [--families all|NAME,NAME] [--out PREFIX]

Every labelled pair of ``calibration/data/pairs.jsonl`` in the chosen half (the halves are
split by group, as the closing figures are) goes through a real service on SQLite, with the
packaged model (its vectors kept in a cache under the work directory, so reruns skip the model):
the first call is checked and completed, the second is checked as a dry run. This runs once
with every rule on (rules only, and with the pair model), then once per family with that family
left out (``RuleVerifier(without=...)``, or a language pack that skips the canonical rule). For
each run it reports paraphrases and re-issues found, hard negatives and different pairs merged,
precision and recall, and the CPU time per compare of the verifier and per pair of the whole
service. A family pays for itself when leaving it out merges more distinct pairs (or finds
fewer repeats) than its cost is worth. Results: ``benchmarks/results/rule-families.md``/``.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.family_costs import family_costs, forget_readings, text_pairs
from tests import test_api_hostile as hostile
from tests import test_rule_verifier as unit_tests
from tooldedup.calibration.command import held_out
from tooldedup.calibration.compare import compare_modes
from tooldedup.calibration.samples import VETOES, LabelledPair, Sample, load_pairs
from tooldedup.dedup.english import EnglishPack, RuleFamily, RuleVerifier
from tooldedup.dedup.errors import DedupError
from tooldedup.dedup.policy import PolicySet, ToolPolicy
from tooldedup.dedup.protocols import Embedder, SpellingBudget, Vectors
from tooldedup.dedup.records import DEFAULT_TENANT, CallStatus, Outcome, Stage, ToolCall, ValueKind
from tooldedup.dedup.service import DedupService
from tooldedup.dedup.verifier import Verdict, Verifier
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_embedder, build_service

_ROOT = Path(__file__).resolve().parent.parent
_PAIRS = _ROOT / "calibration" / "data" / "pairs.jsonl"
_RESULTS = _ROOT / "benchmarks" / "results" / "rule-families"
# Canonical rules of the pack, left out by a pack that skips them.
_CANONICAL = ("facts", "attempt_ids", "spellings")
# Our hostile pairs, one table per class (the HTTP tests assert each): (tool, first, second,
# the expected decision).
_HOSTILE: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    param.values  # type: ignore[misc]
    for table in (
        hostile.UNREADABLE,
        hostile.SMALL_WORDS,
        hostile.PRONOUN_ROLES,
        hostile.LONG_EARLY,
        hostile.OTHER_LANGUAGES,
        hostile.TARGET_IDS,
        hostile.RETRY_NOISE,
        hostile.PROSE_FACTS,
        hostile.TARGET_WORDS,
        hostile.TARGET_RETRIES,
        hostile.TARGET_ATTACKS,
    )
    for param in table
]
# The verifier's own table: (stored, proposed, expected kind, reason).
_UNIT_CASES: list[tuple[str, str, str, str | None]] = list(
    unit_tests.test_rules.pytestmark[0].args[1]  # type: ignore[attr-defined]
)


def _families(without: frozenset[str]) -> list[RuleFamily]:
    """The verifier's families among what a configuration leaves out (the rest are the
    pack's canonical rules, or the pair model)."""
    return [RuleFamily(f) for f in without if f in RuleFamily.__members__.values()]


class CachedVectors:
    """The model's vectors, kept on disk by text: a rerun pays for no model call."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self._inner = inner
        self._path = path
        self._cache: dict[str, Vectors] = pickle.loads(path.read_bytes()) if path.exists() else {}
        self._new = 0

    @property
    def model_id(self) -> str:
        """The wrapped model's id."""
        return self._inner.model_id

    @property
    def dims(self) -> int:
        """The wrapped model's vector size."""
        return self._inner.dims

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors from the cache, the missing ones from the model."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, vector in zip(missing, self._inner.embed(missing), strict=True):
                self._cache[text] = np.array(vector, dtype=np.float32)
            self._new += len(missing)
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def save(self) -> None:
        """Write the cache back if it grew."""
        if self._new:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._path.write_bytes(pickle.dumps(self._cache))
            self._new = 0


class TimedVerifier:
    """A verifier that counts its compares and their CPU time."""

    def __init__(self, inner: Verifier) -> None:
        self._inner = inner
        self.compares = 0
        self.seconds = 0.0

    def compare(self, stored: str, proposed: str) -> Verdict:
        """The inner verdict, timed."""
        started = time.thread_time()
        try:
            return self._inner.compare(stored, proposed)
        finally:
            self.seconds += time.thread_time() - started
            self.compares += 1


class MeasuredPack(EnglishPack):
    """The English pack with rule families left out, and its verifier timed."""

    def __init__(self, without: frozenset[str]) -> None:
        super().__init__()
        self._without = without
        self.timed: TimedVerifier | None = None

    def verifier(self, word_cosine: Callable[[str, str], float] | None = None) -> Verifier:
        """The rule verifier without the families left out, timed."""
        families = _families(self._without)
        self.timed = TimedVerifier(RuleVerifier(word_cosine, without=families))
        return self.timed

    def normalize_facts(self, text: str) -> str:
        """Facts as written, when the facts rule is left out."""
        return text if "facts" in self._without else super().normalize_facts(text)

    def attempt_noise(
        self, name: str, value: Any, received_at: float | None, tool: str | None
    ) -> bool:
        """No field is attempt noise, when the attempt-id rule is left out."""
        if "attempt_ids" in self._without:
            return False
        return super().attempt_noise(name, value, received_at, tool)

    def value_key(self, kind: ValueKind, text: str) -> str:
        """Each spelling its own value, when the spellings rule is left out."""
        return text if "spellings" in self._without else super().value_key(kind, text)

    def label_key(self, name: str | None, text: str) -> str:
        """Each spelling its own label, when the spellings rule is left out."""
        return text if "spellings" in self._without else super().label_key(name, text)

    def equivalent_leaves(
        self,
        mine: Sequence[tuple[str, str]],
        theirs: Sequence[tuple[str, str]],
        exact_fields: Sequence[str],
        tool: str | None,
        budget: SpellingBudget,
    ) -> tuple[str, ...] | None:
        """Only equal values, when the spellings rule is left out."""
        if "spellings" in self._without:
            return () if sorted(mine) == sorted(theirs) else None
        return super().equivalent_leaves(mine, theirs, exact_fields, tool, budget)


@dataclass(frozen=True, slots=True)
class Run:
    """One configuration's figures."""

    name: str
    pair_model: bool
    pairs: int
    precision: float
    recall: float
    paraphrases_found: float
    reissues_found: float
    equivalent_found: float
    hard_negatives_merged: float
    different_merged: float
    critical_merged: float
    natural_merged: float
    hostile_wrong: int
    hostile_rows: int
    unit_cases_merged: int
    verifier_ms_per_compare: float
    check_ms_per_pair: float


def run(
    name: str, pairs: Sequence[LabelledPair], embedder: CachedVectors, without: frozenset[str]
) -> Run:
    """Every pair through a fresh service with ``without`` left out."""
    pair_model = "pair_model" not in without
    pack = MeasuredPack(without)
    samples: list[Sample] = []
    # Every run reads the texts from cold, as the first: the words of a text are cached.
    forget_readings()
    started = time.thread_time()
    with tempfile.TemporaryDirectory() as work:
        settings = ServiceSettings(db_path=Path(work) / "s.db", pair_model=pair_model)
        policies = PolicySet(ToolPolicy(pair_model=pair_model))
        built = build_service(settings, embedder=embedder, policies=policies, pack=pack)
        service = built.service
        try:
            for pair in pairs:
                try:
                    first = service.check(ToolCall(pair.ref, pair.tool, pair.a))
                    if first.call is not None:
                        service.complete(
                            DEFAULT_TENANT, first.call.call_id, Outcome(CallStatus.SUCCEEDED)
                        )
                    second = service.check(ToolCall(pair.ref, pair.tool, pair.b), dry_run=True)
                except DedupError:
                    continue
                samples.append(_sample(pair, second.match, second.reports))
            seconds = time.thread_time() - started
            wrong = _hostile_wrong(service)
        finally:
            built.close()
    embedder.save()
    result = compare_modes(samples, samples, None)[-1]
    timed = pack.timed
    per_compare = 0.0 if timed is None or not timed.compares else timed.seconds / timed.compares
    kinds = result.by_kind
    return Run(
        name,
        pair_model,
        len(samples),
        result.precision,
        result.recall,
        kinds["paraphrase"],
        kinds["reissue"],
        kinds["equivalent"],
        kinds["hard_negative"],
        kinds["different"],
        kinds["critical"],
        kinds["natural"],
        wrong,
        len(_HOSTILE),
        _unit_cases_merged(without),
        per_compare * 1000.0,
        seconds / max(1, len(samples)) * 1000.0,
    )


def _hostile_wrong(service: DedupService) -> int:
    """How many of the hostile pairs of ``tests/test_api_hostile.py`` get the wrong answer."""
    wrong = 0
    for i, (tool, first, second, expected) in enumerate(_HOSTILE):
        session = f"hostile-{i}"
        claimed = service.check(ToolCall(session, tool, first))
        if claimed.call is not None:
            service.complete(DEFAULT_TENANT, claimed.call.call_id, Outcome(CallStatus.SUCCEEDED))
        answer = service.check(ToolCall(session, tool, second), dry_run=True)
        wrong += answer.kind.value != expected
    return wrong


def _sample(pair: LabelledPair, match: Any, reports: Sequence[Any]) -> Sample:
    fixed = None
    if match is not None and match.stage in (Stage.EXACT, Stage.EQUIVALENT, Stage.FUZZY):
        fixed = match.stage.value
    semantic = [r for r in reports if r.stage is Stage.SEMANTIC]
    verdict = semantic[0].verdict if semantic else None
    return Sample(
        pair.ref,
        pair.tool,
        pair.duplicate,
        fixed,
        semantic[0].score if semantic else None,
        pair.kind,
        "pairs",
        bool(semantic) and verdict in VETOES,
        pair.group,
        bool(semantic) and verdict == "confirmed",
    )


def _pct(value: float) -> str:
    return f"{value * 100:.2f}"


def markdown(runs: Sequence[Run], command: str, half: str, costs: dict[str, float]) -> str:
    """The table: each family's figures beside the rules-only run, and what it buys."""
    base = next(r for r in runs if r.name == "all rules (pair model off)")
    lines = [
        "# Rule families: what each buys and costs",
        "",
        f"`{command}` ({half} half of `calibration/data/pairs.jsonl`, {base.pairs} pairs).",
        "",
        "Each row leaves one family out of the rules-only service (pair model off) and gives the",
        "figures that result; *buys* is what the family adds when it is in: distinct pairs kept",
        "apart (hard negatives and different pairs, in points of each kind) and repeats found",
        "(paraphrases, re-issues, equivalents, in points), and the hostile pairs of",
        "`tests/test_api_hostile.py` and the cases of `tests/test_rule_verifier.py`'s table it",
        "keeps apart (expected `different` or `unsure`); *costs* is its CPU time per verifier",
        "compare (the best of five timings of the same text pairs with and without it). The",
        "service times are per pair, on a shared machine. Percentages are of each kind's pairs.",
        "",
        "| run | paraphrases found | re-issues found | equivalent found | hard negatives merged"
        " | different merged | natural merged | hostile pairs wrong | verifier cases merged"
        " | precision | recall | verifier ms/compare | service ms/pair | buys: kept apart (pts)"
        " | buys: found (pts) | buys: hostile pairs | buys: verifier cases | costs (µs/compare) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        apart = (r.hard_negatives_merged - base.hard_negatives_merged) + (
            r.different_merged - base.different_merged
        )
        found = (
            (base.paraphrases_found - r.paraphrases_found)
            + (base.reissues_found - r.reissues_found)
            + (base.equivalent_found - r.equivalent_found)
        )
        cost = costs.get(r.name, 0.0)
        family = r.name.startswith("without ")
        lines.append(
            f"| {r.name} | {_pct(r.paraphrases_found)} | {_pct(r.reissues_found)}"
            f" | {_pct(r.equivalent_found)} | {_pct(r.hard_negatives_merged)}"
            f" | {_pct(r.different_merged)} | {_pct(r.natural_merged)}"
            f" | {r.hostile_wrong} of {r.hostile_rows}"
            f" | {r.unit_cases_merged} of {len(_UNIT_CASES)}"
            f" | {_pct(r.precision)} | {_pct(r.recall)}"
            f" | {r.verifier_ms_per_compare:.3f} | {r.check_ms_per_pair:.2f}"
            f" | {f'{apart * 100:+.2f}' if family else ''}"
            f" | {f'{found * 100:+.2f}' if family else ''}"
            f" | {f'{r.hostile_wrong - base.hostile_wrong:+d}' if family else ''}"
            f" | {f'{r.unit_cases_merged - base.unit_cases_merged:+d}' if family else ''}"
            f" | {f'{cost:+.1f}' if family else ''} |"
        )
    return "\n".join(lines) + "\n"


def _unit_cases_merged(without: frozenset[str]) -> int:
    """Rows of ``tests/test_rule_verifier.py``'s table that expect ``different`` or
    ``unsure`` and get neither with these families left out: cases the families keep apart
    that the labelled pairs may not hold."""
    families = _families(without)
    verifier = RuleVerifier(unit_tests.word_cosine, without=families)
    merged = 0
    for stored, proposed, kind, _ in _UNIT_CASES:
        if kind in ("different", "unsure"):
            merged += verifier.compare(stored, proposed).kind.value not in ("different", "unsure")
    return merged


def _configs(names: Sequence[str]) -> list[tuple[str, frozenset[str]]]:
    """The two base runs, then one per family (``a+b`` leaves a group out at once)."""
    return [
        ("all rules (pair model off)", frozenset({"pair_model"})),
        ("all rules and the pair model", frozenset()),
        *((f"without {n}", frozenset({*n.split("+"), "pair_model"})) for n in names),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Run every configuration not yet measured, and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("calibration", "held-out"), default="calibration")
    parser.add_argument("--limit", type=int, default=0, help="pairs at most (0: all)")
    parser.add_argument(
        "--families",
        default="all",
        help="'all', 'none' (the two base runs) or names, comma-separated; a+b: both at once",
    )
    parser.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "rf")
    parser.add_argument("--out", type=Path, default=_RESULTS)
    args = parser.parse_args(argv)
    want_held_out = args.half == "held-out"
    pairs = [p for p in load_pairs(_PAIRS) if held_out(p.group or p.ref) is want_held_out]
    if args.limit:
        # A sample of every kind, the same at every run: the pairs in the order of their hash.
        pairs = sorted(pairs, key=lambda p: hashlib.sha256(p.ref.encode()).digest())
        pairs = pairs[: args.limit]
    names = [f.value for f in RuleFamily] + list(_CANONICAL)
    if args.families == "none":
        names = []
    elif args.families != "all":
        names = [n.strip() for n in args.families.split(",") if n.strip()]
    # Each finished run is kept, one JSON line, so that an interrupted run resumes.
    done_path = args.out.with_suffix(".runs.jsonl")
    done: dict[str, dict[str, Any]] = {}
    if done_path.exists():
        for line in done_path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("half") == args.half and row.get("limit") == args.limit:
                done[row["name"]] = row
    embedder = CachedVectors(build_embedder(ServiceSettings()), args.work_dir / "vectors.pkl")
    runs = []
    warmed = False
    for name, without in _configs(names):
        if name in done:
            fields = {f: done[name][f] for f in Run.__dataclass_fields__ if f in done[name]}
            runs.append(Run(**{**fields, "unit_cases_merged": _unit_cases_merged(without)}))
            continue
        if not warmed:
            # A first pass warms the interpreter, the regular expressions and the model's
            # cache, so that the first measured run pays no more than the others.
            run("warm-up", pairs[:300], embedder, frozenset({"pair_model"}))
            warmed = True
        result = run(name, pairs, embedder, without)
        runs.append(result)
        print(json.dumps(asdict(result)), flush=True)
        done_path.parent.mkdir(parents=True, exist_ok=True)
        with done_path.open("a", encoding="utf-8") as out:
            row = {**asdict(result), "half": args.half, "limit": args.limit}
            out.write(json.dumps(row) + "\n")
    command = "python -m benchmarks.rule_families " + " ".join(
        f"--{k.replace('_', '-')} {v}"
        for k, v in (("half", args.half), ("limit", args.limit), ("families", args.families))
        if v not in (0, "all", "calibration")
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(
        json.dumps([asdict(r) for r in runs], indent=1) + "\n", encoding="utf-8"
    )
    rules_only = [
        (n, frozenset(_families(w))) for n, w in _configs(names) if n.startswith("without ")
    ]
    timed = family_costs(text_pairs(pairs, 1500), rules_only)
    costs = {name: cost.median_us for name, cost in timed.items()}
    args.out.with_suffix(".md").write_text(
        markdown(runs, command.strip(), args.half, costs), encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
