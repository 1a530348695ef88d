"""Build a tactical test set: positions where a deep search wins material a shallow one misses.

Every search here is MATERIAL-ONLY, as in :mod:`pipeline.ratings.blunders`: weights = the
variant's default ``man`` and ``king`` weights (signs kept), every other weight 0; scores are
from the side to move's point of view and running out of moves scores as the variant's win or
loss. A position qualifies when, with ``man = |man weight|``:

- the deep search (``deep_depth`` plies, capture quiescence, an exact score for every root
  move) WINS material: its best score is at least ``threshold_men * man`` above the material on
  the board in the position (or it is a forced win);
- the shallow search (``shallow_depth`` plies; capture quiescence only when
  ``shallow_quiescence``, off by default: a plain 2-ply search, as the english baseline's easy
  level searches) MISSES it: every move the shallow search rates best scores, searched deeply, at
  least ``threshold_men * man`` below the deep best.

Winning moves are those whose deep score is within ``margin_men * man`` of the best; the margin
is below the threshold, so no move the shallow search rates best is winning. In suicide the
man and king weights are negative: winning material there means shedding at least a man more
than the opponent in the line (or running out of moves, which wins).

Positions come from playouts: playout ``i`` draws an opening of the variant's deck
(``pipeline.games.openings``, part ``deck_part``) and its moves from its own stream,
``SeedSequence(seed, spawn_key=(TAG, i))``. Each ply plays a uniformly random legal move with
probability ``random_move_prob``, else a random one of the moves the shallow search rates best:
a weak player that walks into shots. The positions of a playout with a choice of at least two
moves are tested in turn until one qualifies; one position per playout keeps one tactic from
filling the set over consecutive plies, and a position already in the set is not taken twice.
The set is complete at ``count`` positions (an error if ``max_playouts`` run out first).

``found_at_depth`` of a position: the smallest depth ``d`` such that the searches of every depth
from ``d`` to ``deep_depth`` (material-only, capture quiescence) rate only winning moves best;
1 means one move plus the captures it forces already shows it (the classic 2-for-1 shot) and no
deeper search is misled. Regenerate a shipped set exactly with the command stored in
its ``source.command``, e.g.::

    python -m pipeline.calibration.tactics english --seed 1 --count 150
    python -m pipeline.calibration.tactics english --check
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.board import Board
from engine.errors import DraughtsError
from engine.features import default_weights
from engine.kernel.search import MATE_BOUND
from engine.move import Move
from engine.position import Position
from engine.search import Searcher
from engine.variants import Variant, get_variant
from pipeline.calibration.tactics_set import (
    MoveKey,
    TacticalPosition,
    TacticsError,
    TacticsRecipe,
    TacticsSet,
    dump_tactics,
    load_tactics,
    move_key,
    move_text,
    position_fen,
)
from pipeline.games.openings import Opening, load_deck
from pipeline.ratings.blunders import default_threshold, material_weights

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "tactics"
GENERATOR = "pipeline.calibration.tactics"
_TAG = 0x74616374  # "tact": this module's branch of the recipe seed's streams
_TT_LOG2 = 18


@dataclass(frozen=True)
class Analysis:
    """What the deep and shallow searches say about one position (scores in engine units).

    ``complete``: the deep search finished ``deep_depth`` plies or proved a forced result; an
    incomplete one (node budget) qualifies nothing.
    """

    deep_scores: Mapping[MoveKey, int]
    complete: bool
    static: int
    shallow_best: frozenset[MoveKey]
    best: int
    shallow_deep: int  # best deep score among the shallow search's best moves
    winning: frozenset[MoveKey]
    qualifies: bool

    @property
    def gain(self) -> int:
        return self.best - self.shallow_deep

    @property
    def forced(self) -> bool:
        """A forced result within the deep horizon decides the gain (not a material count)."""
        return self.best >= MATE_BOUND or self.shallow_deep <= -MATE_BOUND


def _raw_scores(searcher: Searcher, position: Position) -> tuple[dict[MoveKey, int], int, int]:
    """Exact score of every root move, the completed depth and the best score."""
    result = searcher.search(position, exact_root=True)
    if result.root_scores is None:
        return {}, result.depth, result.score
    scores = {(int(m.from_bit), int(m.to_bit), int(m.captured)): int(s)
              for m, s in zip(result.root_moves, result.root_scores, strict=True)}
    return scores, result.depth, result.score


def _tied_best(scores: Mapping[MoveKey, int]) -> frozenset[MoveKey]:
    top = max(scores.values())
    return frozenset(k for k, s in scores.items() if s == top)


class TacticsAnalyser:
    """The searches of one recipe (built once, reused for every position)."""

    def __init__(self, recipe: TacticsRecipe) -> None:
        self.recipe = recipe
        self.variant: Variant = get_variant(recipe.variant)
        self.man = default_threshold(self.variant)
        self.threshold = recipe.threshold_men * self.man
        self.margin = recipe.margin_men * self.man
        self._weights = material_weights(self.variant)
        defaults = default_weights(self.variant)
        self._man_weight, self._king_weight = defaults["man"], defaults["king"]
        self._deep = self._searcher(recipe.deep_depth, True)
        self._shallow = Searcher(self.variant, self._weights, recipe.shallow_depth, recipe.node_budget,
                                 recipe.shallow_quiescence, 16)
        self._by_depth: dict[int, Searcher] = {recipe.deep_depth: self._deep}

    def _searcher(self, depth: int, quiescence: bool) -> Searcher:
        return Searcher(self.variant, self._weights, depth, self.recipe.node_budget, quiescence, _TT_LOG2)

    def static(self, position: Position) -> int:
        """The material on the board for the side to move, in the searches' units."""
        own, opp = position.pieces(position.side_to_move), position.pieces(position.side_to_move.opponent)
        kings = position.kings
        men = (own & ~kings).bit_count() - (opp & ~kings).bit_count()
        crowned = (own & kings).bit_count() - (opp & kings).bit_count()
        return round(self._man_weight * men + self._king_weight * crowned)

    def shallow_scores(self, position: Position) -> dict[MoveKey, int]:
        """The shallow search's exact score of every legal move."""
        return _raw_scores(self._shallow, position)[0]

    def analyse(self, position: Position, shallow: Mapping[MoveKey, int] | None = None) -> Analysis:
        """Deep and shallow scores of ``position`` and whether it qualifies (module docstring)."""
        shallow_scores = self.shallow_scores(position) if shallow is None else shallow
        deep, depth, best = _raw_scores(self._deep, position)
        if not deep or not shallow_scores:
            raise TacticsError(f"no legal move in position {position!r}")
        complete = depth == self.recipe.deep_depth or abs(best) >= MATE_BOUND
        best = max(deep.values())
        shallow_best = _tied_best(shallow_scores)
        shallow_deep = max(deep[k] for k in shallow_best)
        static = self.static(position)
        winning = frozenset(k for k, s in deep.items() if s >= best - self.margin)
        wins_material = best >= MATE_BOUND or best - static >= self.threshold
        missed = best - shallow_deep >= self.threshold
        return Analysis(deep, complete, static, shallow_best, best, shallow_deep, winning,
                        complete and wins_material and missed)

    def found_at_depth(self, position: Position, winning: frozenset[MoveKey]) -> int:
        """The smallest depth from which every search up to the deep one (capture quiescence)
        rates only winning moves best: shallower than that, some search can pick a wrong move."""
        depth = self.recipe.deep_depth
        while depth > 1:
            if depth - 1 not in self._by_depth:
                self._by_depth[depth - 1] = self._searcher(depth - 1, True)
            scores = _raw_scores(self._by_depth[depth - 1], position)[0]
            if not _tied_best(scores) <= winning:
                break
            depth -= 1
        return depth


