"""PDN game files: tag pairs, numbered move lists, results; several games per file.

Reading is tolerant of what real files contain (comments ``{...}`` and ``; ...``,
variations ``(...)``, NAGs ``$3``, ``!``/``?`` suffixes, ``1...`` move numbers, move numbers
that start from a ``[FEN]`` tag's move number, the ``2-0``/``1-1``/``0-2`` scores of lidraughts
and 10x10 files) and strict about anything else: an unknown token raises
:class:`~engine.errors.PdnError` quoting it. Moves are kept as text; :meth:`PdnGame.replay`
checks them against the rules and accepts a capture written with its full path, as start x
end only, or one jump per token (``15x24 24x31``), each resolved against the legal moves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from engine.board import Board
from engine.errors import AmbiguousMoveError, DraughtsError, MoveError, PdnError, quote
from engine.fen import read_fen
from engine.move import Move, split_move_text
from engine.position import initial_position
from engine.variants import VARIANTS, Color, Variant, get_variant

RESULTS = ("1-0", "0-1", "1/2-1/2", "*", "2-0", "0-2", "1-1", "0-0")

#: The winner a result token records (None: a draw); ``*`` and ``0-0`` record none.
RESULT_WINNERS: dict[str, Color | None] = {
    "1-0": Color.WHITE, "2-0": Color.WHITE, "0-1": Color.BLACK, "0-2": Color.BLACK,
    "1/2-1/2": None, "1-1": None,
}

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<tag>\[\s*(?P<tname>[A-Za-z0-9_]+)\s*"(?P<tvalue>(?:[^"\\]|\\.)*)"\s*\])
  | (?P<comment>\{[^}]*\})
  | (?P<linecomment>;[^\n]*)
  | (?P<open>\()
  | (?P<close>\))
  | (?P<nag>\$\d+)
  | (?P<result>(?:1/2-1/2|1-0|0-1|2-0|0-2|1-1|0-0|\*)(?![-xX:\w]))
  | (?P<number>\d+\.(?:\.\.)?)
  | (?P<move>[0-9A-Za-z]+(?:[-xX:][0-9A-Za-z]+)+[!?]*)
  | (?P<other>\S+)
    """,
    re.VERBOSE,
)


@dataclass
class PdnGame:
    """One game: its tags (in file order), moves as PDN text, and the result token."""

    tags: dict[str, str] = field(default_factory=dict)
    moves: list[str] = field(default_factory=list)
    result: str = "*"

    def variant(self, default: Variant | str | None = None) -> Variant:
        """The variant: ``default`` if given, else a known ``Variant`` tag, else the GameType.

        PDN 3.0 numbers the rule sets (20 international, 21 english, 25 russian, 26 brazilian);
        suicide has no number of its own, so it is written as 21 (its moves are english moves)
        with a ``Variant`` tag, spelt as servers do (``Suicide``, ``giveaway checkers``, ...).
        Without either tag the game is english (GameType's own default).
        """
        if default is not None:
            return get_variant(default)
        named = self.tags.get("Variant", "").strip()
        if named:
            try:
                return get_variant(named)
            except DraughtsError:
                pass  # another program's variant name: fall back to GameType
        gametype = self.tags.get("GameType", "").split(",")[0].strip()  # "20,W,10,10,N2,0" form too
        if not gametype:
            return get_variant("english")
        for candidate in VARIANTS:
            if str(candidate.pdn_gametype) == gametype:
                return candidate
        raise PdnError(f"unsupported GameType {quote(self.tags['GameType'])}")

    def start_board(self, variant: Variant | str | None = None, ply_cap: int | None = None) -> Board:
        """A board set up from the FEN tag (or the start position); a bad tag -> PdnError."""
        rules = self.variant(variant)
        try:
            return Board(rules, self.tags.get("FEN"), ply_cap=ply_cap)
        except DraughtsError as err:
            raise PdnError(f"bad FEN tag {quote(self.tags.get('FEN'))}: {err}") from None

    def replay(self, variant: Variant | str | None = None, ply_cap: int | None = None) -> Board:
        """A board with every move played from the FEN tag (or the start); illegal -> PdnError.

        The error names the move (its text, ply and PDN move number) and the position it
        could not be played in.
        """
        board = self.start_board(variant, ply_cap)
        index = 0
        while index < len(self.moves):
            index = play_tokens(board, self.moves, index)
        return board


