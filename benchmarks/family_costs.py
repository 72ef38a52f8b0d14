"""What each rule family costs a verifier compare, timed in pairs: the family table's cost column.

    python -m benchmarks.family_costs [--texts 1500] [--rounds 9] [--families NAME,NAME]

The text pairs are free texts of the calibration half's labelled pairs, canonical, at the
same path in both calls (what the verifier compares). Each round times the same compares
with every rule and with the family left out, in turn chunk by chunk (50 pairs, about 20 ms),
each chunk from cold (no word, act, move or side remembered); a family's cost is the median
of its rounds' differences, with their range. Timings side by side share the machine's
moment: the best of five unpaired timings of all 1,500 pairs moved by ±20 µs from one run to
the next, more than most families cost; three runs of this one agreed within 9 µs. The pair
model is off, and the canonical rules (``facts``, ``attempt_ids``, ``spellings``) cost their
time in the canonical form, not here. Results:
``benchmarks/results/rule-family-costs.md``/``.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tests import test_rule_verifier as unit_tests
from tooldedup.calibration.command import held_out
from tooldedup.calibration.samples import LabelledPair, load_pairs
from tooldedup.dedup.canonical import Canonicalizer
from tooldedup.dedup.english import EnglishPack, RuleFamily, RuleVerifier
from tooldedup.dedup.english.accounting import forget_sides
from tooldedup.dedup.english.acts import forget_acts
from tooldedup.dedup.english.lexicon import forget_words
from tooldedup.dedup.english.moves import forget_moves
from tooldedup.dedup.errors import DedupError
from tooldedup.dedup.policy import ToolPolicy

__all__ = ["FamilyCost", "family_costs", "forget_readings", "text_pairs"]

_ROOT = Path(__file__).resolve().parent.parent
_PAIRS = _ROOT / "calibration" / "data" / "pairs.jsonl"
_RESULTS = _ROOT / "benchmarks" / "results" / "rule-family-costs"


@dataclass(frozen=True, slots=True)
class FamilyCost:
    """Microseconds per compare a family adds: the median of paired rounds, and their range."""

    median_us: float
    low_us: float
    high_us: float


def text_pairs(pairs: Sequence[LabelledPair], limit: int) -> list[tuple[str, str]]:
    """Free texts the verifier would compare: the two calls' leaves at one path, canonical."""
    canon = Canonicalizer(EnglishPack())
    found: list[tuple[str, str]] = []
    for pair in sorted(pairs, key=lambda p: hashlib.sha256(p.ref.encode()).digest()):
        try:
            first = canon.canonicalize(pair.a, ToolPolicy(), tool=pair.tool)
            second = canon.canonicalize(pair.b, ToolPolicy(), tool=pair.tool)
        except DedupError:
            continue
        mine = {leaf.path: leaf.text for leaf in second.semantic_leaves}
        found += [
            (leaf.text, mine[leaf.path]) for leaf in first.semantic_leaves if leaf.path in mine
        ]
        if len(found) >= limit:
            break
    return found[:limit]


def forget_readings() -> None:
    """Drop what the English rules remember of texts read (words, acts, moves, sides)."""
    forget_words()
    forget_acts()
    forget_moves()
    forget_sides()


def _seconds(verifier: RuleVerifier, texts: Sequence[tuple[str, str]]) -> float:
    """CPU seconds to compare ``texts``, every word read from cold."""
    forget_readings()
    started = time.thread_time()
    for stored, proposed in texts:
        verifier.compare(stored, proposed)
    return time.thread_time() - started


def family_costs(
    texts: Sequence[tuple[str, str]],
    configs: Sequence[tuple[str, frozenset[RuleFamily]]],
    rounds: int = 9,
    chunk: int = 50,
) -> dict[str, FamilyCost]:
    """What each configuration's left-out families add to a compare, timed beside every rule:
    in each of ``rounds``, chunk by chunk of ``chunk`` text pairs, the two verifiers in turn
    (a drift of the machine's speed over seconds falls on both)."""
    every = RuleVerifier(unit_tests.word_cosine)
    chunks = [texts[at : at + chunk] for at in range(0, len(texts), chunk)]
    costs = {}
    for name, without in configs:
        lighter = RuleVerifier(unit_tests.word_cosine, without=without)
        differences = []
        for round_number in range(rounds):
            spent = {id(every): 0.0, id(lighter): 0.0}
            for number, part in enumerate(chunks):
                turn = (every, lighter) if (round_number + number) % 2 == 0 else (lighter, every)
                for verifier in turn:
                    spent[id(verifier)] += _seconds(verifier, part)
            extra = spent[id(every)] - spent[id(lighter)]
            differences.append(extra / max(1, len(texts)) * 1e6)
        costs[name] = FamilyCost(statistics.median(differences), min(differences), max(differences))
    return costs


def main(argv: Sequence[str] | None = None) -> int:
    """Time each family's cost and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--families", default="all", help="'all' or names, comma-separated")
    parser.add_argument("--out", type=Path, default=_RESULTS)
    args = parser.parse_args(argv)
    names = [f.value for f in RuleFamily]
    if args.families != "all":
        names = [n.strip() for n in args.families.split(",") if n.strip()]
    pairs = [p for p in load_pairs(_PAIRS) if not held_out(p.group or p.ref)]
    texts = text_pairs(pairs, args.texts)
    # A first pass warms the interpreter and the regular expressions.
    _seconds(RuleVerifier(unit_tests.word_cosine), texts[:300])
    configs = [(n, frozenset({RuleFamily(n)})) for n in names]
    costs = family_costs(texts, configs, args.rounds)
    rows = [
        "| family | cost (µs per compare) | range of the rounds |",
        "| --- | ---: | --- |",
        *(
            f"| `{n}` | {c.median_us:+.1f} | {c.low_us:+.1f} to {c.high_us:+.1f} |"
            for n, c in costs.items()
        ),
    ]
    every = _seconds(RuleVerifier(unit_tests.word_cosine), texts) / max(1, len(texts)) * 1e6
    report = (
        "# What each rule family costs a compare\n\n"
        f"`python -m benchmarks.family_costs --texts {args.texts} --rounds {args.rounds}`:"
        f" {len(texts)} text pairs of the calibration half; each family timed beside every"
        f" rule, the two in turn chunk by chunk of 50 pairs, in {args.rounds} rounds (CPU"
        " time, words read from cold); the median of the rounds' differences. A compare with"
        f" every rule took {every:.1f} µs in the last timing.\n\n" + "\n".join(rows) + "\n"
    )
    print(report)
    args.out.with_suffix(".md").write_text(report, encoding="utf-8")
    data = {n: asdict(c) for n, c in costs.items()}
    args.out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