def _deck(recipe: TacticsRecipe) -> list[Opening]:
    deck = load_deck(recipe.variant, part=recipe.deck_part)
    if not deck:
        raise TacticsError(f"the {recipe.variant} opening deck part {recipe.deck_part!r} is empty")
    return deck


def deck_description(recipe: TacticsRecipe, deck: list[Opening]) -> str:
    """Which deck the playouts start from, with a hash of its FENs (a changed deck shows)."""
    digest = hashlib.sha256("\n".join(o.fen for o in deck).encode("utf-8")).hexdigest()[:16]
    return (f"pipeline/data/openings/{recipe.variant}.json, part {recipe.deck_part}, {len(deck)} openings, "
            f"fen sha256 {digest}")


def recipe_command(recipe: TacticsRecipe) -> str:
    """The command line that rebuilds a set from ``recipe`` (every field spelled out)."""
    parts = [f"python -m {GENERATOR}", recipe.variant]
    for f in dataclasses.fields(recipe):
        if f.name == "variant":
            continue
        value = getattr(recipe, f.name)
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else f"--no-{f.name.replace('_', '-')}")
        else:
            parts.append(f"{flag} {value}")
    return " ".join(parts)


def _choose(board: Board, shallow: Mapping[MoveKey, int], rng: np.random.Generator,
            random_move_prob: float) -> Move:
    """The playout's move: random with ``random_move_prob``, else a random shallow-best move."""
    moves = board.legal_moves
    if rng.random() < random_move_prob:
        return moves[int(rng.integers(len(moves)))]
    best = _tied_best(shallow)
    candidates = [m for m in moves if move_key(m) in best]
    return candidates[int(rng.integers(len(candidates)))]


