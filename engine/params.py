"""Search and weakening knobs of a difficulty level, each declared exactly once.

This table (together with ``engine.features.FEATURES`` for evaluation weights) drives profile
validation, the JSON Schema, the engine's ``--help`` and, in the tuning pipeline, the Optuna
search space, calibration and export. Adding a knob is one :class:`Param` here, its typed field
on :class:`engine.profile.LevelProfile` (a test holds the two equal) and the code that reads it.
Every knob that costs time or memory has a finite upper bound, so no profile can make the
engine search without limit.

Each knob also says how it moves playing strength when raised, other knobs fixed
(:data:`Direction`): ``stronger`` (more search: ``max_depth``, ``node_budget``, and
``quiescence`` switched on), ``weaker`` (the weakening knobs: each is off at its lowest value,
0, which is also its default; for ``top_k`` a larger k is weaker and 0 turns it off, the same
choice as k = 1), or ``none`` (``tt_log2``: memory, not strength).
Whether a tuner may search a knob is declared too: ``tt_log2`` (memory) and ``quiescence``
(part of a level's character, "plus every capture", set by hand) are only ever fixed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.errors import DeclarationError

Kind = Literal["int", "float", "bool"]
Group = Literal["search", "weakening"]
#: What raising a knob does to playing strength, other knobs fixed.
Direction = Literal["stronger", "weaker", "none"]
DIRECTIONS: tuple[Direction, ...] = ("stronger", "weaker", "none")


@dataclass(frozen=True)
class Param:
    """One tunable knob: type, default, inclusive range, meaning, and how a tuner treats it.

    ``direction``: what raising it does to strength. ``log_scale``: a search over it should be
    log-uniform (its range spans decades). ``tunable``: a tuner may search it; otherwise it is
    only ever fixed to a value. Inconsistent declarations raise :class:`DeclarationError`.
    """

    name: str
    group: Group
    kind: Kind
    default: int | float | bool
    low: int | float
    high: int | float
    meaning: str
    direction: Direction
    log_scale: bool
    tunable: bool

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise DeclarationError(f"knob {self.name!r}: {problem} (got {self!r})")

    def _problem(self) -> str | None:
        if not self.name.isidentifier():
            return "the name must be a Python identifier (it is a LevelProfile field)"
        if self.group not in ("search", "weakening") or self.kind not in ("int", "float", "bool"):
            return "unknown group or kind"
        if self.direction not in DIRECTIONS:
            return f"direction must be one of {', '.join(DIRECTIONS)}"
        if self.kind == "bool":
            if not isinstance(self.default, bool) or (self.low, self.high) != (0, 1) or self.log_scale:
                return "a bool knob has a bool default, range 0..1 and no log scale"
            return None
        values = (self.default, self.low, self.high)
        if any(isinstance(v, bool) for v in values) or (
                self.kind == "int" and not all(isinstance(v, int) for v in values)):
            return f"default and range must be {'integers' if self.kind == 'int' else 'numbers'}"
        if not self.low <= self.default <= self.high:
            return "the default lies outside the range"
        if self.log_scale and self.low <= 0:
            return "a log scale needs a positive range"
        return None

    @property
    def strongest(self) -> int | float | bool | None:
        """The value of full strength (the top of a ``stronger`` range, the bottom of a
        ``weaker`` one), or None when strength has no direction in this knob."""
        if self.direction == "none":
            return None
        end = self.high if self.direction == "stronger" else self.low
        return bool(end) if self.kind == "bool" else end

    def effect(self) -> str:
        """How raising it moves strength and how a tuner treats it, in words (help, schema)."""
        if self.direction == "none":
            moves = "not a strength dial"
        else:
            moves = f"{'on' if self.kind == 'bool' else 'higher'} is {self.direction}"
        tuned = f"searched by the tuner{' on a log scale' if self.log_scale else ''}" if self.tunable \
            else "fixed, never searched"
        return f"{moves}; {tuned}"


PARAMS: tuple[Param, ...] = (
    Param("max_depth", "search", "int", 8, 1, 64,
          "nominal depth limit of iterative deepening, in plies",
          direction="stronger", log_scale=False, tunable=True),
    Param("node_budget", "search", "int", 200_000, 100, 20_000_000,
          "nodes searched per move at most (the deterministic compute budget)",
          direction="stronger", log_scale=True, tunable=True),
    Param("quiescence", "search", "bool", True, 0, 1,
          "extend every leaf through all pending captures (capture-only search)",
          direction="stronger", log_scale=False, tunable=False),
    Param("reductions", "search", "bool", False, 0, 1,
          "late-move reductions: quiet moves late in the move order are searched a ply or two "
          "shallower first, and again at full depth only if they look better than the best so far",
          direction="stronger", log_scale=False, tunable=False),
    Param("partial_iterations", "search", "bool", False, 0, 1,
          "when the node budget ends an iteration early, play a root move it already found better "
          "than the last finished iteration's best",
          direction="stronger", log_scale=False, tunable=False),
    Param("tt_keep", "search", "bool", False, 0, 1,
          "keep the transposition table across a game's moves: a search also uses what this "
          "player's earlier searches in the same game stored (a new game starts empty)",
          direction="stronger", log_scale=False, tunable=False),
    Param("tt_log2", "search", "int", 18, 10, 24,
          "transposition table size as a power of two entries (memory bound: 32 bytes each)",
          direction="none", log_scale=False, tunable=False),
    Param("noise_sigma", "weakening", "float", 0.0, 0.0, 2000.0,
          "standard deviation of Gaussian noise added to every root move's score",
          direction="weaker", log_scale=False, tunable=True),
    Param("random_move_prob", "weakening", "float", 0.0, 0.0, 1.0,
          "probability of playing a uniformly random legal move instead of searching",
          direction="weaker", log_scale=False, tunable=True),
    Param("top_k", "weakening", "int", 0, 0, 64,
          "choose only among the k best root moves (0: off, the same choice as 1)",
          direction="weaker", log_scale=False, tunable=True),
    Param("temperature", "weakening", "float", 0.0, 0.0, 1000.0,
          "softmax temperature over root scores for the choice (0: always the best)",
          direction="weaker", log_scale=False, tunable=True),
)

PARAM_INDEX: dict[str, Param] = {p.name: p for p in PARAMS}
GROUPS: tuple[Group, ...] = ("search", "weakening")


def params_of(group: Group) -> tuple[Param, ...]:
    """The knobs of one group (a profile level's ``search`` or ``weakening`` object), in order."""
    return tuple(p for p in PARAMS if p.group == group)


def default_knobs() -> dict[str, int | float | bool]:
    """Every knob at its declared default."""
    return {p.name: p.default for p in PARAMS}


def tunable_knobs() -> tuple[str, ...]:
    """Names of the knobs a tuner may search (the others can only be fixed)."""
    return tuple(p.name for p in PARAMS if p.tunable)


def describe_knobs() -> str:
    """Every knob, grouped as in a profile level, two lines each: for ``--help`` texts."""
    width = max(len(p.name) for p in PARAMS)
    lines: list[str] = []
    for group in GROUPS:
        lines.append(f"{group} knobs (levels.<level>.{group} in a profile):")
        for p in params_of(group):
            span = "true/false" if p.kind == "bool" else f"{p.kind} {_fmt(p.low)}..{_fmt(p.high)}"
            default = str(p.default).lower() if p.kind == "bool" else _fmt(p.default)
            lines.append(f"  {p.name:<{width}}  {span}, default {default} ({p.effect()})")
            lines.append(f"  {'':<{width}}  {p.meaning}")
    return "\n".join(lines)


def _fmt(number: float) -> str:
    return f"{int(number):_}" if float(number).is_integer() else repr(float(number))
