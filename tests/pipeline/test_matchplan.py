"""The 'play these pairings' service: deterministic plans, atomic stage files, resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.games.executor import InProcessExecutor
from pipeline.games.match import BatchSpec, game_seeds, play_batch
from pipeline.games.openings import load_deck
from pipeline.games.pairings import (
    BATCH_STRIDE,
    Pairing,
    pair_index,
    plan_pairings,
    play_pairings,
    stage_salt,
)
from pipeline.games.records import GAMES_SCHEMA, TIMING_COLUMNS

DECK = load_deck("english")
PAIRINGS = [Pairing("random", "random", 5), Pairing("random", "random", 3, stream=0)]


def _plan(seed: int = 3, pairings: list[Pairing] = PAIRINGS) -> list[BatchSpec]:
    return plan_pairings("run", "ladder", "english", pairings, seed, 4, 40, DECK)


def test_plan_is_deterministic_and_ids_are_unique() -> None:
    specs = _plan()
    assert specs == _plan()
    assert [s.batch_id for s in specs] == [0, 1, 2, BATCH_STRIDE, BATCH_STRIDE + 1]
    assert [s.n_games for s in specs] == [4, 4, 2, 4, 2]
    game_ids = [s.first_game_id + i for s in specs for i in range(s.n_games)]
    assert len(set(game_ids)) == len(game_ids)
    assert all(s.run_id == "run/ladder" for s in specs)
    assert _plan(seed=4) != specs


def test_same_stream_same_openings_and_every_pair_has_both_colours() -> None:
    specs = _plan()
    first = [o for s in specs if s.batch_id < BATCH_STRIDE for o in s.openings]
    second = [o for s in specs if s.batch_id >= BATCH_STRIDE for o in s.openings]
    assert second == first[:3]  # stream 0 in both pairings
    other = plan_pairings("run", "ladder", "english", [Pairing("random", "random", 5, stream=9)], 3, 4, 40,
                          DECK)
    assert [o for s in other for o in s.openings] != first


CONFIRM, VALIDATE = "calibrate/hard/confirm-0003/round-000", "calibrate/hard/validate-0003/round-000"


def _seeds(specs: list[BatchSpec]) -> list[object]:
    return [seeds for spec in specs for seeds in spec.seeds]


def test_stage_seeds_give_every_stage_its_own_seeds() -> None:
    def plan(stage: str, stage_seeds: bool) -> list[BatchSpec]:
        return plan_pairings("run", stage, "english", PAIRINGS, 3, 4, 40, DECK, stage_seeds=stage_seeds)

    # without the stage in the seeds, two stages share the seeds of every slot
    assert _seeds(plan(CONFIRM, False)) == _seeds(plan(VALIDATE, False))
    assert plan(CONFIRM, False) == plan_pairings("run", CONFIRM, "english", PAIRINGS, 3, 4, 40, DECK)
    confirm, validate = plan(CONFIRM, True), plan(VALIDATE, True)
    assert confirm == plan(CONFIRM, True)  # still a pure function of its inputs
    every = _seeds(confirm) + _seeds(validate) + _seeds(plan(CONFIRM, False))
    assert len(set(every)) == len(every)
    # only the seeds change: same batches, same openings
    assert [(s.batch_id, s.openings) for s in confirm] == [(s.batch_id, s.openings)
                                                            for s in plan(CONFIRM, False)]


def test_played_games_record_the_stage_seeds(tmp_path: Path) -> None:
    pairing = [Pairing("random", "random", 2)]
    table = play_pairings(InProcessExecutor(), tmp_path, "run", VALIDATE, "english", pairing, 9, 4, 40, DECK,
                          stage_seeds=True)
    salt = stage_salt(VALIDATE)
    for row in table.select(["game_id", "game_seed", "white_seed", "black_seed", "a_color"]).to_pylist():
        pairing_index, pair = pair_index(row["game_id"], 4)
        expected = game_seeds(9, pairing_index, pair, row["game_id"] % 2, salt)
        a, b = (row["white_seed"], row["black_seed"]) if row["a_color"] == "white" else (
            row["black_seed"], row["white_seed"])
        assert (row["game_seed"], a, b) == (expected.game, expected.a, expected.b)


def test_steps_extend_a_pairing_without_moving_batches() -> None:
    whole = plan_pairings("r", "s", "english", [Pairing("a", "b", 6)], 1, 4, 40, DECK)
    steps = [plan_pairings("r", "s", "english", [Pairing("a", "b", 2, start=k)], 1, 4, 40, DECK)
             for k in (0, 2, 4)]
    assert [spec for step in steps for spec in step] == whole
    with pytest.raises(ValueError, match="not a multiple"):
        plan_pairings("r", "s", "english", [Pairing("a", "b", 2, start=1)], 1, 4, 40, DECK)
    assert pair_index(BATCH_STRIDE * 4 + 3, 4) == (1, 1)


def test_play_pairings_writes_resumes_and_reproduces(tmp_path: Path) -> None:
    played: list[int] = []

    def counting(spec: BatchSpec):  # type: ignore[no-untyped-def]
        played.append(spec.batch_id)
        return play_batch(spec)

    pairings = [Pairing("random", "random", 3)]
    seen: list[int] = []
    table = play_pairings(InProcessExecutor(counting), tmp_path, "run", "tune/trial-0001", "english",
                          pairings, 5, 4, 30, DECK, progress=lambda p: seen.append(p.games_done))
    folder = tmp_path / "run" / "tune" / "trial-0001" / "games" / "variant=english"
    names = sorted(p.name for p in folder.glob("batch-*.parquet"))
    assert names == ["batch-000000.parquet", "batch-000001.parquet"]
    assert table.num_rows == 6 and table.schema.equals(GAMES_SCHEMA)
    assert table.column("game_in_pair").to_pylist() == [0, 1] * 3
    assert seen[-1] == 6 and played == [0, 1]

    (folder / "batch-000001.parquet").unlink()
    played.clear()
    read_back: list[int] = []
    again = play_pairings(InProcessExecutor(counting), tmp_path, "run", "tune/trial-0001", "english",
                          pairings, 5, 4, 30, DECK,
                          on_resumed=lambda specs: read_back.extend(s.batch_id for s in specs))
    assert played == [1] and read_back == [0]  # the finished batch is kept, not replayed
    keep = [c for c in table.column_names if c not in TIMING_COLUMNS]
    assert again.select(keep).equals(table.select(keep))

    elsewhere = play_pairings(InProcessExecutor(), tmp_path / "other", "run", "tune/trial-0001", "english",
                              pairings, 5, 4, 30, DECK)
    assert elsewhere.select(keep).equals(table.select(keep))


def test_left_pairings_are_played_by_another_caller_with_the_same_batches(tmp_path: Path) -> None:
    """Pairing 0 played alone first (as the job plays the product's curve games ahead), the rest
    played leaving it: together they are the batches one call of the whole plan writes."""
    pairings = [Pairing("random", "random", 2, stream=0), Pairing("random", "random", 4, stream=0)]
    ahead = play_pairings(InProcessExecutor(), tmp_path / "split", "run", "s", "english", pairings[:1], 5, 4,
                          40, DECK, stage_seeds=True)
    rest = play_pairings(InProcessExecutor(), tmp_path / "split", "run", "s", "english", pairings, 5, 4, 40,
                         DECK, stage_seeds=True, leave=range(1))
    assert ahead.num_rows == 4 and rest.num_rows == 8
    assert {g // 4 // BATCH_STRIDE for g in rest.column("game_id").to_pylist()} == {1}
    played: list[int] = []
    together = play_pairings(InProcessExecutor(), tmp_path / "split", "run", "s", "english", pairings, 5, 4,
                             40, DECK, stage_seeds=True,
                             on_resumed=lambda specs: played.extend(s.batch_id for s in specs))
    assert len(played) == 3  # every batch found finished, none played again
    whole = play_pairings(InProcessExecutor(), tmp_path / "whole", "run", "s", "english", pairings, 5, 4, 40,
                          DECK, stage_seeds=True)
    keep = [c for c in whole.column_names if c not in TIMING_COLUMNS]
    assert together.select(keep).equals(whole.select(keep))
