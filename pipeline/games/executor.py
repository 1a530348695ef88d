"""Fan batches out to Ray tasks (the ONLY module that imports ray) or run them in-process.

Both executors have one interface: ``run(specs, on_task)`` yields ``(spec, table)`` as batches
finish, in completion order, so the driver can write each file the moment it arrives, and tells
``on_task`` when and where each task ran (:mod:`pipeline.games.schedule`). A Ray task holds
work, not a game count (``pipeline.games.sizing``): several small batches, or one part of a big
one, whose parts the driver joins before yielding the batch. It submits the first task of every
player pairing first (``sizing.probe_first``: the ETA and the validation's plan see every
pairing early), then the rest in order. ``run_then`` plays a few whole batches and a computation
on their games in one task (a stage too small for a task of its own). The Ray executor keeps at most
``max_in_flight`` tasks of a run submitted (``ray.wait``), and all runs side by side share one bound
on what waits in Ray's queue (:data:`QUEUE_SHARE`): Ray starts queued tasks in the order they were
submitted, so without it a stage that submits many tasks at once (the curves) would hold a later
stage's (Easy's trials) behind all of its own. Every run may keep that share's worth of tasks out
whatever the others have (:meth:`RayExecutor.own_share`), so every run progresses and a run of
a few tasks (a tuning trial's step) submits them all: Ray's queue stays deep when only such runs
are out, and a slot freed at a step boundary is refilled from it without waiting for the driver.
A run with ``idle_only`` (work that needs no
other stage, such as the product's own games during the tuning) submits only into slots that
have stayed free for a few seconds, so it fills gaps without queueing ahead of other stages;
``idle_only`` may be a function asked before each submission, so work played ahead in the gaps
of one stage goes at full speed once a later stage needs it. It
lets Ray retry a task whose
worker died (``max_retries``; also on a WorkerCrashedError surfacing as the task's exception)
and resubmits a batch whose retries ran out on a crash. Seeds and file names are deterministic
per batch, so a retried batch reproduces and overwrites its own result: nothing counts twice.

Start-up: a failed ``ray.init`` (a node that timed out, versions that differ from the cluster's,
a missing auth token) ends in :class:`RayStartError`, one line naming the cause and the fix
(:func:`pipeline.config.placement.ray_start_problem`). Compiled kernels: tasks run with
``NUMBA_CACHE_DIR`` set (``RayOptions.numba_cache_dir``, else the driver's own, else
:data:`CLUSTER_NUMBA_CACHE` on a cluster), a folder each node keeps between tasks and jobs, and
before its first batches the executor runs one warm-up task on every node (two plies of the first
batch's first pair, then the executor's ``warm_fns`` on that game: the kernels of the work
:meth:`Executor.call` sends, such as a blunder rate), so each node compiles once and its other
workers load the cache. Every task
reports the kernels its worker compiled while it ran (:mod:`engine.compiles`); ``compiles_by_node``
adds them up per node, with the driver's own under its node when it shares the tasks' numba
cache, else as a row of its own (``<node> (driver)``), so a run shows that it held.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import logging
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

import pyarrow as pa

from engine.compiles import compiles_since, kernel_compiles
from engine.runtime import configure_process
from pipeline.config.placement import ray_start_problem
from pipeline.games.match import BatchSpec, part_of, play_batch
from pipeline.games.schedule import TaskTiming
from pipeline.games.sizing import (
    TARGET_SECONDS,
    Task,
    batch_seconds,
    pair_key,
    pair_nodes,
    plan_tasks,
    probe_first,
    task_seconds,
)
from pipeline.games.stopping import POLL_SECONDS, check_stop

#: how often a run that fills idle slots only (``idle_only``) looks for one while it has none
IDLE_POLL_SECONDS = 0.2
#: how long a slot must stay free before an ``idle_only`` run takes it: longer than the driver
#: takes between one task of a stage and its next (a tuning step's files, the pruner's check)
IDLE_GRACE_SECONDS = 3.0
#: tasks the runs side by side keep submitted beyond the cluster's slots, as a share of the slots
#: (at least one): enough that a slot is refilled from Ray's queue without waiting for the driver,
#: few enough that a task submitted later waits behind only about that many others of a big run;
#: also the tasks every run may keep out whatever the others have (a run that small cannot hold
#: another back by more than that)
QUEUE_SHARE = 0.25
#: where tasks on a cluster keep numba's cache when neither the options nor the driver name one:
#: node-local and kept across reboots (FHS /var/tmp), so a node compiles each code version once
CLUSTER_NUMBA_CACHE = "/var/tmp/draughts-tuning/numba-cache"

T = TypeVar("T")
BatchFn = Callable[[BatchSpec], pa.Table]
TaskFn = Callable[[TaskTiming], None]  # told of every finished task (pipeline.games.schedule)
#: submit only into idle slots: always, never, or while the function says so (asked each time)
IdleOnly = bool | Callable[[], bool]
#: run in every node's warm-up task on its two-ply batch and games, to compile the kernels of the
#: work ``Executor.call`` sends there (module-level functions: Ray sends them by name)
WarmFn = Callable[[BatchSpec, pa.Table], object]
IN_PROCESS_NODE = "in-process"
#: the pairing key of a task that played no games (:meth:`Executor.call`): no plan matches it
CALL_PAIRING = "call"


class BatchFailedError(RuntimeError):
    """A batch raised inside its task: a bug or a broken worker setup, not a lost worker."""


class RayStartError(ConnectionError):
    """Ray did not start or connect; the one-line message names the cause and the fix."""


class Executor(Protocol):
    """Runs batches somewhere and yields them as they finish."""

    def run(self, specs: Iterable[BatchSpec], on_task: TaskFn | None = None,
            idle_only: IdleOnly = False) -> Iterator[tuple[BatchSpec, pa.Table]]:
        """``idle_only``: submit a task only once the executor has had fewer tasks out than the
        cluster has slots for a while (``IDLE_GRACE_SECONDS``): work that fills the gaps other
        stages leave, never queued ahead of them (a function: while it returns true)."""
        ...

    def close(self) -> None: ...

    @property
    def description(self) -> str: ...

    @property
    def batches_by_node(self) -> dict[str, int]: ...

    @property
    def slots(self) -> int: ...

    def compiles_by_node(self) -> dict[str, dict[str, int]]:
        """Kernel compilations so far by node, then by kernel and signature, this process's
        own (the driver's) under its node, or as ``<its node> (driver)`` when its numba cache is
        not the tasks'."""
        ...

    def call(self, fn: Callable[..., T], args: tuple[Any, ...], on_task: TaskFn | None = None) -> T:
        """``fn(*args)`` where the batches run (a module-level function: Ray sends it by name),
        so work the driver would do (blunder rates) takes a worker's CPU instead of the driver's;
        ``on_task`` is told of its task (no batches, no games, pairing :data:`CALL_PAIRING`)."""
        ...

    def run_then(self, specs: Sequence[BatchSpec], fn: Callable[..., T], args: tuple[Any, ...],
                 on_task: TaskFn | None = None, idle_only: IdleOnly = False) -> tuple[list[pa.Table], T]:
        """Play whole batches ``specs``, then ``fn(games, *args)`` on all their games (sorted by
        game id), in ONE task: for a stage whose games are too few to make a task of their own
        and whose games the driver would send straight back to a worker (an Easy trial's blunder
        rate). The batches' tables in ``specs`` order and ``fn``'s value; ``on_task`` is told of
        one task with its games, ``fn``'s time as :attr:`TaskTiming.other_seconds`.
        ``idle_only`` as in :meth:`run`."""
        ...


class InProcessExecutor:
    """Plays batches one after another in this process (tests, small matches, overhead baseline)."""

    description = "in-process"
    slots = 1  # one batch at a time

    def __init__(self, batch_fn: BatchFn = play_batch) -> None:
        self._batch_fn = batch_fn
        self.batches_by_node: dict[str, int] = {}

    def run(self, specs: Iterable[BatchSpec], on_task: TaskFn | None = None,
            idle_only: IdleOnly = False) -> Iterator[tuple[BatchSpec, pa.Table]]:
        for spec in specs:  # one slot, played by the calling thread: idle_only changes nothing
            check_stop()
            started = time.time()
            table = self._batch_fn(spec)
            if on_task is not None:
                on_task(TaskTiming(IN_PROCESS_NODE, started, time.time(), 1, table.num_rows,
                                   batch_seconds(spec),
                                   pair_key(spec.player_a, spec.player_b),
                                   pair_nodes(spec.variant, spec.player_a, spec.player_b)))
            yield spec, table

    def compiles_by_node(self) -> dict[str, dict[str, int]]:
        compiled = kernel_compiles()  # the batches ran in this process: its whole count
        return {IN_PROCESS_NODE: compiled} if compiled else {}

    def call(self, fn: Callable[..., T], args: tuple[Any, ...], on_task: TaskFn | None = None) -> T:
        started = time.time()
        value = fn(*args)
        if on_task is not None:
            on_task(_call_timing(fn, IN_PROCESS_NODE, started, time.time()))
        return value

    def run_then(self, specs: Sequence[BatchSpec], fn: Callable[..., T], args: tuple[Any, ...],
                 on_task: TaskFn | None = None, idle_only: IdleOnly = False) -> tuple[list[pa.Table], T]:
        check_stop()  # one slot, played by the calling thread: idle_only changes nothing
        tables, value, started, played, ended = _play_then(self._batch_fn, tuple(specs), fn, args)
        if on_task is not None:
            on_task(_then_timing(specs, tables, IN_PROCESS_NODE, started, played, ended))
        return tables, cast(T, value)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class RayOptions:
    """How to reach Ray and how hard to retry."""

    address: str | None = None  # None: RAY_ADDRESS if set, else a private local instance
    num_cpus: int | None = None  # private local instance only; None = all cores
    node_ip_address: str | None = None  # private local instance only (tests: a loopback address)
    max_in_flight: int = 0  # 0: twice the cluster's CPUs
    task_seconds: float = TARGET_SECONDS  # nominal CPU-seconds packed into one task (sizing)
    max_retries: int = 3  # Ray-level retries of a task whose worker died
    resubmits: int = 2  # driver-level resubmissions after Ray's retries are exhausted
    quiet: bool = True
    numba_cache_dir: str | None = None  # NUMBA_CACHE_DIR of the tasks (see the module docstring)
    warm_up: bool = True  # one warm-up task per node before the first batches


def task_numba_cache(options: RayOptions, address: str | None) -> str | None:
    """The NUMBA_CACHE_DIR tasks run with (None: numba's default, beside the source)."""
    if options.numba_cache_dir:
        return options.numba_cache_dir
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    return CLUSTER_NUMBA_CACHE if address is not None else None


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast (ConnectionError) when a HOST:PORT address does not answer: ray.init would hang."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return  # 'auto', 'ray://...', ... : let Ray resolve it
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as err:
        raise ConnectionError(f"cannot reach the Ray cluster at {address!r}: {err}") from None


def resolve_address(explicit: str | None) -> str | None:
    """--address / config wins, then RAY_ADDRESS; None means start a private local Ray."""
    return explicit or os.environ.get("RAY_ADDRESS") or None


class RayExecutor:
    """Runs each batch as one Ray task; the driver consumes results as they complete."""

    def __init__(self, options: RayOptions | None = None, batch_fn: BatchFn = play_batch,
                 warm_fns: tuple[WarmFn, ...] = ()) -> None:
        import ray

        self._ray: Any = ray  # ray's API is only partly typed
        self.options = options or RayOptions()
        address = resolve_address(self.options.address)
        self._started_here = not ray.is_initialized()
        if self._started_here:
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "logging_level": logging.WARNING if self.options.quiet else logging.INFO,
                "log_to_driver": not self.options.quiet,
                "configure_logging": False,  # notices go to the "ray" logger (the job: its log file)
            }
            if address is None:
                # "local" always starts a private instance, even if a `ray start` cluster exists.
                kwargs["address"] = "local"
                kwargs["num_cpus"] = self.options.num_cpus or os.cpu_count() or 1
                if self.options.node_ip_address:
                    kwargs["_node_ip_address"] = self.options.node_ip_address
            else:
                check_reachable(address)
                kwargs["address"] = address
            with _held_stderr(address is not None and self.options.quiet) as held:
                try:
                    ray.init(**kwargs)
                except Exception as err:  # anything Ray raises at start-up: one line, no traceback
                    held.drop()  # the core's connection retries: the one line says it all
                    raise RayStartError(ray_start_problem(err, address)) from None
        self.address = address or "local"
        self.numba_cache_dir = task_numba_cache(self.options, address)
        self._runtime_env: dict[str, Any] = (
            {"env_vars": {"NUMBA_CACHE_DIR": self.numba_cache_dir}} if self.numba_cache_dir else {})
        self._task_options: dict[str, Any] = {
            "max_retries": self.options.max_retries,
            "retry_exceptions": [ray.exceptions.WorkerCrashedError],
            **({"runtime_env": self._runtime_env} if self._runtime_env else {}),
        }
        self._remote = ray.remote(_run_batches).options(**self._task_options)
        self._call = ray.remote(_run_call).options(**self._task_options)
        #: node ids that ran their warm-up task
        self.warmed_nodes: set[str] = set()
        self._warm_lock = threading.Lock()  # trials in flight call run() side by side: warm once
        self._batch_fn = batch_fn
        self._warm_fns = warm_fns
        #: finished batches per node address (where the work ran; shown in the CLI summary)
        self.batches_by_node: dict[str, int] = {}
        self._compiles: dict[str, dict[str, int]] = {}  # node -> kernel -> compiles in tasks
        self._compiles_lock = threading.Lock()
        self._out = 0  # tasks submitted and not yet returned, by every caller (idle_only runs)
        self._idle_since: float | None = None  # since when fewer than _slots_seen tasks are out
        self._slots_seen = 1
        self._out_lock = threading.Lock()
        self._driver_node = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]

    @property
    def description(self) -> str:
        cpus = int(self._ray.cluster_resources().get("CPU", 0))
        return f"ray ({self.address}, {cpus} CPUs)"

    @property
    def slots(self) -> int:
        """The cluster's CPU slots (one task each)."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def _count_out(self, change: int) -> int:
        """Add ``change`` to the tasks out; the count, and since when a slot has been free."""
        with self._out_lock:
            self._out += change
            if self._out >= self._slots_seen:
                self._idle_since = None
            elif self._idle_since is None:
                self._idle_since = time.monotonic()
            return self._out

    def _tasks_out(self) -> int:
        with self._out_lock:
            return self._out

    def queue_limit(self) -> int:
        """Tasks all runs together keep submitted: the slots and :meth:`own_share` more."""
        return self.slots + self.own_share()

    def own_share(self) -> int:
        """Tasks a run may keep out whatever the others have: :data:`QUEUE_SHARE` of the slots,
        at least one."""
        return max(1, int(self.slots * QUEUE_SHARE))

    def _idle_slot(self) -> bool:
        """A slot has been free for :data:`IDLE_GRACE_SECONDS`: not the moment between one task
        of another stage and its next, which a filler task would take from it."""
        with self._out_lock:
            since = self._idle_since
        return since is not None and time.monotonic() - since >= IDLE_GRACE_SECONDS

    def in_flight_limit(self) -> int:
        if self.options.max_in_flight > 0:
            return self.options.max_in_flight
        cpus = int(self._ray.cluster_resources().get("CPU", 1))
        return max(1, 2 * cpus)

    def _count_compiles(self, node: str, compiled: dict[str, int]) -> None:
        if not compiled:
            return
        with self._compiles_lock:
            counts = self._compiles.setdefault(node, {})
            for kernel, n in compiled.items():
                counts[kernel] = counts.get(kernel, 0) + n

    def compiles_by_node(self) -> dict[str, dict[str, int]]:
        with self._compiles_lock:
            out = {node: dict(counts) for node, counts in self._compiles.items()}
        # the driver's own (its bench, depths, tactics): under its node when it shares the tasks'
        # numba cache, else apart (a driver started outside the cluster keeps its own cache)
        shared = os.environ.get("NUMBA_CACHE_DIR") == self.numba_cache_dir
        driver = self._driver_node if shared else f"{self._driver_node} (driver)"
        for kernel, n in kernel_compiles().items():
            counts = out.setdefault(driver, {})
            counts[kernel] = counts.get(kernel, 0) + n
        return out

    def call(self, fn: Callable[..., T], args: tuple[Any, ...], on_task: TaskFn | None = None) -> T:
        value, node, started, ended = self._call_remote(fn, args)
        if on_task is not None:
            on_task(_call_timing(fn, node, started, ended))
        return cast(T, value)

    def run_then(self, specs: Sequence[BatchSpec], fn: Callable[..., T], args: tuple[Any, ...],
                 on_task: TaskFn | None = None, idle_only: IdleOnly = False) -> tuple[list[pa.Table], T]:
        specs = tuple(specs)
        if specs and self.options.warm_up:
            self.warm_up(specs[0])
        if idle_only:
            idle = _idle_test(idle_only)
            self._watch_slots()
            while idle() and not self._idle_slot():
                check_stop()
                time.sleep(IDLE_POLL_SECONDS)
        result, node, _, _ = self._call_remote(_play_then, (self._batch_fn, specs, fn, args))
        tables, value, started, played, ended = result
        self.batches_by_node[node] = self.batches_by_node.get(node, 0) + len(specs)
        if on_task is not None:
            on_task(_then_timing(specs, tables, node, started, played, ended))
        return tables, cast(T, value)

    def _call_remote(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, str, float, float]:
        """``fn(*args)`` in a Ray task: its value, the node, when it ran; the kernels it compiled
        counted under the node."""
        ray = self._ray
        ref = self._call.remote(fn, args)
        self._count_out(1)
        try:
            while not ray.wait([ref], timeout=POLL_SECONDS)[0]:
                check_stop()
        finally:
            self._count_out(-1)
        try:
            value, node, started, ended, compiled = ray.get(ref)
        except ray.exceptions.RayTaskError as err:
            cause = getattr(err, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None  # the function's own error (a bad games table, ...)
            raise BatchFailedError(f"{getattr(fn, '__name__', fn)!s} failed in its Ray task: {err}") from err
        self._count_compiles(node, compiled)
        return value, node, started, ended

    def warm_up(self, spec: BatchSpec) -> None:
        """Compile on every node not yet warmed: two plies of ``spec``'s first pair, pinned there.
        Callers on other threads wait for a warm-up in progress instead of starting their own
        (each would compile on another worker of the node, which is what the warm-up avoids)."""
        with self._warm_lock:
            self._warm_up(spec)

    def _warm_up(self, spec: BatchSpec) -> None:
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        tiny = dataclasses.replace(part_of(spec, 0, 1), ply_cap=2)
        refs = []
        for node in ray.nodes():
            node_id = node.get("NodeID")
            usable = node.get("Alive") and node.get("Resources", {}).get("CPU")
            if not usable or node_id in self.warmed_nodes:
                continue
            pinned = ray.remote(_warm_node).options(
                **self._task_options,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False))
            refs.append((node_id, pinned.remote(self._batch_fn, self._warm_fns, tiny)))
        for node_id, ref in refs:
            try:
                node, compiled = ray.get(ref)
            except ray.exceptions.RayTaskError as err:
                raise BatchFailedError(f"the warm-up batch failed on node {node_id}: {err}") from err
            except ray.exceptions.RayError:
                continue  # a lost worker or node: its batches compile for themselves, or go elsewhere
            self._count_compiles(node, compiled)
            self.warmed_nodes.add(node_id)

    def _watch_slots(self) -> None:
        """Start telling idle slots apart: from now, since when fewer tasks than slots are out."""
        slots = self.slots
        with self._out_lock:
            self._slots_seen = slots
        self._count_out(0)  # the grace counts from now at the earliest

    def run(self, specs: Iterable[BatchSpec], on_task: TaskFn | None = None,
            idle_only: IdleOnly = False) -> Iterator[tuple[BatchSpec, pa.Table]]:
        ray = self._ray
        specs = list(specs)
        if specs and self.options.warm_up:
            self.warm_up(specs[0])
        tasks = probe_first(plan_tasks(specs, self.options.task_seconds))
        parts_left: dict[int, int] = {}
        for task in tasks:
            for part in task:
                parts_left[part.spec.batch_id] = parts_left.get(part.spec.batch_id, 0) + 1
        arrived: dict[int, list[pa.Table]] = {}
        pending = collections.deque(tasks)
        limit, shared, own = self.in_flight_limit(), self.queue_limit(), self.own_share()
        idle = _idle_test(idle_only)
        if idle_only:
            self._watch_slots()
        in_flight: dict[Any, tuple[Task, int]] = {}  # object ref -> (task, attempts)

        def submit(task: Task, attempt: int) -> None:
            subs = tuple(part.spec if part.whole else part.sub_spec() for part in task)
            in_flight[self._remote.remote(self._batch_fn, subs)] = (task, attempt)
            self._count_out(1)

        def fill() -> None:
            while pending and len(in_flight) < limit and (not idle() or self._idle_slot()):
                if len(in_flight) >= own and self._tasks_out() >= shared:
                    return  # the shared queue is full: work submitted meanwhile by others goes first
                submit(pending.popleft(), 0)

        try:
            fill()
            while in_flight or pending:
                check_stop()  # Ctrl-C: this thread stops too (pipeline.games.stopping)
                if not in_flight:  # idle_only, and every slot taken: look again shortly
                    time.sleep(IDLE_POLL_SECONDS)
                    fill()
                    continue
                ready, _ = ray.wait(list(in_flight), num_returns=1,
                                    timeout=IDLE_POLL_SECONDS if idle_only else POLL_SECONDS)
                if not ready:
                    fill()
                    continue
                ref = ready[0]
                task, attempt = in_flight.pop(ref)
                self._count_out(-1)
                try:
                    tables, node, started, ended, compiled = ray.get(ref)
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError):
                    if attempt >= self.options.resubmits:
                        raise
                    submit(task, attempt + 1)  # same specs, same seeds, same files: safe to redo
                    continue
                except ray.exceptions.RayTaskError as err:
                    ids = sorted({part.spec.batch_id for part in task})
                    names = ", ".join(map(str, ids))
                    raise BatchFailedError(f"batch {names} failed in its Ray task: {err}") from err
                fill()
                self._count_compiles(node, compiled)
                if on_task is not None:
                    first = task[0].spec
                    on_task(TaskTiming(node, started, ended, len(task), sum(t.num_rows for t in tables),
                                       task_seconds(task), pair_key(first.player_a, first.player_b),
                                       pair_nodes(first.variant, first.player_a, first.player_b)))
                for part, table in zip(task, tables, strict=True):
                    batch_id = part.spec.batch_id
                    arrived.setdefault(batch_id, []).append(table)
                    parts_left[batch_id] -= 1
                    if parts_left[batch_id] == 0:
                        self.batches_by_node[node] = self.batches_by_node.get(node, 0) + 1
                        joined = pa.concat_tables(arrived.pop(batch_id)).sort_by("game_id")
                        yield part.spec, joined
        finally:
            self._count_out(-len(in_flight))  # a stop or an error: they are no longer waited for

    def close(self) -> None:
        """Shut down Ray if this executor started the connection."""
        if self._started_here and self._ray.is_initialized():
            self._ray.shutdown()


class _Held:
    """What :func:`_held_stderr` kept; ``drop`` discards it instead of passing it on."""

    def __init__(self) -> None:
        self.keep = True

    def drop(self) -> None:
        self.keep = False


@contextlib.contextmanager
def _held_stderr(enabled: bool) -> Iterator[_Held]:
    """Hold what this process writes to file descriptor 2 (Ray's C++ core logs there) until the
    block ends, then pass it on unless dropped."""
    held = _Held()
    if not enabled:
        yield held
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as spool:
        os.dup2(spool.fileno(), 2)
        try:
            yield held
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if held.keep:
                spool.seek(0)
                sys.stderr.write(spool.read().decode(errors="replace"))
                sys.stderr.flush()


def _idle_test(idle_only: IdleOnly) -> Callable[[], bool]:
    """``idle_only`` as a function asked before each submission."""
    if callable(idle_only):
        return idle_only
    flag = bool(idle_only)
    return lambda: flag


#: a Ray worker process applies the engine's process settings once, before its first batch
_configure_worker = functools.cache(configure_process)


def _run_batches(batch_fn: BatchFn, specs: tuple[BatchSpec, ...]
                 ) -> tuple[list[pa.Table], str, float, float, dict[str, int]]:
    """Task body: play its batches (or batch parts), say on which node and when the work ran
    and which kernels the worker compiled meanwhile (module-level so Ray pickles it by name)."""
    import ray

    _configure_worker()
    before = kernel_compiles()
    started = time.time()
    tables = [batch_fn(spec) for spec in specs]
    ended = time.time()
    node = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
    return tables, node, started, ended, compiles_since(before)


def _warm_node(batch_fn: BatchFn, warm_fns: tuple[WarmFn, ...],
               spec: BatchSpec) -> tuple[str, dict[str, int]]:
    """Warm-up task body: play ``spec`` and run each of ``warm_fns`` on it; the node and the
    kernels the worker compiled meanwhile."""
    import ray

    _configure_worker()
    before = kernel_compiles()
    table = batch_fn(spec)
    for fn in warm_fns:
        fn(spec, table)
    node = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
    return node, compiles_since(before)


def _run_call(fn: Callable[..., Any], args: tuple[Any, ...]
              ) -> tuple[Any, str, float, float, dict[str, int]]:
    """Task body of :meth:`RayExecutor.call`: the value, the node, when it ran, the kernels
    compiled meanwhile."""
    import ray

    _configure_worker()
    before = kernel_compiles()
    started = time.time()
    value = fn(*args)
    ended = time.time()
    node = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
    return value, node, started, ended, compiles_since(before)


def _call_timing(fn: Callable[..., Any], node: str, started: float, ended: float) -> TaskTiming:
    """The timeline's record of a :meth:`Executor.call` task: a slot busy without games."""
    return TaskTiming(node, started, ended, 0, 0, 0.0, f"{CALL_PAIRING}:{getattr(fn, '__name__', 'call')}")


def _play_then(batch_fn: BatchFn, specs: tuple[BatchSpec, ...], fn: Callable[..., Any],
               args: tuple[Any, ...]) -> tuple[list[pa.Table], Any, float, float, float]:
    """Body of :meth:`Executor.run_then`: the batches' tables, ``fn``'s value on their games, and
    when the games started, when they ended and when ``fn`` ended (seconds since the epoch)."""
    started = time.time()
    tables = [batch_fn(spec) for spec in specs]
    played = time.time()
    games = pa.concat_tables(tables).sort_by("game_id") if tables else None
    value = fn(games, *args)
    return tables, value, started, played, time.time()


def _then_timing(specs: Sequence[BatchSpec], tables: Sequence[pa.Table], node: str, started: float,
                 played: float, ended: float) -> TaskTiming:
    """The timeline's record of a :meth:`Executor.run_then` task: its games, costed and keyed
    like a batch task's, with the computation's seconds apart."""
    first = specs[0]
    return TaskTiming(node, started, ended, len(specs), sum(t.num_rows for t in tables),
                      sum(batch_seconds(s) for s in specs), pair_key(first.player_a, first.player_b),
                      pair_nodes(first.variant, first.player_a, first.player_b),
                      other_seconds=max(0.0, ended - played))


def load_ray() -> None:
    """Import Ray now: its import sets up its own loggers, so a caller that routes the "ray"
    logger elsewhere does so after this."""
    import ray  # noqa: F401


def make_executor(
    *, in_process: bool, options: RayOptions | None = None, batch_fn: BatchFn = play_batch,
    warm_fns: tuple[WarmFn, ...] = ()
) -> Executor:
    """The in-process executor or a Ray executor (connected/started here); ``warm_fns``: see
    :data:`WarmFn` (one process compiles once anyway, so the in-process executor needs none)."""
    if in_process:
        return InProcessExecutor(batch_fn)
    return RayExecutor(options, batch_fn, warm_fns)
