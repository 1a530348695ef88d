"""Opening decks: conversion results, strict loading, and agreement with the engine."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from pipeline.games.openings import OpeningsError, deck_variants, load_deck, validate_deck


def test_shipped_decks() -> None:
    assert deck_variants() == ["brazilian", "english", "english-extended", "international",
                               "international-extended", "russian", "suicide", "suicide-extended",
                               "suicide-large"]
    english = load_deck("english")
    assert len(english) == 157 and not any(o.lost for o in english)
    assert len(load_deck("english", include_lost=True)) == 174
    assert len(load_deck("brazilian")) == 736 and len(load_deck("russian")) == 745
    assert english[0].id == "001" and english[0].moves == ("9-13", "21-17", "5-9")
    assert load_deck("checkers") == english  # aliases resolve
    extended = load_deck("english", name="english-extended")
    ballots = {o.moves for o in english}
    assert len(extended) == 600 and all(o.moves[:-2] in ballots for o in extended)  # 2 plies past a ballot
    large = load_deck("suicide", name="suicide-large")
    bases = {o.moves for o in load_deck("suicide")}
    assert len(large) == 4400 and len({o.fen for o in large}) == 4400  # distinct positions
    assert all(o.moves[:-4] in bases for o in large)  # 4 plies past an opening of the suicide deck


def test_variant_without_deck_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    import pipeline.games.openings as openings

    monkeypatch.setattr(openings, "_deck_resource", lambda variant: tmp_path / f"{variant}.json")
    if hasattr(openings._load_all, "cache_clear"):
        openings._load_all.cache_clear()
    with pytest.raises(OpeningsError, match="no opening deck 'suicide' for variant 'suicide'"):
        load_deck("suicide")


def test_unknown_variant() -> None:
    with pytest.raises(OpeningsError, match="unknown variant 'chess'"):
        load_deck("chess")


def _raw(variant: str) -> dict:
    text = resources.files("pipeline").joinpath("data", "openings", f"{variant}.json").read_text()
    return json.loads(text)


def test_attribution_is_kept() -> None:
    for variant in ("english", "brazilian", "russian"):  # converted from pydraughts' ballots
        source = _raw(variant)["source"]
        assert source["licence"] == "MIT" and "pydraughts" in source["attribution"]
    for variant in ("suicide", "international"):  # generated here, recipe recorded
        assert "seed=" in _raw(variant)["source"]["recipe"]
    assert "KingsRow" in _raw("english")["source"]["attribution"]


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.update(schema_version=2), "schema_version 2"),
        (lambda d: d.update(extra=1), "keys must be"),
        (lambda d: d["openings"][1].update(id=d["openings"][0]["id"]), "duplicate"),
        (lambda d: d["openings"][0].update(fen="W:W33:B1"), "entry '001'"),
        (lambda d: d["openings"][0].update(kind="magic"), "kind 'magic'"),
        (lambda d: d["openings"][0].pop("name"), "exactly the keys"),
        (lambda d: d["openings"][0].update(lost="no"), "lost='no' must be bool"),
    ],
)
def test_validation_rejects_bad_documents(mutate, needle: str) -> None:
    doc = copy.deepcopy(_raw("english"))
    mutate(doc)
    with pytest.raises(OpeningsError, match=needle):
        validate_deck(doc, "english")


@pytest.mark.parametrize("variant", ["english", "brazilian", "russian"])
def test_every_opening_agrees_with_the_engine(variant: str) -> None:
    """FENs parse and are canonical; played openings replay to exactly their FEN."""
    from engine.board import Board
    from engine.fen import format_fen, parse_fen
    from engine.variants import get_variant

    rules = get_variant(variant)
    for opening in load_deck(variant, include_lost=True):
        position = parse_fen(rules, opening.fen)
        assert format_fen(rules, position, rules.algebraic_notation) == opening.fen
        if opening.kind == "play":
            board = Board(rules)
            for move in opening.moves:
                board.push_text(move)
            assert board.position == position, opening.id
            assert board.outcome() is None


@pytest.mark.parametrize("variant", ["english", "brazilian", "russian"])
def test_shipped_decks_are_what_the_converter_writes(variant: str) -> None:
    """The package data is reproducible from the pydraughts ballot files kept in data/ballots."""
    from pathlib import Path

    from pipeline.games.openings_convert import convert, format_deck

    source = Path(__file__).resolve().parents[2] / "data" / "ballots"
    text = resources.files("pipeline").joinpath("data", "openings", f"{variant}.json").read_text()
    assert format_deck(convert(source, variant)) == text


def test_deck_parts_are_disjoint_halves_of_the_deck() -> None:
    from pipeline.games.openings import OpeningsError, load_deck

    whole = load_deck("english")
    even, odd = load_deck("english", part="even"), load_deck("english", part="odd")
    assert [o.id for o in even] == [o.id for o in whole[0::2]]
    assert {o.id for o in even}.isdisjoint({o.id for o in odd})
    assert len(even) + len(odd) == len(whole)
    with pytest.raises(OpeningsError, match="unknown deck part 'half'"):
        load_deck("english", part="half")
