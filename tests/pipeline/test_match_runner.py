"""play_batch (compiled game runner) against play_batch_per_move, and batch-size independence."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.profile import profile_dir
from pipeline.games.executor import InProcessExecutor
from pipeline.games.match import make_batch_spec, play_batch, play_batch_per_move
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing, pair_index, play_pairings
from pipeline.games.records import TIMING_COLUMNS

BASELINE = str(profile_dir() / "english-baseline.json")
GAME_KEYS = ("batch_id", "game_id", "pair_id", "run_id", *TIMING_COLUMNS)


def _rows(table: object, drop: tuple[str, ...] = TIMING_COLUMNS) -> list[dict[str, object]]:
    return [{k: v for k, v in row.items() if k not in drop} for row in table.to_pylist()]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("variant", "a", "b"), [
    ("english", f"{BASELINE}:easy", f"{BASELINE}:medium"),  # random moves and root noise on
    ("english", f"{BASELINE}:easy", "random"),
    ("suicide", "easy", "random"),
    ("brazilian", "easy", "medium"),
    ("russian", "easy", "easy"),
    ("international", "easy", "random"),
])
def test_runner_rows_equal_the_per_move_rows(variant: str, a: str, b: str) -> None:
    deck = load_deck(variant)
    spec = make_batch_spec(run_id="r", batch_id=2, variant=variant, player_a=a, player_b=b, run_seed=17,
                           first_game_id=8, openings=[(o.id, o.fen) for o in deck[:3]], ply_cap=120,
                           pairing=1, first_pair=4, seed_salt=99)
    fast = play_batch(spec)
    assert _rows(fast) == _rows(play_batch_per_move(spec))
    assert sum(fast.column("white_nodes").to_pylist()) > 0 or "random" in (a, b)


def test_a_game_is_the_same_in_batches_of_1_7_and_64_pairs(tmp_path: Path) -> None:
    deck = load_deck("english")
    pairing = [Pairing(f"{BASELINE}:easy", "random", 64)]
    by_size = {}
    for pairs in (1, 7, 64):
        table = play_pairings(InProcessExecutor(), tmp_path / str(pairs), "run", "stage", "english", pairing,
                              3, 2 * pairs, 60, deck, stage_seeds=True)
        by_size[pairs] = {(pair_index(r["game_id"], 2 * pairs), r["game_in_pair"]): r
                          for r in _rows(table, ())}
    keys = set(by_size[1])
    assert len(keys) == 128 and set(by_size[7]) == keys == set(by_size[64])
    for key in keys:
        rows = [{k: v for k, v in by_size[p][key].items() if k not in GAME_KEYS} for p in (1, 7, 64)]
        assert rows[0] == rows[1] == rows[2]
