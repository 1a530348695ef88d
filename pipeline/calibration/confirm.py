"""Confirmation of calibrated levels: fresh games until each level's CI is narrow enough.

The trial that a calibration picks was chosen *because* its rating looked right, so its own
rating is biased towards the target (the winner's curse) and its CI is wide (a trial is cheap).
Confirmation therefore re-rates the pick from games it never used: in rounds of
``confirm_step_pairs`` colour-swapped pairs against the pin and the two ladder anchors that
bracket the target (fresh opening streams), refitting the ladder + these games after each
round with a bootstrap over whole openings, until the 95 % CI half-width
is at most ``confirm_half_width`` or
``confirm_max_pairs`` pairs per opponent have been played. Stopping on the CI's *width* (not on
the estimate) keeps one candidate's estimate unbiased; moving on to the next candidate after a
miss does not (the one kept is kept because it landed near the target), which is what
``confirm_validate`` (a fresh measurement of the kept candidate) is for.

A prior-driven rating (no loss, or no win, among the candidate's games) never counts as
narrow: its bootstrap CI collapses without measuring anything. A round whose games all replay
earlier ones (candidate and opponents without noise, the deck gone round) ends the confirmation:
the bootstrap over openings cannot narrow any further. With ``confirm_validate``, confirmation
only chooses, so a candidate whose estimate is more than ``tolerance`` + :data:`FUTILITY_HALF_WIDTHS`
half-widths from the target stops early as a miss. A candidate whose knobs equal those of one
already confirmed (a proposal or a trial) is never confirmed again: it is the same player.

A confirmed level *hits* when its target is inside the confirmed CI and the half-width
criterion was met. When it misses, the next-ranked trial is confirmed, up to
``confirm_candidates`` per level; the reported numbers are always the confirmation's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from engine.params import PARAMS
from pipeline.calibration.chain import Neighbour, rate_against
from pipeline.calibration.rating import Rating, level_profile, rate_many, rate_on_ladder
from pipeline.config.job_sections import LEVELS, CalibrateSection
from pipeline.games.pairings import Pairing
from pipeline.games.players import inline_spec
from pipeline.games.stage import StageContext, player_nodes_per_move, win_score_summary
from pipeline.ladder.reference import Ladder

#: Opening streams of confirmation games: far from the trials' streams 0 and 1.
_STREAM_BASE = 1000
#: Opening streams of validation games (``confirm_validate``): apart from every other stage's.
_VALIDATE_STREAM = 3000


#: With ``confirm_validate``, a confirmation stops as a miss once its estimate is further from the
#: target than the tolerance plus this many CI half-widths (it cannot plausibly end within the
#: tolerance, which a choice needs).
FUTILITY_HALF_WIDTHS = 2.0
#: What confirmation and validation CIs resample (``pipeline.ratings.BOOTSTRAP_UNITS``).
BOOTSTRAP_UNIT = "opening"


#: The pin is an opponent only when it is nearer the target than this (Elo): a far pin, such
#: as random under a strong level, only wins or only loses and tells the fit nothing.
MAX_PIN_GAP = 600.0


def opponents(ladder: Ladder, pin: str, target: float) -> list[tuple[str, str]]:
    """(name, spec) of the pin (when within :data:`MAX_PIN_GAP` of ``target``) and the two
    anchors bracketing ``target``, without repeats."""
    low, high = ladder.bracket(target)
    pin_anchor = ladder.anchor(pin)
    near = abs(pin_anchor.elo - target) < MAX_PIN_GAP
    out: list[tuple[str, str]] = []
    for a in ((pin_anchor, low, high) if near else (low, high)):
        if a.name not in [n for n, _ in out]:
            out.append((a.name, a.spec))
    return out


#: A candidate still prior-driven after this many pairs per opponent (no loss, or no win, in
#: hundreds of games) is far from any target: confirmation stops it as a miss.
PRIOR_DRIVEN_STOP_PAIRS = 200


def width_bound(section: CalibrateSection, validate: bool) -> float:
    """The half-width a confirmation (or, with ``validate``, a validation) plays down to."""
    if validate and section.validate_half_width > 0:
        return section.validate_half_width
    return section.confirm_half_width


def _narrow(rating: Rating, half: float, bound: float) -> bool:
    """Whether a rating's CI meets the width bound. A prior-driven rating (its games hold no loss,
    or no win, so the estimate is the prior's) never does: every bootstrap resample shares the
    degenerate score, so its CI is narrow without measuring anything."""
    return half <= bound and not rating.prior_driven


#: The columns that identify a game move for move (the same opening, colours and moves).
_GAME_KEY = ("opening_id", "white_player", "black_player", "moves")


def new_games(table: pa.Table, seen: set[tuple[Any, ...]]) -> int | None:
    """How many of ``table``'s games are not in ``seen`` (then added to it); None when the table
    does not carry moves. A candidate and opponents that all play without noise replay one game
    per opening and colour, so once the deck has gone round every further game is a replay."""
    if not all(c in table.column_names for c in _GAME_KEY):
        return None
    keys = list(zip(*(table.column(c).to_pylist() for c in _GAME_KEY), strict=True))
    before = len(seen)
    seen.update(keys)
    return len(seen) - before


def _futile(rating: Rating, half: float, target: float, section: CalibrateSection) -> bool:
    """Whether a confirmation can stop as a miss before its CI is narrow: only when a validation
    will measure the chosen candidate again (so confirmation only chooses, and a stopped miss's
    numbers are never reported), and only when the estimate is more than the tolerance plus
    :data:`FUTILITY_HALF_WIDTHS` half-widths from the target, so that the candidate cannot plausibly
    end within the tolerance, which a choice needs."""
    if not section.confirm_validate or rating.prior_driven:
        return False
    return abs(rating.elo - target) > section.tolerance + FUTILITY_HALF_WIDTHS * half


def confirm_candidate(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str,
                      rec: Mapping[str, Any], spec: str, candidate: int,
                      log: Callable[[str], None] | None = None,
                      neighbour: Neighbour | None = None, validate: bool = False) -> dict[str, Any]:
    """Play rounds against the pin and the bracketing anchors (or, in a chain, against the confirmed
    ``neighbour`` alone) until the CI is narrow; rate. ``validate``: the same on the validation
    streams, for the candidate a confirmation already selected."""

    target = section.level(level).target
    opps = opponents(ladder, section.pin, target) if neighbour is None else [(neighbour.name, neighbour.spec)]
    name = f"{level}-t{int(rec['slot']):04d}"
    step = section.confirm_step_pairs
    tables: list[pa.Table] = []
    stages: list[str] = []
    rounds = 0
    kind = "validate" if validate else "confirm"
    stream0 = (_VALIDATE_STREAM + 100 * LEVELS.index(level) if validate
               else _STREAM_BASE + 100 * LEVELS.index(level) + 10 * candidate)
    seen: set[tuple[Any, ...]] = set()
    bound = width_bound(section, validate)
    while True:
        stage = f"calibrate/{level}/{kind}-{int(rec['slot']):04d}/round-{rounds:03d}"
        pairings = [Pairing(spec, opp_spec, step, start=rounds * step, stream=stream0 + j)
                    for j, (_, opp_spec) in enumerate(opps)]
        tables.append(ctx.play(stage, pairings))
        fresh = new_games(tables[-1], seen)
        stages.append(stage)
        rounds += 1
        table = pa.concat_tables(tables)
        if neighbour is None:
            rating = rate_on_ladder(ladder, table, name, section.pin, bootstrap=section.confirm_bootstrap,
                                    seed=ctx.run_seed + rounds, unit=BOOTSTRAP_UNIT)
        else:
            rating = rate_against(table, name, neighbour, bootstrap=section.confirm_bootstrap,
                                  seed=ctx.run_seed + rounds, unit=BOOTSTRAP_UNIT)
        half = (rating.ci_high - rating.ci_low) / 2.0
        if log is not None:
            origin = f"proposal {rec['knobs']}" if rec.get("proposed") else f"trial {rec['number']}"
            flag = ", prior-driven: no CI yet" if rating.prior_driven else ""
            log(f"{kind} {level} ({origin}) round {rounds}: Elo {rating.elo:+.0f} "
                f"[{rating.ci_low:+.0f}, {rating.ci_high:+.0f}] (half-width {half:.0f}, "
                f"target {target:+.0f}{flag}), "
                f"{rounds * step} pairs per opponent")
        futile = not validate and _futile(rating, half, target, section)
        if futile and log is not None:
            log(f"{kind} {level}: futile, {abs(rating.elo - target):.0f} Elo from the target is more than "
                f"the tolerance + {FUTILITY_HALF_WIDTHS:g} half-widths: stopped as a miss")
        narrow = _narrow(rating, half, bound)
        saturated = fresh == 0 and rounds > 1 and not narrow
        if saturated and log is not None:
            log(f"{kind} {level}: every game of round {rounds} replays an earlier one (no noise on either "
                f"side), so more rounds cannot narrow the CI: stopped at half-width {half:.0f}")
        if (narrow or futile or saturated
                or (rounds + 1) * step > section.confirm_max_pairs
                or (rating.prior_driven and rounds * step >= PRIOR_DRIVEN_STOP_PAIRS)):
            break
    within = rating.ci_low <= target <= rating.ci_high and not rating.prior_driven
    # When a validation will measure the chosen candidate again, choosing only candidates whose
    # confirmed Elo is also within ``tolerance`` of the target makes that measurement likelier to
    # hit (it is not what gets reported, so this adds no lean to the reported numbers).
    close = validate or not section.confirm_validate or abs(rating.elo - target) <= section.tolerance
    return {
        "trial": rec["number"], "elo": rating.elo, "ci": [rating.ci_low, rating.ci_high], "half_width": half,
        "games": table.num_rows, "score": rating.score, "prior_driven": rating.prior_driven,
        "within_ci": within, "narrow": narrow, "hit": within and narrow and close,
        "nodes_per_move": player_nodes_per_move(table, name), "rounds": rounds,
        "pairs_per_opponent": rounds * step, "opponents": [n for n, _ in opps],
        "pin": section.pin if neighbour is None else neighbour.name,
        "futile": futile, "saturated": saturated, "distinct_games": len(seen) if seen else None,
        "stages": stages,
        "ci_method": f"{BOOTSTRAP_UNIT} bootstrap ({section.confirm_bootstrap} resamples)",
        "_table": table,  # for the joint fit; dropped before the result is written
    }


#: Continuous knobs a missed confirmation may adjust (searchable floats and log-scale knobs, as
#: ``engine.params`` declares them), weakening knobs first, with the sign of their effect on Elo.
#: A log-scale knob (the node budget) is stepped on its log, where its effect is closer to linear.
ADJUSTABLE: dict[str, int] = {
    p.name: 1 if p.direction == "stronger" else -1
    for p in sorted(PARAMS, key=lambda p: p.group != "weakening")
    if p.tunable and (p.kind == "float" or p.log_scale)
}
_LOG_SCALE = tuple(p.name for p in PARAMS if p.log_scale)
#: A proposal closer than this share of the knob's range to a confirmed point is not worth games.
MIN_STEP = 0.02
#: Slot numbers of proposed (not trial) candidates start here.
PROPOSAL_SLOT = 9000


def confirm_level(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str,
                  ranked: Sequence[Mapping[str, Any]], spec_of: Callable[[Mapping[str, Any]], str],
                  log: Callable[[str], None] | None = None,
                  ranges: Mapping[str, tuple[float, float]] | None = None,
                  trials: Sequence[Mapping[str, Any]] = (),
                  neighbour: Neighbour | None = None) -> tuple[Mapping[str, Any], dict[str, Any],
                                                               list[dict[str, Any]]]:
    """Confirm candidates until one hits: (its record, its confirmation, every confirmation made).

    The first candidate is the pick. After a miss the next one is a *proposal* when the level
    has an adjustable weakening knob (:data:`ADJUSTABLE`): the missed candidate's knobs with that
    knob moved by a Newton step, ``(target - confirmed Elo) / slope``, where the slope comes from
    two confirmed points on the same line when there are two, else from a weighted regression
    over the level's trials at the same depth. Without a usable slope, the next-ranked trial.
    Without a hit: the confirmation nearest the target.
    """
    target = section.level(level).target
    tried: list[tuple[Mapping[str, Any], dict[str, Any]]] = []
    queue = list(ranked)
    for k in range(section.confirm_candidates):
        rec: Mapping[str, Any] | None = None
        if tried:
            proposal = propose(tried, trials, target, ranges or {})
            if proposal is not None and not _knobs_tried(proposal, tried):
                rec = proposal_record(tried[0][0], proposal, k)
        if rec is None:
            rec = next_trial(queue, tried, target)
            if rec is None:
                break
        result = confirm_candidate(ctx, ladder, section, level, rec, spec_of(rec), k, log, neighbour)
        tried.append((rec, result))
        if result["hit"]:
            break
    hits = [t for t in tried if t[1]["hit"]]
    kept, result = hits[0] if hits else min(tried, key=lambda t: abs(t[1]["elo"] - target))
    return kept, result, [{**r, "knobs": dict(c["knobs"])} for c, r in tried]


def _signature(rec: Mapping[str, Any]) -> tuple[Any, Any]:
    """Trials with the same Elo and nodes per move played the same games (e.g. a node budget that
    never binds): one is confirmed for all."""
    return (rec.get("elo"), rec.get("nodes_per_move"))


def _knobs_tried(knobs: Mapping[str, Any],
                 tried: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> bool:
    """Whether a candidate with exactly these knobs (a trial or a proposal) was confirmed already."""
    return any(dict(r["knobs"]) == dict(knobs) for r, _ in tried)


def next_trial(ranked: Sequence[Mapping[str, Any]],
               tried: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
               target: float) -> Mapping[str, Any] | None:
    """The best-ranked trial not yet confirmed and not a clone of one (the same Elo and nodes per
    move, or the knobs of any confirmed candidate, proposals included: the same player),
    preferring trials that rated on the far side of the nearest miss (a miss below the target
    looks for stronger trials, one above it for weaker ones)."""
    seen = {_signature(r) for r, _ in tried}
    rest = [r for r in ranked if r.get("number") is not None and _signature(r) not in seen
            and not _knobs_tried(r["knobs"], tried)]
    if not rest or not tried:
        return rest[0] if rest else None
    near_rec, near = min(tried, key=lambda t: abs(t[1]["elo"] - target))
    if near_rec.get("elo") is not None:
        up = near["elo"] < target
        onward = [r for r in rest if (r["elo"] > near_rec["elo"]) == up and r["elo"] != near_rec["elo"]]
        if onward:
            return onward[0]
    return rest[0]


def proposal_record(template: Mapping[str, Any], knobs: Mapping[str, Any], k: int) -> dict[str, Any]:
    """A candidate record for proposed knobs (no trial games; the confirmation rates it)."""

    slot = PROPOSAL_SLOT + k
    return {**template, "number": None, "slot": slot, "knobs": dict(knobs), "proposed": True,
            "stage": f"calibrate/{template['level_name']}/confirm-{slot:04d}/round-000",
            "elo": None, "ci": [None, None], "games": 0, "score": None, "within_ci": False, "hit": False,
            "value": None, "opponent_wins": win_score_summary([]), "nodes_per_move": 0.0}


def _same_line(a: Mapping[str, Any], b: Mapping[str, Any], knob: str) -> bool:
    return {k: v for k, v in a.items() if k != knob} == {k: v for k, v in b.items() if k != knob}


def _regression_slope(points: Sequence[tuple[float, float, float]]) -> float | None:
    """Weighted least-squares slope of (x, y, weight) points; None when x does not vary."""
    if len(points) < 3:
        return None
    w = sum(p[2] for p in points)
    mx = sum(p[0] * p[2] for p in points) / w
    my = sum(p[1] * p[2] for p in points) / w
    sxx = sum(p[2] * (p[0] - mx) ** 2 for p in points)
    if sxx <= 0:
        return None
    return sum(p[2] * (p[0] - mx) * (p[1] - my) for p in points) / sxx


def _to_axis(knob: str, value: float) -> float:
    return math.log(value) if knob in _LOG_SCALE else value


def _from_axis(knob: str, x: float) -> float:
    return math.exp(x) if knob in _LOG_SCALE else x


def propose(tried: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]], trials: Sequence[Mapping[str, Any]],
            target: float, ranges: Mapping[str, tuple[float, float]]) -> dict[str, Any] | None:
    """Knobs for the next confirmation by a Newton step on one adjustable knob, or None."""
    knob = next((name for name in ADJUSTABLE if name in ranges), None)
    if knob is None:
        return None
    sign = ADJUSTABLE[knob]
    base_rec, base = min(tried, key=lambda t: abs(t[1]["elo"] - target))
    knobs = dict(base_rec["knobs"])
    if knob not in knobs:
        return None
    line = sorted(((_to_axis(knob, float(r["knobs"][knob])), float(c["elo"])) for r, c in tried
                   if _same_line(r["knobs"], knobs, knob)), key=lambda p: abs(p[1] - target))
    slope = None
    if len(line) >= 2 and line[0][0] != line[1][0]:
        slope = (line[1][1] - line[0][1]) / (line[1][0] - line[0][0])
    if slope is None or slope * sign <= 0:
        points = []
        for t in trials:
            if t["knobs"].get("max_depth") == knobs.get("max_depth") and knob in t["knobs"]:
                half = (t["ci"][1] - t["ci"][0]) / 2.0 / 1.96
                points.append((_to_axis(knob, float(t["knobs"][knob])), float(t["elo"]),
                               1.0 / max(half, 1.0) ** 2))
        slope = _regression_slope(points)
    if slope is None or slope * sign <= 0:
        return None
    low, high = (_to_axis(knob, v) for v in ranges[knob])
    x = min(max(_to_axis(knob, float(knobs[knob])) + (target - float(base["elo"])) / slope, low), high)
    if any(abs(x - seen) < MIN_STEP * (high - low) for seen, _ in line):
        return None  # (nearly) measured there already, e.g. clipped at the range's end: nothing to learn
    value = _from_axis(knob, x)
    return {**knobs, knob: round(value) if isinstance(knobs[knob], int) else value}


#: Opening streams of the joint (level against level) games.
_JOINT_STREAM = 2000


def joint_rating(ctx: StageContext, ladder: Ladder, section: CalibrateSection,
                 picks: Mapping[str, Mapping[str, Any]], confirmations: dict[str, dict[str, Any]],
                 weights: Mapping[str, float], log: Callable[[str], None] | None = None) -> None:
    """Re-rate the confirmed levels together with games between adjacent levels.

    Each level's confirmation rates it against deterministic ladder anchors only. A level that
    is weakened by noise can rate quite differently against a neighbouring level than the
    anchors predict (measured in english and suicide: Medium - Easy +287 head to head against
    +390 claimed). So Easy - Medium and Medium - Hard each play ``confirm_joint_pairs`` fresh
    pairs, and ONE fit over the ladder, every level's confirmation games and these games gives
    the levels' Elo and CIs (bootstrap; the pin held). The confirmation's own numbers stay
    under ``confirm.alone``. Updates ``confirmations`` in place.
    """

    names = {level: f"{level}-t{int(picks[level]['slot']):04d}" for level in LEVELS}
    specs = {level: inline_spec(names[level], level_profile(ctx.variant, names[level], weights,
                                                            picks[level]["knobs"])) for level in LEVELS}
    tables = [confirmations[level]["_table"] for level in LEVELS]
    stages = []
    for i, (weak, strong) in enumerate(itertools.pairwise(LEVELS)):
        stage = f"calibrate/joint/{weak}-{strong}"
        tables.append(ctx.play(stage, [Pairing(specs[strong], specs[weak], section.confirm_joint_pairs,
                                               stream=_JOINT_STREAM + i)]))
        stages.append(stage)
    table = pa.concat_tables(tables)
    ratings = rate_many(ladder, table, [names[level] for level in LEVELS], section.pin,
                        bootstrap=section.confirm_bootstrap, seed=ctx.run_seed,
                        unit=BOOTSTRAP_UNIT)
    for level in LEVELS:
        conf = confirmations[level]
        r = ratings[names[level]]
        half = (r.ci_high - r.ci_low) / 2.0
        target = section.level(level).target
        alone = {k: conf[k] for k in ("elo", "ci", "half_width", "within_ci", "narrow", "hit")}
        within, narrow = r.ci_low <= target <= r.ci_high, half <= section.confirm_half_width
        conf.update({"alone": alone, "elo": r.elo, "ci": [r.ci_low, r.ci_high], "half_width": half,
                     "within_ci": within, "narrow": narrow, "hit": within and narrow,
                     "joint_stages": stages, "games": conf["games"] + sum(
                         t.num_rows for t in tables[len(LEVELS):])})
        if log is not None:
            log(f"joint {level}: Elo {r.elo:+.0f} [{r.ci_low:+.0f}, {r.ci_high:+.0f}] (alone "
                f"{alone['elo']:+.0f}), target {target:+.0f}")
