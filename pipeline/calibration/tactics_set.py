"""Tactical test sets as data: the recipe, the positions, and a strict loader.

A set holds positions of one variant where a deep material-only search wins material that a
shallow one misses (the definition: :mod:`pipeline.calibration.tactics`, which builds the sets).
One JSON file per variant under ``pipeline/data/tactics/`` (package data):

- ``schema_version``, ``variant``;
- ``recipe``: every field of :class:`TacticsRecipe`, so the set can be rebuilt exactly;
- ``source``: ``generator``, ``command`` (the command that rebuilds the file), ``deck`` (which
  opening deck the playouts start from);
- ``build``: ``playouts``, ``positions_tested``, ``deep_incomplete`` (counts of the build);
- ``positions``: ``{id, fen, winning, shallow, gain_men, found_at_depth, opening, playout, ply}``
  (see :class:`TacticalPosition`).

:func:`load_tactics` validates the whole file (exact keys, types, ranges, every FEN and move
replayed on the engine's Board) and raises :class:`TacticsError` naming the file and the field,
in one line. The file is read as JSON only: nothing in it is executed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, NoReturn

from engine.board import Board
from engine.errors import DraughtsError, quote
from engine.move import Move
from engine.profile import no_duplicate_keys
from engine.variants import VARIANTS, Variant, get_variant
from pipeline.games.openings import DECK_PARTS

TACTICS_SCHEMA_VERSION = 1
MAX_TACTICS_BYTES = 16 << 20
MAX_COUNT = 10_000
MAX_DEPTH = 64  # the search's depth limit (engine.search.Searcher)
_TOP_KEYS = ("schema_version", "variant", "recipe", "source", "build", "positions")
_SOURCE_KEYS = ("generator", "command", "deck")
_BUILD_KEYS = ("playouts", "positions_tested", "deep_incomplete")
_POSITION_KEYS = ("id", "fen", "winning", "shallow", "gain_men", "found_at_depth", "opening", "playout",
                  "ply")

MoveKey = tuple[int, int, int]  # (from bit, to bit, captured bitboard): what decides a move's result


class TacticsError(ValueError):
    """A tactics recipe or set file that fails validation."""


def _fail(where: str, path: str, problem: str, value: object = None, show: bool = True) -> NoReturn:
    got = f" (got {quote(value)})" if show else ""
    raise TacticsError(f"{where}: {path}: {problem}{got}")


@dataclass(frozen=True)
class TacticsRecipe:
    """How a set is made: everything needed to make it again (see :mod:`pipeline.calibration.tactics`).

    Depths are in plies. ``threshold_men`` (material a position must win, in men of the
    variant's default ``man`` weight) and ``margin_men`` (how far below the best a winning move
    may score) need ``0 <= margin_men < threshold_men``. ``deck_part`` names the part of the
    variant's opening deck the playouts start from; ``random_move_prob``, ``max_plies`` and
    ``max_playouts`` shape the playouts; ``node_budget`` caps each deep search (a position
    whose deep search does not complete is skipped and counted).
    """

    variant: str
    seed: int
    count: int
    deep_depth: int = 10
    shallow_depth: int = 2
    shallow_quiescence: bool = False
    threshold_men: float = 1.0
    margin_men: float = 0.5
    deck_part: str = "all"
    random_move_prob: float = 0.3
    max_plies: int = 60
    max_playouts: int = 2000
    node_budget: int = 20_000_000

    def __post_init__(self) -> None:
        check_recipe(dataclasses.asdict(self), "tactics recipe")

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: (low, high) of each numeric recipe field; the types come from the dataclass annotations.
_RECIPE_RANGES: Mapping[str, tuple[float, float]] = {
    "seed": (0, 2**63 - 1),
    "count": (1, MAX_COUNT),
    "deep_depth": (2, MAX_DEPTH),
    "shallow_depth": (1, MAX_DEPTH - 1),
    "threshold_men": (0.0, 100.0),
    "margin_men": (0.0, 100.0),
    "random_move_prob": (0.0, 1.0),
    "max_plies": (0, 1000),
    "max_playouts": (1, 10_000_000),
    "node_budget": (100, 1_000_000_000),
}
_KINDS = {"str": str, "int": int, "float": float, "bool": bool}


def _typed(where: str, path: str, value: object, kind: str) -> None:
    """``value`` has the annotated ``kind``; a bool is never a number, an int is a float."""
    if kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "float":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if ok and not math.isfinite(value):  # type: ignore[arg-type]
            _fail(where, path, "expected a finite number", value)
    else:
        ok = isinstance(value, _KINDS[kind]) and not isinstance(value, bool)
    if not ok:
        _fail(where, path, f"expected {kind}", value)


def check_recipe(values: Mapping[str, Any], where: str) -> None:
    """Types and ranges of every recipe field, then the rules between fields (TacticsError if not)."""
    for name, kind in _recipe_kinds().items():
        value = values[name]
        path = f"recipe.{name}"
        _typed(where, path, value, kind)
        if name in _RECIPE_RANGES:
            low, high = _RECIPE_RANGES[name]
            if not low <= value <= high:
                _fail(where, path, f"outside [{low}, {high}]", value)
    names = [v.name for v in VARIANTS]
    if values["variant"] not in names:
        _fail(where, "recipe.variant", f"expected one of {', '.join(names)}", values["variant"])
    if values["shallow_depth"] >= values["deep_depth"]:
        _fail(where, "recipe.shallow_depth", f"must be below deep_depth {values['deep_depth']}",
              values["shallow_depth"])
    if not 0 < values["threshold_men"]:
        _fail(where, "recipe.threshold_men", "must be positive", values["threshold_men"])
    if not values["margin_men"] < values["threshold_men"]:
        _fail(where, "recipe.margin_men", f"must be below threshold_men {values['threshold_men']}",
              values["margin_men"])
    if values["deck_part"] not in DECK_PARTS:
        _fail(where, "recipe.deck_part", f"expected one of {', '.join(DECK_PARTS)}", values["deck_part"])


def _recipe_kinds() -> dict[str, str]:
    """Each recipe field's type name (``str``, ``int``, ``float``, ``bool``), from the annotations."""
    return {f.name: str(f.type) for f in dataclasses.fields(TacticsRecipe)}


