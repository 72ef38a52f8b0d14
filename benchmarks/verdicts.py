"""The rule verifier's verdict on every pair of free texts the labelled pairs hold, saved or
compared with a saved run: a change meant to make the rules faster must give the same verdicts.

    python -m benchmarks.verdicts --out /tmp/before.json          # then change the rules
    python -m benchmarks.verdicts --out /tmp/after.json --against /tmp/before.json

Every pair of ``calibration/data/pairs.jsonl`` (both halves) gives each free text the two
calls hold at one key path (two words at least, and not the same), in both orders, compared
by a fresh ``RuleVerifier`` with the shipped word table. It prints the time per compare (from
cold, then again with the text memos warm) and, with ``--against``, how many verdicts differ,
exiting 1 if any do.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldedup.dedup.english.rule_verifier import RuleVerifier
from tooldedup.index.embedding_cache import CachedEmbedder
from tooldedup.index.onnx_embedder import OnnxEmbedder
from tooldedup.index.wiring import word_cosine
from tooldedup.index.word_vectors import WordVectors

__all__ = ["main", "text_pairs"]

_PAIRS = Path(__file__).resolve().parent.parent / "calibration" / "data" / "pairs.jsonl"


def _strings(a: Any, b: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(a, str) and isinstance(b, str):
        if a != b and len(a.split()) >= 2:
            out.append((a, b))
    elif isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() & b.keys()):  # sorted: the same order at every run
            _strings(a[key], b[key], out)
    elif isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b, strict=False):
            _strings(x, y, out)


def text_pairs(path: Path = _PAIRS) -> list[tuple[str, str]]:
    """Each pair of free texts at one path of a labelled pair's two calls, in both orders."""
    found: list[tuple[str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            _strings(record["a"], record["b"], found)
    return found + [(b, a) for a, b in found]


def main(argv: Sequence[str] | None = None) -> int:
    """Write every verdict, and compare with a saved run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where the verdicts go (JSON)")
    parser.add_argument("--against", type=Path, default=None, help="a saved run to compare")
    args = parser.parse_args(argv)
    pairs = text_pairs()
    embedder = CachedEmbedder(OnnxEmbedder.packaged())
    cosine = word_cosine(embedder, WordVectors.load(model_id=embedder.model_id))
    timings = []
    verdicts: list[str] = []
    for _ in range(2):
        verifier = RuleVerifier(cosine)
        started = time.perf_counter()
        verdicts = [repr(verifier.compare(a, b)) for a, b in pairs]
        timings.append((time.perf_counter() - started) / max(1, len(pairs)) * 1000)
    print(
        f"{len(pairs)} pairs: {timings[0]:.3f} ms per compare from cold,"
        f" {timings[1]:.3f} ms with the text memos warm"
    )
    args.out.write_text(json.dumps(verdicts), encoding="utf-8")
    if args.against is None:
        return 0
    before = json.loads(args.against.read_text(encoding="utf-8"))
    if len(before) != len(verdicts):
        print(f"not the same pairs: {len(before)} saved, {len(verdicts)} now", file=sys.stderr)
        return 1
    differ = [i for i, (x, y) in enumerate(zip(before, verdicts, strict=True)) if x != y]
    for i in differ[:10]:
        print(f"{pairs[i][0]!r} / {pairs[i][1]!r}:\n  before {before[i]}\n  now    {verdicts[i]}")
    print(f"{len(differ)} of {len(verdicts)} verdicts differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
