"""The level results of a job as MLflow level runs: the same tags and metric names for every level.

A level result is a player the job rated, logged as one run, a child of its stage's run:

- ``kind`` calibrated: a level the profile ships; ``level`` easy, medium or hard.
- ``kind`` product: the product's level of that name; ``level`` easy, medium or hard.
- ``kind`` candidate: any other player of the calibration's pooled fit (curve points, Easy's
  trials, validation chain points, dial spot checks); ``level`` is the player's name, tag ``path`` the
  knob path it lies on (its name's first word: hard, medium, easy, dial).
- ``kind`` anchor: a reference-ladder anchor; ``level`` its name. Its Elo is on the ladder's own
  scale (random = 0), not the calibration's (the product's Medium = 1500): tag ``elo_scale``.

Metrics use the plain names ``elo``, ``elo_ci_low``, ``elo_ci_high``, ``expected_score_next``,
``nodes_per_move``, ``median_depth``, ``blunder_rate`` and ``games`` (each run has those it
measured), a calibrated level also ``target_elo``, ``validation_elo`` (with its CI) and
``expected_score_product_<level>``; so MLflow's compare and chart views, and
``search_runs(filter_string="tags.level = 'hard'")``, line levels up across jobs and variants.

Targets: :meth:`CalibrationOutcome.targets` (the level-ladder PNG, :func:`pipeline.job.report.level_ladder`,
draws them). This module builds records and the levels table; :mod:`pipeline.job.main_job` logs them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.profile import LEVEL_NAMES
from pipeline.calibration.outcome import CalibrationOutcome
from pipeline.calibration.product import PRODUCT_PREFIX
from pipeline.ladder.reference import ANCHOR, Ladder
from pipeline.ratings.logistic import elo_to_score
from pipeline.tracking.mlflow_log import level_metrics, rounded

KINDS = ("calibrated", "product", "candidate", "anchor")
#: the levels table's columns after kind, level and player (metric names; a missing value is None)
TABLE_METRICS = ("elo", "elo_ci_low", "elo_ci_high", "target_elo", "expected_score_next", "nodes_per_move",
                 "median_depth", "blunder_rate", "games")


@dataclass(frozen=True)
class LevelResult:
    """One level run: its name, kind, level, player, metrics (plain names), params and extra tags."""

    name: str
    kind: str
    level: str
    player: str
    metrics: Mapping[str, float]
    params: Mapping[str, Any] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"level run kind {self.kind!r}: expected one of {', '.join(KINDS)}")

    def run_tags(self) -> dict[str, str]:
        """The run's tags: ``kind``, ``level``, ``player`` and the extra ones."""
        return {"kind": self.kind, "level": self.level, "player": self.player, **self.tags}


def _interval(prefix: str, elo: float, ci: Sequence[float]) -> dict[str, float]:
    return {prefix: float(elo), f"{prefix}_ci_low": float(ci[0]), f"{prefix}_ci_high": float(ci[1])}


def _present(**values: float | None) -> dict[str, float]:
    return {k: float(v) for k, v in values.items() if v is not None}


def elo_scale(outcome: CalibrationOutcome) -> str:
    """The ``elo_scale`` tag of the calibration's level runs, e.g. ``product-medium=1500``."""
    return f"{outcome.anchor}={outcome.anchor_elo:g}"


def calibration_results(outcome: CalibrationOutcome) -> list[LevelResult]:
    """The calibrated levels, the product's levels and the candidates of one calibration."""
    scale = elo_scale(outcome)
    goal = outcome.targets()
    rated = {str(p["player"]): p for p in outcome.scale.get("players", [])}
    out: list[LevelResult] = []
    for name in LEVEL_NAMES:
        rec = outcome.levels[name]
        metrics = {**_interval("elo", rec.elo, rec.ci), "target_elo": goal[name],
                   **_interval("validation_elo", rec.validation_elo, rec.validation_ci),
                   **{f"expected_score_product_{p}": s for p, s in rec.expected_score_product.items()},
                   **_present(expected_score_next=rec.expected_score_next, nodes_per_move=rec.nodes_per_move,
                              median_depth=rec.median_depth, blunder_rate=rec.blunder_rate,
                              games=rec.games)}
        params = {f"{part}.{k}": v for part in ("search", "weakening")
                  for k, v in dict(rec.profile.get(part, {})).items()}
        out.append(LevelResult(name, "calibrated", name, rec.player, metrics, params, {"elo_scale": scale}))
    for i, name in enumerate(LEVEL_NAMES):
        player = f"{PRODUCT_PREFIX}{name}"
        elo, low, high = outcome.product_elo[name]
        nxt = outcome.product_elo[LEVEL_NAMES[i + 1]][0] if i + 1 < len(LEVEL_NAMES) else None
        games = rated.get(player, {}).get("games")
        metrics = {**_interval("elo", elo, (low, high)), **_present(
            expected_score_next=None if nxt is None else float(elo_to_score(elo - nxt)),
            blunder_rate=outcome.product_easy_blunder_rate if name == "easy" else None,
            games=None if games is None else float(games))}
        tags = {"elo_scale": scale, "product_file": Path(outcome.product_file).name}
        out.append(LevelResult(player, "product", name, player, metrics, {}, tags))
    chosen = {rec.player for rec in outcome.levels.values()}
    easy = {t.player: t for t in outcome.easy_trials}
    for player, p in sorted(rated.items()):
        if player in chosen or player.startswith(PRODUCT_PREFIX):
            continue
        metrics = {**_interval("elo", float(p["elo"]), p["ci"]), "games": float(p["games"])}
        trial = easy.get(player)
        if trial is not None:
            metrics["blunder_rate"] = trial.blunder_rate
        mix = {} if trial is None else dict(trial.params)
        tags = {"elo_scale": scale, "path": player.split("-", 1)[0]}
        out.append(LevelResult(player, "candidate", player, player, metrics, mix, tags))
    return out


def ladder_results(ladder: Ladder) -> list[LevelResult]:
    """The reference ladder's anchors (Elo on the ladder's scale: random = 0)."""
    out = []
    for a in ladder.anchors:
        metrics = {**_interval("elo", a.elo, (a.rating.ci_low, a.rating.ci_high)),
                   "games": float(a.rating.games), "score": a.rating.score}
        out.append(LevelResult(a.name, "anchor", a.name, a.name, metrics, {}, {"elo_scale": f"{ANCHOR}=0"}))
    return out


def levels_table(results: Sequence[LevelResult]) -> dict[str, list[Any]]:
    """The calibrated and product levels as table columns (``mlflow.log_table``), metrics rounded as
    logged, None where a level has no value."""
    rows = [r for r in results if r.kind in ("calibrated", "product")]
    table: dict[str, list[Any]] = {"kind": [r.kind for r in rows], "level": [r.level for r in rows],
                                   "player": [r.player for r in rows]}
    for name in TABLE_METRICS:
        table[name] = [None if name not in r.metrics else rounded(name, r.metrics[name]) for r in rows]
    return table


def job_metrics(outcome: CalibrationOutcome) -> dict[str, float]:
    """The job run's level-named metrics ``elo_<level>``, ``elo_<level>_ci_low``, ``_ci_high``: one
    row per job in the experiment's run table and its parallel-coordinates plot."""
    out: dict[str, float] = {}
    for name in LEVEL_NAMES:
        out.update(level_metrics(name, elo=outcome.levels[name].elo, ci=outcome.levels[name].ci))
    return out
