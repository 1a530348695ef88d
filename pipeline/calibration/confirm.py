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

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from engine.params import PARAMS
from engine.profile import Knob
from pipeline.calibration.chain import Neighbour, rate_against
from pipeline.calibration.rating import level_profile, rate_many, rate_on_ladder
from pipeline.calibration.results import Candidate, Confirmation, LevelTrial, Proposal, player_name
from pipeline.config.job_sections import LEVELS, CalibrateSection
from pipeline.games.pairings import Pairing
from pipeline.games.players import inline_spec
from pipeline.games.stage import StageContext, player_nodes_per_move
from pipeline.ladder.reference import Ladder
from pipeline.ratings import Rating

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
                      rec: Candidate, spec: str, candidate: int,
                      log: Callable[[str], None] | None = None,
                      neighbour: Neighbour | None = None,
                      validate: bool = False) -> tuple[Confirmation, pa.Table]:
    """Play rounds against the pin and the bracketing anchors (or, in a chain, against the confirmed
    ``neighbour`` alone) until the CI is narrow; rate. ``validate``: the same on the validation
    streams, for the candidate a confirmation already selected. Returns the confirmation and its
    games (a joint fit refits them)."""

    target = section.level(level).target
    opps = opponents(ladder, section.pin, target) if neighbour is None else [(neighbour.name, neighbour.spec)]
    name = player_name(level, rec.slot)
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
        stage = f"calibrate/{level}/{kind}-{rec.slot:04d}/round-{rounds:03d}"
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
        half = rating.half_width
        if log is not None:
            origin = f"proposal {rec.knobs}" if isinstance(rec, Proposal) else f"trial {rec.number}"
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
    within = rating.holds(target) and not rating.prior_driven
    # When a validation will measure the chosen candidate again, choosing only candidates whose
    # confirmed Elo is also within ``tolerance`` of the target makes that measurement likelier to
    # hit (it is not what gets reported, so this adds no lean to the reported numbers).
    close = validate or not section.confirm_validate or abs(rating.elo - target) <= section.tolerance
    confirmation = Confirmation(
        trial=rec.number if isinstance(rec, LevelTrial) else None, knobs=dict(rec.knobs), rating=rating,
        games=table.num_rows, within_ci=within, narrow=narrow, hit=within and narrow and close,
        nodes_per_move=player_nodes_per_move(table, name), rounds=rounds, pairs_per_opponent=rounds * step,
        opponents=tuple(n for n, _ in opps), pin=section.pin if neighbour is None else neighbour.name,
        futile=futile, saturated=saturated, distinct_games=len(seen) if seen else None, stages=tuple(stages),
        ci_method=f"{BOOTSTRAP_UNIT} bootstrap ({section.confirm_bootstrap} resamples)")
    return confirmation, table


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


@dataclass(frozen=True, eq=False)
class Confirmed:
    """A level's kept candidate, its confirmation and that confirmation's games (which a joint fit
    refits; they stay in Parquet, not in the result), and every confirmation made for the level."""

    candidate: Candidate
    confirmation: Confirmation
    games: pa.Table
    tried: tuple[Confirmation, ...]


def confirm_level(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str,
                  ranked: Sequence[LevelTrial], spec_of: Callable[[Candidate], str],
                  log: Callable[[str], None] | None = None,
                  ranges: Mapping[str, tuple[float, float]] | None = None,
                  trials: Sequence[LevelTrial] = (),
                  neighbour: Neighbour | None = None) -> Confirmed:
    """Confirm candidates until one hits; the one kept and every confirmation made.

    The first candidate is the pick. After a miss the next one is a *proposal* when the level
    has an adjustable weakening knob (:data:`ADJUSTABLE`): the missed candidate's knobs with that
    knob moved by a Newton step, ``(target - confirmed Elo) / slope``, where the slope comes from
    two confirmed points on the same line when there are two, else from a weighted regression
    over the level's trials at the same depth. Without a usable slope, the next-ranked trial.
    Without a hit: the confirmation nearest the target.
    """
    target = section.level(level).target
    tried: list[tuple[Candidate, Confirmation, pa.Table]] = []
    queue = list(ranked)
    for k in range(section.confirm_candidates):
        elos = [(c, conf.rating.elo) for c, conf, _ in tried]
        rec: Candidate | None = None
        if tried:
            knobs = propose(elos, trials, target, ranges or {})
            if knobs is not None and not _knobs_tried(knobs, elos):
                rec = proposal(level, target, knobs, k)
        if rec is None:
            rec = next_trial(queue, elos, target)
            if rec is None:
                break
        conf, table = confirm_candidate(ctx, ladder, section, level, rec, spec_of(rec), k, log, neighbour)
        tried.append((rec, conf, table))
        if conf.hit:
            break
    hits = [t for t in tried if t[1].hit]
    kept, conf, table = hits[0] if hits else min(tried, key=lambda t: abs(t[1].rating.elo - target))
    return Confirmed(kept, conf, table, tuple(c for _, c, _ in tried))


#: A candidate with the confirmed Elo it got.
Tried = tuple[Candidate, float]


def _signature(rec: Candidate) -> tuple[float | None, float]:
    """Trials with the same Elo and nodes per move played the same games (e.g. a node budget that
    never binds): one is confirmed for all. A proposal played no trial games."""
    return (rec.rating.elo, rec.nodes_per_move) if isinstance(rec, LevelTrial) else (None, 0.0)


def _knobs_tried(knobs: Mapping[str, Knob], tried: Sequence[Tried]) -> bool:
    """Whether a candidate with exactly these knobs (a trial or a proposal) was confirmed already."""
    return any(dict(r.knobs) == dict(knobs) for r, _ in tried)


