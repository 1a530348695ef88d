"""PNG plots of a tuning run (matplotlib, Agg backend: no display needed, safe on cluster nodes).

- :func:`elo_ladder_plot`: players / levels with Elo and 95 % CI error bars, target Elo markers.
- :func:`level_ladder_plot`: per level (Easy, Medium, Hard), the calibrated level and the product's
  level with 95 % CI error bars and the level's target Elo as a line.
- :func:`optimisation_history_plot`: objective value per trial, the best so far and the chosen trial.
- :func:`score_distribution_plot`: per level, how often each pair score (0, 0.5, ..., 2 points
  out of a colour-swapped pair) occurred against the reference (product) engine.

Each function writes one PNG (a local path or a run-folder store path, through
:mod:`pipeline.games.storage_fs`; parent folders created) and returns where; the tracker uploads
them as artifacts. Figures are closed after saving, so long runs do not leak memory.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot: never needs a display

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from pipeline.games.storage_fs import StorePath, store_path

DPI = 110
PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)


@dataclass(frozen=True)
class LadderRow:
    """One rung of the Elo ladder: a player or level with its Elo, 95 % CI and optional target."""

    name: str
    elo: float
    ci_low: float
    ci_high: float
    target: float | None = None


def _save(fig: Figure, path: str | Path | StorePath) -> StorePath:
    out = store_path(path)
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())
    return out


def _finite(name: str, value: float) -> float:
    if not math.isfinite(value):
        raise ValueError(f"{name} = {value!r}: expected a finite number")
    return float(value)


def elo_ladder_plot(rows: Sequence[LadderRow], path: str | Path | StorePath,
                    title: str = "Elo ladder") -> StorePath:
    """Horizontal ladder, strongest on top: Elo points with CI bars; targets as red diamonds."""
    if not rows:
        raise ValueError("elo_ladder_plot needs at least one row")
    for r in rows:
        for what, value in (("elo", r.elo), ("ci_low", r.ci_low), ("ci_high", r.ci_high)):
            _finite(f"{r.name}.{what}", value)
    ordered = sorted(rows, key=lambda r: r.elo)
    y = np.arange(len(ordered))
    elo = np.array([r.elo for r in ordered])
    # a CI that does not contain its estimate (possible with bootstrap CIs) is drawn clipped
    err = np.array([[max(0.0, r.elo - r.ci_low) for r in ordered],
                    [max(0.0, r.ci_high - r.elo) for r in ordered]])
    fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.45 * len(ordered)))
    ax.errorbar(elo, y, xerr=err, fmt="o", color="tab:blue", capsize=4, label="Elo, 95 % CI")
    targets = [(i, r.target) for i, r in enumerate(ordered) if r.target is not None]
    if targets:
        ax.scatter([t for _, t in targets], [i for i, _ in targets], marker="D", color="tab:red", zorder=3,
                   label="target")
    for i, r in enumerate(ordered):
        ax.annotate(f"{r.elo:+.0f}", (r.ci_high, i), xytext=(6, 0), textcoords="offset points", va="center",
                    fontsize=8)
    ax.set_yticks(y, [r.name for r in ordered])
    ax.set_xlabel("Elo (relative to the anchor)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return _save(fig, path)


def optimisation_history_plot(
    values: Sequence[float | None], path: str | Path | StorePath, *, direction: str = "maximize",
    title: str = "Optimisation history", ylabel: str = "objective", chosen: int | None = None,
) -> StorePath:
    """Objective per trial (None / NaN: failed trial, skipped), the best-so-far line and, when
    ``chosen`` (an index into ``values``) is given, the trial the stage chose, ringed and labelled."""
    if direction not in ("maximize", "minimize"):
        raise ValueError(f"direction {direction!r}: expected 'maximize' or 'minimize'")
    points = [(i, float(v)) for i, v in enumerate(values) if v is not None and math.isfinite(v)]
    if not points:
        raise ValueError("optimisation_history_plot needs at least one finite value")
    picked = dict(points).get(chosen) if chosen is not None else None
    if chosen is not None and picked is None:
        raise ValueError(f"chosen trial index {chosen} has no finite value among {len(values)} trials")
    x = np.array([p[0] for p in points])
    v = np.array([p[1] for p in points])
    best = np.maximum.accumulate(v) if direction == "maximize" else np.minimum.accumulate(v)
    fig, ax = plt.subplots(figsize=(7.0, 4.0))
    ax.scatter(x, v, s=14, color="tab:blue", label="trial")
    ax.step(x, best, where="post", color="tab:red", label="best so far")
    if chosen is not None and picked is not None:
        ax.scatter([chosen], [picked], s=120, facecolors="none", edgecolors="tab:green", linewidths=2,
                   zorder=3, label=f"chosen (trial {chosen})")
        ax.annotate("chosen", (chosen, picked), xytext=(8, 8), textcoords="offset points", fontsize=8,
                    color="tab:green")
    ax.set_xlabel("trial")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


@dataclass(frozen=True)
class LevelBar:
    """One level of the level ladder: the calibrated level's Elo and CI, the product's level of the
    same name (None when unknown) and the level's target Elo (None: no target)."""

    level: str
    elo: float
    ci_low: float
    ci_high: float
    product: tuple[float, float, float] | None = None  # (Elo, CI low, CI high)
    target: float | None = None


