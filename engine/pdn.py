"""PDN game files: tag pairs, numbered move lists, results; several games per file.

Reading is tolerant of what real files contain (comments ``{...}`` and ``; ...``,
variations ``(...)``, NAGs ``$3``, ``!``/``?`` suffixes, ``1...`` move numbers, the
``2-0``/``1-1``/``0-2`` scores of 10x10 files) and strict about anything else:
an unknown token raises :class:`~engine.errors.PdnError` quoting it. Moves are kept as
text; :meth:`PdnGame.replay` checks them against the rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from engine.board import Board
from engine.errors import DraughtsError, PdnError
from engine.move import split_move_text
from engine.position import initial_position
from engine.variants import VARIANTS, Color, Variant, get_variant

RESULTS = ("1-0", "0-1", "1/2-1/2", "*", "2-0", "0-2", "1-1", "0-0")

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

        GameType 21 is shared by english and suicide; games we write carry a ``Variant`` tag
        then. Without either tag the game is english (GameType's own default).
        """
        if default is not None:
            return get_variant(default)
        named = self.tags.get("Variant", "").strip()
        if named:
            try:
                return get_variant(named)
            except DraughtsError:
                pass  # another program's variant name: fall back to GameType
        gametype = self.tags.get("GameType", "").split(",")[0].strip()
        if not gametype:
            return get_variant("english")
        for candidate in VARIANTS:
            if str(candidate.pdn_gametype) == gametype:
                return candidate
        raise PdnError(f"unsupported GameType {self.tags['GameType']!r}")

    def replay(self, variant: Variant | str | None = None, ply_cap: int | None = None) -> Board:
        """A board with every move played from the FEN tag (or the start); illegal -> PdnError."""
        rules = self.variant(variant)
        try:
            board = Board(rules, self.tags.get("FEN"), ply_cap=ply_cap)
        except DraughtsError as err:
            raise PdnError(f"bad FEN tag {self.tags.get('FEN')!r}: {err}") from None
        for ply, text in enumerate(self.moves, start=1):
            try:
                board.push_text(text)
            except DraughtsError as err:
                raise PdnError(f"move {text!r} (ply {ply}) cannot be played: {err}") from None
        return board


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
                raise PdnError(f"unbalanced {token!r} at offset {match.start()}")
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
                raise PdnError(f"tag [{name}] given twice at offset {match.start()} ({game.tags[name]!r}, "
                               f"then {value!r})")
            if name == "Result" and value not in RESULTS:
                raise PdnError(f"invalid Result tag {value!r} at offset {match.start()}; expected one of "
                               f"{', '.join(RESULTS)}")
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
            raise PdnError(f"unexpected PDN token {token!r} at offset {match.start()}")
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
            raise PdnError(f"bad move token {text!r}: {err}") from None


def read_pdn(path: str | Path) -> list[PdnGame]:
    """Every game in the PDN file at ``path``."""
    return parse_pdn(Path(path).read_text(encoding="utf-8"))


def game_from_board(
    board: Board, tags: dict[str, str] | None = None, result: str | None = None, algebraic: bool = False
) -> PdnGame:
    """A PDN game of ``board``'s moves since set-up, with GameType, FEN and Result tags filled in.

    ``result`` defaults to the board's outcome (``*`` while the game is running).
    """
    if result is None:
        outcome = board.outcome()
        result = "*" if outcome is None else outcome.result
    all_tags = dict(tags or {})
    all_tags.setdefault("GameType", str(board.variant.pdn_gametype))
    if sum(v.pdn_gametype == board.variant.pdn_gametype for v in VARIANTS) > 1:
        all_tags.setdefault("Variant", board.variant.name)
    if board.start_position != initial_position(board.variant):
        all_tags.setdefault("FEN", board.start_fen(algebraic))
    all_tags["Result"] = result
    moves = [board.move_to_text(move, algebraic) for move in board.move_stack]
    return PdnGame(tags=all_tags, moves=moves, result=result)


def format_game(game: PdnGame, variant: Variant | str | None = None, width: int = 79) -> str:
    """PDN text of ``game``: tags, numbered moves wrapped at ``width``, result."""
    lines = [f'[{name} "{_escape(value)}"]' for name, value in game.tags.items()]
    if "Result" not in game.tags:
        lines.append(f'[Result "{_escape(game.result)}"]')
    rules = game.variant(variant)
    first_player = rules.first_player
    to_move = first_player
    fen = game.tags.get("FEN")
    if fen:
        side = fen.strip()[:1]
        to_move = Color.WHITE if side == "W" else Color.BLACK if side == "B" else first_player
    tokens: list[str] = []
    number = 1
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
