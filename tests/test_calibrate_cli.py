"""`tooldedup calibrate` on the shipped labelled pairs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tooldedup.calibration.command import held_out
from tooldedup.calibration.samples import load_pairs
from tooldedup.dedup.policy import load_policy_file

DATA = Path(__file__).resolve().parent.parent / "calibration" / "data" / "pairs.jsonl"


def _subset(tmp_path: Path, per_kind: int) -> Path:
    seen: dict[str, int] = {}
    lines = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        kind = json.loads(line)["kind"]
        if seen.get(kind, 0) < per_kind:
            seen[kind] = seen.get(kind, 0) + 1
            lines.append(line)
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _calibrate(tmp_path: Path, model_cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tooldedup.api.cli",
            "calibrate",
            "--cache-dir",
            str(model_cache),
            "--out",
            str(tmp_path / "policy.toml"),
            "--report",
            str(tmp_path / "report.html"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_calibrate_shipped_pairs_with_mode_comparison(tmp_path: Path, model_cache: Path) -> None:
    pairs = _subset(tmp_path, per_kind=60)
    result = _calibrate(
        tmp_path,
        model_cache,
        "--labels",
        str(pairs),
        "--compare-modes",
        "--target-precision",
        "0.9",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "420 pairs scored" in result.stdout  # 60 of each of the 7 kinds
    modes = (tmp_path / "report-modes.md").read_text()
    assert "whole-call embedding, cosine >= 0.85" in modes
    assert "field-aware funnel, defaults" in modes
    assert (tmp_path / "report-pr.png").read_bytes().startswith(b"\x89PNG")
    defaults, _ = load_policy_file(tmp_path / "policy.toml")
    assert -1.0 <= defaults.min_cosine_borderline <= defaults.min_cosine_duplicate <= 1.0
    # Calibrated: the band under the guarantee proceeds, and nothing says otherwise.
    assert defaults.borderline_action.value == "proceed"
    assert defaults.min_cosine_confirmed == defaults.min_cosine_borderline
    assert not (tmp_path / "policy.toml").read_text(encoding="utf-8").startswith("#")
    assert "too few labels" not in result.stderr


def test_too_few_labels_is_said_not_guessed(tmp_path: Path, model_cache: Path) -> None:
    pairs = _subset(tmp_path, per_kind=5)
    result = _calibrate(tmp_path, model_cache, "--labels", str(pairs))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "too few labels" in result.stdout
    assert "label ~" in result.stdout
    defaults, _ = load_policy_file(tmp_path / "policy.toml")
    assert defaults.min_cosine_duplicate == 0.90  # unchanged: nothing was guessed
    # A policy is still written (the base policy, here the defaults): it says so at its top,
    # and calibrate says so apart from its table.
    assert defaults.borderline_action.value == "duplicate"
    written = (tmp_path / "policy.toml").read_text(encoding="utf-8")
    header = written[: written.index("[defaults]")]
    more = re.search(r"label ~(\d+) more", result.stdout)
    assert more is not None
    assert header.startswith("# NOT CALIBRATED: written from too few labels")
    assert f"label ~{more.group(1)} more" in header
    assert all(line.startswith("#") for line in header.strip().splitlines())
    warning = [line for line in result.stderr.splitlines() if "too few labels" in line]
    assert len(warning) == 1
    assert str(tmp_path / "policy.toml") in warning[0]
    assert f"label ~{more.group(1)} more" in warning[0]
    assert 'borderline_action "duplicate"' in warning[0]


def test_bad_inputs(tmp_path: Path, model_cache: Path) -> None:
    assert _calibrate(tmp_path, model_cache).returncode == 2
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"tool": "t", "a": {}, "b": [], "label": "duplicate"}\n')
    result = _calibrate(tmp_path, model_cache, "--labels", str(broken))
    assert result.returncode == 2
    assert "broken.jsonl:1" in result.stderr


def test_shipped_text_pairs_are_split_by_entry() -> None:
    """No hand-written text is on both sides of the calibration split."""
    pairs = [p for p in load_pairs(DATA) if p.kind in ("paraphrase", "different", "hard_negative")]
    assert pairs
    assert all(p.group for p in pairs)
    sides: dict[str, set[bool]] = {}
    texts: dict[bool, set[str]] = {True: set(), False: set()}
    for pair in pairs:
        side = held_out(pair.group or pair.ref)
        sides.setdefault(pair.group or "", set()).add(side)
        for args in (pair.a, pair.b):
            texts[side].update(v for v in args.values() if isinstance(v, str) and len(v) > 20)
    assert all(len(found) == 1 for found in sides.values())
    assert texts[True]
    assert texts[False]
    assert not texts[True] & texts[False]
