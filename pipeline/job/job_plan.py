"""The games each stage of the main job will play, planned ahead for the whole job's ETA.

Exact where the players are known (the curve stage's pairings, once the weights are), stand-ins
where they are chosen later (:mod:`pipeline.job.eta` explains how the estimate treats both).
"""

from __future__ import annotations

from collections.abc import Mapping

from pipeline.calibration.method import CAL_DIR, curve_pairings, curve_players
from pipeline.calibration.product import product_levels
from pipeline.config.job_sections import CalibrateSection, TuneSection
from pipeline.job.eta import PlannedGames, planned
from pipeline.tuning.weights import SEED_NAME, TUNE_DIR, tuning_spec


def tune_plan(variant: str, weights: Mapping[str, float], section: TuneSection, trials_left: int,
              ply_cap: int) -> list[PlannedGames]:
    """Every trial playing all its pairs, and the SPRT to its cap (an upper bound)."""
    seed = tuning_spec(variant, SEED_NAME, weights, section)
    candidate = tuning_spec(variant, "t0000", weights, section)
    out = []
    if trials_left > 0:
        games = 2 * section.pairs * trials_left
        out.append(planned(f"{TUNE_DIR}/trial-0000", variant, candidate, seed, games, ply_cap))
    out.append(planned(f"{TUNE_DIR}/confirm", variant, candidate, seed, 2 * section.sprt_max_pairs, ply_cap))
    return out


def calibrate_plan(variant: str, weights: Mapping[str, float], section: CalibrateSection,
                   ply_cap: int) -> list[PlannedGames]:
    """The curve pairings as they will be played; Easy's trials and the validation with stand-ins."""
    product = product_levels(variant)
    curves = curve_players(variant, weights, section)
    out = [planned(f"{CAL_DIR}/curves", variant, p.a_spec, p.b_spec, 2 * p.pairs, ply_cap)
           for p in curve_pairings(product, curves, section.openings)]
    easy = product.spec("easy")
    out.append(planned(f"{CAL_DIR}/easy/trial-000", variant, easy, easy,
                       2 * min(section.easy_openings, section.openings) * section.easy_trials, ply_cap))
    hard, medium = curves.hard, curves.medium
    mid_hard, mid_medium = hard[len(hard) // 2], medium[len(medium) // 2]
    top = medium[-2] if len(medium) > 1 else medium[-1]  # 4 plies without noise
    pairs = [(easy, product.spec("easy")), (top.spec, product.spec("medium")),
             (hard[-1].spec, product.spec("hard")),
             (top.spec, easy), (hard[-1].spec, top.spec),
             (mid_medium.spec, easy), (top.spec, mid_medium.spec),  # Easy-Medium chain
             (hard[0].spec, top.spec), (mid_hard.spec, hard[0].spec), (hard[-1].spec, mid_hard.spec),
             (mid_hard.spec, product.spec("medium")), (mid_hard.spec, product.spec("medium"))]  # dial checks
    out += [planned(f"{CAL_DIR}/validation", variant, a, b, 2 * section.validation_openings, ply_cap)
            for a, b in pairs]
    return out
