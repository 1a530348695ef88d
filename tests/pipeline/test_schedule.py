"""The task timeline: busy share, tasks in flight, task durations and the driver's cost per task."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.games.executor import InProcessExecutor
from pipeline.games.match import make_batch_spec
from pipeline.games.openings import load_deck
from pipeline.games.schedule import (
    TaskTimeline,
    TaskTiming,
    max_overlap,
    most_compiles,
    read_compiles,
    read_schedules,
    stage_group,
    summarise,
    write_schedules,
)
from pipeline.jsonrecord import RecordError


def _t(start: float, end: float, node: str = "n1") -> TaskTiming:
    return TaskTiming(node, start, end, 1, 10)


def test_busy_share_and_in_flight_of_a_known_timeline() -> None:
    # two slots over 10 s: slot one busy 0-10, slot two busy 0-4 and 6-8 -> 16 of 20 slot-seconds
    timings = [_t(0, 10), _t(0, 4, "n2"), _t(6, 8, "n2")]
    s = summarise("calibrate/curves", timings, slots=2, driver_cpu_seconds=1.5)
    assert s.tasks == 3 and s.span_seconds == 10
    assert s.busy_share == pytest.approx(0.8)
    assert s.mean_in_flight == pytest.approx(1.6)
    assert s.max_in_flight == 2
    assert s.task_seconds_p50 == pytest.approx(4.0)
    assert s.small_task_share == pytest.approx(2 / 3)  # 4 s and 2 s are below 5 s
    assert s.driver_cpu_per_task == pytest.approx(0.5)
    assert s.driver_slot_limit == pytest.approx((16 / 3) / 0.5)
    assert s.nodes == 2


def test_max_overlap_counts_touching_tasks_once() -> None:
    assert max_overlap([_t(0, 1), _t(1, 2), _t(2, 3)]) == 1
    assert max_overlap([_t(0, 3), _t(1, 2), _t(1.5, 4)]) == 3


def test_trial_stages_fold_into_their_study() -> None:
    assert stage_group("tune/trial-0003") == "tune/trials"
    assert stage_group("calibrate/easy/trial-012") == "calibrate/easy/trials"
    assert stage_group("calibrate/curves") == "calibrate/curves"


def test_timeline_by_stage_and_job_stage() -> None:
    timeline = TaskTimeline()
    for k in range(3):
        timeline.add(f"tune/trial-000{k}", _t(k, k + 6))
    timeline.add("tune/confirm", _t(10, 16))
    timeline.add("calibrate/curves", _t(20, 30))
    names = [s.stage for s in timeline.schedules(slots=4)]
    assert names == ["calibrate/curves", "tune/confirm", "tune/trials", "tune", "all"]
    tune = timeline.schedules(slots=4)[-2]
    assert tune.tasks == 4 and tune.span_seconds == 16
    assert tune.busy_share == pytest.approx(24 / 64)
    every = timeline.schedules(slots=4)[-1]  # job stages may overlap: the whole job has its own row
    assert every.tasks == 5 and every.span_seconds == 30
    assert every.busy_share == pytest.approx(34 / 120)
    assert timeline.schedules(slots=4)[0].driver_cpu_seconds is None  # one task: unknown


def test_executor_reports_every_task() -> None:
    opening = load_deck("english")[0]
    spec = make_batch_spec(run_id="r", batch_id=0, variant="english", player_a="random", player_b="random",
                           run_seed=3, first_game_id=0, openings=[(opening.id, opening.fen)], ply_cap=20)
    seen: list[TaskTiming] = []
    out = list(InProcessExecutor().run([spec], seen.append))
    assert len(out) == 1 and isinstance(out[0][1], pa.Table)
    assert len(seen) == 1 and seen[0].games == 2 and seen[0].ended >= seen[0].started


def test_stored_schedules_keep_stages_this_driver_did_not_play(tmp_path: Path) -> None:
    path = tmp_path / "schedule.json"
    first = summarise("tune/trials", [_t(0, 6), _t(1, 7)], slots=2, driver_cpu_seconds=0.2)
    write_schedules(path, [first])
    later = summarise("calibrate/curves", [_t(0, 8)], slots=2)
    write_schedules(path, [later])  # a resumed driver that read tune back
    assert [s.stage for s in read_schedules(path)] == ["calibrate/curves", "tune/trials"]
    assert read_schedules(path)[1] == first
    data = json.loads(path.read_text())
    data["stages"][0]["busy"] = 1
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match="unknown key 'busy'"):
        read_schedules(path)


def test_no_tasks_is_an_error() -> None:
    with pytest.raises(ValueError, match="no task"):
        summarise("x", [], slots=2)


def test_report_table_of_the_stored_schedules(tmp_path: Path) -> None:
    from pipeline.games.storage_fs import store_path
    from pipeline.job.schedule_report import write_schedule_report

    run = store_path(tmp_path)
    assert write_schedule_report(run, run) is None  # no schedule.json: no table
    write_schedules(run / "schedule.json",
                    [summarise("tune/trials", [_t(0, 6), _t(0, 4)], slots=2, driver_cpu_seconds=0.1)])
    text = write_schedule_report(run, run).read_text()  # type: ignore[union-attr]
    assert "| tune/trials | 2 | 2 | 83% | 1.7 / 2 | 4.2 / 5.0 / 5.8 | 50% | 0.050 | 100 |" in text


def test_kernel_compiles_are_stored_by_node_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "schedule.json"
    stage = summarise("tune/trials", [_t(0, 6)], slots=1)
    compiles = {"10.0.0.1": {"engine.kernel.search.search_root(int64)": 1},
                "10.0.0.2": {"engine.kernel.search.search_root(int64)": 2, "engine.x(int64)": 1}}
    write_schedules(path, [stage], compiles)
    assert read_compiles(path) == compiles
    assert most_compiles(compiles) == 2 and most_compiles({}) == 0
    write_schedules(path, [stage])  # no counts given: the stored ones stay
    assert read_compiles(path) == compiles
    data = json.loads(path.read_text())
    data["compiles"]["10.0.0.1"]["engine.y(int64)"] = 0
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match=r"engine\.y\(int64\): expected a count of at least 1"):
        read_compiles(path)


def test_a_schedule_written_before_compiles_were_counted_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "schedule.json"
    stage = summarise("tune/trials", [_t(0, 6)], slots=1)
    path.write_text(json.dumps({"schema": 1, "stages": [stage.to_json()]}))
    assert read_schedules(path) == [stage] and read_compiles(path) == {}


def test_report_says_whether_a_node_compiled_a_kernel_twice(tmp_path: Path) -> None:
    from pipeline.games.storage_fs import store_path
    from pipeline.job.schedule_report import compiles_markdown, write_schedule_report

    once = {"n1": {"a(int64)": 1, "b(int64)": 1}, "n2": {"a(int64)": 1}}
    assert "| n1 | 2 | 2 | 1 |" in compiles_markdown(once)
    assert "Every node compiled each kernel at most once." in compiles_markdown(once)
    twice = {"n1": {"a(int64)": 2}}
    assert "**A node compiled a kernel more than once.**" in compiles_markdown(twice)
    assert "every process loaded numba's cache" in compiles_markdown({})
    run = store_path(tmp_path)
    write_schedules(run / "schedule.json", [summarise("tune/trials", [_t(0, 6)], slots=1)], twice)
    text = write_schedule_report(run, run).read_text()  # type: ignore[union-attr]
    assert "## Kernel compilations by node" in text and "| n1 | 1 | 2 | 2 |" in text


def _worker_pid(offset: int) -> int:
    return os.getpid() + offset


def test_work_called_through_the_executor_is_a_task_of_its_stage() -> None:
    from pipeline.games.executor import CALL_PAIRING
    from pipeline.games.stage import StageContext
    from pipeline.games.storage_fs import store_path

    timeline = TaskTimeline()
    ctx = StageContext(InProcessExecutor(), store_path("/tmp"), "r", "english", 1, 4, 20, (),
                       timeline=timeline)
    assert ctx.compute("calibrate/easy/trial-002", _worker_pid, 5) == os.getpid() + 5
    ((timing, _),) = timeline.tasks["calibrate/easy/trials"]
    assert timing.games == 0 and timing.estimated == 0.0 and timing.pairing == f"{CALL_PAIRING}:_worker_pid"


def test_idle_stretches_find_the_tails_and_name_the_stages_running() -> None:
    from pipeline.games.schedule_idle import idle_stretches

    # 4 slots: 0-100 s full (tune), 100-150 s one tune task left (3 slots idle, 150 slot-s),
    # 150-160 s nothing (the driver alone, 40 slot-s), 160-260 s full again (curves)
    tasks = [("tune/trials", 0.0, 100.0)] * 3 + [("tune/trials", 0.0, 150.0)]
    tasks += [("calibrate/curves", 160.0, 260.0)] * 4
    out = idle_stretches(tasks, slots=4, windows=52)  # windows of 5 s
    assert len(out) == 1
    gap = out[0]
    assert (gap.start, gap.end) == (100.0, 160.0)
    assert gap.idle_slot_seconds == pytest.approx(150.0 + 40.0)
    assert gap.mean_in_flight == pytest.approx(50.0 / 60.0)
    assert gap.stages == ("tune/trials",)
    # busy everywhere: nothing to report; keep= picks the largest, returned in time order
    assert idle_stretches([("x", 0.0, 10.0)] * 2, slots=2) == []
    # 10-30 s: 30 idle slot-seconds ("a" then the driver); 40-80 s: 40 ("b")
    two = [("a", 0.0, 10.0), ("a", 0.0, 20.0), ("b", 30.0, 40.0), ("b", 30.0, 80.0)]
    largest = idle_stretches(two, slots=2, windows=80, keep=1)
    assert [(s.start, s.idle_slot_seconds, s.stages) for s in largest] == [(40.0, 40.0, ("b",))]
    assert [s.start for s in idle_stretches(two, slots=2, windows=80)] == [10.0, 40.0]


def test_idle_stretches_are_stored_read_back_and_reported(tmp_path: Path) -> None:
    from pipeline.games.schedule import read_idle
    from pipeline.games.schedule_idle import IdleStretch
    from pipeline.games.storage_fs import store_path
    from pipeline.job.schedule_report import write_schedule_report

    run = store_path(tmp_path)
    stage = summarise("tune/trials", [_t(0, 6)], slots=2)
    idle = [IdleStretch(10.0, 40.0, 35.0, 0.8, ("calibrate/checks", "calibrate/validation")),
            IdleStretch(50.0, 52.0, 4.0, 0.0, ())]
    write_schedules(run / "schedule.json", [stage], None, idle)
    assert read_idle(run / "schedule.json") == idle
    write_schedules(run / "schedule.json", [stage])  # none given: the stored ones stay
    assert read_idle(run / "schedule.json") == idle
    text = write_schedule_report(run, run).read_text()  # type: ignore[union-attr]
    assert "| 10 | 40 | 35 | 0.8 | calibrate/checks, calibrate/validation |" in text
    assert "| 50 | 52 | 4 | 0.0 | none (the driver alone) |" in text
    path = tmp_path / "schedule.json"
    data = json.loads(path.read_text())
    data["idle"][0]["stages"] = "calibrate/checks"
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match=r"idle\[0\]\.stages"):
        read_idle(run / "schedule.json")


def test_a_schedule_written_before_idle_stretches_were_kept_still_reads(tmp_path: Path) -> None:
    from pipeline.games.schedule import read_idle

    path = tmp_path / "schedule.json"
    stage = summarise("tune/trials", [_t(0, 6)], slots=1)
    path.write_text(json.dumps({"schema": 2, "stages": [stage.to_json()], "compiles": {}}))
    assert read_schedules(path) == [stage] and read_idle(path) == [] and read_compiles(path) == {}


def test_task_rows_keep_each_task_with_its_own_stage_in_start_order(tmp_path: Path) -> None:
    import csv

    from pipeline.games.schedule import TaskTimeline
    from pipeline.games.schedule_tasks import COLUMNS, write_task_rows

    timeline = TaskTimeline()
    timeline.add("tune/trial-0003", TaskTiming("n2", 105.0, 111.5, 2, 20, 6.0, "abc", other_seconds=0.25))
    timeline.add("calibrate/curves", TaskTiming("n1", 100.0, 104.0, 1, 10, 4.0, "def"))
    path = tmp_path / "schedule-tasks.csv"
    write_task_rows(path, timeline.rows())
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == COLUMNS
    assert [r["stage"] for r in rows] == ["calibrate/curves", "tune/trial-0003"]  # not folded, by start
    assert (rows[0]["start_s"], rows[0]["end_s"]) == ("0.000", "4.000")  # after the first start
    assert rows[1] == {"stage": "tune/trial-0003", "node": "n2", "start_s": "5.000", "end_s": "11.500",
                       "batches": "2", "games": "20", "nominal_s": "6.000", "other_s": "0.250",
                       "pairing": "abc"}
    write_task_rows(path, [])
    assert path.read_text() == ",".join(COLUMNS) + "\n"  # no tasks: the header alone
