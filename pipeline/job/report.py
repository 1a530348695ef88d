"""The run report: a level table (markdown + JSON) and PNG plots, from the run folder alone.

Reads ``ladder.json``, ``tune/result.json``, ``calibrate/result.json`` and the chosen trials'
Parquet files; needs no MLflow. Writes into ``<run folder>/report/``:
``levels.md``, ``levels.json``, ``ladder.png`` (anchors and calibrated levels with their targets),
``tune_history.png``, ``calibrate_<level>_history.png`` and ``pair_scores.png`` (pair scores of
each level against its anchors).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engine.profile import Knob
from pipeline.calibration.results import RESULT_FILE as CALIBRATION_FILE
from pipeline.calibration.results import (
    CalibrationResult,
    Confirmation,
    WinScores,
    player_name,
    read_calibration,
)
from pipeline.config.job_sections import LEVELS
from pipeline.games.records import GAMES_SCHEMA
from pipeline.games.stage import write_result
from pipeline.jsonrecord import Fields
from pipeline.ladder.reference import Ladder, load_ladder
from pipeline.ratings import Rating, games_from_color_table, pair_scores
from pipeline.tracking.plots import (
    LadderRow,
    elo_ladder_plot,
    optimisation_history_plot,
    score_distribution_plot,
)
from pipeline.tuning.results import RESULT_FILE as TUNE_FILE
from pipeline.tuning.results import TuneResult, read_tune

REPORT_DIR = "report"


class ReportError(ValueError):
    """A run folder without the results a report needs."""


@dataclass(frozen=True)
class Report:
    """Where the report went."""

    folder: Path
    table_markdown: str
    files: tuple[Path, ...]


_ROW_KEYS = ("level", "target", "rating", "hit", "within_ci", "nodes_per_move", "games", "opponents", "knobs",
             "trial", "trial_rating", "opponent_wins", "confirmed")


@dataclass(frozen=True)
class LevelRow:
    """One level of the report's table: its target and reported rating (the confirmation's when
    the run confirms), compute, games, opponents, knobs, and the picked trial's own rating
    (``trial``: its number; None for a proposal) and its opponents' wins."""

    level: str
    target: float
    rating: Rating
    hit: bool
    within_ci: bool
    nodes_per_move: float
    games: int
    opponents: tuple[str, ...]
    knobs: dict[str, Knob]
    trial: int | None
    trial_rating: Rating | None
    opponent_wins: WinScores
    confirmed: bool

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "target": self.target, "rating": self.rating.to_json(), "hit": self.hit,
                "within_ci": self.within_ci, "nodes_per_move": self.nodes_per_move, "games": self.games,
                "opponents": list(self.opponents), "knobs": dict(self.knobs), "trial": self.trial,
                "trial_rating": None if self.trial_rating is None else self.trial_rating.to_json(),
                "opponent_wins": self.opponent_wins.to_json(), "confirmed": self.confirmed}

    @classmethod
    def from_json(cls, data: object, where: str = "level row") -> LevelRow:
        f = Fields(data, where, _ROW_KEYS)
        return cls(f.text("level"), f.number("target"), f.record("rating", Rating.from_json), f.flag("hit"),
                   f.flag("within_ci"), f.number("nodes_per_move"), f.integer("games"), f.texts("opponents"),
                   f.scalars("knobs"), f.opt_integer("trial"), f.opt_record("trial_rating", Rating.from_json),
                   f.record("opponent_wins", WinScores.from_json), f.flag("confirmed"))


@dataclass(frozen=True)
class LevelTable:
    """The report's ``levels.json``: the level rows, whether they are ordered, the calibration's
    notes and the tuning decision (None: no tuning result)."""

    variant: str
    levels: tuple[LevelRow, ...]
    ordered: bool
    notes: tuple[str, ...]
    tune_decision: str | None

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "levels": [r.to_json() for r in self.levels],
                "ordered": self.ordered, "notes": list(self.notes), "tune_decision": self.tune_decision}

    @classmethod
    def from_json(cls, data: object, where: str = "levels.json") -> LevelTable:
        f = Fields(data, where, ("variant", "levels", "ordered", "notes", "tune_decision"))
        return cls(f.text("variant"), f.records("levels", LevelRow.from_json), f.flag("ordered"),
                   f.texts("notes"), f.opt_text("tune_decision"))


