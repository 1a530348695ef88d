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

import dataclasses
import itertools
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from engine.params import PARAM_INDEX
from engine.profile import Knob
from pipeline.calibration.chain import Neighbour, chain_half_width, chain_order, rate_against
from pipeline.calibration.confirm import (
    Confirmed,
    confirm_candidate,
    confirm_level,
    joint_rating,
    opponents,
    width_bound,
)
from pipeline.calibration.rating import level_profile, rate_on_ladder
from pipeline.calibration.results import (
    RESULT_FILE,
    CalibrationResult,
    Candidate,
    Confirmation,
    LevelResult,
    LevelTrial,
    NeighbourRef,
    WinScores,
    player_name,
    read_calibration,
)
from pipeline.config.job_sections import LEVELS, CalibrateSection, Range
from pipeline.games.pairings import Pairing
from pipeline.games.players import inline_spec
from pipeline.games.stage import StageContext, player_nodes_per_move, trial_slot, wins_against, write_result
from pipeline.ladder.reference import Ladder
from pipeline.ratings import Rating
from pipeline.tracking.mlflow_log import level_metrics
from pipeline.tuning.studies import (
    ask_trial,
    complete_trials,
    remaining_trials,
    space_from_engine,
    tell_trial,
)

CALIBRATE_DIR = "calibrate"
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
                    section: CalibrateSection, neighbour: Neighbour | None = None) -> LevelTrial:
    """Play one candidate against the pin and the bracketing anchors (in a chain: against the
    confirmed ``neighbour``), rate it, tell the study (its record goes into the trial's user
    attr ``record``)."""

    slot = trial_slot(study, trial)
    target = section.level(level).target
    knobs: dict[str, Knob] = {**fixed, **params}
    name = player_name(level, slot)
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
    within = rating.holds(target)
    record = LevelTrial(
        number=trial.number, slot=slot, stage=stage, knobs=knobs, rating=rating, nodes_per_move=npm,
        target=target, within_ci=within, hit=within and abs(rating.elo - target) <= section.tolerance,
        value=value, anchors=tuple(n for n, _ in opps), opponent_wins=WinScores.of(wins_against(table, name)),
        games_per_second=table.num_rows / seconds if seconds > 0 else 0.0)
    tell_trial(study, trial, value, user_attrs={"record": json.dumps(record.to_json(), sort_keys=True)})
    return record


def trial_records(study: Any) -> list[LevelTrial]:
    """The records of a level study's COMPLETE trials."""
    return [LevelTrial.from_json(json.loads(t.user_attrs["record"]), f"{study.study_name} trial {t.number}")
            for t in complete_trials(study) if "record" in t.user_attrs]


def rank(records: Sequence[LevelTrial]) -> list[LevelTrial]:
    """Hits (target inside the CI, Elo within the tolerance) by least compute first, then the
    others by distance to the target."""
    hits = sorted((r for r in records if r.hit), key=lambda r: (r.nodes_per_move, r.number))
    misses = sorted((r for r in records if not r.hit), key=lambda r: (abs(r.rating.elo - r.target), r.number))
    return [*hits, *misses]


def pick_levels(by_level: Mapping[str, Sequence[LevelTrial]]) -> tuple[dict[str, LevelTrial], bool]:
    """The best-ranked strictly ordered combination (easy < medium < hard), and whether one exists."""
    ranked = [rank(by_level[level])[:MAX_RANKED] for level in LEVELS]
    if any(not r for r in ranked):
        missing = [level for level, r in zip(LEVELS, ranked, strict=True) if not r]
        raise ValueError(f"no finished calibration trial for level(s) {missing}")
    best: tuple[int, tuple[int, ...]] | None = None
    for combo in itertools.product(*(range(len(r)) for r in ranked)):
        elos = [ranked[i][j].rating.elo for i, j in enumerate(combo)]
        if all(a < b for a, b in itertools.pairwise(elos)):
            cost = sum(combo)
            if best is None or (cost, combo) < best:
                best = (cost, combo)
    if best is None:
        return {level: ranked[i][0] for i, level in enumerate(LEVELS)}, False
    return {level: ranked[i][best[1][i]] for i, level in enumerate(LEVELS)}, True


