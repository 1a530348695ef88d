"""CLI verbs of the shipping engine: ``bestmove``, ``play`` and ``bench``.

Registered into :mod:`engine.cli`'s verb registry at import time; bad input of any kind
becomes a :class:`~engine.errors.DraughtsError` that ``engine.cli.main`` prints as one line
with exit status 2. Heavy imports (search kernel) stay inside the run functions.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from engine.cli import EXIT_OK, Command, add_fen_argument, add_variant_argument, register
from engine.errors import MoveError
from engine.params import describe_knobs
from engine.profile import LEVEL_NAMES, LevelProfile, load_profile, shipped_profile_path
from engine.variants import Color, Variant, get_variant

if TYPE_CHECKING:
    from engine.board import Board, Outcome
    from engine.player import ChosenMove, Player

TARGET_MOVES = 60  # the product's score: +10 for every move under this many
PIECE_POINTS = 100
MOVE_POINTS = 10


@dataclasses.dataclass(frozen=True)
class LoadedLevel:
    """A level and the profile file it came from, so every verb can say what it plays."""

    level: LevelProfile
    path: str  # the file read (absolute for the shipped profile, as given for --profile)
    profile_hash: str  # Profile.profile_hash of the whole file

    def describe(self) -> str:
        """One line a user reads before the game or move: which file, which hash, which level."""
        return f"profile {self.path} (hash {self.profile_hash}), level {self.level.level}"

    def to_json(self) -> dict[str, str]:
        """The keys ``--json`` output carries about the loaded profile."""
        return {"profile_file": self.path, "profile_file_hash": self.profile_hash,
                "profile_hash": self.level.profile_hash()}


def load_cli_level(variant: Variant, level: str, profile_path: str | None) -> LoadedLevel:
    """The level named on the command line, from ``--profile FILE`` or the shipped profile."""
    path = str(shipped_profile_path(variant)) if profile_path is None else profile_path
    profile = load_profile(path, variant)
    return LoadedLevel(profile.level(level), path, profile.profile_hash())


def _level_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--level", required=required, choices=LEVEL_NAMES,
                        help="difficulty level: evaluation weights plus the knobs listed below")
    parser.add_argument("--profile", default=None, metavar="FILE",
                        help="profile JSON file (default: the shipped profile of the variant)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the level's random choices (>= 0)")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = f"A level of a profile file sets these knobs:\n{describe_knobs()}"


# -- bestmove -----------------------------------------------------------------------------------
def _bestmove_arguments(parser: argparse.ArgumentParser) -> None:
    add_variant_argument(parser)
    add_fen_argument(parser)
    _level_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _run_bestmove(args: argparse.Namespace) -> int:
    from engine.board import Board
    from engine.player import Player

    variant = get_variant(args.variant)
    board = Board(variant, args.fen)
    loaded = load_cli_level(variant, args.level, args.profile)
    chosen = Player(loaded.level, seed=args.seed).choose_move(board)
    report: dict[str, Any] = {
        "variant": variant.name,
        "fen": board.fen(),
        "level": args.level,
        "move": chosen.move.pdn,
        "score": chosen.score,
        "depth": chosen.depth,
        "nodes": chosen.nodes,
        "seconds": round(chosen.seconds, 6),
        "pv": [m.pdn for m in chosen.pv],
        "random": chosen.random,
        "seed": args.seed,
        **loaded.to_json(),
    }
    if args.json:
        print(json.dumps(report))
    else:
        score = "none" if chosen.score is None else str(chosen.score)
        print(f"bestmove {chosen.move.pdn} score {score} depth {chosen.depth} nodes {chosen.nodes} "
              f"seconds {chosen.seconds:.3f} random {str(chosen.random).lower()} pv {' '.join(report['pv'])}")
        print(loaded.describe())
    return EXIT_OK


# -- play ---------------------------------------------------------------------------------------
def draw_board(board: Board) -> str:
    """ASCII diagram (w/W white man/king, b/B black man/king, . empty) beside a numbered legend."""
    from engine.geometry import geometry

    variant = board.variant
    geo = geometry(variant)
    size, half = variant.board_size, variant.squares_per_row
    position = board.position
    width = len(str(variant.squares))
    lines = []
    for row in range(size):
        cells, legend = [], []
        for col in range(size):
            if (row + col) % 2 == 0:  # light square (even rows have dark squares on odd columns)
                cells.append(" " * (width + 1))
                legend.append(" " * (width + 1))
                continue
            square = row * half + col // 2 + 1
            bit = 1 << geo.bit(square - 1)
            if position.white & bit:
                piece = "W" if position.kings & bit else "w"
            elif position.black & bit:
                piece = "B" if position.kings & bit else "b"
            else:
                piece = "."
            cells.append(" " + piece.rjust(width))
            legend.append(" " + str(square).rjust(width))
        lines.append(("".join(cells) + "    " + "".join(legend)).rstrip())
    return "\n".join(lines)


def game_score(board: Board, human: Color, outcome: Outcome) -> int:
    """The product's score: on a human win 100 per own piece left + 10 per move under 60, else 0."""
    if outcome.winner != human:
        return 0
    pieces = board.position.pieces(human).bit_count()
    human_moves = sum(1 for ply in range(board.ply) if _mover(board, ply) == human)
    return PIECE_POINTS * pieces + MOVE_POINTS * max(0, TARGET_MOVES - human_moves)