def _fmt_elo(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0f}"


def level_rows(calibration: CalibrationResult) -> list[LevelRow]:
    """One row per level: target, Elo and CI, compute, games, opponents, knobs, opponents' wins."""
    rows = []
    for level in LEVELS:
        result = calibration.levels[level]
        m, trial = result.measured, result.trial
        rows.append(LevelRow(
            level=level, target=result.target, rating=result.rating, hit=m.hit, within_ci=m.within_ci,
            nodes_per_move=m.nodes_per_move, games=m.games, opponents=result.opponents,
            knobs=dict(result.candidate.knobs), trial=None if trial is None else trial.number,
            trial_rating=None if trial is None else trial.rating,
            opponent_wins=WinScores.of([]) if trial is None else trial.opponent_wins,
            confirmed=isinstance(m, Confirmation)))
    return rows


def _chain_sentence(calibration: CalibrationResult) -> str:
    """How a chained calibration's levels were rated, and their CIs relative to the pin."""
    start = calibration.chain_from
    parts = []
    for level, result in calibration.levels.items():
        conf = result.confirmation
        if conf is not None and conf.neighbour is not None:
            n = conf.neighbour
            parts.append(f"{level} against {n.level} (held at {n.elo:+.0f}; its CI is "
                         f"relative to {n.level}, about +/-{conf.chain_half_width:.0f} "
                         "relative to the pin)")
    return (f"Chained calibration (chain_from = {start}): only {start} was rated on the ladder; then, "
            f"head to head, {'; '.join(parts)}. The claimed gaps between adjacent levels are their "
            "head-to-head gaps.")


