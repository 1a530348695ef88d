"""The run report: a level table (markdown + JSON) and PNG plots, from the run folder alone.

Reads ``ladder.json``, ``tune/result.json``, ``calibrate/result.json`` and the chosen trials'
Parquet files; needs no MLflow. Writes into ``<run folder>/report/``:
``levels.md``, ``levels.json``, ``ladder.png`` (anchors and calibrated levels with their targets),
``tune_history.png``, ``calibrate_<level>_history.png`` and ``pair_scores.png`` (pair scores of
each level against its anchors).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.config.job_sections import LEVELS
from pipeline.games.records import GAMES_SCHEMA
from pipeline.games.stage import read_result, write_result
from pipeline.games.storage import batch_files, read_batch_file
from pipeline.games.storage_fs import StorePath, store_path
from pipeline.ratings import games_from_color_table, pair_scores
from pipeline.tracking.plots import (
    LadderRow,
    elo_ladder_plot,
    optimisation_history_plot,
    score_distribution_plot,
)

REPORT_DIR = "report"


class ReportError(ValueError):
    """A run folder without the results a report needs."""


@dataclass(frozen=True)
class Report:
    """Where the report went."""

    folder: StorePath
    table_markdown: str
    files: tuple[StorePath, ...]


def _fmt_elo(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0f}"


def level_rows(calibration: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per level: target, Elo and CI, compute, games, anchors, knobs, opponents' wins."""
    rows = []
    for level in LEVELS:
        rec = calibration["levels"][level]
        rows.append({
            "level": level, "target": rec["target"], "elo": rec["elo"], "ci": rec["ci"],
            "within_ci": rec["within_ci"], "hit": rec.get("hit", rec["within_ci"]),
            "nodes_per_move": rec["nodes_per_move"], "games": rec["games"],
            "anchors": rec["confirm"]["opponents"] if "confirm" in rec else rec["anchors"],
            "knobs": rec["knobs"], "trial": rec["number"], "opponent_wins": rec["opponent_wins"],
            "half_width": (rec["ci"][1] - rec["ci"][0]) / 2.0,
            "trial_elo": rec.get("trial_elo"), "trial_ci": rec.get("trial_ci"),
            "confirmed": "confirm" in rec,
        })
    return rows


def _chain_sentence(calibration: Mapping[str, Any]) -> str:
    """How a chained calibration's levels were rated, and their CIs relative to the pin."""
    start = calibration["chain_from"]
    parts = []
    for level, rec in calibration["levels"].items():
        conf = rec.get("confirm", {})
        neighbour = conf.get("neighbour")
        if neighbour:
            parts.append(f"{level} against {neighbour['level']} (held at {neighbour['elo']:+.0f}; its CI is "
                         f"relative to {neighbour['level']}, about +/-{conf['chain_half_width']:.0f} "
                         "relative to the pin)")
    return (f"Chained calibration (chain_from = {start}): only {start} was rated on the ladder; then, "
            f"head to head, {'; '.join(parts)}. The claimed gaps between adjacent levels are their "
            "head-to-head gaps.")


