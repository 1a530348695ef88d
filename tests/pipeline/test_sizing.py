"""Tasks sized by declared work: packed and split deterministically, every pair exactly once."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.games.match import BatchSpec, make_batch_spec, part_of, play_batch
from pipeline.games.openings import load_deck
from pipeline.games.sizing import (
    MIN_TASK_GAMES,
    TARGET_SECONDS,
    Part,
    game_seconds,
    plan_tasks,
    probe_first,
    task_seconds,
)


def batches(a: str, b: str, count: int, pairs: int = 5, variant: str = "english") -> list[BatchSpec]:
    deck = load_deck(variant)
    return [make_batch_spec(run_id="r", batch_id=i, variant=variant, player_a=a, player_b=b, run_seed=1,
                            first_game_id=2 * pairs * i,
                            openings=[(o.id, o.fen) for o in deck[pairs * i : pairs * (i + 1)]],
                            ply_cap=300, first_pair=pairs * i) for i in range(count)]


def covered(tasks: list[tuple[object, ...]]) -> list[tuple[int, int]]:
    return [(p.spec.batch_id, k) for t in tasks for p in t for k in range(p.start, p.stop)]  # type: ignore[attr-defined]


def games(task: tuple[Part, ...]) -> int:
    return sum(2 * (p.stop - p.start) for p in task)


def test_cheap_batches_are_packed_and_dear_ones_split() -> None:
    cheap = batches("random", "random", 30)
    tasks = plan_tasks(cheap)
    assert len(tasks) == 1 and covered(tasks) == [(b, k) for b in range(30) for k in range(5)]
    dear = batches("hard", "hard", 3, pairs=10)
    assert game_seconds(dear[0]) > game_seconds(cheap[0])
    tasks = plan_tasks(dear)
    assert covered(tasks) == [(b, k) for b in range(3) for k in range(10)]
    assert len(tasks) > 3  # 200,000-node games: a batch of 10 pairs is several tasks
    assert all(task_seconds(t) >= TARGET_SECONDS and games(t) >= MIN_TASK_GAMES for t in tasks)
    assert plan_tasks(dear) == tasks  # a pure function of the specs


def test_estimates_use_declared_limits_only() -> None:
    easy, hard = batches("easy", "easy", 1)[0], batches("hard", "hard", 1)[0]
    assert game_seconds(easy) == game_seconds(batches("easy", "easy", 1)[0])
    assert game_seconds(hard) > game_seconds(easy) > game_seconds(batches("random", "random", 1)[0])


def test_parts_join_to_the_whole_batch() -> None:
    spec = batches("random", "random", 1, pairs=3)[0]
    whole = play_batch(spec)
    parts = pa.concat_tables([play_batch(part_of(spec, 0, 1)), play_batch(part_of(spec, 1, 3))])
    keep = [c for c in whole.column_names if not c.endswith("_seconds")]
    assert parts.sort_by("game_id").select(keep).equals(whole.select(keep))


def test_every_pairing_has_a_task_near_the_front_and_no_task_is_lost() -> None:
    a = batches("hard", "hard", 3)
    b = [BatchSpec(**{**x.__dict__, "batch_id": 10 + x.batch_id}) for x in batches("easy", "random", 2)]
    tasks = [(Part(a[0], 0, 5),), (Part(a[1], 0, 5),), (Part(a[2], 0, 3),),
             (Part(a[2], 3, 5), Part(b[0], 0, 5)), (Part(b[1], 0, 5),)]
    assert probe_first(tasks) == [tasks[0], tasks[3], tasks[1], tasks[2], tasks[4]]
    assert probe_first(probe_first(tasks)) == probe_first(tasks)


def test_after_the_probes_the_dearest_tasks_go_first() -> None:
    a = batches("hard", "hard", 3)
    b = [BatchSpec(**{**x.__dict__, "batch_id": 10 + x.batch_id}) for x in batches("easy", "random", 3)]
    tasks = [(Part(b[0], 0, 5),), (Part(a[0], 0, 5),), (Part(b[1], 0, 5),), (Part(b[2], 0, 5),),
             (Part(a[1], 0, 2),), (Part(a[2], 0, 5),)]
    ordered = probe_first(tasks)
    assert ordered[:2] == [tasks[0], tasks[1]]  # each pairing's first task, in order
    assert ordered[2:] == [tasks[5], tasks[4], tasks[2], tasks[3]]  # then dearest first, ties in order
    seconds = [task_seconds(t) for t in ordered[2:]]
    assert seconds == sorted(seconds, reverse=True) and seconds[0] > seconds[-1]


def test_a_smaller_task_target_gives_more_tasks_over_the_same_pairs() -> None:
    specs = batches("medium", "medium", 30)
    default = plan_tasks(specs)
    small = plan_tasks(specs, target=0.2)
    assert len(default) == 1 and len(small) >= 4
    assert covered(small) == covered(default)  # the same pairs in the same order: no game changes
    assert all(task_seconds(t) >= 0.2 for t in small)
    with pytest.raises(ValueError, match="task target of 0"):
        plan_tasks(specs, target=0)


def test_a_short_last_task_joins_the_one_before() -> None:
    specs = batches("easy", "easy", 9)  # 9 equal batches: tasks of 4, 4 and a last one of 1
    per_batch = 2 * 5 * game_seconds(specs[0])
    tasks = plan_tasks(specs, target=4 * per_batch * 0.999)
    assert [len(t) for t in tasks] == [4, 5]  # the lone ninth batch rides with the four before it
    assert covered(tasks) == [(b, k) for b in range(9) for k in range(5)]
    tasks = plan_tasks(specs[:6], target=4 * per_batch * 0.999)
    assert [len(t) for t in tasks] == [6]  # under the target: never a task of its own
    assert [len(t) for t in plan_tasks(specs[:2], target=4 * per_batch)] == [2]  # a stage's only task


def test_a_dear_batch_splits_into_even_parts_with_no_short_remainder() -> None:
    dear = batches("hard", "hard", 2, pairs=25)
    per_pair = 2 * game_seconds(dear[0])
    target = 3.4 * per_pair  # 25 pairs would leave a 1-pair remainder in steps of 3
    tasks = plan_tasks(dear, target=target)
    sizes = [p.stop - p.start for t in tasks for p in t]
    assert max(sizes) - min(sizes) <= 1 and min(sizes) * per_pair >= target
    assert covered(tasks) == [(b, k) for b in range(2) for k in range(25)]


def test_no_task_of_dear_games_holds_fewer_than_the_least_game_count() -> None:
    """A tiny target would make every pair a task; two games vary too much with their lengths."""
    dear = batches("hard", "hard", 1, pairs=10)
    tasks = plan_tasks(dear, target=2 * game_seconds(dear[0]))
    assert [games(t) for t in tasks] == [10, 10]
    assert covered(tasks) == [(0, k) for k in range(10)]