@dataclass(frozen=True)
class TacticalPosition:
    """One position of a set, side to move to play.

    ``winning``: the moves whose deep score is within the margin of the best (full-path PDN);
    ``shallow``: the moves the shallow search rates best (none of them is winning);
    ``gain_men``: deep score of the best move minus that of the best shallow move, in men, or
    None when a forced result decides it (the deep search sees a win, or a loss after the
    shallow move, within its horizon); ``found_at_depth``: the smallest depth from which every
    search up to the deep one (capture quiescence) rates only winning moves best; ``opening``,
    ``playout``, ``ply``: where the build met the position (deck opening id, playout number,
    plies after the opening).
    """

    variant: str
    id: str
    fen: str
    winning: tuple[str, ...]
    shallow: tuple[str, ...]
    gain_men: float | None
    found_at_depth: int
    opening: str
    playout: int
    ply: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "fen": self.fen, "winning": list(self.winning), "shallow": list(self.shallow),
                "gain_men": self.gain_men, "found_at_depth": self.found_at_depth, "opening": self.opening,
                "playout": self.playout, "ply": self.ply}


@dataclass(frozen=True)
class TacticsSet:
    """A whole set: its recipe, where it came from, build counts and positions (file order)."""

    variant: str
    recipe: TacticsRecipe
    source: Mapping[str, str]
    build: Mapping[str, int]
    positions: tuple[TacticalPosition, ...]


def move_key(move: Move) -> MoveKey:
    """Start, end and the pieces taken: moves with equal keys have equal results."""
    return (move.from_bit, move.to_bit, move.captured)


def move_text(board: Board, move: Move) -> str:
    """The full-path PDN text of ``move`` a set file holds (algebraic where the variant writes it)."""
    return board.move_to_text(move, board.variant.algebraic_notation)


def position_fen(board: Board) -> str:
    """The FEN a set file holds for ``board`` (canonical; algebraic where the variant writes it)."""
    return board.fen(board.variant.algebraic_notation)


def tactics_document(tactics: TacticsSet) -> dict[str, Any]:
    """The JSON document of a set (what :func:`validate_tactics` reads back)."""
    return {
        "schema_version": TACTICS_SCHEMA_VERSION,
        "variant": tactics.variant,
        "recipe": tactics.recipe.to_json(),
        "source": {k: tactics.source[k] for k in _SOURCE_KEYS},
        "build": {k: tactics.build[k] for k in _BUILD_KEYS},
        "positions": [p.to_json() for p in tactics.positions],
    }


def dump_tactics(tactics: TacticsSet) -> str:
    """File text: the header indented, one position per line, a trailing newline."""
    document = tactics_document(tactics)
    head = json.dumps({k: v for k, v in document.items() if k != "positions"}, indent=2,
                      allow_nan=False)[:-2]
    rows = ",\n".join(f"    {json.dumps(p, ensure_ascii=False, allow_nan=False)}"
                      for p in document["positions"])
    return f'{head},\n  "positions": [\n{rows}\n  ]\n}}\n'