def _mover(board: Board, ply: int) -> Color:
    """Who played ply ``ply`` (0-based) of ``board``: sides alternate from the start position."""
    first = board.start_position.side_to_move
    return first if ply % 2 == 0 else first.opponent


def _describe(outcome: Outcome) -> str:
    winner = "draw" if outcome.winner is None else f"{outcome.winner.name.lower()} wins"
    return f"{outcome.result} ({winner}, {outcome.termination.value.replace('_', ' ')})"


class TerminalGame:
    """A game between a human (moves read line by line) and a level, printed as text."""

    def __init__(self, board: Board, computer: Player, hinter: Player, human: Color,
                 level_name: str, inp: TextIO, out: TextIO) -> None:
        self.board, self.computer, self.hinter = board, computer, hinter
        self.human, self.level_name = human, level_name
        self.inp, self.out = inp, out
        self.echo = not inp.isatty()

    def say(self, text: str = "", end: str = "\n") -> None:
        print(text, end=end, file=self.out, flush=True)

    def run(self) -> int:
        color = self.human.name.lower()
        self.say(f"{self.board.variant.name} vs the computer ({self.level_name}); you play {color}. "
                 "Commands: undo, hint, moves, resign, quit.")
        while True:
            outcome = self.board.outcome()
            if outcome is not None:
                return self.finish(outcome)
            if self.board.turn != self.human:
                self.computer_move()
                continue
            if not self.human_turn():
                return EXIT_OK

    def computer_move(self) -> None:
        chosen: ChosenMove = self.computer.choose_move(self.board)
        text = self.board.move_to_text(chosen.move)
        self.board.push(chosen.move)
        detail = "random move" if chosen.random else f"depth {chosen.depth}, score {chosen.score}"
        self.say(f"Computer plays {text} ({detail}).")

    def human_turn(self) -> bool:
        """Handle one input line; False when the session ends (resign, quit, end of input)."""
        board = self.board
        self.say()
        self.say(draw_board(board))
        legal = [board.move_to_text(m) for m in board.legal_moves]  # ordered by path
        self.say(f"Legal moves: {', '.join(legal)}")
        self.say(f"Your move ({self.human.name.lower()}): ", end="")
        line = self.inp.readline()
        if not line:
            self.say("quit")
            self.say("End of input: game abandoned.")
            return False
        text = line.strip()
        if self.echo:
            self.say(text)
        command = text.lower()
        if command in ("quit", "exit"):
            self.say("Game abandoned.")
            return False
        if command == "resign":
            self.say(f"You resign. The computer ({self.level_name}) wins. Score: 0")
            return False
        if command == "undo":
            if board.ply >= 2:
                board.pop()
                board.pop()
                self.say("Took back the computer's move and yours.")
            else:
                self.say("Nothing to undo.")
        elif command == "hint":
            hint = self.hinter.choose_move(board)
            self.say(f"Hint: {board.move_to_text(hint.move)}")
        elif command in ("moves", "help", "?", ""):
            pass  # the board and the legal moves are shown again
        else:
            try:
                board.push_text(text)
            except MoveError as err:
                self.say(f"Not a legal move: {err}")
        return True

    def finish(self, outcome: Outcome) -> int:
        self.say()
        self.say(draw_board(self.board))
        if outcome.winner is None:
            verdict = "Draw."
        elif outcome.winner == self.human:
            verdict = "You win!"
        else:
            verdict = "The computer wins."
        score = game_score(self.board, self.human, outcome)
        self.say(f"Game over: {_describe(outcome)}. {verdict} Score: {score}")
        return EXIT_OK


