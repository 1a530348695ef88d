"""Level calibration: per level, the cheapest knobs whose Elo on the ladder hits its target.

For each level (easy, medium, hard) an Optuna study searches that level's knobs (configured
subset and ranges inside ``engine.params``) with the tuned weights. A trial plays pairs against
the pin and the two ladder anchors nearest the target (one below and one above when the ladder
spans it) - the same opponents as the confirmation, so that a trial's rating and its
confirmation measure the same thing even where the ladder is not perfectly transitive - and is
rated by ONE fit of :func:`pipeline.ratings.fit_elo` over the ladder's games plus the trial's
(the pin held at its ladder Elo), so the candidate's CI carries the ladder's uncertainty too.
The first trials of a study are pure-depth points (:func:`seed_depth_trials`). Objective:
``|Elo - target| + compute_penalty * (mean nodes per move) / 1000`` (minimised).

Pick, per level: among trials whose CI contains the target, the least compute (mean nodes per
move); else the nearest Elo. Levels must come out strictly ordered (easy < medium < hard): the
pick is the best-ranked combination that is ordered, and when none is the result says so.
The result records Elo ± CI, nodes per move and the product-score (``winner_score``)
distribution of the opponents' wins against each level.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from engine.params import PARAM_INDEX
from pipeline.calibration.chain import Neighbour, chain_half_width, chain_order, rate_against
from pipeline.calibration.confirm import (
    confirm_candidate,
    confirm_level,
    joint_rating,
    opponents,
    width_bound,
)
from pipeline.calibration.rating import Rating, level_profile, rate_on_ladder
from pipeline.config.job_sections import LEVELS, CalibrateSection, Range
from pipeline.games.pairings import Pairing
from pipeline.games.players import inline_spec
from pipeline.games.stage import (
    StageContext,
    player_nodes_per_move,
    read_result,
    trial_slot,
    win_score_summary,
    wins_against,
    write_result,
)
from pipeline.ladder.reference import Ladder
from pipeline.tracking.mlflow_log import level_metrics
from pipeline.tuning.studies import (
    ask_trial,
    complete_trials,
    remaining_trials,
    space_from_engine,
    tell_trial,
)

CALIBRATE_DIR = "calibrate"
RESULT_FILE = "calibrate/result.json"
MAX_RANKED = 40  # best-ranked trials per level considered when ordering the levels


def knob_space(ranges: Sequence[Range]) -> tuple[list[Any], dict[str, Any]]:
    """The study's dimensions (searched knobs) and the fixed knob values of a level."""

    searched = [r for r in ranges if not r.fixed]
    fixed: dict[str, Any] = {}
    for r in ranges:
        if r.fixed:
            kind = PARAM_INDEX[r.name].kind
            fixed[r.name] = bool(r.low) if kind == "bool" else int(r.low) if kind == "int" else float(r.low)
    space = space_from_engine(knobs=[r.name for r in searched], weights=[],
                              ranges={r.name: (r.low, r.high) for r in searched})
    return space, fixed


#: Pure-depth trials enqueued at the start of a level's study, at most.
MAX_DEPTH_SEEDS = 4


def depth_seed_points(space: Sequence[Any]) -> list[dict[str, Any]]:
    """One point per searched depth (the lowest few) with every other knob at its strongest.

    Strength is a staircase in ``max_depth`` and smooth in the weakening knobs; showing the
    sampler each step first lets it spend the remaining trials weakening the right depth.
    """
    by_name = {p.name: p for p in space}
    depth = by_name.get("max_depth")
    if depth is None:
        return []
    strongest: dict[str, Any] = {}
    for p in space:
        if p.kind in ("int", "float"):
            value = p.high if PARAM_INDEX[p.name].direction == "stronger" else p.low  # declared
            strongest[p.name] = int(value) if p.kind == "int" else float(value)
    depths = range(int(depth.low), int(depth.high) + 1)[:MAX_DEPTH_SEEDS]
    return [{**strongest, "max_depth": d} for d in depths]


