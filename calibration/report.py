"""The calibration report: console table, plots and one self-contained HTML file."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from tooldedup.calibration.samples import Sample
from tooldedup.calibration.thresholds import Calibration, sweep

__all__ = ["console_table", "plot_mode_curves", "plot_scope", "write_html"]


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def plot_scope(samples: Sequence[Sample], calibration: Calibration) -> bytes:
    """PR curve, score histogram with thresholds, and precision/recall against threshold."""
    points = [p for p in sweep(samples) if p.min_cosine <= 1.0]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    pr, hist, curve = axes
    pr.plot([p.recall for p in points], [p.precision for p in points], marker=".", lw=1)
    pr.set(xlabel="recall", ylabel="precision", title=f"{calibration.scope}: precision-recall")
    dup = [s.cosine for s in samples if s.cosine is not None and s.duplicate]
    dis = [s.cosine for s in samples if s.cosine is not None and not s.duplicate]
    bins = [i / 50 for i in range(-10, 51)]
    hist.hist([dup, dis], bins=bins, label=["duplicate", "distinct"], stacked=False, alpha=0.8)
    for value, style, name in (
        (calibration.min_cosine_duplicate, "-", "min_cosine_duplicate"),
        (calibration.min_cosine_borderline, "--", "min_cosine_borderline"),
    ):
        if value is not None:
            hist.axvline(value, color="black", ls=style, label=f"{name} {value:.3f}")
    hist.set(xlabel="weakest-leaf cosine", ylabel="pairs", title="scores by label")
    hist.legend(fontsize=8)
    xs = [p.min_cosine for p in points]
    curve.plot(xs, [p.precision for p in points], label="precision")
    curve.plot(xs, [p.precision_lower for p in points], label="precision lower bound")
    curve.plot(xs, [p.recall for p in points], label="recall")
    curve.set(xlabel="min_cosine_duplicate", title="against threshold")
    curve.legend(fontsize=8)
    return _png(fig)


def plot_mode_curves(fields: Sequence[Sample], whole: Sequence[Sample]) -> bytes:
    """Precision-recall of whole-call embedding against the field-aware funnel."""
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, samples in (("field-aware funnel", fields), ("whole-call embedding", whole)):
        points = [p for p in sweep(samples) if p.min_cosine <= 1.0]
        ax.plot([p.recall for p in points], [p.precision for p in points], label=name)
    exact = [s for s in fields]
    tp = sum(1 for s in exact if s.duplicate and s.fixed == "exact")
    fp = sum(1 for s in exact if not s.duplicate and s.fixed == "exact")
    positives = sum(1 for s in exact if s.duplicate)
    if tp + fp and positives:
        ax.scatter([tp / positives], [tp / (tp + fp)], color="black", label="exact-only", zorder=3)
    ax.set(xlabel="recall", ylabel="precision", title="Duplicate detection on the labelled pairs")
    ax.legend()
    return _png(fig)


def console_table(calibrations: Sequence[Calibration]) -> str:
    """Per tool: labels, chosen thresholds, precision with its bound, recall."""
    head = f"{'scope':<28} {'labels':>7} {'dup':>5} {'dup>=':>8} {'border>=':>9} {'precision':>10}"
    head += f" {'lower':>7} {'recall':>7}"
    lines = [head, "-" * len(head)]
    for c in calibrations:
        if c.point is None:
            lines.append(f"{c.scope[:28]:<28} {c.labels:>7} {c.duplicates:>5}  {c.message}")
            continue
        p = c.point
        lines.append(
            f"{c.scope[:28]:<28} {c.labels:>7} {c.duplicates:>5} {c.min_cosine_duplicate:>8.4f}"
            f" {c.min_cosine_borderline:>9.4f} {p.precision:>10.4f} {p.precision_lower:>7.4f}"
            f" {p.recall:>7.4f}"
        )
    return "\n".join(lines)


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def write_html(
    path: Path,
    title: str,
    calibrations: Sequence[Calibration],
    plots: dict[str, bytes],
    sections: Sequence[tuple[str, str]],
) -> None:
    """One HTML file with the table, the plots (embedded PNG) and extra preformatted sections."""
    parts = [
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1400px;margin:2em auto}"
        "pre{background:#f4f4f4;padding:1em;overflow-x:auto}img{max-width:100%}</style>",
        f"<h1>{html.escape(title)}</h1>",
        f"<pre>{html.escape(console_table(calibrations))}</pre>",
    ]
    for heading, text in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2><pre>{html.escape(text)}</pre>")
    for scope, png in plots.items():
        parts.append(f"<h2>{html.escape(scope)}</h2>{_img(png, scope)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