def markdown_table(rows: list[dict[str, Any]], calibration: Mapping[str, Any],
                   tune: Mapping[str, Any] | None) -> str:
    """The level table as markdown (plus the tuning decision and any calibration notes)."""
    lines = [
        "| level | target | Elo | 95 % CI | half-width | hit | nodes/move | games | opponents | knobs | "
        "opponent wins in the picked trial (product score mean / median / p90) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        w = r["opponent_wins"]
        wins = "0" if not w["wins"] else (f"{w['wins']} ({w['mean']:.0f} / {w['median']:.0f} / "
                                          f"{w['p90']:.0f})")
        knobs = ", ".join(f"{k}={_short(v)}" for k, v in sorted(r["knobs"].items()))
        lines.append(
            f"| {r['level']} | {r['target']:+.0f} | {_fmt_elo(r['elo'])} | "
            f"[{_fmt_elo(r['ci'][0])}, {_fmt_elo(r['ci'][1])}] | {r['half_width']:.0f} | "
            f"{'yes' if r['hit'] else 'NO'} | "
            f"{r['nodes_per_move']:.0f} | {r['games']} | {' / '.join(r['anchors'])} | {knobs} | {wins} |")
    lines.append("")
    if rows and all(r["confirmed"] for r in rows):
        pin = calibration.get("pin", {})
        validated = all(rec.get("confirm", {}).get("validated") for rec in calibration["levels"].values())
        source = ("VALIDATION games (fresh games played after confirmation chose the candidate" if validated
                  else "CONFIRMATION games (fresh games")
        methods = {str(rec.get("confirm", {}).get("ci_method", "pair bootstrap")).split(" (")[0]
                   for rec in calibration["levels"].values()}
        lines.append(f"Elo, CI, games and nodes/move come from the {source} against the opponents listed, "
                     f"{' / '.join(sorted(methods))} CI), not from the picked trial. CIs are relative to "
                     f"the pin {pin.get('anchor')} (held at {pin.get('elo', 0.0):+.0f}, its ladder Elo).")
        if calibration.get("chain_from"):
            lines.append(_chain_sentence(calibration))
        lines.append("hit: the target lies inside the confirmed 95 % CI and the half-width met the "
                     "configured bound.")
        lines.append("")
        lines.append("| level | picked trial | trial Elo [CI] | confirmed Elo [CI] |")
        lines.append("| --- | --- | --- | --- |")
        for r in rows:
            tci = r["trial_ci"] or [None, None]
            lines.append(f"| {r['level']} | {r['trial']} | {_fmt_elo(r['trial_elo'])} [{_fmt_elo(tci[0])}, "
                         f"{_fmt_elo(tci[1])}] | {_fmt_elo(r['elo'])} [{_fmt_elo(r['ci'][0])}, "
                         f"{_fmt_elo(r['ci'][1])}] |")
        lines.append("")
    else:
        lines.append("hit: the target lies inside the level's 95 % CI and within the configured tolerance.")
    lines.append(f"Levels strictly ordered: {'yes' if calibration.get('ordered') else 'NO'}.")
    for note in calibration.get("notes", []):
        lines.append(f"- {note}")
    if tune is not None:
        lines.append(f"Weight tuning: {tune.get('decision')} (accepted: {tune.get('accepted')}).")
    return "\n".join(lines) + "\n"


def _short(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _ladder_plot(folder: StorePath, ladder: Mapping[str, Any],
                 calibration: Mapping[str, Any] | None) -> StorePath:

    rows = [LadderRow(a["name"], a["elo"], a["ci_low"], a["ci_high"]) for a in ladder["anchors"]]
    if calibration is not None:
        for level in LEVELS:
            rec = calibration["levels"][level]
            rows.append(LadderRow(level, rec["elo"], rec["ci"][0], rec["ci"][1], rec["target"]))
    return elo_ladder_plot(rows, folder / "ladder.png", title=f"{ladder['variant']}: Elo ladder (random = 0)")


def _pair_scores_by_level(run_folder: StorePath, calibration: Mapping[str, Any]) -> dict[str, list[float]]:
    """Pair scores of each chosen level trial against its anchors, from its Parquet files."""


    out: dict[str, list[float]] = {}
    for level in LEVELS:
        rec = calibration["levels"][level]
        files = batch_files(run_folder / rec["stage"] / "games")
        if not files:
            continue
        table = pa.concat_tables([read_batch_file(f, GAMES_SCHEMA) for f in files])
        name = f"{level}-t{int(rec['slot']):04d}"
        games = games_from_color_table(table, pair_id="pair_id")
        out[level] = pair_scores(games, name, drop_incomplete=True).scores.tolist()
    return out


def write_report(run_folder: str | Path | StorePath) -> Report:
    """Write the report of a finished (or partly finished) run; ReportError without a ladder."""

    run = store_path(run_folder)
    ladder = read_result(run / "ladder.json")
    if ladder is None:
        raise ReportError(f"no ladder.json in {str(run)!r}: nothing to report yet")
    tune = read_result(run / "tune" / "result.json")
    calibration = read_result(run / "calibrate" / "result.json")
    out = run / REPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    files = [_ladder_plot(out, ladder, calibration)]
    if tune is not None:
        values = [t["value"] for t in sorted(tune["trials"], key=lambda t: t["number"])]
        if any(v is not None for v in values):
            files.append(optimisation_history_plot(values, out / "tune_history.png", direction="maximize",
                                                   title="Weight tuning", ylabel="score against the seed"))
    table = "No calibration yet.\n"
    if calibration is not None:
        for level in LEVELS:
            values = [t["value"] for t in sorted(calibration["trials"][level], key=lambda t: t["number"])]
            if values:
                files.append(optimisation_history_plot(
                    values, out / f"calibrate_{level}_history.png", direction="minimize",
                    title=f"Calibration of {level}", ylabel="|Elo - target| + compute penalty"))
        scores = _pair_scores_by_level(run, calibration)
        if scores:
            title = "Pair scores of each level against its ladder anchors"
            files.append(score_distribution_plot(scores, out / "pair_scores.png", title=title))
        rows = level_rows(calibration)
        table = markdown_table(rows, calibration, tune)
        write_result(out / "levels.json", {"variant": calibration["variant"], "levels": rows,
                                           "ordered": calibration["ordered"], "notes": calibration["notes"],
                                           "tune_decision": None if tune is None else tune.get("decision")})
        files.append(out / "levels.json")
    (out / "levels.md").write_text(f"# {ladder['variant']}: calibrated levels\n\n{table}", encoding="utf-8")
    files.append(out / "levels.md")
    return Report(out, table, tuple(files))