def seed_depth_trials(study: Any, space: Sequence[Any], trials: int) -> None:
    """Enqueue :func:`depth_seed_points` into a fresh study (no trial yet), leaving at least half
    of the ``trials`` to the sampler."""
    if study.get_trials(deepcopy=False):
        return
    for point in depth_seed_points(space)[: max(trials // 2, 0)]:
        study.enqueue_trial(point, user_attrs={"depth_seed": True})


def objective(rating: Rating, target: float, nodes_per_move: float, penalty: float) -> float:
    return abs(rating.elo - target) + penalty * nodes_per_move / 1000.0


#: A chained level's trial plays its neighbour alone, this many times ``pairs`` pairs: the games a
#: ladder trial plays against its (up to) three opponents.
CHAIN_TRIAL_FACTOR = 3


def run_level_trial(ctx: StageContext, ladder: Ladder, study: Any, trial: Any, params: Mapping[str, Any],
                    level: str, fixed: Mapping[str, Any], weights: Mapping[str, float],
                    section: CalibrateSection, neighbour: Neighbour | None = None) -> dict[str, Any]:
    """Play one candidate against the pin and the bracketing anchors (in a chain: against the
    confirmed ``neighbour``), rate it, tell the study."""

    slot = trial_slot(study, trial)
    target = section.level(level).target
    knobs = {**fixed, **params}
    name = f"{level}-t{slot:04d}"
    spec = inline_spec(name, level_profile(ctx.variant, name, weights, knobs))
    if neighbour is None:
        opps, pairs = opponents(ladder, section.pin, target), section.pairs
    else:
        opps, pairs = [(neighbour.name, neighbour.spec)], section.pairs * CHAIN_TRIAL_FACTOR
    stage = f"{CALIBRATE_DIR}/{level}/trial-{slot:04d}"
    started = time.perf_counter()
    table = ctx.play(stage, [Pairing(spec, opp_spec, pairs, stream=j)
                             for j, (_, opp_spec) in enumerate(opps)])
    seconds = time.perf_counter() - started
    if neighbour is None:
        rating = rate_on_ladder(ladder, table, name, section.pin)
    else:
        rating = rate_against(table, name, neighbour)
    npm = player_nodes_per_move(table, name)
    value = objective(rating, target, npm, section.compute_penalty)
    record = {
        "number": trial.number, "slot": slot, "stage": stage, "knobs": knobs,
        "elo": rating.elo, "ci": [rating.ci_low, rating.ci_high], "games": table.num_rows,
        "score": rating.score, "prior_driven": rating.prior_driven, "nodes_per_move": npm,
        "target": target, "within_ci": rating.ci_low <= target <= rating.ci_high, "value": value,
        "hit": rating.ci_low <= target <= rating.ci_high and abs(rating.elo - target) <= section.tolerance,
        "anchors": [n for n, _ in opps], "opponent_wins": win_score_summary(wins_against(table, name)),
        "games_per_second": table.num_rows / seconds if seconds > 0 else 0.0,
    }
    tell_trial(study, trial, value, user_attrs={"record": json.dumps(record, sort_keys=True)})
    return record


def trial_records(study: Any) -> list[dict[str, Any]]:
    """The records of a level study's COMPLETE trials."""
    out = []
    for t in complete_trials(study):
        if "record" in t.user_attrs:
            out.append(json.loads(t.user_attrs["record"]))
    return out


def _hit(record: Mapping[str, Any]) -> bool:
    return bool(record.get("hit", record["within_ci"]))


def rank(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Hits (target inside the CI, Elo within the tolerance) by least compute first, then the
    others by distance to the target."""
    hits = sorted((r for r in records if _hit(r)), key=lambda r: (r["nodes_per_move"], r["number"]))
    misses = sorted((r for r in records if not _hit(r)),
                    key=lambda r: (abs(r["elo"] - r["target"]), r["number"]))
    return [*hits, *misses]


def pick_levels(
    by_level: Mapping[str, Sequence[Mapping[str, Any]]],
) -> tuple[dict[str, Mapping[str, Any]], bool]:
    """The best-ranked strictly ordered combination (easy < medium < hard), and whether one exists."""
    ranked = [rank(by_level[level])[:MAX_RANKED] for level in LEVELS]
    if any(not r for r in ranked):
        missing = [level for level, r in zip(LEVELS, ranked, strict=True) if not r]
        raise ValueError(f"no finished calibration trial for level(s) {missing}")
    best: tuple[int, tuple[int, ...]] | None = None
    for combo in itertools.product(*(range(len(r)) for r in ranked)):
        elos = [ranked[i][j]["elo"] for i, j in enumerate(combo)]
        if all(a < b for a, b in itertools.pairwise(elos)):
            cost = sum(combo)
            if best is None or (cost, combo) < best:
                best = (cost, combo)
    if best is None:
        return {level: ranked[i][0] for i, level in enumerate(LEVELS)}, False
    return {level: ranked[i][best[1][i]] for i, level in enumerate(LEVELS)}, True


def run_calibrate(ctx: StageContext, ladder: Ladder, section: CalibrateSection, studies: Mapping[str, Any],
                  weights: Mapping[str, float], *, tracker: Any, log: Any = None) -> dict[str, Any]:
    """Calibrate every level (resuming finished trials), pick, write and return the result."""
    path = ctx.run_folder / RESULT_FILE
    done = read_result(path)
    if done is not None:
        return done
    notes = []
    confirmations: dict[str, dict[str, Any]] = {}
    if section.chain_from:
        by_level, picks, confirmations = _calibrate_chain(ctx, ladder, section, studies, weights, tracker,
                                                          log)
    else:
        by_level = {level: _run_trials(ctx, ladder, section, studies[level], level, weights, tracker, log)
                    for level in LEVELS}
        picks, ordered = pick_levels(by_level)
        if not ordered:
            notes.append("no combination of finished trials gives strictly ordered levels "
                         "(easy < medium < hard); each level shows its own best trial - widen the knob "
                         "ranges or add trials")
        if section.confirm_step_pairs:
            picks, confirmations = _confirm_levels(ctx, ladder, section, by_level, picks, weights, studies,
                                                   tracker, log)
            if section.confirm_joint_pairs:

                joint_rating(ctx, ladder, section, picks, confirmations, weights, log)
    if confirmations:
        for conf in confirmations.values():
            conf.pop("_table", None)  # games stay in Parquet; the result file holds numbers
        elos = [confirmations[level]["elo"] for level in LEVELS]
        ordered = all(a < b for a, b in itertools.pairwise(elos))
        if not ordered:
            notes.append("the CONFIRMED levels are not strictly ordered (easy < medium < hard)")
    levels = {}
    for level in LEVELS:
        rec = dict(picks[level])
        if confirmations:
            conf = confirmations[level]
            rec = {**rec, "trial_elo": rec["elo"], "trial_ci": rec["ci"], "trial_games": rec["games"],
                   "confirm": conf, **{k: conf[k] for k in ("elo", "ci", "games", "score", "within_ci", "hit",
                                                             "nodes_per_move", "prior_driven")}}
            if not conf["hit"]:
                what = "validation" if conf.get("validated") else "confirmation"
                bound = width_bound(section, bool(conf.get("validated")))
                notes.append(f"{level}: the {what} misses (target {rec['target']:+.0f} inside the CI "
                             f"and half-width <= {bound:g} needed): {conf['elo']:+.0f} "
                             f"[{conf['ci'][0]:+.0f}, {conf['ci'][1]:+.0f}], "
                             f"half-width {conf['half_width']:.0f}")
        elif not _hit(rec):
            notes.append(f"{level}: the chosen trial misses the target {rec['target']:+.0f} (a hit needs "
                         f"the target inside the CI and the Elo within {section.tolerance:g}): "
                         f"{rec['elo']:+.0f} [{rec['ci'][0]:+.0f}, {rec['ci'][1]:+.0f}]")
        profile = level_profile(ctx.variant, level, weights, rec["knobs"])
        levels[level] = {**rec, "level": profile.to_json(), "description": _describe(rec)}
    result = {"variant": ctx.variant, "ladder_hash": ladder.ladder_hash, "weights": dict(weights),
              "pin": {"anchor": section.pin, "elo": ladder.anchor(section.pin).elo},
              "chain_from": section.chain_from or None,
              "ordered": ordered, "notes": notes, "levels": levels,
              "trials": {level: by_level[level] for level in LEVELS}}
    write_result(path, _json_safe(result))
    return result


def _run_trials(ctx: StageContext, ladder: Ladder, section: CalibrateSection, study: Any, level: str,
                weights: Mapping[str, float], tracker: Any, log: Any,
                neighbour: Neighbour | None = None) -> list[dict[str, Any]]:
    """Run (or resume) a level's study to ``section.trials`` trials (one when every knob is fixed);
    the finished trials' records."""

    space, fixed = knob_space(section.level(level).knobs)
    target = section.level(level).target
    n_trials = section.trials if space else 1  # every knob fixed: one point, nothing to search
    seed_depth_trials(study, space, n_trials)
    params = {"level": level, "target": target, "fixed": fixed, "trials": n_trials,
              "pairs": section.pairs}
    if neighbour is not None:
        params["neighbour"] = f"{neighbour.level} ({neighbour.name}) at {neighbour.elo:+.0f}"
    with tracker.start_study(study.study_name, params=params):
        while remaining_trials(study, n_trials) > 0:
            trial, knobs = ask_trial(study, space)
            with tracker.trial_run(trial.number, knobs):
                rec = run_level_trial(ctx, ladder, study, trial, knobs, level, fixed, weights, section,
                                      neighbour)
                tracker.log_metrics({
                    "value": rec["value"], "games_per_second": rec["games_per_second"],
                    **level_metrics(level, elo=rec["elo"], ci=(rec["ci"][0], rec["ci"][1]),
                                    target_elo=target, nodes_per_move=rec["nodes_per_move"],
                                    games=rec["games"], score=rec["score"])}, step=trial.number)
            if log is not None:
                against = "" if neighbour is None else f" against {neighbour.level}"
                log(f"calibrate {level} trial {trial.number}{against}: Elo {rec['elo']:+.0f} "
                    f"[{rec['ci'][0]:+.0f}, {rec['ci'][1]:+.0f}] (target {target:+.0f}), "
                    f"{rec['nodes_per_move']:.0f} nodes/move, knobs {rec['knobs']}")
        records = trial_records(study)
        if records:
            best = rank(records)[0]
            tracker.log_metrics({"best_value": best["value"], **level_metrics(
                level, elo=best["elo"], ci=(best["ci"][0], best["ci"][1]), target_elo=target,
                nodes_per_move=best["nodes_per_move"], games=best["games"], score=best["score"])})
    return records


def _calibrate_chain(ctx: StageContext, ladder: Ladder, section: CalibrateSection, studies: Mapping[str, Any],
                     weights: Mapping[str, float], tracker: Any, log: Any
                     ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Mapping[str, Any]],
                                dict[str, dict[str, Any]]]:
    """``chain_from``: the start level on the ladder, then each level against its confirmed neighbour
    (:mod:`pipeline.calibration.chain`); (trial records, picks, confirmations) per level."""

    by_level: dict[str, list[dict[str, Any]]] = {}
    chosen: dict[str, Mapping[str, Any]] = {}
    confirmations: dict[str, dict[str, Any]] = {}
    confirmed: dict[str, Neighbour] = {}
    for level, toward in chain_order(section.chain_from):
        neighbour = None if toward is None else confirmed[toward]
        by_level[level] = _run_trials(ctx, ladder, section, studies[level], level, weights, tracker, log,
                                      neighbour)
        if not by_level[level]:
            raise ValueError(f"no finished calibration trial for level {level!r}")
        rec, conf = _confirm_one(ctx, ladder, section, level, rank(by_level[level])[0], by_level[level],
                                 weights, studies, tracker, log, neighbour)
        conf["chain_half_width"] = chain_half_width(conf["half_width"], neighbour)
        conf["neighbour"] = None if neighbour is None else {"level": neighbour.level, "name": neighbour.name,
                                                             "elo": neighbour.elo}
        chosen[level], confirmations[level] = rec, conf
        name = _player_name(level, rec)
        confirmed[level] = Neighbour(level, name, _spec(ctx, weights, name, rec), float(conf["elo"]),
                                     conf["chain_half_width"])
        if log is not None:
            log(f"chain: {level} confirmed at {conf['elo']:+.0f} [{conf['ci'][0]:+.0f}, {conf['ci'][1]:+.0f}]"
                f"{'' if neighbour is None else f' relative to {neighbour.level}'}; about "
                f"+/-{conf['chain_half_width']:.0f} relative to the pin")
    return by_level, chosen, confirmations


def _player_name(level: str, rec: Mapping[str, Any]) -> str:
    return f"{level}-t{int(rec['slot']):04d}"


def _spec(ctx: StageContext, weights: Mapping[str, float], name: str, rec: Mapping[str, Any]) -> str:

    return inline_spec(name, level_profile(ctx.variant, name, weights, rec["knobs"]))


def _confirm_levels(ctx: StageContext, ladder: Ladder, section: CalibrateSection,
                    by_level: Mapping[str, Sequence[Mapping[str, Any]]],
                    picks: Mapping[str, Mapping[str, Any]],
                    weights: Mapping[str, float], studies: Mapping[str, Any], tracker: Any,
                    log: Any) -> tuple[dict[str, Mapping[str, Any]], dict[str, dict[str, Any]]]:
    """Confirm each level's pick (then the next-ranked trials) with fresh games."""
    chosen: dict[str, Mapping[str, Any]] = {}
    confirmations: dict[str, dict[str, Any]] = {}
    for level in LEVELS:
        chosen[level], confirmations[level] = _confirm_one(ctx, ladder, section, level, picks[level],
                                                           by_level[level], weights, studies, tracker, log)
    return chosen, confirmations


def _confirm_one(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str,
                 first: Mapping[str, Any], trials: Sequence[Mapping[str, Any]], weights: Mapping[str, float],
                 studies: Mapping[str, Any], tracker: Any, log: Any,
                 neighbour: Neighbour | None = None) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """Confirm ``first`` (then proposals or the next-ranked trials) of one level: (record, confirmation)."""

    def spec_of(rec: Mapping[str, Any]) -> str:
        return _spec(ctx, weights, _player_name(rec["level_name"], rec), rec)

    ranked = [first, *(r for r in rank(trials) if r["number"] != first["number"])]
    ranked = [{**r, "level_name": level} for r in ranked]
    with tracker.start_study(f"{studies[level].study_name}-confirm",
                             params={"level": level,
                                     "pin": section.pin if neighbour is None else neighbour.name,
                                     "step_pairs": section.confirm_step_pairs,
                                     "max_pairs": section.confirm_max_pairs,
                                     "half_width": section.confirm_half_width,
                                     "validate_half_width": width_bound(section, section.confirm_validate)}):
        space, _ = knob_space(section.level(level).knobs)
        ranges = {p.name: (float(p.low), float(p.high)) for p in space if p.kind in ("int", "float")}
        rec, conf, tried = confirm_level(ctx, ladder, section, level, ranked, spec_of, log,
                                         ranges=ranges, trials=trials, neighbour=neighbour)
        if section.confirm_validate:
            conf = _validate(ctx, ladder, section, level, rec, conf, spec_of, log, neighbour)
        metrics = level_metrics(level, elo=conf["elo"], ci=(conf["ci"][0], conf["ci"][1]),
                                target_elo=rec["target"], nodes_per_move=conf["nodes_per_move"],
                                games=conf["games"], score=conf["score"])
        tracker.log_metrics({**metrics,
                             f"{level}_confirm_half_width": conf["half_width"],
                             f"{level}_confirm_candidates": float(len(tried))})
    chosen = {k: v for k, v in rec.items() if k != "level_name"}
    return chosen, {**conf, "candidates": [{k: v for k, v in r.items() if k != "_table"} for r in tried]}


#: Confirmation numbers kept under ``selection`` when a validation replaces them.
_SELECTION_KEYS = ("trial", "elo", "ci", "half_width", "games", "within_ci", "narrow", "hit", "rounds",
                   "pairs_per_opponent", "stages")


def _validate(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str,
              rec: Mapping[str, Any], conf: dict[str, Any], spec_of: Any, log: Any,
              neighbour: Neighbour | None) -> dict[str, Any]:
    """``confirm_validate``: measure the chosen candidate again on fresh games and report that.

    Confirmation tries candidates until one's CI holds the target, so the one it keeps was kept
    partly because its games happened to land near the target: its estimate leans towards the
    target (measured in suicide: a claimed Easy - Medium gap of +379 that fresh games put at
    +436 and +445). Games that played no part in choosing it have no such lean. Whatever they
    show is reported, hit or miss; the confirmation's numbers stay under ``selection``.
    """

    val = confirm_candidate(ctx, ladder, section, level, rec, spec_of(rec), 0, log, neighbour, validate=True)
    selection = {k: conf[k] for k in _SELECTION_KEYS if k in conf}
    return {**conf, **val, "selection": selection, "validated": True}


def _describe(rec: Mapping[str, Any]) -> str:
    if "confirm" in rec:
        c = rec["confirm"]
        origin = ("knobs proposed after a missed confirmation" if rec.get("proposed")
                  else f"trial {rec['number']}")
        measured = "validated by" if c.get("validated") else "confirmed by"
        if c.get("neighbour"):
            n = c["neighbour"]
            return (f"target {rec['target']:+.0f}, chained: rated head to head against {n['level']} held at "
                    f"{n['elo']:+.0f}; {origin}, {measured} {c['games']} fresh games: Elo {c['elo']:+.0f} "
                    f"[{c['ci'][0]:+.0f}, {c['ci'][1]:+.0f}] relative to {n['level']} (about "
                    f"+/-{c['chain_half_width']:.0f} relative to the pin); {c['nodes_per_move']:.0f} nodes "
                    "per move")
        return (f"target {rec['target']:+.0f} (pin {c['pin']}); {origin}, {measured} "
                f"{c['games']} fresh games against {' and '.join(c['opponents'])}: Elo {c['elo']:+.0f} "
                f"[{c['ci'][0]:+.0f}, {c['ci'][1]:+.0f}]; {c['nodes_per_move']:.0f} nodes per move")
    return (f"target {rec['target']:+.0f}; trial {rec['number']} ({rec['games']} games against "
            f"{' and '.join(rec['anchors'])}); {rec['nodes_per_move']:.0f} nodes per move")


def _json_safe(value: Any) -> Any:
    """Replace non-finite floats (never expected) by None so the JSON stays valid."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value
