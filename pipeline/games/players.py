"""Player specs: who plays a game, as a short string, and the players they build.

Spec grammar (also what configs and ``--a``/``--b`` accept):

- ``random``           uniform choice over ``board.legal_moves`` (a real, if weak, player);
- ``LEVEL``            a level of the engine's shipped profile for the game's variant (``easy``, ``hard``);
- ``FILE.json:LEVEL``  a level of a profile file (for candidates during tuning);
- ``inline:NAME:JSON``  a level given in the spec itself: JSON is a ``LevelProfile.to_json()``
  object (``{"weights", "search", "weakening"}``), built with ``LevelProfile(variant, NAME, ...)``
  which validates it strictly; the player's id is NAME (tuning candidates, ladder anchors).

The match runner only needs :class:`Player`: ``choose_move(board) -> ChosenMove``. Engine
players are built through :mod:`engine.player`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from engine import player as engine_player
from engine import profile as engine_profile
from engine.board import Board
from engine.games import GamePlayer
from engine.move import Move
from engine.params import PARAMS
from engine.variants import get_variant


class PlayerSpecError(ValueError):
    """A player spec that cannot be parsed or built."""


@dataclass(frozen=True)
class ChosenMove:
    """A player's decision plus what it cost (for the game record)."""

    move: Move
    score: float | None = None
    depth: int = 0
    nodes: int = 0


class Player(Protocol):
    """What the match runner plays with."""

    player_id: str
    profile_hash: str

    def choose_move(self, board: Board) -> ChosenMove: ...


_EXPECTED = "expected 'random', LEVEL, FILE.json:LEVEL or inline:NAME:JSON"
_LEVEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed spec: ``kind`` is 'random', 'level', 'file' or 'inline' (``level``: NAME, ``body``: JSON)."""

    kind: str
    level: str | None = None
    path: str | None = None
    body: str | None = None

    @property
    def player_id(self) -> str:
        """Canonical spec text, used as the player's id in game records."""
        if self.kind == "random":
            return "random"
        if self.kind in ("level", "inline"):
            return str(self.level)
        return f"{self.path}:{self.level}"


def parse_player_spec(text: str) -> PlayerSpec:
    """Parse ``random`` | ``LEVEL`` | ``FILE.json:LEVEL`` | ``inline:NAME:JSON``; errors quote the input."""
    if not isinstance(text, str) or not text.strip():
        raise PlayerSpecError(f"invalid player spec {text!r}: {_EXPECTED}")
    spec = text.strip()
    if spec.lower() == "random":
        return PlayerSpec("random")
    if spec.startswith(INLINE_PREFIX):
        return _parse_inline(text, spec)
    if ":" in spec:
        path, _, level = spec.rpartition(":")
        if not path.endswith(".json") or not _LEVEL_RE.fullmatch(level):
            raise PlayerSpecError(f"invalid player spec {text!r}: expected FILE.json:LEVEL")
        return PlayerSpec("file", level=level, path=path)
    if _LEVEL_RE.fullmatch(spec) and not spec.endswith(".json"):
        return PlayerSpec("level", level=spec)
    raise PlayerSpecError(f"invalid player spec {text!r}: {_EXPECTED}")


INLINE_PREFIX = "inline:"
_INLINE_KEYS = ("weights", "search", "weakening")


