"""Generated opening decks: reproducible from their seed, balanced, valid, and shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.board import Board
from engine.fen import parse_fen
from engine.variants import get_variant
from pipeline.games.opening_gen import DeckRecipe, generate_deck, main
from pipeline.games.openings import load_deck, validate_deck

RECIPE = DeckRecipe("suicide", seed=7, plies=4, count=6, search_depth=2, max_abs_score=60,
                    max_tries=5000)


def test_generation_is_reproducible_and_valid() -> None:
    first = generate_deck(RECIPE)
    assert generate_deck(RECIPE) == first
    openings = validate_deck(first, "suicide")
    assert len(openings) == 6
    assert len({o.fen for o in openings}) == 6
    variant = get_variant("suicide")
    for opening in openings:
        board = Board(variant)
        for text in opening.moves:
            board.push(board.parse_move(text))
        assert board.position == parse_fen(variant, opening.fen)


def test_other_seed_gives_other_deck() -> None:
    other = DeckRecipe(**{**RECIPE.__dict__, "seed": 8})
    assert generate_deck(other)["openings"] != generate_deck(RECIPE)["openings"]


def test_shipped_generated_decks_load() -> None:
    for variant, minimum in (("suicide", 100), ("international", 100)):
        deck = load_deck(variant)
        assert len(deck) >= minimum


def test_a_missing_output_folder_is_one_line_before_generating(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-folder"
    code = main(["suicide", "--count", "2", "--search-depth", "2", "--output", str(missing)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "--output" in err and str(missing) in err and "Traceback" not in err
    assert not missing.exists()
    assert main(["suicide", "--count", "2", "--search-depth", "2", "--plies", "4", "--max-abs-score", "60",
                 "--name", "two", "--output", str(tmp_path)]) == 0
    assert (tmp_path / "two.json").is_file()
