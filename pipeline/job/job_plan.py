"""The games each stage of the main job will play, planned ahead for the whole job's ETA.

Exact where the players are known (the curve stage's pairings, once the weights are), stand-ins
where they are chosen later (:mod:`pipeline.job.eta` explains how the estimate treats both).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import pyarrow as pa

from engine.variants import get_variant
from pipeline.calibration.blunder_checks import shares
from pipeline.calibration.depth_check import DEPTH_STAGE, depth_specs
from pipeline.calibration.method import (
    BLUNDER_SAMPLE,
    CAL_DIR,
    CHAIN_STEPS,
    CHECKS_STAGE,
    DEPTH_POSITIONS,
    EASY_SCALES,
    NOISY_REPEATS,
    choose_ends,
    choose_medium_level,
    curve_pairings,
    curve_players,
    with_repeats,
)
from pipeline.calibration.paths import PathPlayer
from pipeline.calibration.product import ANCHOR_ELO, product_levels
from pipeline.calibration.tactics_set import load_tactics
from pipeline.config.job_sections import CalibrateSection, TuneSection
from pipeline.games.openings import Opening
from pipeline.games.pairings import Pairing, plan_pairings
from pipeline.games.players import resolve_player
from pipeline.games.sizing import EXPECTED_PLIES, NOMINAL_NODES_PER_SECOND, expected_nodes, plan_tasks
from pipeline.job.eta import PlannedGames, driver_work, planned, side_by_side
from pipeline.ratings.scale import MIN_BOOTSTRAP, scale_from_games
from pipeline.tuning.weights import SEED_NAME, TUNE_DIR, tuning_spec

#: the calibration's checks after its validation: a blunder check searches every root move of a
#: decision 3 plies deeper (about 8 moves of 5 x 3**3 nodes), and a player has a choice on about
#: 40 % of a game's plies (its forced moves are skipped). Measured costs vary 6-fold by player
#: and variant (0.6 to 3.6 ms a decision: experiments/2026-12-02-job-eta, eighth measurement), so
#: no constant prices them all; the seventh measurement held with this guess
BLUNDER_NODES_PER_DECISION = 8 * 5 * 3**3
DECISIONS_PER_PLY = 0.4
#: the export: the profile reloaded by the engine, the report's tables and plots
EXPORT_SECONDS = 5.0
CHECKS_GROUP = CHECKS_STAGE

#: stage groups played in one call: the pairings they start with are all their games
CURVES_GROUP = f"{CAL_DIR}/curves"
VALIDATION_GROUP = f"{CAL_DIR}/validation"
EXACT_GROUPS = (CURVES_GROUP, f"{CAL_DIR}/easy-axis", VALIDATION_GROUP)
#: the groups whose games the levels are chosen from: all ended when the validation starts
CHOICE_GROUPS = (CURVES_GROUP, f"{CAL_DIR}/easy", f"{CAL_DIR}/easy-axis")
#: the groups :class:`CurveGames` re-plans from the curve games so far
REFINED_GROUPS = (VALIDATION_GROUP, CHECKS_GROUP)
_FIT_COLUMNS = ("white_player", "black_player", "result_white", "opening_id")


def exact_plan(stage: str, variant: str, pairings: Sequence[Pairing],
               ply_cap: int) -> list[PlannedGames] | None:
    """The plan of a stage group of :data:`EXACT_GROUPS` from the pairings it is about to play."""
    if stage not in EXACT_GROUPS:
        return None
    return [planned(stage, variant, p.a_spec, p.b_spec, 2 * p.pairs, ply_cap) for p in pairings]


def tune_plan(variant: str, weights: Mapping[str, float], section: TuneSection, trials_left: int,
              ply_cap: int, in_flight: int, batch_size: int, deck: Sequence[Opening],
              task_seconds: float) -> list[PlannedGames]:
    """Every trial playing all its pairs, and the SPRT (and the depth SPRT) to its cap (an upper
    bound); ``in_flight`` trials at once, each step as many tasks as its batches pack into
    (``task_seconds``)."""
    seed = tuning_spec(variant, SEED_NAME, weights, section)
    candidate = tuning_spec(variant, "t0000", weights, section)

    def step_width(stage: str, pairs: int) -> int:
        specs = plan_pairings("plan", stage, variant, [Pairing(candidate, seed, pairs)], 0, batch_size,
                              ply_cap, deck, stage_seeds=True)
        return len(plan_tasks(specs, task_seconds))

    out = []
    if trials_left > 0:
        games = 2 * section.pairs * trials_left
        width = in_flight * step_width(f"{TUNE_DIR}/trial-0000", min(section.step_pairs, section.pairs))
        out.append(planned(f"{TUNE_DIR}/trial-0000", variant, candidate, seed, games, ply_cap, width))
    sprt_width = step_width(f"{TUNE_DIR}/confirm", section.sprt_step_pairs)
    out.append(planned(f"{TUNE_DIR}/confirm", variant, candidate, seed, 2 * section.sprt_max_pairs, ply_cap,
                       sprt_width))
    if section.depth_nodes:  # the second SPRT, at Hard's depth, to its cap
        deep, deep_seed = depth_specs(variant, weights, weights, section.depth_nodes)
        out.append(planned(DEPTH_STAGE, variant, deep, deep_seed, 2 * section.depth_max_pairs, ply_cap,
                           step_width(DEPTH_STAGE, section.sprt_step_pairs)))
    return out


def calibrate_plan(variant: str, weights: Mapping[str, float], section: CalibrateSection,
                   ply_cap: int) -> list[PlannedGames]:
    """The curve pairings as they will be played; Easy's trials, its axis and the validation with
    stand-ins (the product's Easy for the Easy players)."""
    product = product_levels(variant)
    curves = curve_players(variant, weights, section)
    out = [planned(f"{CAL_DIR}/curves", variant, p.a_spec, p.b_spec, 2 * p.pairs, ply_cap)
           for p in with_repeats(variant, curve_pairings(product, curves, section.openings))]
    easy = product.spec("easy")
    trial_pairs = min(section.easy_openings, section.openings) * NOISY_REPEATS
    trial_games = 2 * trial_pairs * section.easy_trials
    out.append(planned(f"{CAL_DIR}/easy/trial-000", variant, easy, easy, trial_games, ply_cap))
    axis_pairings = 2 * len(EASY_SCALES) - 1  # each point against the product's Easy and its neighbour
    out.append(planned(f"{CAL_DIR}/easy-axis", variant, easy, easy,
                       2 * section.openings * NOISY_REPEATS * axis_pairings, ply_cap))
    validation = with_repeats(variant, validation_stand_ins(variant, weights, section))
    out += [planned(f"{CAL_DIR}/validation", variant, p.a_spec, p.b_spec, 2 * p.pairs, ply_cap)
            for p in validation]
    levels = stand_in_levels(variant, weights, section)
    out += checks_plan(variant, levels, validation, ply_cap)
    return out


def export_plan() -> PlannedGames:
    """The export stage's driver work."""
    return driver_work("export", EXPORT_SECONDS)


def validation_from_curves(variant: str, weights: Mapping[str, float], section: CalibrateSection,
                           curve_games: pa.Table, ply_cap: int) -> list[PlannedGames] | None:
    """The validation and its checks planned as the method will build them
    (:func:`~pipeline.calibration.method.choose_ends`, then Medium) from a fit of the curve games played so
    far, the product's Easy standing in for Easy, Medium at the curves' midpoint; None until
    every curve player has a game. The chain the method links depends on the curves' Elo, and a
    stand-in chain can cost several times the real one."""
    product = product_levels(variant)
    curves = curve_players(variant, weights, section)
    needed = {p.name for p in (*curves.hard, *curves.medium)} | set(product.players())
    seen = {*curve_games.column("white_player").to_pylist(), *curve_games.column("black_player").to_pylist()}
    if not needed <= seen:
        return None
    fit = scale_from_games(curve_games, anchor=product.anchor, anchor_elo=ANCHOR_ELO, bootstrap=MIN_BOOTSTRAP,
                           seed=0)
    easy = PathPlayer(product.player("easy"), product.level("easy"))
    n_val, easy_elo = section.validation_openings, fit.rating(easy.name).value
    ends = choose_ends(variant, weights, section, curves, fit, product, easy, easy_elo, n_val)
    choice = choose_medium_level(variant, weights, curves, fit, product, ends, None, n_val)
    validation = with_repeats(variant, choice.pairings)
    levels = {n: p.spec for n, p in choice.chosen.items()}
    out = [planned(f"{CAL_DIR}/validation", variant, p.a_spec, p.b_spec, 2 * p.pairs, ply_cap)
           for p in validation]
    out += checks_plan(variant, levels, validation, ply_cap)
    return out


class CurveGames:
    """The curve games played so far (the columns a fit reads), and the validation planned from
    them (:func:`validation_from_curves`) for :meth:`pipeline.job.eta.JobClock.refine`. Batches
    read back on a resume are not seen: the plan then waits until every curve player has played
    in this driver. No new batch since the last plan: None (the last plan stands, no refit)."""

    def __init__(self, variant: str, weights: Mapping[str, float], section: CalibrateSection,
                 ply_cap: int) -> None:
        self.variant, self.weights, self.section, self.ply_cap = variant, dict(weights), section, ply_cap
        self._tables: list[pa.Table] = []
        self._planned = 0  # batches the last plan was fitted on

    def add(self, stage: str, table: pa.Table) -> None:
        if stage == CURVES_GROUP:
            self._tables.append(table.select(list(_FIT_COLUMNS)))

    def plan(self) -> list[PlannedGames] | None:
        tables = list(self._tables)
        if len(tables) == self._planned:
            return None
        self._planned = len(tables)
        return validation_from_curves(self.variant, self.weights, self.section, pa.concat_tables(tables),
                                      self.ply_cap)


def checks_plan(variant: str, levels: Mapping[str, str], validation: Sequence[Pairing],
                ply_cap: int) -> list[PlannedGames]:
    """The checks after the validation, at the nominal search speed: the blunder rates of the
    ``levels`` (specs by level) and of the product's Easy over their games in ``validation`` (at
    most :data:`BLUNDER_SAMPLE` decisions each, scored in tasks side by side:
    :func:`~pipeline.calibration.blunder_checks.shares`), and each level's median depth and
    tactics searches on the driver meanwhile (planned after them, so this leans high by the
    shorter of the two)."""
    scored = [*levels.values(), product_levels(variant).spec("easy")]
    plies = min(ply_cap, EXPECTED_PLIES)
    speed = NOMINAL_NODES_PER_SECOND[get_variant(variant).board_size]
    rates = [min(BLUNDER_SAMPLE, sum(2 * p.pairs * plies * DECISIONS_PER_PLY
                                     for p in validation if spec in (p.a_spec, p.b_spec)))
             for spec in scored]
    tasks = sum(shares(int(d)) for d in rates)
    searches = len(load_tactics(variant).positions) + DEPTH_POSITIONS
    driver_nodes = searches * sum(expected_nodes(resolve_player(spec, variant).game_player)
                                  for spec in levels.values())
    return [side_by_side(CHECKS_GROUP, sum(rates) * BLUNDER_NODES_PER_DECISION / speed, tasks),
            driver_work(CHECKS_GROUP, driver_nodes / speed)]


def stand_in_levels(variant: str, weights: Mapping[str, float], section: CalibrateSection) -> dict[str, str]:
    """Stand-in specs of the three levels before they are chosen: the product's Easy, 4 plies
    without noise, the largest budget."""
    curves = curve_players(variant, weights, section)
    medium = curves.medium
    mid = medium[-2] if len(medium) > 1 else medium[-1]  # 4 plies without noise
    return {"easy": product_levels(variant).spec("easy"), "medium": mid.spec, "hard": curves.hard[-1].spec}


def validation_stand_ins(variant: str, weights: Mapping[str, float],
                         section: CalibrateSection) -> list[Pairing]:
    """The validation's pairings as the method builds them, with curve points standing in for the
    levels and the chain it chooses after the curves: the product's Easy for Easy, 4 plies
    without noise for Medium, the largest budget for Hard, evenly spaced curve points for the
    chain from Easy to Hard and the dial's spot checks, the chain's middle two for the points
    Medium meets."""
    product = product_levels(variant)
    curves = curve_players(variant, weights, section)
    hard, medium = curves.hard, curves.medium
    level = stand_in_levels(variant, weights, section)
    easy = level["easy"]
    links = [(level[n], product.spec(n)) for n in ("easy", "hard")]
    path = [p.spec for p in (*medium, *hard[:-1])]  # the curve points, weakest first
    steps = [path[min(len(path) - 1, (k * len(path)) // CHAIN_STEPS)] for k in range(1, CHAIN_STEPS)]
    chain = [easy, *dict.fromkeys(steps), level["hard"]]
    links += [(b, a) for a, b in itertools.pairwise(chain)]
    interior = max(0, section.dial - 2)
    checks = (medium[0].spec, hard[len(hard) // 2].spec)[:min(2, interior)]
    links += [(spec, product.spec("medium")) for spec in checks]
    links += [(level["medium"], product.spec("medium")), (level["medium"], easy),
              (level["hard"], level["medium"])]
    middle = len(chain) // 2
    links += [(level["medium"], spec) for spec in chain[middle - 1:middle + 1]
              if spec not in (easy, level["hard"], level["medium"])]
    n = section.validation_openings
    return [Pairing(a, b, n) for a, b in dict.fromkeys(links)]
