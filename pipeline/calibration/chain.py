"""Chained calibration: one level rated on the ladder, the others head to head with a neighbour.

Why: levels weakened in different ways (noise, a depth cut, a node-budget cut) are not
transitive with the deterministic ladder anchors. In english and suicide each level hit its
ladder target, yet Medium scored about 100 Elo less against Easy than the two ladder ratings
claimed, and every attempt to fix one adjacent gap on the ladder broke the other
(experiments/2026-11-29-english-calibration/). What a player experiences, and what the
independent check (``python -m pipeline levelcheck``) measures, is how adjacent levels score
against each other.

So with ``[calibrate] chain_from = LEVEL``, only LEVEL is calibrated on the ladder (pin and
bracketing anchors, as without a chain). Every other level is calibrated after its neighbour
towards LEVEL has been confirmed: its trials and its confirmation play that neighbour alone,
held at its confirmed Elo. Its Elo is the neighbour's plus the head-to-head gap on the Davidson
scale from colour-swapped pairs (first-move advantage fixed at 0): the estimator the level check
uses, on other openings and seeds. Its CI is relative to the neighbour, as the ladder level's
CI is relative to the pin; ``chain_half_width`` adds the half-widths along the chain in
quadrature, an approximate CI half-width relative to the pin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pyarrow as pa

from pipeline.config.job_sections import LEVELS
from pipeline.ratings import Rating, bootstrap_clusters, fit_elo, games_from_color_table


@dataclass(frozen=True)
class Neighbour:
    """A confirmed level that the next level of a chain is rated against."""

    level: str
    name: str  # the player's name in the games
    spec: str  # inline player spec
    elo: float  # its confirmed Elo, held fixed
    chain_half_width: float  # its CI half-width relative to the pin (approximate)


def chain_order(start: str) -> list[tuple[str, str | None]]:
    """(level, neighbour it is rated against) in calibration order: ``start`` first (no
    neighbour: the ladder), then outward, the level below before the one above."""
    if start not in LEVELS:
        raise ValueError(f"chain_from must be one of {', '.join(LEVELS)}, got {start!r}")
    i = LEVELS.index(start)
    order: list[tuple[str, str | None]] = [(start, None)]
    order += [(LEVELS[j], LEVELS[j + 1]) for j in range(i - 1, -1, -1)]
    order += [(LEVELS[j], LEVELS[j - 1]) for j in range(i + 1, len(LEVELS))]
    return order


def rate_against(table: pa.Table, name: str, neighbour: Neighbour, *, bootstrap: int = 0,
                 seed: int = 0, unit: str = "opening") -> Rating:
    """``name``'s Elo from its games against ``neighbour`` (held at its Elo), Davidson model with
    the draw parameter fitted and no first-move advantage (colour-swapped pairs). With
    ``bootstrap`` > 0 the CI resamples whole clusters of games (``unit``, see
    :data:`pipeline.ratings.BOOTSTRAP_UNITS`), else it is the Hessian's."""
    games = games_from_color_table(table, pair_id=None)
    fit = fit_elo(games, neighbour.name, neighbour.elo, advantage=0.0,
                  ci_method="bootstrap" if bootstrap else "hessian", n_bootstrap=max(bootstrap, 20),
                  seed=seed, clusters=bootstrap_clusters(table, unit) if bootstrap else None)
    return fit[name]


def chain_half_width(own: float, neighbour: Neighbour | None) -> float:
    """Half-width relative to the pin: the level's own and its neighbour's, in quadrature."""
    return own if neighbour is None else math.hypot(own, neighbour.chain_half_width)
