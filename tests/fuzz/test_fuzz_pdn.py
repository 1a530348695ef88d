"""Fuzzing PDN game text: ``engine.pdn.parse_pdn``, then ``check_moves`` and ``PdnGame.replay``.

Inputs: token soup from the PDN grammar (tags with escapes, comments, nested variations, NAGs,
move numbers, results, junk), mutations of PDN written by ``format_game`` for real random games,
and those games themselves. Properties:

- only :class:`~engine.errors.PdnError` escapes parsing, checking and replaying;
- no hang (per-case alarm);
- no silent repair: an accepted file formats and re-parses to the same games (tags, moves,
  result; ``format_game`` only adds the Result tag), every result is a documented result token,
  and games written by the engine come back move for move and replay to the same position.
"""

from __future__ import annotations

import random
import re
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.board import Board
from engine.errors import PdnError
from engine.pdn import RESULTS, PdnGame, check_moves, format_pdn, game_from_board, parse_pdn
from engine.variants import VARIANTS, Variant
from tests.fuzz.conftest import (
    fuzz_case,
    fuzz_settings,
    known,
    mutate_tokens,
    outcome,
    reachable_boards,
    tolerate,
    undocumented,
    weird_token,
)

PARSER = "pdn"
SPECIAL_TAGS = ("FEN", "GameType", "Variant", "Result")


def normalised(game: PdnGame) -> PdnGame:
    """What ``format_game`` then ``parse_pdn`` must give back: the same game plus a Result tag."""
    tags = dict(game.tags)
    tags.setdefault("Result", game.result)
    return PdnGame(tags=tags, moves=list(game.moves), result=game.result)


def check_pdn(text: str) -> list[PdnGame] | None:
    """One PDN text: documented errors only; accepted games are stable and replay cleanly."""
    with fuzz_case(PARSER, show=text):
        try:
            games = parse_pdn(text)
        except PdnError as err:
            outcome("rejected", str(err).split(" ", 1)[0])
            return None
        except Exception as err:
            undocumented(PARSER, err, text)
        outcome("accepted", f"{min(len(games), 3)} games")
        for game in games:
            try:
                check_moves(game)
                game.replay()
            except PdnError:
                pass
            except Exception as err:
                if not tolerate(err, "int-digits"):
                    undocumented(PARSER, err, text)
        if any(game.result not in RESULTS for game in games):
            known("pdn-result")  # e.g. [Result "abc"] on an unfinished game
            return games
        try:
            again = format_pdn(games)
        except PdnError:  # e.g. an unsupported GameType: refused, never guessed
            return games
        reparsed = parse_pdn(again)
    assert reparsed == [normalised(g) for g in games], f"{text!r} does not survive format -> parse"
    assert format_pdn(reparsed) == again
    return games


# ---- strategies --------------------------------------------------------------------------------

tag_names = st.one_of(
    st.sampled_from(["Event", "Site", "Date", "White", "Black", "Round", *SPECIAL_TAGS]),
    st.from_regex(r"[A-Za-z0-9_]{1,10}", fullmatch=True),
)
tag_values = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            "21", "20", "25", "26", "99", "english", "Russian", "1-0", "0-1", "*", "2-0", "abc",
            "W:W21,22:B1,2", "B:W1:B2", "\\", '\\"', "a\nb", "x]y", "{", ";",
        ]
    ),
)


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


pdn_vocabulary = st.one_of(
    st.builds(lambda n, v: f'[{n} "{_quote(v)}"]', tag_names, tag_values),
    st.builds(lambda n, v: f'[{n} "{v}"]', tag_names, tag_values),  # unescaped: may break the tag
    st.sampled_from(
        [
            "[", "]", '"', "{", "}", "(", ")", ";", "\n", " ", " ", " ", "\t", "$", "!", "?", "...", "1.",
            "2.", "12...", "1-0", "0-1", "1/2-1/2", "*", "2-0", "0-2", "1-1", "0-0",
        ]
    ),
    st.builds(lambda t: "{" + t + "}", st.text(max_size=10)),
    st.builds(lambda t: ";" + t + "\n", st.text(max_size=10)),
    st.integers(0, 300).map(lambda n: f"${n}"),
    st.integers(0, 60).map(lambda n: f"{n}."),
    st.builds(
        lambda a, s, b, m: f"{a}{s}{b}{m}",
        st.integers(0, 55),
        st.sampled_from(["-", "x", "X", ":"]),
        st.integers(0, 55),
        st.sampled_from(["", "", "!", "?!", "!!"]),
    ),
    weird_token,
)
pdn_soup = st.lists(pdn_vocabulary, max_size=30).map(" ".join)
deep_variations = st.builds(
    lambda n, close, body: "1. 11-15 " + "(" * n + body + ")" * close + " *",
    st.integers(1, 50_000),
    st.integers(0, 50_001),
    st.sampled_from(["", "22-18", "{x}"]),
)