def run_calibrate(ctx: StageContext, ladder: Ladder, section: CalibrateSection, studies: Mapping[str, Any],
                  weights: Mapping[str, float], *, tracker: Any, log: Any = None) -> CalibrationResult:
    """Calibrate every level (resuming finished trials), pick, write and return the result."""
    path = ctx.run_folder / RESULT_FILE
    done = read_calibration(path)
    if done is not None:
        return done
    notes = []
    confirmed: dict[str, Confirmed] = {}
    if section.chain_from:
        by_level, confirmed = _calibrate_chain(ctx, ladder, section, studies, weights, tracker, log)
        picks: dict[str, LevelTrial] = {}
    else:
        by_level = {level: _run_trials(ctx, ladder, section, studies[level], level, weights, tracker, log)
                    for level in LEVELS}
        picks, ordered = pick_levels(by_level)
        if not ordered:
            notes.append("no combination of finished trials gives strictly ordered levels "
                         "(easy < medium < hard); each level shows its own best trial - widen the knob "
                         "ranges or add trials")
        if section.confirm_step_pairs:
            confirmed = _confirm_levels(ctx, ladder, section, by_level, picks, weights, studies, tracker, log)
            if section.confirm_joint_pairs:
                confirmed = joint_rating(ctx, ladder, section, confirmed, weights, log)
    if confirmed:
        elos = [confirmed[level].confirmation.rating.elo for level in LEVELS]
        ordered = all(a < b for a, b in itertools.pairwise(elos))
        if not ordered:
            notes.append("the CONFIRMED levels are not strictly ordered (easy < medium < hard)")
    levels = {}
    for level in LEVELS:
        if confirmed:
            c = confirmed[level]
            candidate, conf, tried = c.candidate, c.confirmation, c.tried
            described = describe_level(candidate, conf)
        else:
            candidate, conf, tried = picks[level], None, ()
            described = describe_level(candidate, candidate)
        profile = level_profile(ctx.variant, level, weights, candidate.knobs).to_json()
        levels[level] = LevelResult(candidate, conf, tried, profile, described)
        notes += _miss_notes(level, levels[level], section)
    result = CalibrationResult(
        variant=ctx.variant, ladder_hash=ladder.ladder_hash, weights=dict(weights), pin=section.pin,
        pin_elo=ladder.anchor(section.pin).elo, chain_from=section.chain_from or None, ordered=ordered,
        notes=tuple(notes), levels=levels, trials={level: tuple(by_level[level]) for level in LEVELS})
    write_result(path, result.to_json())
    return result


def _miss_notes(level: str, result: LevelResult, section: CalibrateSection) -> list[str]:
    """A note when a level misses: its confirmation (or, unconfirmed, its trial) says why."""
    r, conf = result.rating, result.confirmation
    if conf is not None:
        if conf.hit:
            return []
        what = "validation" if conf.validated else "confirmation"
        bound = width_bound(section, conf.validated)
        return [f"{level}: the {what} misses (target {result.target:+.0f} inside the CI and half-width <= "
                f"{bound:g} needed): {r.elo:+.0f} [{r.ci_low:+.0f}, {r.ci_high:+.0f}], "
                f"half-width {r.half_width:.0f}"]
    if result.measured.hit:
        return []
    return [f"{level}: the chosen trial misses the target {result.target:+.0f} (a hit needs the target "
            f"inside the CI and the Elo within {section.tolerance:g}): {r.elo:+.0f} "
            f"[{r.ci_low:+.0f}, {r.ci_high:+.0f}]"]