def _play_arguments(parser: argparse.ArgumentParser) -> None:
    add_variant_argument(parser)
    _level_arguments(parser)
    parser.add_argument("--color", choices=("black", "white"), default=None,
                        help="your colour (default: the side that moves first)")
    add_fen_argument(parser)


def _run_play(args: argparse.Namespace) -> int:
    from engine.board import Board
    from engine.player import Player

    variant = get_variant(args.variant)
    board = Board(variant, args.fen)
    loaded = load_cli_level(variant, args.level, args.profile)
    level = loaded.level
    human = variant.first_player if args.color is None else Color[args.color.upper()]
    computer, hinter = Player(level, seed=args.seed), Player(level.unweakened(), seed=args.seed)
    print(loaded.describe(), flush=True)
    game = TerminalGame(board, computer, hinter, human, args.level, sys.stdin, sys.stdout)
    return game.run()


# -- bench --------------------------------------------------------------------------------------
def _bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--depth", type=int, default=None,
                        help="search every bench position to this depth instead of its own")
    parser.add_argument("--variant", default=None,
                        help="bench only this variant's positions (default: every variant)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _run_bench(args: argparse.Namespace) -> int:
    from engine import __version__
    from engine.bench import run_bench

    result = run_bench(args.depth, None if args.variant is None else [args.variant])
    if args.json:
        print(json.dumps({
            "engine_version": __version__,
            "signature": result.signature,
            "signatures": result.signatures,
            "nodes": result.nodes,
            "seconds": round(result.seconds, 6),
            "nps": round(result.nps),
            "depth": args.depth,
            "positions": [dataclasses.asdict(row) for row in result.rows],
        }))
        return EXIT_OK
    for row in result.rows:
        mark = " lmr " if row.reductions else " keep" if row.kept else "     "
        print(f"{row.variant:<14} depth {row.depth:>2}{mark}  "
              f"nodes {row.nodes:>10}  best {row.best or '-':<8} "
              f"score {row.score:>6}  {row.fen}")
    print(f"Total time (s)  : {result.seconds:.3f}")
    print(f"Nodes searched  : {result.nodes}")
    print(f"Nodes/second    : {result.nps:.0f}")
    for variant, signature in result.signatures.items():
        print(f"Signature {variant:<14}: {signature}")
    print(f"bench signature {result.signature}")
    return EXIT_OK


register(Command("bestmove", "search a position at a difficulty level and print the move",
                 _bestmove_arguments, _run_bestmove))
register(Command("play", "play a game against a difficulty level in the terminal",
                 _play_arguments, _run_play))
register(Command("bench", "search fixed positions; node counts are the signatures (per variant, total)",
                 _bench_arguments, _run_bench))