def _parse_inline(text: str, spec: str) -> PlayerSpec:
    """``inline:NAME:JSON``: decode the JSON and check its shape (values are checked at build)."""
    name, sep, body = spec[len(INLINE_PREFIX):].partition(":")
    if not sep or not _LEVEL_RE.fullmatch(name):
        raise PlayerSpecError(f"invalid player spec {_short(text)!r}: expected inline:NAME:JSON")
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as err:
        raise PlayerSpecError(f"invalid player spec {_short(text)!r}: bad JSON: {err.msg}") from None
    except (RecursionError, ValueError) as err:  # too deep, or a number beyond the digit limit
        raise PlayerSpecError(f"invalid player spec {_short(text)!r}: unreadable JSON "
                              f"({type(err).__name__})") from None
    if not isinstance(obj, dict) or sorted(obj) != sorted(_INLINE_KEYS) or not all(
        isinstance(obj[k], dict) for k in _INLINE_KEYS
    ):
        raise PlayerSpecError(
            f"invalid player spec {_short(text)!r}: JSON must be an object with exactly the objects "
            f"{', '.join(_INLINE_KEYS)}"
        )
    return PlayerSpec("inline", level=name, body=body)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def inline_spec(name: str, level: Any) -> str:
    """The ``inline:NAME:JSON`` spec of a :class:`engine.profile.LevelProfile` (canonical JSON)."""
    body = json.dumps(level.to_json(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return f"{INLINE_PREFIX}{name}:{body}"


RANDOM_PROFILE_HASH = hashlib.sha256(b"random-player-v2").hexdigest()[:16]


class RandomPlayer:
    """Plays a uniformly random legal move (the engine's counter-based stream); deterministic per seed."""

    profile_hash = RANDOM_PROFILE_HASH

    def __init__(self, variant: str, seed: int, player_id: str = "random") -> None:
        self.player_id = player_id
        self._mover = engine_player.RandomMover(get_variant(variant), seed)

    def choose_move(self, board: Board) -> ChosenMove:
        if not board.legal_moves:
            raise ValueError(f"no legal move to choose in {board.fen()!r}")
        return ChosenMove(move=self._mover.choose_move(board).move)


class EngineLevelPlayer:
    """Adapter over ``engine.player.Player``: its SearchResult becomes a ChosenMove."""

    def __init__(self, engine_player: Any, player_id: str, profile_hash: str) -> None:
        self._player = engine_player
        self.player_id = player_id
        self.profile_hash = profile_hash

    def choose_move(self, board: Board) -> ChosenMove:
        result = self._player.choose_move(board)
        score = getattr(result, "score", None)
        return ChosenMove(
            move=result.move,
            score=None if score is None else float(score),
            depth=int(getattr(result, "depth", 0) or 0),
            nodes=int(getattr(result, "nodes", 0) or 0),
        )


def make_player(spec: str | PlayerSpec, variant: str, seed: int) -> Player:
    """Build the player a spec names, for ``variant``, seeded with ``seed``."""
    parsed = spec if isinstance(spec, PlayerSpec) else parse_player_spec(spec)
    if parsed.kind == "random":
        return RandomPlayer(variant, seed)
    level = _level_of(parsed, variant)
    return EngineLevelPlayer(engine_player.Player(level, seed=seed), parsed.player_id, _profile_hash(level))


@dataclass(frozen=True)
class ResolvedPlayer:
    """A spec resolved once per process: its id, profile hash and the game runner's player."""

    spec: PlayerSpec
    player_id: str
    profile_hash: str
    game_player: GamePlayer


@lru_cache(maxsize=256)
def resolve_player(spec: str, variant: str) -> ResolvedPlayer:
    """Parse and build the player a spec names for ``variant`` (cached)."""
    parsed = parse_player_spec(spec)
    if parsed.kind == "random":
        return ResolvedPlayer(parsed, parsed.player_id, RANDOM_PROFILE_HASH, GamePlayer.uniform_random())
    level = _level_of(parsed, variant)
    return ResolvedPlayer(parsed, parsed.player_id, _profile_hash(level), GamePlayer.from_level(level))


@dataclass(frozen=True)
class PlayerSource:
    """Where a spec's level comes from, so a verb can say what it plays (file, hashes)."""

    spec: str
    profile_file: str | None  # the profile file read; None for random and inline players
    profile_file_hash: str | None  # engine Profile.profile_hash of that file
    profile_hash: str  # the level's own hash, as the game records carry it

    def describe(self) -> str:
        """One line: which file and level (or that the player needs none)."""
        if self.profile_file is None:
            return f"{self.spec} (no profile file, level hash {self.profile_hash})"
        return (f"{self.spec} = profile {self.profile_file} (hash {self.profile_file_hash}), "
                f"level hash {self.profile_hash}")

    def to_json(self) -> dict[str, str | None]:
        """The same facts as ``--json`` output carries them."""
        return {"spec": self.spec, "profile_file": self.profile_file,
                "profile_file_hash": self.profile_file_hash, "profile_hash": self.profile_hash}


def player_source(spec: str, variant: str) -> PlayerSource:
    """The profile file (absolute for the shipped one) and hashes behind a player spec."""
    resolved = resolve_player(spec, variant)
    parsed = resolved.spec
    if parsed.kind in ("random", "inline"):
        return PlayerSource(resolved.player_id, None, None, resolved.profile_hash)
    path = str(engine_profile.shipped_profile_path(variant)) if parsed.path is None else parsed.path
    whole = engine_profile.load_profile(path, variant)
    return PlayerSource(resolved.player_id, path, whole.profile_hash(), resolved.profile_hash)


def _level_of(spec: PlayerSpec, variant: str) -> Any:
    """The engine level a non-random spec names (shipped profile, file or inline)."""
    if spec.kind == "inline":
        return _inline_level(variant, str(spec.level), str(spec.body))
    return _load_level(variant, str(spec.level), spec.path)


@lru_cache(maxsize=64)
def _load_level(variant: str, level: str, path: str | None) -> Any:
    """One level of the shipped profile (``path`` None) or of a profile file; cached per process."""

    try:
        return engine_profile.load_level(variant, level, path=path)
    except (OSError, ValueError) as err:
        where = "the shipped profile" if path is None else path
        raise PlayerSpecError(f"player spec {level if path is None else f'{path}:{level}'!r} "
                              f"({where}, {variant}): {err}") from None


@lru_cache(maxsize=256)
def _inline_level(variant: str, name: str, body: str) -> Any:
    """``LevelProfile(variant, NAME, weights, **knobs)`` from an inline spec; strict, cached."""

    obj = json.loads(body)
    for group in ("search", "weakening"):
        declared = sorted(p.name for p in PARAMS if p.group == group)
        if sorted(obj[group]) != declared:
            raise PlayerSpecError(f"player spec inline:{name} ({variant}): {group} must have exactly the "
                                  f"keys {', '.join(declared)}, got {', '.join(sorted(obj[group]))}")
    knobs = {**obj["search"], **obj["weakening"]}
    try:
        return engine_profile.LevelProfile(get_variant(variant), name, obj["weights"], **knobs)
    except TypeError as err:  # an unknown or missing knob name
        raise PlayerSpecError(f"player spec inline:{name} ({variant}): {err}") from None
    except ValueError as err:
        raise PlayerSpecError(f"player spec inline:{name} ({variant}): {err}") from None


def _profile_hash(level: Any) -> str:
    """The profile level's own hash if it has one, else a hash of its repr."""
    for attr in ("profile_hash", "hash", "signature"):
        value = getattr(level, attr, None)
        if callable(value):
            value = value()
        if isinstance(value, str) and value:
            return value
    return hashlib.sha256(repr(level).encode("utf-8")).hexdigest()[:16]
