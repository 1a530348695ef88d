"""Search and weakening knobs of a difficulty level, each declared exactly once.

This table (together with ``engine.features.FEATURES`` for evaluation weights)
drives profile validation, the Optuna search space, export and ``--help``.
Every knob that costs time or memory has a finite upper bound, so no profile
can make the engine search without limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["int", "float", "bool"]


@dataclass(frozen=True)
class Param:
    """One tunable knob: its type, default, inclusive range and meaning."""

    name: str
    group: Literal["search", "weakening"]
    kind: Kind
    default: int | float | bool
    low: int | float
    high: int | float
    meaning: str


PARAMS: tuple[Param, ...] = (
    Param("max_depth", "search", "int", 8, 1, 64,
          "nominal depth limit of iterative deepening, in plies"),
    Param("node_budget", "search", "int", 200_000, 100, 20_000_000,
          "nodes searched per move at most (the deterministic compute budget)"),
    Param("quiescence", "search", "bool", True, 0, 1,
          "extend every leaf through all pending captures (capture-only search)"),
    Param("tt_log2", "search", "int", 18, 10, 24,
          "transposition table size as a power of two entries (memory bound: 32 bytes each)"),
    Param("noise_sigma", "weakening", "float", 0.0, 0.0, 2000.0,
          "standard deviation of Gaussian noise added to every root move's score"),
    Param("random_move_prob", "weakening", "float", 0.0, 0.0, 1.0,
          "probability of playing a uniformly random legal move instead of searching"),
    Param("top_k", "weakening", "int", 0, 0, 64,
          "choose only among the k best root moves (0: off)"),
    Param("temperature", "weakening", "float", 0.0, 0.0, 1000.0,
          "softmax temperature over root scores for the choice (0: always the best)"),
)

PARAM_INDEX: dict[str, Param] = {p.name: p for p in PARAMS}


def default_knobs() -> dict[str, int | float | bool]:
    """Every knob at its declared default."""
    return {p.name: p.default for p in PARAMS}