def _joined_captures(board: Board, tokens: list[str], index: int) -> tuple[Move, int] | None:
    """The legal capture that tokens ``index``, ``index + 1``, ... spell one jump each, if any.

    Some servers write a multi-jump as one token per jump (``15x24 24x31``): each next token
    starts where the last one ended. Returns the move and the index after its last token.
    """
    squares, is_capture = split_move_text(board.variant, tokens[index])
    if not is_capture:
        return None
    end = index + 1
    while end < len(tokens):
        try:
            more, more_capture = split_move_text(board.variant, tokens[end])
        except DraughtsError:
            return None
        if not more_capture or more[0] != squares[-1]:
            return None
        squares = squares + more[1:]
        end += 1
        text = "x".join(str(square) for square in squares)
        try:
            return board.parse_move(text), end
        except AmbiguousMoveError:
            raise
        except MoveError:
            continue
    return None


def play_tokens(board: Board, tokens: list[str], index: int) -> int:
    """Play the move starting at ``tokens[index]`` on ``board``; returns the index of the next move.

    A token that names no legal move on its own may be the first jump of a multi-jump written
    one jump per token; failing that, :class:`PdnError` names the move and the position.
    """
    text = tokens[index]
    try:
        move = board.parse_move(text)
        board.push(move)
        return index + 1
    except DraughtsError as err:
        first_error = err
    try:
        joined = _joined_captures(board, tokens, index)
    except DraughtsError as err:
        first_error = err
        joined = None
    if joined is not None:
        board.push(joined[0])
        return joined[1]
    number = f"{board.move_number}{'.' if board.turn == board.variant.first_player else '...'}"
    raise PdnError(
        f"move {quote(text)} (ply {board.ply + 1}, move {number}) cannot be played in position "
        f"{quote(board.fen())}: {first_error}"
    ) from None


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def parse_pdn(text: str) -> list[PdnGame]:
    """Every game in PDN ``text`` (move text is syntax-checked, not replayed)."""
    games: list[PdnGame] = []
    game: PdnGame | None = None
    in_moves = False  # the current game has started its move text
    depth = 0  # nesting of (variations), which are skipped
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        token = match.group(0)
        if kind in ("ws", "comment", "linecomment", "nag"):
            continue
        if kind == "open":
            depth += 1
            continue
        if kind == "close":
            if not depth:
                raise PdnError(f"unbalanced {quote(token)} at offset {match.start()}")
            depth -= 1
            continue
        if depth:
            continue
        if kind == "tag":
            if game is None or in_moves:
                if game is not None:
                    games.append(game)
                game, in_moves = PdnGame(), False
            name, value = match.group("tname"), _unescape(match.group("tvalue"))
            if name in game.tags:
                raise PdnError(f"tag [{name}] given twice at offset {match.start()} "
                               f"({quote(game.tags[name])}, then {quote(value)})")
            if name == "Result" and value not in RESULTS:
                raise PdnError(f"invalid Result tag {quote(value)} at offset {match.start()}; "
                               f"expected one of {', '.join(RESULTS)}")
            game.tags[name] = value
            continue
        if game is None:
            game = PdnGame()
        if kind == "result":
            game.result = token
            games.append(game)
            game, in_moves = None, False
        elif kind == "number":
            in_moves = True
        elif kind == "move":
            in_moves = True
            game.moves.append(token.rstrip("!?"))
        else:
            raise PdnError(f"unexpected PDN token {quote(token)} at offset {match.start()}")
    if depth:
        raise PdnError("unterminated variation '(' at end of PDN text")
    if game is not None:
        if "Result" in game.tags:
            game.result = game.tags["Result"]
        games.append(game)
    return games


def check_moves(game: PdnGame, variant: Variant | str | None = None) -> None:
    """Syntax-check every move of ``game`` for ``variant`` (squares exist, separators sane)."""
    rules = game.variant(variant)
    for text in game.moves:
        try:
            split_move_text(rules, text)
        except DraughtsError as err:
            raise PdnError(f"bad move token {quote(text)}: {err}") from None


def read_pdn(path: str | Path) -> list[PdnGame]:
    """Every game in the PDN file at ``path``."""
    return parse_pdn(Path(path).read_text(encoding="utf-8"))