def _metrics(level: str, target: float, measured: LevelTrial | Confirmation) -> dict[str, float]:
    """The level's metrics under the tracker's names, from a trial or a confirmation."""
    r = measured.rating
    return level_metrics(level, elo=r.elo, ci=(r.ci_low, r.ci_high), target_elo=target,
                         nodes_per_move=measured.nodes_per_move, games=measured.games, score=r.score)


def _run_trials(ctx: StageContext, ladder: Ladder, section: CalibrateSection, study: Any, level: str,
                weights: Mapping[str, float], tracker: Any, log: Any,
                neighbour: Neighbour | None = None) -> list[LevelTrial]:
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
                tracker.log_metrics({"value": rec.value, "games_per_second": rec.games_per_second,
                                     **_metrics(level, target, rec)}, step=trial.number)
            if log is not None:
                against = "" if neighbour is None else f" against {neighbour.level}"
                r = rec.rating
                log(f"calibrate {level} trial {trial.number}{against}: Elo {r.elo:+.0f} "
                    f"[{r.ci_low:+.0f}, {r.ci_high:+.0f}] (target {target:+.0f}), "
                    f"{rec.nodes_per_move:.0f} nodes/move, knobs {rec.knobs}")
        records = trial_records(study)
        if records:
            best = rank(records)[0]
            tracker.log_metrics({"best_value": best.value, **_metrics(level, target, best)})
    return records


def _calibrate_chain(ctx: StageContext, ladder: Ladder, section: CalibrateSection, studies: Mapping[str, Any],
                     weights: Mapping[str, float], tracker: Any, log: Any
                     ) -> tuple[dict[str, list[LevelTrial]], dict[str, Confirmed]]:
    """``chain_from``: the start level on the ladder, then each level against its confirmed neighbour
    (:mod:`pipeline.calibration.chain`); (trial records, confirmed candidates) per level."""

    by_level: dict[str, list[LevelTrial]] = {}
    confirmed: dict[str, Confirmed] = {}
    held: dict[str, Neighbour] = {}
    for level, toward in chain_order(section.chain_from):
        neighbour = None if toward is None else held[toward]
        by_level[level] = _run_trials(ctx, ladder, section, studies[level], level, weights, tracker, log,
                                      neighbour)
        if not by_level[level]:
            raise ValueError(f"no finished calibration trial for level {level!r}")
        done = _confirm_one(ctx, ladder, section, level, rank(by_level[level])[0], by_level[level],
                            weights, studies, tracker, log, neighbour)
        r = done.confirmation.rating
        half = chain_half_width(r.half_width, neighbour)
        ref = None if neighbour is None else NeighbourRef(neighbour.level, neighbour.name, neighbour.elo)
        conf = dataclasses.replace(done.confirmation, chain_half_width=half, neighbour=ref)
        confirmed[level] = dataclasses.replace(done, confirmation=conf)
        name = player_name(level, done.candidate.slot)
        held[level] = Neighbour(level, name, _spec(ctx, weights, name, done.candidate.knobs), r.elo, half)
        if log is not None:
            log(f"chain: {level} confirmed at {r.elo:+.0f} [{r.ci_low:+.0f}, {r.ci_high:+.0f}]"
                f"{'' if neighbour is None else f' relative to {neighbour.level}'}; about "
                f"+/-{half:.0f} relative to the pin")
    return by_level, confirmed


def _spec(ctx: StageContext, weights: Mapping[str, float], name: str, knobs: Mapping[str, Knob]) -> str:
    return inline_spec(name, level_profile(ctx.variant, name, weights, knobs))


def _confirm_levels(ctx: StageContext, ladder: Ladder, section: CalibrateSection,
                    by_level: Mapping[str, Sequence[LevelTrial]], picks: Mapping[str, LevelTrial],
                    weights: Mapping[str, float], studies: Mapping[str, Any], tracker: Any,
                    log: Any) -> dict[str, Confirmed]:
    """Confirm each level's pick (then the next-ranked trials) with fresh games."""
    return {level: _confirm_one(ctx, ladder, section, level, picks[level], by_level[level], weights, studies,
                                tracker, log)
            for level in LEVELS}