# -- validation ---------------------------------------------------------------------------------
def _obj(where: str, path: str, value: object, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(where, path, "expected an object", value)
    unknown = [k for k in value if k not in keys]
    if unknown:
        _fail(where, f"{path}.{unknown[0]}" if path != "<top level>" else str(unknown[0]),
              f"unknown key; expected only {', '.join(keys)}", value[unknown[0]])
    missing = [k for k in keys if k not in value]
    if missing:
        _fail(where, path, f"missing key {missing[0]!r}", show=False)
    return value


def _int(where: str, path: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, path, "expected an integer", value)
    if not low <= value <= high:
        _fail(where, path, f"outside [{low}, {high}]", value)
    return value


def _text(where: str, path: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        _fail(where, path, "expected a non-empty string", value)
    return value


def _recipe(where: str, value: object, variant: str) -> TacticsRecipe:
    kinds = _recipe_kinds()
    obj = _obj(where, "recipe", value, tuple(kinds))
    check_recipe(obj, where)
    if obj["variant"] != variant:
        _fail(where, "recipe.variant", f"expected {variant!r}", obj["variant"])
    values: dict[str, Any] = {name: float(obj[name]) if kind == "float" else obj[name]
                              for name, kind in kinds.items()}
    return TacticsRecipe(**values)


def _moves(where: str, path: str, value: object, board: Board) -> tuple[tuple[str, ...], set[MoveKey]]:
    """A non-empty list of distinct legal moves of ``board``, each written as the file writes it."""
    if not isinstance(value, list) or not value:
        _fail(where, path, "expected a non-empty list of moves", value)
    texts: list[str] = []
    keys: set[MoveKey] = set()
    for j, text in enumerate(value):
        here = f"{path}[{j}]"
        if not isinstance(text, str):
            _fail(where, here, "expected move text", text)
        try:
            move = board.parse_move(text)
        except DraughtsError as err:
            _fail(where, here, f"not a legal move of the position: {err}", show=False)
        canonical = move_text(board, move)
        if canonical != text:
            _fail(where, here, f"write the move's full path {canonical!r}", text)
        if text in texts:
            _fail(where, here, "listed twice", text)
        texts.append(text)
        keys.add(move_key(move))
    return tuple(texts), keys


def _position(where: str, n: int, value: object, recipe: TacticsRecipe, rules: Variant) -> TacticalPosition:
    path = f"positions[{n}]"
    obj = _obj(where, path, value, _POSITION_KEYS)
    ident = _text(where, f"{path}.id", obj["id"])
    fen = _text(where, f"{path}.fen", obj["fen"])
    try:
        board = Board(rules, fen)
    except DraughtsError as err:
        _fail(where, f"{path}.fen", str(err), show=False)
    if position_fen(board) != fen:
        _fail(where, f"{path}.fen", f"not canonical; write {position_fen(board)!r}", fen)
    if board.outcome() is not None or len({move_key(m) for m in board.legal_moves}) < 2:
        _fail(where, f"{path}.fen", "the side to move needs a choice of at least two moves", fen)
    winning, winning_keys = _moves(where, f"{path}.winning", obj["winning"], board)
    shallow, shallow_keys = _moves(where, f"{path}.shallow", obj["shallow"], board)
    if winning_keys & shallow_keys:
        _fail(where, f"{path}.shallow", "a move the shallow search rates best is also winning",
              obj["shallow"])
    gain = obj["gain_men"]
    if gain is not None:
        _typed(where, f"{path}.gain_men", gain, "float")
        if gain < recipe.threshold_men:
            _fail(where, f"{path}.gain_men", f"below the recipe's threshold_men {recipe.threshold_men}", gain)
        gain = float(gain)
    return TacticalPosition(
        variant=rules.name, id=ident, fen=fen, winning=winning, shallow=shallow, gain_men=gain,
        found_at_depth=_int(where, f"{path}.found_at_depth", obj["found_at_depth"], 1, recipe.deep_depth),
        opening=_text(where, f"{path}.opening", obj["opening"]),
        playout=_int(where, f"{path}.playout", obj["playout"], 0, recipe.max_playouts - 1),
        ply=_int(where, f"{path}.ply", obj["ply"], 0, recipe.max_plies),
    )


def validate_tactics(data: object, variant: str | Variant, source: str = "<document>") -> TacticsSet:
    """Check a decoded set document strictly and return the set (TacticsError naming the field)."""
    where = f"tactics set {source}"
    top = _obj(where, "<top level>", data, _TOP_KEYS)
    version = top["schema_version"]
    if isinstance(version, bool) or version != TACTICS_SCHEMA_VERSION:
        _fail(where, "schema_version", f"unsupported; this reader reads {TACTICS_SCHEMA_VERSION}", version)
    try:
        rules = get_variant(variant)
    except DraughtsError as err:
        raise TacticsError(f"{where}: {err}") from None
    if top["variant"] != rules.name:
        _fail(where, "variant", f"expected {rules.name!r}", top["variant"])
    recipe = _recipe(where, top["recipe"], rules.name)
    src = _obj(where, "source", top["source"], _SOURCE_KEYS)
    for key in _SOURCE_KEYS:
        _text(where, f"source.{key}", src[key])
    build = _obj(where, "build", top["build"], _BUILD_KEYS)
    counts = {key: _int(where, f"build.{key}", build[key], 0, 2**63 - 1) for key in _BUILD_KEYS}
    entries = top["positions"]
    if not isinstance(entries, list):
        _fail(where, "positions", "expected a list", entries)
    if len(entries) != recipe.count:
        _fail(where, "positions", f"expected the recipe's count {recipe.count} positions", len(entries))
    positions: list[TacticalPosition] = []
    ids: set[str] = set()
    fens: set[str] = set()
    for n, entry in enumerate(entries):
        position = _position(where, n, entry, recipe, rules)
        if position.id in ids:
            _fail(where, f"positions[{n}].id", "used twice", position.id)
        if position.fen in fens:
            _fail(where, f"positions[{n}].fen", "the position is already in the set", position.fen)
        ids.add(position.id)
        fens.add(position.fen)
        positions.append(position)
    return TacticsSet(rules.name, recipe, dict(src), counts, tuple(positions))


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number a set may hold")


def parse_tactics_text(text: bytes | str, variant: str | Variant, source: str = "<text>") -> TacticsSet:
    """Decode JSON strictly (UTF-8, no duplicate keys, no NaN), then :func:`validate_tactics` it."""
    where = f"tactics set {source}"
    if len(text) > MAX_TACTICS_BYTES:
        _fail(where, "<top level>", f"larger than {MAX_TACTICS_BYTES} bytes", show=False)
    try:
        decoded = text.decode("utf-8") if isinstance(text, bytes) else text
        data = json.loads(decoded, object_pairs_hook=no_duplicate_keys, parse_constant=_no_constant)
    except UnicodeDecodeError as err:
        _fail(where, "<top level>", f"not UTF-8 text ({err.reason} at byte {err.start})", show=False)
    except json.JSONDecodeError as err:
        _fail(where, "<top level>", f"invalid JSON: {err.msg} at line {err.lineno} column {err.colno}",
              show=False)
    except ValueError as err:  # duplicate keys, NaN/Infinity, over-long integer literals
        _fail(where, "<top level>", f"invalid JSON: {err}", show=False)
    except RecursionError:
        _fail(where, "<top level>", "invalid JSON: nested too deeply", show=False)
    return validate_tactics(data, variant, source)


def shipped_tactics_path(variant: str | Variant) -> str:
    """Where the shipped set of ``variant`` lives (package data ``pipeline/data/tactics``)."""
    name = get_variant(variant).name
    return str(resources.files("pipeline").joinpath("data", "tactics", f"{name}.json"))


def tactics_variants() -> list[str]:
    """Variants that ship a tactics set."""
    folder = resources.files("pipeline").joinpath("data", "tactics")
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))


def load_tactics(variant: str | Variant, path: str | os.PathLike[str] | None = None) -> TacticsSet:
    """The validated set of ``variant``: the shipped one, or the file at ``path``."""
    try:
        rules = get_variant(variant)
    except DraughtsError as err:
        raise TacticsError(f"tactics set: {err}") from None
    target = shipped_tactics_path(rules) if path is None else os.fspath(path)
    try:
        with open(target, "rb") as handle:
            data = handle.read(MAX_TACTICS_BYTES + 1)
    except (OSError, ValueError) as err:  # ValueError: a NUL byte in the path
        have = ", ".join(tactics_variants()) or "none"
        hint = f" (shipped sets: {have})" if path is None else ""
        raise TacticsError(f"cannot read tactics set {target!r}: "
                           f"{getattr(err, 'strerror', None) or err}{hint}") from None
    return parse_tactics_text(data, rules, repr(target))
