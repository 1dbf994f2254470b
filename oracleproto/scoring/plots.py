"""The scoring plots as static SVG images (DVC image plots: they render with the network off).

Each chart is drawn from the same rows as its CSV table (:func:`~oracleproto.scoring.scorer.plot_tables`):
exam mean by bucket (bars over a categorical axis), cost against composite accuracy (with the
Pareto frontier), the reliability diagram, and the paired-difference matrix coloured by
composite(A) − composite(B), with significant cells (Holm-adjusted p < 0.05) starred.

The bytes are a function of the rows: no date in the metadata, a fixed hash salt for the
SVG ids, text drawn as paths from the font matplotlib ships.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from typing import Any

Rows = Sequence[tuple]
WIDTH = 8.0  # inches
ROW_HEIGHT = 0.22


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.hashsalt": "oracleproto", "svg.fonttype": "path", "font.size": 8})
    import matplotlib.pyplot as plt

    return plt


def svg_bytes(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    pyplot().close(figure)
    return buffer.getvalue()


def _empty(plt: Any, title: str, note: str) -> bytes:
    figure, axes = plt.subplots(figsize=(WIDTH, 1.6))
    axes.set_axis_off()
    axes.set_title(title)
    axes.text(0.5, 0.5, note, ha="center", va="center")
    return svg_bytes(figure)


def exam_by_bucket(rows: Rows) -> bytes:
    """Grouped horizontal bars: one row per model, one bar per bucket."""
    plt = pyplot()
    if not rows:
        return _empty(plt, "Exam mean by bucket", "no counted trials")
    models = sorted({model for model, _, _ in rows})
    buckets = list(dict.fromkeys(bucket for _, bucket, _ in rows))
    value = {(model, bucket): exam for model, bucket, exam in rows}
    figure, axes = plt.subplots(figsize=(WIDTH, 1.0 + ROW_HEIGHT * len(models) * max(1, len(buckets)) / 2))
    height = 0.8 / len(buckets)
    for b, bucket in enumerate(buckets):
        ys = [m + b * height for m, model in enumerate(models) if (model, bucket) in value]
        xs = [value[(model, bucket)] for model in models if (model, bucket) in value]
        axes.barh(ys, xs, height=height, label=bucket)
    axes.set_yticks([m + 0.4 - height / 2 for m in range(len(models))], models)
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel("exam mean")
    axes.set_title("Exam mean by bucket")
    axes.legend(loc="lower right", fontsize=7)
    return svg_bytes(figure)


def cost_accuracy(rows: Rows) -> bytes:
    """Composite accuracy against total cost; frontier points joined."""
    plt = pyplot()
    if not rows:
        return _empty(plt, "Cost and accuracy", "no model with a composite accuracy")
    figure, axes = plt.subplots(figsize=(WIDTH, 5))
    cost = [row[1] for row in rows]
    accuracy = [row[3] for row in rows]
    axes.scatter(cost, accuracy, s=14)
    frontier = sorted((c, a) for (_, c, _, a, on) in rows if on)
    if frontier:
        axes.plot([c for c, _ in frontier], [a for _, a in frontier], linestyle="--", label="Pareto frontier")
        axes.legend(loc="lower right", fontsize=7)
    for model, c, _, a, _ in rows:
        axes.annotate(model, (c, a), fontsize=5, xytext=(3, 2), textcoords="offset points")
    if max(cost) == 0:
        axes.set_xlim(-0.5, 1)
        axes.text(0.5, 0.02, "every model here cost $0 (offline baselines)", transform=axes.transAxes, ha="center")
    axes.set_xlabel("total cost (USD)")
    axes.set_ylabel("composite accuracy")
    axes.set_ylim(0, 1)
    axes.set_title("Cost and accuracy")
    return svg_bytes(figure)


def reliability(rows: Rows) -> bytes:
    """Observed frequency against mean forecast probability, per model, with the diagonal."""
    plt = pyplot()
    if not rows:
        return _empty(plt, "Reliability", "no belief vectors in this run (belief protocol off, no fallback_belief)")
    figure, axes = plt.subplots(figsize=(6, 6))
    axes.plot([0, 1], [0, 1], color="grey", linewidth=0.8, label="perfect calibration")
    for model in sorted({row[0] for row in rows}):
        points = sorted((row[5], row[6]) for row in rows if row[0] == model)
        axes.plot([p for p, _ in points], [o for _, o in points], marker="o", markersize=3, label=model)
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.set_xlabel("mean forecast probability")
    axes.set_ylabel("observed frequency")
    axes.set_title("Reliability")
    axes.legend(loc="upper left", fontsize=6)
    return svg_bytes(figure)


def significance(rows: Rows) -> bytes:
    """The matrix of composite(A) − composite(B) on shared questions; * marks p_holm < 0.05."""
    plt = pyplot()
    models = sorted({row[0] for row in rows} | {row[1] for row in rows})
    if not models:
        return _empty(plt, "Paired differences", "fewer than two models")
    index = {model: i for i, model in enumerate(models)}
    matrix = [[math.nan] * len(models) for _ in models]
    starred = []
    for a, b, delta, _, significant in rows:
        if delta is not None and math.isfinite(delta):
            matrix[index[a]][index[b]] = delta
        if significant:
            starred.append((index[b], index[a]))
    side = min(3 + 0.22 * len(models), 16)
    figure, axes = plt.subplots(figsize=(side + 1.5, side))
    image = axes.imshow(matrix, cmap="RdBu", vmin=-1, vmax=1)
    for x, y in starred:
        axes.text(x, y, "*", ha="center", va="center", fontsize=7)
    axes.set_xticks(range(len(models)), models, rotation=90, fontsize=5)
    axes.set_yticks(range(len(models)), models, fontsize=5)
    axes.set_xlabel("model B")
    axes.set_ylabel("model A")
    axes.set_title("composite(A) − composite(B) on shared questions (* Holm p < 0.05)")
    figure.colorbar(image, ax=axes, shrink=0.6)
    return svg_bytes(figure)


CHARTS: dict[str, tuple[str, Callable[[Rows], bytes]]] = {
    "exam_by_bucket.svg": ("exam_by_bucket.csv", exam_by_bucket),
    "cost_accuracy.svg": ("cost_accuracy.csv", cost_accuracy),
    "reliability.svg": ("reliability.csv", reliability),
    "significance.svg": ("significance.csv", significance),
}
