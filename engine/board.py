"""Board: a position plus its history, with push/pop, legal moves and adjudication.

Legal moves come from the compiled kernel (:mod:`engine.kernel.movegen`); this module
only wraps them as :class:`~engine.move.Move` values and keeps what the rules need to
end a game: a repetition table, the quiet-ply counter and the ply count. Outcome rules
read :class:`~engine.variants.Variant` fields, never the variant's name.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import Enum

from engine.endgame import EndgameCount, next_count, start_count
from engine.errors import DraughtsError, MoveError, quote
from engine.fen import format_fen, read_fen
from engine.move import Move, format_move, move_from_raw, parse_move
from engine.position import Position, apply_move, initial_position
from engine.variants import Color, Variant, get_variant


class Termination(Enum):
    """Why a game ended. PLY_CAP is an adjudication, not one of the rules' draws."""

    NO_PIECES = "no_pieces"
    NO_MOVES = "no_moves"
    THREEFOLD_REPETITION = "threefold_repetition"
    QUIET_PLY_LIMIT = "quiet_ply_limit"
    ENDGAME_MOVE_LIMIT = "endgame_move_limit"  # a small-endgame count ran out (docs/rules.md)
    PLY_CAP = "ply_cap"


@dataclass(frozen=True)
class Outcome:
    """The result of a finished game; ``winner`` is None for a draw."""

    winner: Color | None
    termination: Termination

    @property
    def result(self) -> str:
        """PDN result text: ``1-0`` (White won), ``0-1`` (Black won) or ``1/2-1/2``."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner == Color.WHITE else "0-1"


@dataclass(frozen=True)
class _Undo:
    """What pop() needs to restore: the previous position and counters."""

    position: Position
    quiet_plies: int
    endgame: EndgameCount
    move: Move


def _is_quiet(position: Position, move: Move) -> bool:
    """A move that neither captures nor moves a man (it advances the draw counter)."""
    return not move.captured and bool(position.kings >> move.from_bit & 1)


class Board:
    """A game in progress: current position, the moves that led to it, and adjudication."""

    def __init__(self, variant: Variant | str, fen: str | None = None, ply_cap: int | None = None) -> None:
        self.variant = get_variant(variant)
        if ply_cap is not None and ply_cap < 0:
            raise DraughtsError(f"ply_cap must be >= 0, got {ply_cap!r}")
        self.ply_cap = ply_cap
        record = None if fen is None else read_fen(self.variant, fen)
        self._position = initial_position(self.variant) if record is None else record.position
        self._start = self._position
        # a FEN's H field is the quiet-ply count; F the number of the move about to be played
        self._quiet_plies = 0 if record is None or record.halfmove_clock is None else record.halfmove_clock
        self._start_quiet = self._quiet_plies
        self._start_move_number = 1 if record is None or record.move_number is None else record.move_number
        self._endgame = start_count(self.variant, self._position)  # not in a FEN: starts afresh
        self._history: list[_Undo] = []
        self._seen: Counter[tuple[int, int, int, int]] = Counter({self._position.key(): 1})
        self._moves_cache: list[Move] | None = None

    # -- state ------------------------------------------------------------------------------
    @property
    def position(self) -> Position:
        return self._position

    @property
    def turn(self) -> Color:
        return self._position.side_to_move

    @property
    def ply(self) -> int:
        """Plies played on this board since it was set up."""
        return len(self._history)

    @property
    def quiet_plies(self) -> int:
        """Current run of plies with no capture and no man move."""
        return self._quiet_plies

    @property
    def endgame_count(self) -> EndgameCount:
        """The running small-endgame draw count (each slot: rule index and plies left)."""
        return self._endgame

    @property
    def move_stack(self) -> list[Move]:
        """The moves played since set-up, oldest first (a copy)."""
        return [undo.move for undo in self._history]

    @property
    def start_position(self) -> Position:
        return self._start

    def repetitions(self) -> int:
        """How many times the current position (with side to move) has occurred."""
        return self._seen[self._position.key()]

    @property
    def move_number(self) -> int:
        """The number of the move about to be played (PDN numbering: the first player's move opens it)."""
        second_started = self._start.side_to_move != self.variant.first_player
        return self._start_move_number + (len(self._history) + second_started) // 2

    @property
    def start_move_number(self) -> int:
        return self._start_move_number

    def fen(self, algebraic: bool = False, counters: bool = False) -> str:
        """The current FEN; with ``counters``, the ``H`` (quiet plies) and ``F`` (move number) fields too."""
        if not counters:
            return format_fen(self.variant, self._position, algebraic)
        return format_fen(self.variant, self._position, algebraic, self._quiet_plies, self.move_number)

    def start_fen(self, algebraic: bool = False, counters: bool = False) -> str:
        """The FEN the board was set up from (with its ``H`` and ``F`` fields when ``counters``)."""
        if not counters:
            return format_fen(self.variant, self._start, algebraic)
        return format_fen(self.variant, self._start, algebraic, self._start_quiet, self._start_move_number)

    def copy(self) -> Board:
        """An independent board with the same history."""
        other = Board.__new__(Board)
        other.variant = self.variant
        other.ply_cap = self.ply_cap
        other._position = self._position
        other._start = self._start
        other._quiet_plies = self._quiet_plies
        other._endgame = self._endgame
        other._start_quiet = self._start_quiet
        other._start_move_number = self._start_move_number
        other._history = list(self._history)
        other._seen = Counter(self._seen)
        other._moves_cache = self._moves_cache
        return other

    # -- moves ------------------------------------------------------------------------------
    @property
    def legal_moves(self) -> list[Move]:
        """Every legal move, ordered by path (deterministic); a fresh list each call."""
        if self._moves_cache is None:
            from engine.kernel.movegen import legal_moves as kernel_legal_moves

            raw = kernel_legal_moves(self.variant, self._position)
            moves = [move_from_raw(self.variant, r) for r in raw]
            moves.sort(key=lambda m: (m.path, m.captures))
            self._moves_cache = moves
        return list(self._moves_cache)

    def parse_move(self, text: str) -> Move:
        """The legal move named by PDN ``text`` (full path, or start x end when unambiguous)."""
        return parse_move(self.variant, text, self.legal_moves, self._position)

    def move_to_text(self, move: Move, algebraic: bool = False) -> str:
        """PDN text of ``move`` with the full path."""
        return format_move(self.variant, move, algebraic)

    def push(self, move: Move) -> None:
        """Play ``move``, which must be legal here (else :class:`MoveError`)."""
        if move not in self.legal_moves:
            raise MoveError(f"illegal move {move.pdn!r} in position {quote(self.fen())}")
        before = self._position
        quiet = self._quiet_plies + 1 if _is_quiet(before, move) else 0
        self._history.append(_Undo(before, self._quiet_plies, self._endgame, move))
        self._position = apply_move(before, move.from_bit, move.to_bit, move.captured, move.promotes)
        self._quiet_plies = quiet
        changed = move.is_capture or move.promotes
        self._endgame = next_count(self.variant, self._endgame, self._position, changed)
        self._seen[self._position.key()] += 1
        self._moves_cache = None

    def push_text(self, text: str) -> Move:
        """Parse PDN ``text`` and play it; returns the move played."""
        move = self.parse_move(text)
        self.push(move)
        return move

    def pop(self) -> Move:
        """Take back the last move, restoring counters and the repetition table."""
        if not self._history:
            raise IndexError("pop from a board with no moves played")
        undo = self._history.pop()
        key = self._position.key()
        self._seen[key] -= 1
        if not self._seen[key]:
            del self._seen[key]
        self._position = undo.position
        self._quiet_plies = undo.quiet_plies
        self._endgame = undo.endgame
        self._moves_cache = None
        return undo.move

    # -- adjudication -----------------------------------------------------------------------
    def outcome(self) -> Outcome | None:
        """The game's result if it is over, else None.

        Order: no pieces, no legal move (both lose, or win when ``outcome_inverted``),
        threefold repetition, an expired endgame count, quiet-ply limit, then the hard ply cap.
        """
        side = self._position.side_to_move
        stuck_side_wins = self.variant.outcome_inverted
        if not self._position.pieces(side):
            return Outcome(side if stuck_side_wins else side.opponent, Termination.NO_PIECES)
        if not self.legal_moves:
            return Outcome(side if stuck_side_wins else side.opponent, Termination.NO_MOVES)
        if self._seen[self._position.key()] >= 3:
            return Outcome(None, Termination.THREEFOLD_REPETITION)
        if self._endgame.expired:
            return Outcome(None, Termination.ENDGAME_MOVE_LIMIT)
        if self._quiet_plies >= self.variant.quiet_ply_limit:
            return Outcome(None, Termination.QUIET_PLY_LIMIT)
        if self.ply_cap is not None and len(self._history) >= self.ply_cap:
            return Outcome(None, Termination.PLY_CAP)
        return None

    def is_game_over(self) -> bool:
        return self.outcome() is not None

    def __repr__(self) -> str:
        return f"Board({self.variant.name!r}, fen={self.fen()!r})"
