"""Evaluation features: each declared once with its meaning, range and per-variant default.

The evaluation is ``sum(weight[i] * feature[i])`` from the side to move's point
of view. Feature values are computed White-minus-Black (see
``engine.kernel.evaluate`` for the scalar kernel and ``engine.batch.features``
for the vectorised extractor; a test proves they agree) and the sign flips for
Black. The order of ``FEATURES`` is the order of the weight vector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from engine.errors import DeclarationError
from engine.variants import Variant


@dataclass(frozen=True)
class Feature:
    """One evaluation term: what it counts, and the weight range the tuner may use."""

    name: str
    meaning: str
    low: float
    high: float


FEATURES: tuple[Feature, ...] = (
    Feature("man", "men on the board (own minus opponent's)", -300.0, 300.0),
    Feature("king", "kings on the board", -900.0, 900.0),
    Feature("advance", "rows advanced, summed over men", -30.0, 30.0),
    Feature("back_rank", "men still on their own back row", -50.0, 50.0),
    Feature("center_king", "kings on the 8 central squares", -50.0, 50.0),
    Feature(
        "trade_when_ahead",
        "pieces already exchanged, signed by who leads in material (favours trading down when ahead)",
        -20.0,
        20.0,
    ),
    Feature(
        "king_approach_when_ahead",
        "minus the summed distance (in rows/columns) from each king of the leading side to its "
        "nearest enemy piece, signed by who leads (brings kings towards the opponent when ahead)",
        -20.0,
        20.0,
    ),
    Feature("mobility", "non-capturing moves available", -30.0, 30.0),
    Feature("runaway", "men with no piece anywhere in the cone ahead of them (unstoppable)", -300.0, 300.0),
    Feature("balance", "minus the imbalance between men on the left and right halves", -30.0, 30.0),
    Feature("main_diagonal_king", "kings on the long (main) diagonal, key for flying kings", -100.0, 100.0),
    Feature("tempo", "rows advanced by the most advanced man (race towards the crown)", -30.0, 30.0),
)

FEATURE_INDEX: dict[str, int] = {f.name: i for i, f in enumerate(FEATURES)}
N_FEATURES = len(FEATURES)

# Defaults: english reproduces the product's published evaluation (man 100, king 160,
# +3 per row advanced, +8 per back-row man, +6 per central king, trades and king
# approach when ahead); the other terms start at 0 so the baseline is exact.
_ENGLISH = {
    "man": 100.0,
    "king": 160.0,
    "advance": 3.0,
    "back_rank": 8.0,
    "center_king": 6.0,
    "trade_when_ahead": 4.0,
    "king_approach_when_ahead": 2.0,
}
# Suicide: material is a liability and kings a burden; mobility matters (a side
# without moves wins, so having few moves is good).
_SUICIDE = {
    "man": -100.0,
    "king": -180.0,
    "advance": 2.0,
    "back_rank": -4.0,
    "mobility": -6.0,
    "trade_when_ahead": -4.0,
}
# Flying-king variants: a king is worth about three men.
_FLYING_8X8 = {
    "man": 100.0,
    "king": 300.0,
    "advance": 3.0,
    "back_rank": 6.0,
    "center_king": 4.0,
    "trade_when_ahead": 4.0,
    "king_approach_when_ahead": 1.0,
    "mobility": 2.0,
    "runaway": 40.0,
    "balance": 2.0,
    "main_diagonal_king": 25.0,
}
_INTERNATIONAL = dict(_FLYING_8X8, advance=2.0, back_rank=4.0)

#: The starting weights of each variant, by variant name; a feature left out weighs 0. Every
#: variant of ``engine.variants.VARIANTS`` needs an entry: a variant without one is an error,
#: never a silent borrowing of another variant's weights.
DEFAULT_WEIGHTS: Mapping[str, Mapping[str, float]] = MappingProxyType({
    "english": MappingProxyType(_ENGLISH),
    "suicide": MappingProxyType(_SUICIDE),
    "brazilian": MappingProxyType(_FLYING_8X8),
    "russian": MappingProxyType(_FLYING_8X8),
    "international": MappingProxyType(_INTERNATIONAL),
})


def _check_defaults(table: Mapping[str, Mapping[str, float]]) -> None:
    """Each declared weight names a feature and lies in its range (a typo would weigh 0)."""
    ranges = {f.name: (f.low, f.high) for f in FEATURES}
    for variant, weights in table.items():
        for name, value in weights.items():
            if name not in ranges:
                raise DeclarationError(f"default weights of {variant!r}: unknown feature {name!r}")
            low, high = ranges[name]
            if not low <= value <= high:
                raise DeclarationError(f"default weights of {variant!r}: {name} = {value!r} is outside "
                                       f"[{low}, {high}]")


_check_defaults(DEFAULT_WEIGHTS)


def default_weights(variant: Variant) -> dict[str, float]:
    """The starting weights of ``variant`` (every feature present; undeclared ones 0).

    DeclarationError if ``DEFAULT_WEIGHTS`` has no entry for the variant.
    """
    declared = DEFAULT_WEIGHTS.get(variant.name)
    if declared is None:
        raise DeclarationError(f"no default evaluation weights declared for variant {variant.name!r}; "
                               "add them to engine.features.DEFAULT_WEIGHTS")
    return {f.name: float(declared.get(f.name, 0.0)) for f in FEATURES}


def weight_vector(weights: dict[str, float]) -> npt.NDArray[np.float64]:
    """Weights in feature order, as the kernel expects them."""
    return np.array([float(weights[f.name]) for f in FEATURES], dtype=np.float64)
