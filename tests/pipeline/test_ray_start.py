"""Ray start-up and workers on real Ray: one-line start-up failures, numba cache, warm-up (slow).

A head with token authentication (``ray start`` on 127.0.0.2, stopped by process id) refuses a
driver without the token: the driver ends with one ``error:`` line naming the cause and the fix.
On a private local Ray, tasks run with the chosen ``NUMBA_CACHE_DIR`` and every node runs one
warm-up task before its first batches.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.games import executor as executor_module
from pipeline.games.executor import InProcessExecutor, RayExecutor, RayOptions
from pipeline.games.match import BatchSpec, play_batch
from pipeline.games.records import TIMING_COLUMNS
from pipeline.games.selfplay import plan_batches

from .conftest import REPO, SMOKE
from .ray_helpers import LoopbackCluster

pytestmark = pytest.mark.slow


def test_a_driver_without_the_token_gets_one_line(tmp_path: Path) -> None:
    cluster = LoopbackCluster()
    try:
        cluster.start_head()
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
        done = subprocess.run(
            [sys.executable, "-m", "pipeline", "selfplay", str(SMOKE), "--output", str(tmp_path / "out"),
             "--address", cluster.address, "--no-progress"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    finally:
        cluster.stop()
    assert not cluster.pids()
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith(f"error: the Ray cluster at {cluster.address} refused this driver's "
                                "authentication"), done.stderr[-2000:]
    assert "RAY_AUTH_MODE=token" in lines[-1]
    assert len(lines) == 1, done.stderr[-2000:]


def _cache_checking_batch(cache: str, spec: BatchSpec) -> pa.Table:
    if os.environ.get("NUMBA_CACHE_DIR") != cache:
        raise RuntimeError(f"NUMBA_CACHE_DIR is {os.environ.get('NUMBA_CACHE_DIR')!r}, not {cache!r}")
    return play_batch(spec)


def test_tasks_share_a_numba_cache_dir_and_each_node_warms_up_once(smoke_config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import functools

    cache = str(tmp_path / "numba-cache")
    specs = plan_batches(smoke_config)
    options = RayOptions(num_cpus=2, node_ip_address="127.0.0.2", numba_cache_dir=cache)
    executor = RayExecutor(options, batch_fn=functools.partial(_cache_checking_batch, cache))
    try:
        assert executor.numba_cache_dir == cache
        first = dict(executor.run(specs[:2]))
        assert len(executor.warmed_nodes) == 1  # one node: one warm-up task
        second = dict(executor.run(specs[2:]))
        assert len(executor.warmed_nodes) == 1  # not warmed again
    finally:
        executor.close()
    assert list(Path(cache).rglob("*.nbi")), "no numba cache index in the task cache dir"
    local = dict(InProcessExecutor().run(specs))
    for spec, table in {**first, **second}.items():
        keep = [c for c in table.column_names if c not in TIMING_COLUMNS]
        assert table.select(keep).equals(local[spec].select(keep))


def test_warm_up_runs_once_however_many_threads_ask() -> None:
    """Trials in flight call ``run`` side by side; a second warm-up while one is in progress would
    compile on another worker of each node."""
    import threading
    import time as clock

    executor = object.__new__(RayExecutor)  # no Ray: only the warm-up's locking is under test
    executor._warm_lock = threading.Lock()  # type: ignore[attr-defined]
    running, most, calls = [0], [0], []

    def fake_warm_up(spec: object) -> None:
        running[0] += 1
        most[0] = max(most[0], running[0])
        clock.sleep(0.05)
        calls.append(spec)
        running[0] -= 1

    executor._warm_up = fake_warm_up  # type: ignore[method-assign]
    threads = [threading.Thread(target=executor.warm_up, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1 and len(calls) == 8


def _pid_plus(offset: int) -> int:
    return os.getpid() + offset


def _refuse(text: str) -> None:
    raise ValueError(f"bad games table: {text}")


def _rows_and_pid(games: pa.Table, offset: int) -> tuple[int, int]:
    return games.num_rows, os.getpid() + offset


def test_called_work_runs_on_a_worker_and_keeps_its_error(smoke_config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from pipeline.games.schedule import TaskTiming

    specs = plan_batches(smoke_config)[:2]
    executor = RayExecutor(RayOptions(num_cpus=1, node_ip_address="127.0.0.2",
                                      numba_cache_dir=str(tmp_path / "numba-cache")))
    seen: list[TaskTiming] = []
    try:
        pid = executor.call(_pid_plus, (0,), seen.append)
        assert pid != os.getpid()  # not the driver's CPU
        assert len(seen) == 1 and seen[0].node == "127.0.0.2" and seen[0].games == 0
        with pytest.raises(ValueError, match="bad games table: row 3"):
            executor.call(_refuse, ("row 3",))
        tables, (rows, worker) = executor.run_then(specs, _rows_and_pid, (0,), seen.append)
    finally:
        executor.close()
    # the games and the computation on them: one task on a worker, its games counted
    assert worker != os.getpid() and rows == sum(t.num_rows for t in tables) > 0
    assert len(seen) == 2 and seen[1].games == rows and seen[1].batches == 2 and seen[1].other_seconds >= 0
    local = dict(InProcessExecutor().run(specs))
    for spec, table in zip(specs, tables, strict=True):
        keep = [c for c in table.column_names if c not in TIMING_COLUMNS]
        assert table.select(keep).equals(local[spec].select(keep))


def _row_count(games: pa.Table) -> int:
    """A computation after a task's games (sent to the worker by name)."""
    return int(games.num_rows)


