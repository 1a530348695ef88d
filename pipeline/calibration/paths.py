"""Each level's one-dimensional knob path: the players a strength curve is measured along.

- **Hard**: tuned weights, no weakening, every capture (quiescence), depth unbounded, the node
  budget per move as the knob (the product's fixed compute budget at the strong end), and the
  search changes proven stronger in the variant (:data:`PROVEN_SEARCH`).
- **Medium**: tuned weights, 4 plies plus every capture, root noise as the knob; 5 plies
  without noise is the path's strong end for a target 4 plies cannot reach.
- **Easy**: at most 2 plies, no capture extension (the product's Easy looks 2 plies ahead), a
  weakening mix (noise, random moves, top-k, temperature) chosen by Optuna.

Player names carry the knob so game records say who played (``hard-200000``, ``medium-d4-n35``,
``easy-t7``); every player is an inline spec, so no file has to exist on the workers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.profile import LevelProfile
from engine.variants import get_variant
from pipeline.games.players import inline_spec

HARD_MAX_DEPTH = 64
MEDIUM_DEPTH = 4
MEDIUM_FALLBACK_DEPTH = 5
MEDIUM_NODE_BUDGET = 1_000_000  # the product's Medium: the depth, not the budget, is the limit
EASY_NODE_BUDGET = 100_000
TT_LOG2 = 18
#: Easy's weakening mix: the knobs Optuna searches, each within this range (inside engine.params')
EASY_SPACE: Mapping[str, tuple[float, float]] = {
    "max_depth": (1, 2),
    "noise_sigma": (0.0, 400.0),
    "random_move_prob": (0.0, 0.5),
    "top_k": (0, 8),
    "temperature": (0.0, 300.0),
}
#: Search knobs that an SPRT at equal nodes per move proved stronger, per variant (the tests are in
#: experiments/2026-12-06-late-move-reductions/ and experiments/2026-12-07-table-keep/). Hard's path
#: turns them on in that variant; every other level, and every variant not listed, keeps the
#: search the product plays today.
PROVEN_SEARCH: Mapping[str, Mapping[str, bool]] = {
    "english": {"tt_keep": True},
    "brazilian": {"reductions": True, "partial_iterations": True, "tt_keep": True},
    "russian": {"tt_keep": True},
    "international": {"tt_keep": True},
}
_OFF = {"noise_sigma": 0.0, "random_move_prob": 0.0, "top_k": 0, "temperature": 0.0}
#: decimals a sampled mix value keeps, so the level measured is the level a profile file holds
_DECIMALS = {"noise_sigma": 1, "random_move_prob": 3, "temperature": 1}


@dataclass(frozen=True)
class PathPlayer:
    """One point of a knob path: its record name, level and inline spec."""

    name: str
    level: LevelProfile

    @property
    def spec(self) -> str:
        return inline_spec(self.name, self.level)


def _level(
    variant: str, name: str, weights: Mapping[str, float], knobs: Mapping[str, float | int | bool], level: str
) -> PathPlayer:
    profile = LevelProfile.from_knobs(get_variant(variant), level, dict(weights), dict(knobs))
    return PathPlayer(name, profile)


def hard_player(variant: str, weights: Mapping[str, float], budget: int) -> PathPlayer:
    """Hard at ``budget`` nodes per move, with the variant's proven search changes."""
    knobs = {
        "max_depth": HARD_MAX_DEPTH,
        "node_budget": int(budget),
        "quiescence": True,
        "tt_log2": TT_LOG2,
        **_OFF,
        **PROVEN_SEARCH.get(get_variant(variant).name, {}),
    }
    return _level(variant, f"hard-{int(budget)}", weights, knobs, "hard")


def medium_player(
    variant: str, weights: Mapping[str, float], noise: float, depth: int = MEDIUM_DEPTH
) -> PathPlayer:
    """Medium at ``depth`` plies plus captures with root noise ``noise`` (rounded to 0.1)."""
    sigma = round(float(noise), 1)
    knobs = {
        "max_depth": depth,
        "node_budget": MEDIUM_NODE_BUDGET,
        "quiescence": True,
        "tt_log2": TT_LOG2,
        **_OFF,
        "noise_sigma": sigma,
    }
    return _level(variant, f"medium-d{depth}-n{sigma:g}", weights, knobs, "medium")


def easy_player(
    variant: str, weights: Mapping[str, float], mix: Mapping[str, float | int], name: str
) -> PathPlayer:
    """Easy with weakening ``mix`` (keys of :data:`EASY_SPACE`)."""
    unknown = sorted(set(mix) - set(EASY_SPACE))
    if unknown:
        raise ValueError(f"easy mix: unknown knob {unknown[0]!r}; known: {', '.join(EASY_SPACE)}")
    knobs: dict[str, float | int | bool] = {
        "node_budget": EASY_NODE_BUDGET,
        "quiescence": False,
        "tt_log2": TT_LOG2,
        **_OFF,
        "max_depth": 2,
    }
    knobs.update({k: round(float(v), _DECIMALS[k]) if k in _DECIMALS else int(v) for k, v in mix.items()})
    return _level(variant, name, weights, knobs, "easy")