def level_ladder_plot(levels: Sequence[LevelBar], path: str | Path | StorePath,
                      title: str = "Levels") -> StorePath:
    """One row per level, in the order given from the bottom: the calibrated level (blue) and the
    product's level (grey) with 95 % CI error bars, the target as a red vertical line."""
    if not levels:
        raise ValueError("level_ladder_plot needs at least one level")
    for lv in levels:
        for what, value in (("elo", lv.elo), ("ci_low", lv.ci_low), ("ci_high", lv.ci_high)):
            _finite(f"{lv.level}.{what}", value)
        for k, value in enumerate(lv.product or ()):
            _finite(f"{lv.level}.product[{k}]", value)
        if lv.target is not None:
            _finite(f"{lv.level}.target", lv.target)
    fig, ax = plt.subplots(figsize=(7.0, 1.4 + 0.9 * len(levels)))
    labelled: set[str] = set()

    def once(label: str) -> str:
        """The legend label the first time, then matplotlib's "no legend entry" label."""
        if label in labelled:
            return "_nolegend_"
        labelled.add(label)
        return label

    for i, lv in enumerate(levels):
        rows = [(i + 0.15, (lv.elo, lv.ci_low, lv.ci_high), "tab:blue", "calibrated, 95 % CI")]
        if lv.product is not None:
            rows.append((i - 0.15, lv.product, "tab:gray", "product, 95 % CI"))
        for y, (elo, low, high), colour, label in rows:
            err = [[max(0.0, elo - low)], [max(0.0, high - elo)]]
            ax.errorbar([elo], [y], xerr=err, fmt="o", color=colour, capsize=4, label=once(label))
            ax.annotate(f"{elo:.0f}", (max(high, elo), y), xytext=(6, 0), textcoords="offset points",
                        va="center", fontsize=8)
        if lv.target is not None:
            ax.vlines(lv.target, i - 0.4, i + 0.4, colors="tab:red", linestyles="--", linewidth=1.5,
                      label=once("target"))
    ax.set_yticks(np.arange(len(levels)), [lv.level for lv in levels])
    ax.set_ylim(-0.6, len(levels) - 0.4)
    ax.set_xlabel("Elo (score-based)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return _save(fig, path)


def score_distribution_plot(
    scores_by_level: Mapping[str, Sequence[float]], path: str | Path | StorePath, *,
    title: str = "Pair scores against the reference engine",
) -> StorePath:
    """Grouped bars: share of pairs scoring 0, 0.5, 1, 1.5, 2 points, one group per level.

    Scores are a level's points in each colour-swapped pair (pentanomial outcomes); the legend
    gives each level's mean pair score and pair count."""
    if not scores_by_level:
        raise ValueError("score_distribution_plot needs at least one level")
    fig, ax = plt.subplots(figsize=(7.0, 4.0))
    width = 0.8 / len(scores_by_level)
    x = np.arange(len(PAIR_SCORES))
    for k, (level, raw) in enumerate(scores_by_level.items()):
        scores = np.asarray(raw, dtype=float)
        if scores.size == 0:
            raise ValueError(f"level {level!r}: no pair scores")
        bad = scores[~np.isin(scores, PAIR_SCORES)]
        if bad.size:
            raise ValueError(f"level {level!r}: pair score {float(bad[0])!r} is not one of {PAIR_SCORES}")
        share = np.array([(scores == s).mean() for s in PAIR_SCORES])
        ax.bar(x + (k - (len(scores_by_level) - 1) / 2) * width, share, width,
               label=f"{level}: mean {scores.mean():.2f} / 2 over {scores.size} pairs")
    ax.set_xticks(x, [f"{s:g}" for s in PAIR_SCORES])
    ax.set_xlabel("points in a colour-swapped pair")
    ax.set_ylabel("share of pairs")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


@dataclass(frozen=True)
class CurvePoint:
    """One point of a strength curve: knob value, Elo and its 95 % CI."""

    x: float
    elo: float
    ci_low: float
    ci_high: float


def strength_curve_plot(curves: Mapping[str, Sequence[CurvePoint]], path: str | Path | StorePath, *,
                        xlabels: Mapping[str, str], marks: Mapping[str, float] | None = None,
                        title: str = "Strength curves") -> StorePath:
    """One panel per curve: Elo over the knob with CI bars; horizontal lines at ``marks``
    (e.g. the product's levels and the targets)."""
    if not curves:
        raise ValueError("strength_curve_plot needs at least one curve")
    fig, axes = plt.subplots(1, len(curves), figsize=(5.0 * len(curves), 4.0), squeeze=False)
    for ax, (name, points) in zip(axes[0], curves.items(), strict=True):
        if not points:
            raise ValueError(f"curve {name!r}: no points")
        xs = np.array([_finite(f"{name}.x", p.x) for p in points])
        elo = np.array([_finite(f"{name}.elo", p.elo) for p in points])
        err = np.array([[max(0.0, p.elo - p.ci_low) for p in points],
                        [max(0.0, p.ci_high - p.elo) for p in points]])
        ax.errorbar(xs, elo, yerr=err, fmt="o-", color="tab:blue", capsize=4, label="Elo, 95 % CI")
        for label, value in (marks or {}).items():
            ax.axhline(_finite(label, value), linestyle="--", linewidth=0.8, color="tab:gray")
            ax.annotate(label, (xs.min(), value), xytext=(2, 2), textcoords="offset points", fontsize=7)
        ax.set_xlabel(xlabels.get(name, "knob"))
        ax.set_ylabel("Elo (score-based)")
        ax.set_title(f"{title}: {name}")
        ax.grid(alpha=0.3)
    return _save(fig, path)