def test_idle_work_waits_and_side_by_side_runs_share_the_queue(smoke_config, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                               monkeypatch) -> None:
    """``run(idle_only=True)`` (the product's games played beside the tuning) submits nothing while
    the executor has as many tasks out as the cluster has slots; other runs are not held back;
    once slots are free (for ``IDLE_GRACE_SECONDS``) it plays the same games as any run. And
    while other runs fill the shared queue (``queue_limit``), a run keeps only its own share
    (``own_share``) out, not all of its tasks: one on two slots, two when the share is a whole
    slot count; the games are the same."""
    import threading
    import time as clock

    specs = plan_batches(smoke_config)
    executor = RayExecutor(RayOptions(num_cpus=2, node_ip_address="127.0.0.2", task_seconds=1e-9,
                                      numba_cache_dir=str(tmp_path / "numba-cache")))
    got: dict[BatchSpec, pa.Table] = {}
    try:
        assert executor.slots == 2 and executor.queue_limit() == 3
        executor._count_out(2)  # two tasks of other callers out: no idle slot
        filler = threading.Thread(target=lambda: got.update(executor.run(specs[:3], idle_only=True)))
        filler.start()
        ahead = dict(executor.run(specs[:1]))  # an ordinary run goes ahead meanwhile
        clock.sleep(1.0)
        assert got == {} and executor._count_out(0) == 2  # nothing of the filler submitted
        executor._count_out(-2)
        filler.join(timeout=300)
        assert not filler.is_alive() and executor._count_out(0) == 0

        # the shared queue full with other runs' tasks: this run's four tasks go one at a time
        executor._count_out(3)
        counts: list[int] = []
        count_out = executor._count_out

        def counted(change: int) -> int:
            counts.append(count_out(change))
            return counts[-1]

        executor._count_out = counted  # type: ignore[method-assign]
        tasks: list[object] = []
        shared = dict(executor.run(specs, on_task=tasks.append))
        assert len(tasks) == len(specs) == 4  # four tasks, each seen
        assert max(counts) == 4  # never more than the one task beyond the full queue
        assert executor._count_out(-3) == 0

        # a share of a whole slot count: two tasks of a run out beside a full queue, never three
        monkeypatch.setattr(executor_module, "QUEUE_SHARE", 1.0)
        assert executor.own_share() == 2 and executor.queue_limit() == 4
        count_out(4)
        counts.clear()
        wide = dict(executor.run(specs))
        assert max(counts) == 6
        assert count_out(-4) == 0

        # work played ahead behind a gate: while the gate says so it waits for an idle slot, even
        # in one task with a computation (run_then); the gate opened, it goes at once
        gate = threading.Event()
        count_out(2)  # every slot taken by others, for good
        then: list[tuple[list[pa.Table], int]] = []
        gated = threading.Thread(target=lambda: then.append(executor.run_then(
            specs[:1], _row_count, (), idle_only=lambda: not gate.is_set())))
        gated.start()
        clock.sleep(executor_module.IDLE_GRACE_SECONDS + 1.0)
        assert then == [] and count_out(0) == 2
        gate.set()
        gated.join(timeout=300)
        assert not gated.is_alive() and then[0][1] == then[0][0][0].num_rows > 0
        assert count_out(-2) == 0
    finally:
        executor.close()
    local = dict(InProcessExecutor().run(specs))
    assert set(got) == set(specs[:3]) and set(shared) == set(specs)
    assert set(wide) == set(specs)
    for spec, table in [*got.items(), *ahead.items(), *shared.items(), *wide.items()]:
        keep = [c for c in table.column_names if c not in TIMING_COLUMNS]
        assert table.select(keep).equals(local[spec].select(keep))
