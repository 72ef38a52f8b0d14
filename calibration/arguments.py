"""The flags of `tooldedup calibrate`, importable without the calibrate extra."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `calibrate` subcommand's flags."""
    parser.add_argument("--log", type=Path, help="decision log JSONL from `tooldedup export-log`")
    parser.add_argument("--labels", type=Path, help="labelled pairs JSONL (calibration/data)")
    parser.add_argument("--target-precision", type=float, default=0.99)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument(
        "--interval", choices=["clopper-pearson", "wilson"], default="clopper-pearson"
    )
    parser.add_argument("--policy", type=Path, help="base policy TOML to extend")
    parser.add_argument("--out", type=Path, default=Path("calibrated-policy.toml"))
    parser.add_argument("--report", type=Path, default=Path("calibration-report.html"))
    parser.add_argument("--min-tool-labels", type=int, default=30)
    parser.add_argument("--compare-modes", action="store_true", help="also score whole-call mode")
    parser.add_argument("--cache-dir", type=Path, default=None, help="ONNX export cache")
    parser.add_argument("--embedder", choices=["onnx-int8", "onnx", "torch"], default="onnx-int8")
    parser.add_argument(
        "--judge", action="store_true", help="label unlabelled borderline checks with the judge"
    )
    parser.add_argument("--db", type=Path, help="the service's SQLite file (for --judge)")
    parser.add_argument("--judge-base-url", default=None)
    parser.add_argument("--judge-model", default=None)
    parser.add_argument("--judge-api-key-env", default="TOOLDEDUP_JUDGE_API_KEY")
    parser.add_argument("--judge-timeout", type=float, default=10.0)