def game_from_board(
    board: Board,
    tags: dict[str, str] | None = None,
    result: str | None = None,
    algebraic: bool = False,
    counters: bool = False,
) -> PdnGame:
    """A PDN game of ``board``'s moves since set-up, with GameType, FEN and Result tags filled in.

    ``result`` defaults to the board's outcome (``*`` while the game is running). With
    ``counters`` the FEN tag carries the ``H`` and ``F`` fields (and is written even for the
    start position when they are not 0 and 1), and the moves are numbered from ``F``.
    """
    if result is None:
        outcome = board.outcome()
        result = "*" if outcome is None else outcome.result
    all_tags = dict(tags or {})
    all_tags.setdefault("GameType", str(board.variant.pdn_gametype))
    shared = sum(v.pdn_gametype == board.variant.pdn_gametype for v in VARIANTS) > 1
    if shared or board.variant not in VARIANTS:  # the GameType alone would not name these rules
        all_tags.setdefault("Variant", board.variant.name)
    fresh = board.start_fen(counters=True) == board.start_fen() + ":H0:F1"
    if board.start_position != initial_position(board.variant) or (counters and not fresh):
        all_tags.setdefault("FEN", board.start_fen(algebraic, counters))
    all_tags["Result"] = result
    moves = [board.move_to_text(move, algebraic) for move in board.move_stack]
    return PdnGame(tags=all_tags, moves=moves, result=result)


def format_game(game: PdnGame, variant: Variant | str | None = None, width: int = 79) -> str:
    """PDN text of ``game``: tags, numbered moves wrapped at ``width``, result.

    Moves are numbered from the FEN tag's ``F`` field when it has one (else from 1).
    """
    lines = [f'[{name} "{_escape(value)}"]' for name, value in game.tags.items()]
    if "Result" not in game.tags:
        lines.append(f'[Result "{_escape(game.result)}"]')
    rules = game.variant(variant)
    first_player = rules.first_player
    to_move = first_player
    number = 1
    fen = game.tags.get("FEN")
    if fen:
        try:
            record = read_fen(rules, fen)
        except DraughtsError as err:
            raise PdnError(f"bad FEN tag {quote(fen)}: {err}") from None
        to_move = record.position.side_to_move
        number = record.move_number or 1
    tokens: list[str] = []
    for index, text in enumerate(game.moves):
        if to_move == first_player:
            tokens.append(f"{number}.")
        elif index == 0:
            tokens.append(f"{number}...")
        tokens.append(text)
        if to_move != first_player:
            number += 1
        to_move = to_move.opponent
    tokens.append(game.result)
    lines.append("")
    lines.extend(_wrap(tokens, width))
    return "\n".join(lines) + "\n"


def _wrap(tokens: Iterable[str], width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for token in tokens:
        if current and len(current) + 1 + len(token) > width:
            lines.append(current)
            current = token
        else:
            current = f"{current} {token}" if current else token
    if current:
        lines.append(current)
    return lines


def format_pdn(games: Iterable[PdnGame]) -> str:
    """Several games separated by blank lines."""
    return "\n".join(format_game(game) for game in games)


def write_pdn(path: str | Path, games: Iterable[PdnGame]) -> None:
    """Write ``games`` to ``path`` as one PDN file."""
    Path(path).write_text(format_pdn(games), encoding="utf-8")


@dataclass(frozen=True)
class ReplayReport:
    """What replaying one game found: plies played, the board's verdict, the first problem."""

    number: int  # 1-based position of the game in its file
    label: str  # "White - Black" from the tags, or "?"
    variant: str
    plies: int  # plies replayed before the end or the first problem
    result: str  # the recorded result token
    termination: str | None  # the rules' ending of the final position, None while it runs
    error: str | None  # the first illegal/ambiguous move (with its position) or result conflict

    @property
    def ok(self) -> bool:
        return self.error is None


def replay_report(game: PdnGame, number: int, variant: Variant | str | None = None) -> ReplayReport:
    """Replay ``game`` move by move and check its recorded result against the rules.

    A move after the rules ended the game, or a decided result that contradicts the final
    position's outcome, is reported like an illegal move.
    """
    label = f"{game.tags.get('White', '?')} - {game.tags.get('Black', '?')}"
    try:
        rules = game.variant(variant)
        board = game.start_board(rules)
    except DraughtsError as err:
        return ReplayReport(number, label, "?", 0, game.result, None, str(err))
    error: str | None = None
    index = 0
    while index < len(game.moves) and error is None:
        ended = board.outcome()
        if ended is not None:
            error = (f"move {quote(game.moves[index])} (ply {board.ply + 1}) comes after the game ended "
                     f"({ended.termination.value}) in position {quote(board.fen())}")
            break
        try:
            index = play_tokens(board, game.moves, index)
        except DraughtsError as err:
            error = str(err)
    outcome = board.outcome()
    if error is None and outcome is not None and game.result in RESULT_WINNERS:
        if RESULT_WINNERS[game.result] != outcome.winner:
            error = (f"result {game.result} contradicts the final position {quote(board.fen())}, "
                     f"which the rules end as {outcome.result} ({outcome.termination.value})")
    return ReplayReport(number, label, rules.name, board.ply, game.result,
                        None if outcome is None else outcome.termination.value, error)