@st.composite
def played_game(draw: st.DrawFn, variant: Variant) -> tuple[Board, PdnGame]:
    """A real game: from the start or a reachable position, random legal moves, random tags."""
    pool = reachable_boards(variant.name)
    board = draw(st.sampled_from(pool)).copy()
    if draw(st.booleans()):  # start from that position (written as a FEN tag) and play on
        board = Board(variant, board.fen())
        rng = random.Random(draw(st.integers(0, 2**32 - 1)))
        for _ in range(draw(st.integers(0, 16))):
            moves = board.legal_moves
            if not moves or board.is_game_over():
                break
            board.push(rng.choice(moves))
    names = draw(st.lists(tag_names.filter(lambda n: n not in SPECIAL_TAGS), max_size=4, unique=True))
    tags = {name: draw(tag_values) for name in names}
    result = draw(st.sampled_from([None, *RESULTS]))
    algebraic = variant.algebraic_notation and draw(st.booleans())
    return board, game_from_board(board, tags, result, algebraic)


_PDN_SPLIT = re.compile(r'(\s+|[\[\]{}();"])')


@cache
def written_pdn_tokens() -> tuple[tuple[str, ...], ...]:
    """Tokens of PDN files the engine wrote: games from the start and from reachable positions."""
    rng = random.Random("fuzz-pdn")
    texts = []
    for variant in VARIANTS:
        pool = reachable_boards(variant.name)
        for board in pool[:: max(1, len(pool) // 16)]:
            texts.append(format_pdn([game_from_board(board, {"Event": rng.choice(["x", 'a "b" \\ c', ""])})]))
            resumed = Board(variant, board.fen())
            for _ in range(rng.randint(0, 12)):
                if not resumed.legal_moves or resumed.is_game_over():
                    break
                resumed.push(rng.choice(resumed.legal_moves))
            texts.append(format_pdn([game_from_board(resumed, algebraic=variant.algebraic_notation)]))
    return tuple(tuple(t for t in _PDN_SPLIT.split(text) if t) for text in texts)


@st.composite
def mutated_pdn(draw: st.DrawFn) -> str:
    pool = written_pdn_tokens()
    tokens = [t for _ in range(draw(st.integers(1, 2))) for t in draw(st.sampled_from(pool))]
    return draw(mutate_tokens(tokens, st.one_of(weird_token, pdn_vocabulary)))


# ---- properties --------------------------------------------------------------------------------


@fuzz_settings(200)
@given(text=pdn_soup)
def test_random_pdn_token_soup(text: str) -> None:
    check_pdn(text)


@fuzz_settings(150)
@given(text=mutated_pdn())
def test_mutated_engine_written_pdn(text: str) -> None:
    check_pdn(text)


@fuzz_settings(50)
@given(text=deep_variations)
def test_deeply_nested_variations(text: str) -> None:
    check_pdn(text)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
@fuzz_settings(30)
@given(data=st.data())
def test_engine_games_round_trip(variant: Variant, data: st.DataObject) -> None:
    played = [data.draw(played_game(variant), label="game") for _ in range(data.draw(st.integers(1, 3)))]
    text = format_pdn([game for _, game in played])
    games = check_pdn(text)
    assert games is not None and len(games) == len(played), text
    for (board, written), read in zip(played, games, strict=True):
        assert read == written
        replayed = read.replay()
        assert replayed.position == board.position
        assert replayed.move_stack == board.move_stack


# ---- known bugs ---------------------------------------------------------------------------------


def test_regression_result_tag_value_is_not_validated() -> None:
    text = '[Result "abc"]\n1. 11-15'
    try:
        games = parse_pdn(text)
    except PdnError:
        return  # the fix may reject it
    assert games[0].result in RESULTS
    parse_pdn(format_pdn(games))


def test_regression_repeated_tag_is_silently_overwritten() -> None:
    with pytest.raises(PdnError):
        parse_pdn('[Event "a"]\n[Event "b"]\n1. 11-15 *')


def test_regression_pdn_move_square_beyond_int_digit_limit() -> None:
    games = parse_pdn("1. 11-" + "1" * 4301 + " *")
    with pytest.raises(PdnError):
        check_moves(games[0])