def build_tactics(recipe: TacticsRecipe) -> TacticsSet:
    """The set ``recipe`` describes (module docstring); everything flows from its seed."""
    variant = get_variant(recipe.variant)
    deck = _deck(recipe)
    analyser = TacticsAnalyser(recipe)
    found: list[TacticalPosition] = []
    tested: set[str] = set()  # FENs analysed: analysing again would give the same answer
    incomplete = 0
    playouts = 0
    while len(found) < recipe.count:
        if playouts >= recipe.max_playouts:
            raise TacticsError(f"only {len(found)} of {recipe.count} {recipe.variant} positions after "
                               f"{recipe.max_playouts} playouts; raise max_playouts")
        rng = np.random.default_rng(np.random.SeedSequence(recipe.seed, spawn_key=(_TAG, playouts)))
        opening = deck[int(rng.integers(len(deck)))]
        board = Board(variant, opening.fen)
        for ply in range(recipe.max_plies + 1):
            if board.outcome() is not None:
                break
            position = board.position
            shallow = analyser.shallow_scores(position)
            fen = position_fen(board)
            if fen not in tested and len(shallow) >= 2:
                tested.add(fen)
                analysis = analyser.analyse(position, shallow)
                incomplete += not analysis.complete
                if analysis.qualifies:
                    found.append(_record(board, analyser, analysis, len(found) + 1, opening, playouts, ply))
                    break
            if ply < recipe.max_plies:
                board.push(_choose(board, shallow, rng, recipe.random_move_prob))
        playouts += 1
    source = {"generator": GENERATOR, "command": recipe_command(recipe),
              "deck": deck_description(recipe, deck)}
    build = {"playouts": playouts, "positions_tested": len(tested), "deep_incomplete": incomplete}
    return TacticsSet(variant.name, recipe, source, build, tuple(found))


def _record(board: Board, analyser: TacticsAnalyser, analysis: Analysis, number: int, opening: Opening,
            playout: int, ply: int) -> TacticalPosition:
    moves = board.legal_moves
    return TacticalPosition(
        variant=board.variant.name,
        id=f"{number:03d}",
        fen=position_fen(board),
        winning=tuple(move_text(board, m) for m in moves if move_key(m) in analysis.winning),
        shallow=tuple(move_text(board, m) for m in moves if move_key(m) in analysis.shallow_best),
        gain_men=None if analysis.forced else round(analysis.gain / analyser.man, 6),
        found_at_depth=analyser.found_at_depth(board.position, analysis.winning),
        opening=opening.id,
        playout=playout,
        ply=ply,
    )


def write_tactics(tactics: TacticsSet, folder: Path = DATA_DIR) -> Path:
    """Write ``<folder>/<variant>.json`` atomically (a temporary file renamed over it)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{tactics.variant}.json"
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{tactics.variant}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(dump_tactics(tactics))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m {GENERATOR}", description=__doc__.splitlines()[0])
    parser.add_argument("variant")
    for f in dataclasses.fields(TacticsRecipe):
        if f.name == "variant":
            continue
        flag = "--" + f.name.replace("_", "-")
        default = None if f.default is dataclasses.MISSING else f.default  # seed, count: no default
        hint = f"recipe field {f.name} (default: {'none' if default is None else default})"
        if f.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=hint)
        else:
            kind = {"int": int, "float": float, "str": str}[str(f.type)]
            parser.add_argument(flag, type=kind, default=default, help=hint)
    parser.add_argument("--output", type=Path, default=DATA_DIR, help="folder of <variant>.json")
    parser.add_argument("--check", action="store_true",
                        help="rebuild <output>/<variant>.json from its own recipe and compare; write nothing")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.perf_counter()
    try:
        variant = get_variant(args.variant).name
        if args.check:
            path = args.output / f"{variant}.json"
            stored = load_tactics(variant, path)
            same = dump_tactics(build_tactics(stored.recipe)) == path.read_text(encoding="utf-8")
            print(f"{path}: {'rebuilt identically' if same else 'DIFFERS from its rebuild'} "
                  f"({time.perf_counter() - started:.1f} s)")
            return 0 if same else 1
        names = [f.name for f in dataclasses.fields(TacticsRecipe) if f.name != "variant"]
        values = {name: getattr(args, name) for name in names}
        missing = [name for name in ("seed", "count") if values[name] is None]
        if missing:
            raise TacticsError(f"--{missing[0]} is needed to build a set")
        recipe = TacticsRecipe(variant=variant, **values)
        tactics = build_tactics(recipe)
        path = write_tactics(tactics, args.output)
    except (TacticsError, DraughtsError, OSError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    print(f"wrote {path}: {len(tactics.positions)} positions from {tactics.build['playouts']} playouts "
          f"({tactics.build['positions_tested']} positions tested) in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
