"""Confirmation of calibrated levels: fresh games until each level's CI is narrow enough.

The trial that a calibration picks was chosen *because* its rating looked right, so its own
rating is biased towards the target (the winner's curse) and its CI is wide (a trial is cheap).
Confirmation therefore re-rates the pick from games it never used: in rounds of
``confirm_step_pairs`` colour-swapped pairs against the pin and the two ladder anchors that
bracket the target (fresh opening streams), refitting the ladder + these games after each
round with a pair bootstrap, until the 95 % CI half-width is at most ``confirm_half_width`` or
``confirm_max_pairs`` pairs per opponent have been played. Stopping on the CI's *width* (not on
the estimate) keeps the estimate unbiased.

A confirmed level *hits* when its target is inside the confirmed CI and the half-width
criterion was met. When it misses, the next-ranked trial is confirmed, up to
``confirm_candidates`` per level; the reported numbers are always the confirmation's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from pipeline.jobconfig import LEVELS, CalibrateSection, level_target
from pipeline.ladder import Ladder
from pipeline.matchplan import Pairing
from pipeline.stagectx import StageContext, player_nodes_per_move

#: Opening streams of confirmation games: far from the trials' streams 0 and 1.
_STREAM_BASE = 1000


def opponents(ladder: Ladder, pin: str, target: float) -> list[tuple[str, str]]:
    """(name, spec) of the pin and the two anchors bracketing ``target``, without repeats."""
    low, high = ladder.bracket(target)
    pin_anchor = ladder.anchor(pin)
    out: list[tuple[str, str]] = []
    for a in (pin_anchor, low, high):
        if a.name not in [n for n, _ in out]:
            out.append((a.name, a.spec))
    return out


def confirm_candidate(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str,
                      rec: Mapping[str, Any], spec: str, candidate: int,
                      log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Play rounds against the pin and the bracketing anchors until the CI is narrow; rate."""
    from pipeline.calibrate import rate_on_ladder  # calibrate imports this module

    target = level_target(section, level)
    opps = opponents(ladder, section.pin, target)
    name = f"{level}-t{int(rec['slot']):04d}"
    step = section.confirm_step_pairs
    tables: list[pa.Table] = []
    stages: list[str] = []
    rounds = 0
    stream0 = _STREAM_BASE + 100 * LEVELS.index(level) + 10 * candidate
    while True:
        stage = f"calibrate/{level}/confirm-{int(rec['slot']):04d}/round-{rounds:03d}"
        pairings = [Pairing(spec, opp_spec, step, start=rounds * step, stream=stream0 + j)
                    for j, (_, opp_spec) in enumerate(opps)]
        tables.append(ctx.play(stage, pairings))
        stages.append(stage)
        rounds += 1
        table = pa.concat_tables(tables)
        rating = rate_on_ladder(ladder, table, name, section.pin, bootstrap=section.confirm_bootstrap,
                                seed=ctx.run_seed + rounds)
        half = (rating.ci_high - rating.ci_low) / 2.0
        if log is not None:
            log(f"confirm {level} (trial {rec['number']}) round {rounds}: Elo {rating.elo:+.0f} "
                f"[{rating.ci_low:+.0f}, {rating.ci_high:+.0f}] (half-width {half:.0f}, "
                f"target {target:+.0f}), "
                f"{rounds * step} pairs per opponent")
        if half <= section.confirm_half_width or (rounds + 1) * step > section.confirm_max_pairs:
            break
    within = rating.ci_low <= target <= rating.ci_high
    narrow = half <= section.confirm_half_width
    return {
        "trial": rec["number"], "elo": rating.elo, "ci": [rating.ci_low, rating.ci_high], "half_width": half,
        "games": table.num_rows, "score": rating.score, "prior_driven": rating.prior_driven,
        "within_ci": within, "narrow": narrow, "hit": within and narrow,
        "nodes_per_move": player_nodes_per_move(table, name), "rounds": rounds,
        "pairs_per_opponent": rounds * step, "opponents": [n for n, _ in opps], "pin": section.pin,
        "stages": stages, "ci_method": f"pair bootstrap ({section.confirm_bootstrap} resamples)",
    }


def confirm_level(ctx: StageContext, ladder: Ladder, section: CalibrateSection, level: str,
                  ranked: Sequence[Mapping[str, Any]], spec_of: Callable[[Mapping[str, Any]], str],
                  log: Callable[[str], None] | None = None) -> tuple[Mapping[str, Any], dict[str, Any],
                                                                     list[dict[str, Any]]]:
    """Confirm ranked candidates in order until one hits: (its trial record, its confirmation,
    every confirmation made). Without a hit: the confirmation nearest the target."""
    tried: list[tuple[Mapping[str, Any], dict[str, Any]]] = []
    for k, rec in enumerate(ranked[: section.confirm_candidates]):
        result = confirm_candidate(ctx, ladder, section, level, rec, spec_of(rec), k, log)
        tried.append((rec, result))
        if result["hit"]:
            break
    hits = [t for t in tried if t[1]["hit"]]
    target = level_target(section, level)
    rec, result = hits[0] if hits else min(tried, key=lambda t: abs(t[1]["elo"] - target))
    return rec, result, [r for _, r in tried]
