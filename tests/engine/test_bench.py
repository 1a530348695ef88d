"""Bench: fixed positions, node-count signatures (per variant and total) that repeat exactly,
depth checks, and the shipped profiles' signatures."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bench import (
    BENCH_GAME_PLIES,
    BENCH_GAME_SHALLOWER,
    BENCH_POSITIONS,
    BENCH_TT_LOG2,
    bench_positions,
    bench_signature,
    run_bench,
)
from engine.board import Board
from engine.errors import DraughtsError
from engine.profile import load_profile
from engine.variants import get_variant, variant_names

SHIPPED = sorted((Path(__file__).resolve().parents[2] / "engine" / "profiles").glob("*.json"))


def test_positions_are_valid_and_cover_every_variant() -> None:
    assert {entry.variant for entry in BENCH_POSITIONS} == set(variant_names())
    assert sum(entry.variant == "english" for entry in BENCH_POSITIONS) >= 4
    for entry in BENCH_POSITIONS:
        board = Board(entry.variant, entry.fen)
        assert board.fen() == entry.fen  # written canonically
        assert len(board.legal_moves) >= 2 and board.outcome() is None
        assert 1 <= entry.depth <= 64


def test_signature_repeats_and_depth_override() -> None:
    first = run_bench(depth=4)
    second = run_bench(depth=4)
    assert first.nodes == second.nodes == first.signature == sum(row.nodes for row in first.rows)
    assert [row.best for row in first.rows] == [row.best for row in second.rows]
    assert all(row.best is not None for row in first.rows)
    # each position without and with reductions, then its game with the tables kept, shallower
    per_position = [(4, False, False), (4, True, False)] + [(2, False, True)] * BENCH_GAME_PLIES
    passes = [(row.depth, row.reductions, row.kept) for row in first.rows]
    assert passes == per_position * len(BENCH_POSITIONS)
    assert first.seconds > 0 and first.nps > 0
    assert run_bench(depth=5).nodes > first.nodes


@pytest.mark.parametrize("depth", [0, -1, 65, True])
def test_bad_depth(depth: int) -> None:
    with pytest.raises(DraughtsError, match="bench depth"):
        run_bench(depth=depth)


def test_default_bench_repeats() -> None:
    first, second = run_bench(), run_bench()
    assert first.signature == second.signature
    assert [row.depth for row in first.rows] == [
        depth for entry in BENCH_POSITIONS
        for depth in [entry.depth] * 2 + [entry.depth - BENCH_GAME_SHALLOWER] * BENCH_GAME_PLIES]


def test_the_bench_games_keep_their_tables() -> None:
    """A game's later plies searched by a fresh searcher count other nodes: the kept entries are
    part of the signature."""
    from engine.features import default_weights, weight_vector
    from engine.search import Searcher

    rows = [row for row in run_bench(variants=["english"]).rows if row.kept]
    changed = 0
    for row in rows:
        board = Board("english", row.fen)
        fresh = Searcher(board.variant, weight_vector(default_weights(board.variant)), row.depth, 10**9, True,
                         BENCH_TT_LOG2).search(board.position)
        changed += fresh.nodes != row.nodes
    assert changed >= len(rows) // 2


def test_signatures_are_per_variant() -> None:
    every = run_bench(depth=4)
    assert list(every.signatures) == list(dict.fromkeys(entry.variant for entry in BENCH_POSITIONS))
    assert sum(every.signatures.values()) == every.signature
    for variant in variant_names():
        alone = run_bench(depth=4, variants=[variant])
        assert [row.variant for row in alone.rows] == [variant] * (2 + BENCH_GAME_PLIES) * len(
            bench_positions(variant))
        assert alone.signatures == {variant: alone.signature} and alone.signature == every.signatures[variant]
    pair = run_bench(depth=4, variants=["checkers", get_variant("suicide")])  # aliases and Variants
    assert pair.signatures == {"english": every.signatures["english"], "suicide": every.signatures["suicide"]}
    with pytest.raises(DraughtsError, match=r"no variant chosen, got \[\]"):
        run_bench(variants=[])
    with pytest.raises(DraughtsError, match="'frisian'"):
        run_bench(variants=["frisian"])


def test_bench_signature_counts_only_its_variant() -> None:
    every = run_bench()
    for variant in variant_names():
        assert bench_signature(variant) == every.signatures[variant]
    assert len(set(every.signatures.values())) == len(every.signatures)  # they tell variants apart


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_profile_carries_its_variants_signature(path: Path) -> None:
    """A search or rules change in one variant fails exactly that variant's profiles: recalibrate
    them (or, if the change is known not to alter play, re-export with the new signature)."""
    profile = load_profile(path)
    recorded = profile.provenance.bench_signature
    if recorded is None:
        assert profile.provenance.levels["easy"].elo is None  # hand-written, never measured
        return
    assert bench_signature(profile.variant) == recorded
