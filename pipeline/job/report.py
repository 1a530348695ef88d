"""The run report: the level table (markdown + JSON) and PNG plots, from the run folder alone.

Reads ``tune/result.json``, ``tune/depth-check.json`` (when played) and ``calibrate/result.json``;
needs no MLflow. Writes into
``<run folder>/report/``: ``levels.md``, ``levels.json``, ``levels.png`` (the level ladder: the chosen
levels beside the product's levels on one scale, with their targets), ``curves.png`` (Hard's and
Medium's strength curves), ``easy_trials.png`` (Easy's blunder rate per trial),
``tune_history.png`` (both marking the chosen trial) and ``schedule.md`` (how busy each stage
kept the CPU slots, from ``schedule.json``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.profile import LEVEL_NAMES
from pipeline.calibration.depth_check import DEPTH_FILE, DepthCheck, depth_line, read_depth_check
from pipeline.calibration.outcome import CalibrationOutcome
from pipeline.games.stage import read_result, write_result
from pipeline.games.storage_fs import StorePath, store_path
from pipeline.job.cells import optional
from pipeline.job.schedule_report import write_schedule_report
from pipeline.jsonrecord import RecordError
from pipeline.ratings.logistic import elo_to_score
from pipeline.tracking.plots import (
    CurvePoint,
    LevelBar,
    level_ladder_plot,
    optimisation_history_plot,
    strength_curve_plot,
)
from pipeline.tuning.results import TuneResult, read_tune

REPORT_DIR = "report"


class ReportError(ValueError):
    """A run folder without the results a report needs."""


@dataclass(frozen=True)
class Report:
    """Where the report went."""

    folder: StorePath
    table_markdown: str
    files: tuple[StorePath, ...]


def markdown_table(outcome: CalibrationOutcome, tune: TuneResult | None,
                   depth: DepthCheck | None = None) -> str:
    """The level table, the claims and Easy's trade-off, as markdown."""
    lines = [
        f"Scale: score-based Elo, {outcome.anchor} held at {outcome.anchor_elo:g}; 95 % CIs are bootstrap "
        f"intervals over openings ({outcome.openings['curve']} curve and {outcome.openings['validation']} "
        f"validation openings, {outcome.games} games).",
        "",
        "| level | player | Elo | 95 % CI | validation Elo [CI] | expected score vs next | vs product "
        "easy / medium / hard | nodes/move | median depth | blunder rate | tactics solved |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in LEVEL_NAMES:
        r = outcome.levels[name]
        vs = " / ".join(f"{r.expected_score_product[p]:.2f}" for p in LEVEL_NAMES)
        lines.append(
            f"| {name} | {r.player} | {r.elo:.0f} | [{r.ci[0]:.0f}, {r.ci[1]:.0f}] | {r.validation_elo:.0f} "
            f"[{r.validation_ci[0]:.0f}, {r.validation_ci[1]:.0f}] | "
            f"{optional(r.expected_score_next, '.3f')} | "
            f"{vs} | "
            f"{r.nodes_per_move:.0f} | {optional(r.median_depth, 'g')} | {optional(r.blunder_rate, '.3f')} | "
            f"{r.tactics[0]}/{r.tactics[1]} |"
        )
    lines += ["", "Measured on the validation games (score, 95 % CI) against the expected score:", "",
              "| level | opponent | measured score | expected score |", "| --- | --- | --- | --- |"]
    for name in LEVEL_NAMES:
        r = outcome.levels[name]
        for other, (score, low, high) in sorted(r.measured_scores.items()):
            expected = _expected(outcome, name, other)
            lines.append(f"| {name} | {other} | {score:.3f} [{low:.3f}, {high:.3f}] | "
                         f"{optional(expected, '.3f')} |")
    lines += ["", "| product level | Elo | 95 % CI |", "| --- | --- | --- |"]
    for name in LEVEL_NAMES:
        elo, low, high = outcome.product_elo[name]
        lines.append(f"| {name} | {elo:.0f} | [{low:.0f}, {high:.0f}] |")
    lines += _hard_curve(outcome)
    lines += [
        "",
        "Pre-registered claims, on the validation games alone:",
        "",
        "| claim | estimate | 95 % CI | holds | CI as narrow as asked |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in outcome.claims:
        lines.append(
            f"| {c.what} | {c.estimate:+.0f} | [{c.ci_low:+.0f}, {c.ci_high:+.0f}] | "
            f"{'yes' if c.holds else 'NO'} | {'yes' if c.precise else 'NO'} |"
        )
    for c in outcome.claims:
        if c.note:
            lines.append(f"- {c.level}: {c.note}")
    for note in outcome.scale.get("notes", []):
        lines.append(f"- pooled fit: {note}")
    halved = {True: "yes", False: "NO", None: "not measurable"}[outcome.easy_blunder_halved]
    lines += [
        "",
        f"Easy's blunder rate at most half the product Easy's "
        f"({optional(outcome.product_easy_blunder_rate, '.3f')}): {halved}.",
        f"Medium: target {outcome.medium_target:.0f} (midpoint of Easy and Hard); {outcome.medium_note}.",
        *([f"Easy: {outcome.curves['easy']['note']}."] if "easy" in outcome.curves else []),
        "",
        "Easy's trials (Optuna: lowest blunder rate among the trials within the strength constraint; "
        "the chosen mix is then scaled along Easy's axis):",
        "",
        "| trial | Elo vs product easy | blunder rate | feasible | chosen | mix |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for t in outcome.easy_trials:
        mix = ", ".join(
            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(t.params.items())
        )
        lines.append(
            f"| {t.slot} | {t.gap:+.0f} | {t.blunder_rate:.3f} | {'yes' if t.feasible else 'no'} | "
            f"{'yes' if t.slot == outcome.easy_choice else ''} | {mix} |"
        )
    if outcome.dial:
        lines += ["", "Difficulty dial (predicted Elo from the strength curves):", "",
                  "| position | player | curve | knob | predicted Elo [95 % CI] | note |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for d in outcome.dial:
            lines.append(f"| {d.index} | {d.player} | {d.curve} | {optional(d.knob, 'g')} | {d.elo:.0f} "
                         f"[{d.ci[0]:.0f}, {d.ci[1]:.0f}] | {d.note} |")
        for check in outcome.dial_checks:
            verdict = "reproduced" if check.reproduced else "NOT reproduced"
            lines.append(f"- spot check: dial {check.index} ({check.player}) against the product's Medium "
                         f"scored {check.score:.3f} [{check.score_ci[0]:.3f}, {check.score_ci[1]:.3f}] over "
                         f"{check.games} games, predicted {check.predicted_score:.3f} ({verdict})")
    if tune is not None:
        lines += ["", f"Weight tuning: {tune.decision} (accepted: {tune.accepted})."]
    if depth is not None:
        lines += ["", f"Weight tuning at Hard's depth: {depth_line(depth)}."]
    return "\n".join(lines) + "\n"


def _expected(outcome: CalibrationOutcome, level: str, other: str) -> float | None:
    """The pooled fit's expected score of ``level`` against ``other`` (a product level or a level)."""
    r = outcome.levels[level]
    if other.startswith("product-") and other[len("product-"):] in r.expected_score_product:
        return r.expected_score_product[other[len("product-"):]]
    for lv in outcome.levels.values():
        if lv.player == other:
            return float(elo_to_score(r.elo - lv.elo))
    return None


def level_ladder(outcome: CalibrationOutcome, path: str | Path | StorePath) -> StorePath:
    """The level ladder: each level beside the product's level of its name, with 95 % CIs, and the
    level's target (:meth:`CalibrationOutcome.targets`)."""
    goal = outcome.targets()
    bars = [LevelBar(name, outcome.levels[name].elo, *outcome.levels[name].ci,
                     product=outcome.product_elo[name], target=goal[name]) for name in LEVEL_NAMES]
    return level_ladder_plot(bars, path, title=f"{outcome.variant}: levels, the product's levels and targets")


def _hard_curve(outcome: CalibrationOutcome) -> list[str]:
    """Hard's strength over the node budget with what a move costs, for picking a cheaper Hard."""
    points = outcome.curves.get("hard", {}).get("points", [])
    if not points:
        return []
    product = outcome.product_elo["hard"][0]
    out = ["", "Hard's strength over the node budget (pooled fit) and what a move cost in this run's games "
           "(nodes searched, milliseconds of one core):", "",
           "| node budget | Elo | 95 % CI | against the product's Hard | nodes/move | ms/move |",
           "| ---: | ---: | --- | ---: | ---: | ---: |"]
    for p in points:
        nodes, ms = p.get("nodes_per_move"), p.get("ms_per_move")
        out.append(f"| {round(2 ** p['x']):,} | {p['elo']:.0f} | [{p['ci'][0]:.0f}, {p['ci'][1]:.0f}] | "
                   f"{p['elo'] - product:+.0f} | {optional(nodes, ',.0f')} | {optional(ms, '.1f')} |")
    return out


def _plots(out: StorePath, outcome: CalibrationOutcome) -> list[StorePath]:
    files = [level_ladder(outcome, out / "levels.png")]
    curves = {
        name: [CurvePoint(p["x"], p["elo"], p["ci"][0], p["ci"][1]) for p in c["points"]]
        for name, c in outcome.curves.items()
    }
    marks = {f"product {n}": outcome.product_elo[n][0] for n in LEVEL_NAMES}
    marks["medium target"] = outcome.medium_target
    files.append(
        strength_curve_plot(
            curves,
            out / "curves.png",
            marks=marks,
            xlabels={k: str(c["axis"]) for k, c in outcome.curves.items()},
            title=outcome.variant,
        )
    )
    rates = [t.blunder_rate for t in outcome.easy_trials]
    slots = [t.slot for t in outcome.easy_trials]
    if rates:
        files.append(
            optimisation_history_plot(
                rates,
                out / "easy_trials.png",
                direction="minimize",
                title="Easy's weakening mix",
                ylabel="blunder rate",
                chosen=slots.index(outcome.easy_choice) if outcome.easy_choice in slots else None,
            )
        )
    return files


def write_report(run_folder: str | Path | StorePath) -> Report:
    """Write the report of a run; ReportError before its calibration has finished."""
    run = store_path(run_folder)
    try:
        tune = read_tune(run / "tune" / "result.json")
    except RecordError as err:
        raise ReportError(f"tune/result.json in {str(run)!r}: {err}") from None
    try:
        depth = read_depth_check(run)
    except RecordError as err:
        raise ReportError(f"{DEPTH_FILE} in {str(run)!r}: {err}") from None
    raw = read_result(run / "calibrate" / "result.json")
    if raw is None:
        raise ReportError(f"no calibrate/result.json in {str(run)!r}: nothing to report yet")
    try:
        outcome = CalibrationOutcome.from_json(raw)
    except (KeyError, TypeError, ValueError) as err:
        raise ReportError(f"calibrate/result.json in {str(run)!r}: {err}") from None
    out = run / REPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    files = _plots(out, outcome)
    if tune is not None:
        values = tune.history()
        numbers = sorted(t.number for t in tune.trials)
        if any(v is not None for v in values):
            files.append(
                optimisation_history_plot(
                    values,
                    out / "tune_history.png",
                    direction="maximize",
                    title="Weight tuning",
                    ylabel="score against the seed",
                    chosen=None if tune.best is None else numbers.index(tune.best.number),
                )
            )
    table = markdown_table(outcome, tune, depth)
    write_result(
        out / "levels.json",
        {
            "variant": outcome.variant,
            "levels": {n: outcome.levels[n].to_json() for n in LEVEL_NAMES},
            "claims": [c.to_json() for c in outcome.claims],
            "product_elo": {k: list(v) for k, v in outcome.product_elo.items()},
            "tune_decision": None if tune is None else tune.decision,
            "tune_depth_decision": None if depth is None else depth.sprt.decision,
        },
    )
    files.append(out / "levels.json")
    (out / "levels.md").write_text(f"# {outcome.variant}: calibrated levels\n\n{table}", encoding="utf-8")
    files.append(out / "levels.md")
    schedule = write_schedule_report(run, out)
    if schedule is not None:
        files.append(schedule)
    return Report(out, table, tuple(files))
