"""Texel positions: the scalar kernel's features of real game positions equal the batch extraction's."""

from __future__ import annotations

import numpy as np

from engine.batch.features import extract_features
from engine.batch.positions import PositionBatch
from engine.board import Board
from engine.variants import get_variant
from pipeline.games.match import make_batch_spec, play_batch
from pipeline.games.openings import load_deck
from pipeline.tuning.texel import MIN_PLY, positions_from_games


def test_texel_features_equal_the_batch_extraction() -> None:
    for variant in ("english", "international"):
        deck = load_deck(variant)
        spec = make_batch_spec(run_id="t", batch_id=0, variant=variant, player_a="easy", player_b="random",
                               run_seed=2, first_game_id=0, openings=[(o.id, o.fen) for o in deck[:3]],
                               ply_cap=80)
        table = play_batch(spec)
        x, y = positions_from_games(table, variant, 10**6, 0)
        positions, results = [], []
        for row in table.to_pylist():
            board = Board(variant, row["opening_fen"])
            for ply, token in enumerate(t for t in row["moves"].split() if not t.endswith(".")):
                board.push_text(token)
                moves = board.legal_moves
                if ply + 1 >= MIN_PLY and moves and not any(m.captured for m in moves):
                    positions.append(board.position)
                    results.append(row["result_white"])
        assert len(positions) > 50
        batch = extract_features(get_variant(variant), PositionBatch.from_positions(positions))
        np.testing.assert_array_equal(x, batch)
        np.testing.assert_array_equal(y, np.array(results))