def next_trial(ranked: Sequence[LevelTrial], tried: Sequence[Tried], target: float) -> LevelTrial | None:
    """The best-ranked trial not yet confirmed and not a clone of one (the same Elo and nodes per
    move, or the knobs of any confirmed candidate, proposals included: the same player),
    preferring trials that rated on the far side of the nearest miss (a miss below the target
    looks for stronger trials, one above it for weaker ones). ``tried``: (candidate, its
    confirmed Elo)."""
    seen = {_signature(r) for r, _ in tried}
    rest = [r for r in ranked if _signature(r) not in seen and not _knobs_tried(r.knobs, tried)]
    if not rest or not tried:
        return rest[0] if rest else None
    near_rec, near = min(tried, key=lambda t: abs(t[1] - target))
    if isinstance(near_rec, LevelTrial):
        up = near < target
        elo = near_rec.rating.elo
        onward = [r for r in rest if (r.rating.elo > elo) == up and r.rating.elo != elo]
        if onward:
            return onward[0]
    return rest[0]


def proposal(level: str, target: float, knobs: Mapping[str, Knob], k: int) -> Proposal:
    """The ``k``-th candidate of a level as proposed knobs (no trial games; the confirmation
    rates it)."""
    slot = PROPOSAL_SLOT + k
    return Proposal(slot, f"calibrate/{level}/confirm-{slot:04d}/round-000", dict(knobs), target)


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


def propose(tried: Sequence[Tried], trials: Sequence[LevelTrial], target: float,
            ranges: Mapping[str, tuple[float, float]]) -> dict[str, Knob] | None:
    """Knobs for the next confirmation by a Newton step on one adjustable knob, or None.
    ``tried``: the confirmed candidates with their confirmed Elo."""
    knob = next((name for name in ADJUSTABLE if name in ranges), None)
    if knob is None:
        return None
    sign = ADJUSTABLE[knob]
    base_rec, base = min(tried, key=lambda t: abs(t[1] - target))
    knobs = dict(base_rec.knobs)
    if knob not in knobs:
        return None
    line = sorted(((_to_axis(knob, float(r.knobs[knob])), float(elo)) for r, elo in tried
                   if _same_line(r.knobs, knobs, knob)), key=lambda p: abs(p[1] - target))
    slope = None
    if len(line) >= 2 and line[0][0] != line[1][0]:
        slope = (line[1][1] - line[0][1]) / (line[1][0] - line[0][0])
    if slope is None or slope * sign <= 0:
        points = []
        for t in trials:
            if t.knobs.get("max_depth") == knobs.get("max_depth") and knob in t.knobs:
                half = t.rating.half_width / 1.96
                points.append((_to_axis(knob, float(t.knobs[knob])), float(t.rating.elo),
                               1.0 / max(half, 1.0) ** 2))
        slope = _regression_slope(points)
    if slope is None or slope * sign <= 0:
        return None
    low, high = (_to_axis(knob, v) for v in ranges[knob])
    x = min(max(_to_axis(knob, float(knobs[knob])) + (target - float(base)) / slope, low), high)
    if any(abs(x - seen) < MIN_STEP * (high - low) for seen, _ in line):
        return None  # (nearly) measured there already, e.g. clipped at the range's end: nothing to learn
    value = _from_axis(knob, x)
    return {**knobs, knob: round(value) if isinstance(knobs[knob], int) else value}


#: Opening streams of the joint (level against level) games.
_JOINT_STREAM = 2000


def joint_rating(ctx: StageContext, ladder: Ladder, section: CalibrateSection,
                 confirmed: Mapping[str, Confirmed], weights: Mapping[str, float],
                 log: Callable[[str], None] | None = None) -> dict[str, Confirmed]:
    """Re-rate the confirmed levels together with games between adjacent levels.

    Each level's confirmation rates it against deterministic ladder anchors only. A level that
    is weakened by noise can rate quite differently against a neighbouring level than the
    anchors predict (measured in english and suicide: Medium - Easy +287 head to head against
    +390 claimed). So Easy - Medium and Medium - Hard each play ``confirm_joint_pairs`` fresh
    pairs, and ONE fit over the ladder, every level's confirmation games and these games gives
    the levels' ratings (bootstrap; the pin held). The confirmation on its own stays under
    ``alone`` of the re-rated one.
    """

    names = {level: player_name(level, confirmed[level].candidate.slot) for level in LEVELS}
    specs = {level: inline_spec(names[level], level_profile(ctx.variant, names[level], weights,
                                                            confirmed[level].candidate.knobs))
             for level in LEVELS}
    tables = [confirmed[level].games for level in LEVELS]
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
    joint_games = sum(t.num_rows for t in tables[len(LEVELS):])
    out = {}
    for level in LEVELS:
        alone = confirmed[level].confirmation
        r = ratings[names[level]]
        target = section.level(level).target
        within, narrow = r.holds(target), r.half_width <= section.confirm_half_width
        conf = dataclasses.replace(alone, rating=r, within_ci=within, narrow=narrow, hit=within and narrow,
                                   joint_stages=tuple(stages), games=alone.games + joint_games, alone=alone)
        out[level] = dataclasses.replace(confirmed[level], confirmation=conf)
        if log is not None:
            log(f"joint {level}: Elo {r.elo:+.0f} [{r.ci_low:+.0f}, {r.ci_high:+.0f}] (alone "
                f"{alone.rating.elo:+.0f}), target {target:+.0f}")
    return out