def _confirm_one(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str,
                 first: LevelTrial, trials: Sequence[LevelTrial], weights: Mapping[str, float],
                 studies: Mapping[str, Any], tracker: Any, log: Any,
                 neighbour: Neighbour | None = None) -> Confirmed:
    """Confirm ``first`` (then proposals or the next-ranked trials) of one level."""

    def spec_of(candidate: Candidate) -> str:
        return _spec(ctx, weights, player_name(level, candidate.slot), candidate.knobs)

    ranked = [first, *(r for r in rank(trials) if r.number != first.number)]
    with tracker.start_study(f"{studies[level].study_name}-confirm",
                             params={"level": level,
                                     "pin": section.pin if neighbour is None else neighbour.name,
                                     "step_pairs": section.confirm_step_pairs,
                                     "max_pairs": section.confirm_max_pairs,
                                     "half_width": section.confirm_half_width,
                                     "validate_half_width": width_bound(section, section.confirm_validate)}):
        space, _ = knob_space(section.level(level).knobs)
        ranges = {p.name: (float(p.low), float(p.high)) for p in space if p.kind in ("int", "float")}
        done = confirm_level(ctx, ladder, section, level, ranked, spec_of, log, ranges=ranges, trials=trials,
                             neighbour=neighbour)
        if section.confirm_validate:
            done = _validate(ctx, ladder, section, level, done, spec_of, log, neighbour)
        conf = done.confirmation
        tracker.log_metrics({**_metrics(level, done.candidate.target, conf),
                             f"{level}_confirm_half_width": conf.rating.half_width,
                             f"{level}_confirm_candidates": float(len(done.tried))})
    return done


def _validate(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str, done: Confirmed,
              spec_of: Any, log: Any, neighbour: Neighbour | None) -> Confirmed:
    """``confirm_validate``: measure the chosen candidate again on fresh games and report that.

    Confirmation tries candidates until one's CI holds the target, so the one it keeps was kept
    partly because its games happened to land near the target: its estimate leans towards the
    target (measured in suicide: a claimed Easy - Medium gap of +379 that fresh games put at
    +436 and +445). Games that played no part in choosing it have no such lean. Whatever they
    show is reported, hit or miss; the confirmation that chose it stays under ``selection``.
    """

    val, games = confirm_candidate(ctx, ladder, section, level, done.candidate, spec_of(done.candidate), 0,
                                   log, neighbour, validate=True)
    return dataclasses.replace(done, confirmation=dataclasses.replace(val, selection=done.confirmation),
                               games=games)


def describe_level(candidate: Candidate, measured: LevelTrial | Confirmation) -> str:
    """The level's line in the profile's provenance: its target, its Elo with the games that
    measured it, and its compute."""
    r = measured.rating
    head = f"target {candidate.target:+.0f}; Elo {r.elo:+.0f} [{r.ci_low:+.0f}, {r.ci_high:+.0f}]"
    if isinstance(measured, LevelTrial):
        return (f"{head} from {measured.games} games against {' and '.join(measured.anchors)} in the "
                f"level's search, not measured again on separate games; {measured.nodes_per_move:.0f} "
                "nodes per move")
    c = measured
    source = ("none of them used to choose the level" if c.validated
              else "the confirmation that chose the level")
    if c.neighbour is not None:
        n = c.neighbour
        pin = "" if c.chain_half_width is None else f"; about +/-{c.chain_half_width:.0f} relative to the pin"
        return (f"{head} relative to {n.level} (held at {n.elo:+.0f}{pin}) from {c.games} games head to head "
                f"against {n.level}, {source}; {c.nodes_per_move:.0f} nodes per move")
    joint = " and the adjacent levels" if c.joint_stages else ""
    return (f"{head} from {c.games} games against {' and '.join(c.opponents)}{joint} (pin {c.pin}), "
            f"{source}; {c.nodes_per_move:.0f} nodes per move")