def markdown_table(rows: list[LevelRow], calibration: CalibrationResult, tune: TuneResult | None) -> str:
    """The level table as markdown (plus the tuning decision and any calibration notes)."""
    lines = [
        "| level | target | Elo | 95 % CI | half-width | hit | nodes/move | games | opponents | knobs | "
        "opponent wins in the picked trial (product score mean / median / p90) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        w = r.opponent_wins
        wins = "0" if not w.wins else (f"{w.wins} ({w.mean:.0f} / {w.median:.0f} / {w.p90:.0f})")
        knobs = ", ".join(f"{k}={_short(v)}" for k, v in sorted(r.knobs.items()))
        e = r.rating
        lines.append(
            f"| {r.level} | {r.target:+.0f} | {_fmt_elo(e.elo)} | "
            f"[{_fmt_elo(e.ci_low)}, {_fmt_elo(e.ci_high)}] | {e.half_width:.0f} | "
            f"{'yes' if r.hit else 'NO'} | "
            f"{r.nodes_per_move:.0f} | {r.games} | {' / '.join(r.opponents)} | {knobs} | {wins} |")
    lines.append("")
    if rows and all(r.confirmed for r in rows):
        confirmations = [c for c in (lv.confirmation for lv in calibration.levels.values()) if c is not None]
        validated = all(c.validated for c in confirmations)
        source = ("VALIDATION games (fresh games played after confirmation chose the candidate" if validated
                  else "CONFIRMATION games (fresh games")
        methods = {c.ci_method.split(" (")[0] for c in confirmations}
        lines.append(f"Elo, CI, games and nodes/move come from the {source} against the opponents listed, "
                     f"{' / '.join(sorted(methods))} CI), not from the picked trial. CIs are relative to "
                     f"the pin {calibration.pin} (held at {calibration.pin_elo:+.0f}, its ladder Elo).")
        if calibration.chain_from:
            lines.append(_chain_sentence(calibration))
        lines.append("hit: the target lies inside the confirmed 95 % CI and the half-width met the "
                     "configured bound.")
        lines.append("")
        lines.append("| level | picked trial | trial Elo [CI] | confirmed Elo [CI] |")
        lines.append("| --- | --- | --- | --- |")
        for r in rows:
            t, e = r.trial_rating, r.rating
            trial = (None, None, None) if t is None else (t.elo, t.ci_low, t.ci_high)
            lines.append(f"| {r.level} | {r.trial} | {_fmt_elo(trial[0])} [{_fmt_elo(trial[1])}, "
                         f"{_fmt_elo(trial[2])}] | {_fmt_elo(e.elo)} [{_fmt_elo(e.ci_low)}, "
                         f"{_fmt_elo(e.ci_high)}] |")
        lines.append("")
    else:
        lines.append("hit: the target lies inside the level's 95 % CI and within the configured tolerance.")
    lines.append(f"Levels strictly ordered: {'yes' if calibration.ordered else 'NO'}.")
    for note in calibration.notes:
        lines.append(f"- {note}")
    if tune is not None:
        lines.append(f"Weight tuning: {tune.decision} (accepted: {tune.accepted}).")
    return "\n".join(lines) + "\n"


def _short(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _ladder_plot(folder: Path, ladder: Ladder, calibration: CalibrationResult | None) -> Path:

    rows = [LadderRow(a.name, a.elo, a.rating.ci_low, a.rating.ci_high) for a in ladder.anchors]
    if calibration is not None:
        for level in LEVELS:
            result = calibration.levels[level]
            r = result.rating
            rows.append(LadderRow(level, r.elo, r.ci_low, r.ci_high, result.target))
    return elo_ladder_plot(rows, folder / "ladder.png", title=f"{ladder.variant}: Elo ladder (random = 0)")


def _pair_scores_by_level(run_folder: Path, calibration: CalibrationResult) -> dict[str, list[float]]:
    """Pair scores of each chosen level trial against its anchors, from its Parquet files."""

    out: dict[str, list[float]] = {}
    for level in LEVELS:
        candidate = calibration.levels[level].candidate
        files = sorted((run_folder / candidate.stage / "games").glob("variant=*/batch-*.parquet"))
        if not files:
            continue
        table = pa.concat_tables([pq.read_table(f, schema=GAMES_SCHEMA) for f in files])
        games = games_from_color_table(table, pair_id="pair_id")
        scores = pair_scores(games, player_name(level, candidate.slot), drop_incomplete=True)
        out[level] = scores.scores.tolist()
    return out


def write_report(run_folder: str | Path) -> Report:
    """Write the report of a finished (or partly finished) run; ReportError without a ladder."""

    run = Path(run_folder)
    if not (run / "ladder.json").is_file():
        raise ReportError(f"no ladder.json in {str(run)!r}: nothing to report yet")
    ladder = load_ladder(run / "ladder.json")
    tune = read_tune(run / TUNE_FILE)
    calibration = read_calibration(run / CALIBRATION_FILE)
    out = run / REPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    files = [_ladder_plot(out, ladder, calibration)]
    if tune is not None:
        values = tune.history()
        if any(v is not None for v in values):
            files.append(optimisation_history_plot(values, out / "tune_history.png", direction="maximize",
                                                   title="Weight tuning", ylabel="score against the seed"))
    table = "No calibration yet.\n"
    if calibration is not None:
        for level in LEVELS:
            trials = sorted(calibration.trials[level], key=lambda t: t.number)
            if trials:
                files.append(optimisation_history_plot(
                    [t.value for t in trials], out / f"calibrate_{level}_history.png", direction="minimize",
                    title=f"Calibration of {level}", ylabel="|Elo - target| + compute penalty"))
        scores = _pair_scores_by_level(run, calibration)
        if scores:
            title = "Pair scores of each level against its ladder anchors"
            files.append(score_distribution_plot(scores, out / "pair_scores.png", title=title))
        rows = level_rows(calibration)
        table = markdown_table(rows, calibration, tune)
        summary = LevelTable(calibration.variant, tuple(rows), calibration.ordered, calibration.notes,
                             None if tune is None else tune.decision)
        write_result(out / "levels.json", summary.to_json())
        files.append(out / "levels.json")
    (out / "levels.md").write_text(f"# {ladder.variant}: calibrated levels\n\n{table}", encoding="utf-8")
    files.append(out / "levels.md")
    return Report(out, table, tuple(files))
