"""What every stage of the main job shares: where games go, how they are played, trial slots.

:class:`StageContext` bundles the executor, the run folder and the match settings so stages call
``ctx.play(stage, pairings)``. :func:`trial_slot` gives a trial its *slot*: its own number, or,
for a retry that ``pipeline.tuning.studies`` enqueued after a killed driver, the slot of the trial it
retries. Stage folders and player names use the slot, so a retried trial finds the batches its
killed predecessor finished and replays none of them (the failed trial itself counts nothing).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa

from pipeline.games.executor import Executor, IdleOnly
from pipeline.games.match import BatchSpec
from pipeline.games.openings import Opening
from pipeline.games.pairings import Pairing, ProgressFn, RunFn, play_pairings
from pipeline.games.schedule import TaskTimeline, TaskTiming
from pipeline.games.sizing import batch_seconds, pair_key
from pipeline.games.storage import Root, atomic_write_bytes
from pipeline.games.storage_fs import StorePath, store_path

T = TypeVar("T")


@dataclass(frozen=True)
class StageContext:
    """The run-wide settings of stage games."""

    executor: Executor
    output_root: StorePath
    run_id: str
    variant: str
    run_seed: int
    batch_size: int
    ply_cap: int
    deck: tuple[Opening, ...]
    progress: ProgressFn | None = None
    timeline: TaskTimeline | None = None  # every task's timing, by stage (pipeline.games.schedule)
    on_play: Callable[[str, Sequence[Pairing]], None] | None = None  # told each stage's pairings first
    on_batch: Callable[[str, pa.Table], None] | None = None  # told each batch played (not read back)
    #: submit tasks only into slots no other stage uses (``Executor.run``'s ``idle_only``): work
    #: that fills the gaps of the stages running beside it, never queued ahead of theirs (a
    #: function: while it returns true, asked before each task)
    idle_only: IdleOnly = False

    @property
    def run_folder(self) -> StorePath:
        return self.output_root / self.run_id

    def play(self, stage: str, pairings: Sequence[Pairing], leave: Collection[int] = ()) -> pa.Table:
        """Play (or read back) the games of ``pairings`` in stage folder ``stage``; the stage name
        joins the player seeds, so no two stages share them. ``leave``: pairings another caller
        plays (:func:`~pipeline.games.pairings.play_pairings`)."""
        return self._play(stage, pairings, leave)

    def _play(self, stage: str, pairings: Sequence[Pairing], leave: Collection[int],
              run: RunFn | None = None) -> pa.Table:
        if self.on_play is not None:
            self.on_play(stage, pairings)
        if run is None and self.idle_only:
            recorder = self._recorder(stage)

            def run(todo: Sequence[BatchSpec], whole: bool) -> Iterable[tuple[BatchSpec, pa.Table]]:
                return self.executor.run(todo, recorder, idle_only=self.idle_only)
        return play_pairings(self.executor, self.output_root, self.run_id, stage, self.variant, pairings,
                             self.run_seed, self.batch_size, self.ply_cap, self.deck, self.progress,
                             stage_seeds=True, on_task=self._recorder(stage),
                             on_resumed=self._resume_recorder(stage), on_batch=self._batch_listener(stage),
                             leave=leave, run=run)

    def play_then(self, stage: str, pairings: Sequence[Pairing], fn: Callable[..., T],
                  *args: Any) -> tuple[pa.Table, T]:
        """:meth:`play`, then ``fn(games, *args)`` on all the stage's games (sorted by game id),
        both in one task (:meth:`Executor.run_then`) when no batch of the stage was read back:
        a stage too small for a task of its own whose games go straight to a worker anyway (an
        Easy trial and its blunder rate). On a resume ``fn`` runs as :meth:`compute` on the
        games read back and played; either way it sees the same games."""
        value: list[T] = []
        recorder = self._recorder(stage)

        def run(todo: Sequence[BatchSpec], whole: bool) -> Iterable[tuple[BatchSpec, pa.Table]]:
            if not whole or not todo:
                return self.executor.run(todo, recorder, idle_only=self.idle_only)
            tables, out = self.executor.run_then(todo, fn, args, recorder, idle_only=self.idle_only)
            value.append(out)
            return zip(todo, tables, strict=True)

        table = self._play(stage, pairings, (), run)
        if value:
            return table, value[0]
        return table, self.compute(stage, fn, table, *args)

    def compute(self, stage: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` where the batches run (:meth:`Executor.call`), its task recorded under
        ``stage``: work the driver would otherwise do, such as a blunder rate, off its CPU."""
        return self.executor.call(fn, args, self._recorder(stage))

    def _batch_listener(self, stage: str) -> Callable[[pa.Table], None] | None:
        listener = self.on_batch
        if listener is None:
            return None
        return lambda table: listener(stage, table)

    def _recorder(self, stage: str) -> Callable[[TaskTiming], None] | None:
        timeline = self.timeline
        if timeline is None:
            return None
        return lambda timing: timeline.add(stage, timing)

    def _resume_recorder(self, stage: str) -> Callable[[Sequence[BatchSpec]], None] | None:
        timeline = self.timeline
        if timeline is None:
            return None

        def record(specs: Sequence[BatchSpec]) -> None:
            for spec in specs:
                timeline.add_resumed(stage, pair_key(spec.player_a, spec.player_b), batch_seconds(spec))
        return record


def trial_slot(study: Any, trial: Any) -> int:
    """The slot of ``trial``: the one it was given when asked, else inherited from the trial it
    retries, else its own number."""
    given = trial.user_attrs.get("slot") if hasattr(trial, "user_attrs") else None
    if given is not None:
        return int(given)
    retry_of = trial.user_attrs.get("retry_of") if hasattr(trial, "user_attrs") else None
    slot = trial.number
    if retry_of is not None:
        for old in study.get_trials(deepcopy=False):
            if old.number == int(retry_of):
                slot = int(old.user_attrs.get("slot", old.number))
                break
    trial.set_user_attr("slot", slot)
    return int(slot)


def player_nodes_per_move(table: pa.Table, player: str) -> float:
    """Mean search nodes per move that ``player`` made (moves without a search count 0); games
    ``player`` did not play are ignored."""
    return player_move_cost(table, player)[0]


def player_move_cost(table: pa.Table, player: str) -> tuple[float, float]:
    """Mean search nodes and CPU seconds per move that ``player`` made (0, 0 without a move)."""
    rows = table.select(["white_player", "black_player", "white_nodes", "black_nodes", "white_seconds",
                         "black_seconds", "plies", "opening_fen"]).to_pylist()
    nodes = moves = 0
    seconds = 0.0
    for row in rows:
        white = row["white_player"] == player
        if not white and row["black_player"] != player:
            continue
        nodes += row["white_nodes"] if white else row["black_nodes"]
        seconds += row["white_seconds"] if white else row["black_seconds"]
        white_first = row["opening_fen"][:1].upper() == "W"
        plies = int(row["plies"])
        moves += (plies + 1) // 2 if white == white_first else plies // 2
    return (nodes / moves, seconds / moves) if moves else (0.0, 0.0)


def wins_against(table: pa.Table, player: str) -> list[int]:
    """``winner_score`` of every game that ``player`` lost (what its opponents scored)."""
    rows = table.select(["winner", "white_player", "black_player", "winner_score"]).to_pylist()
    out = []
    for row in rows:
        if row["winner"] is None:
            continue
        winner = row["white_player"] if row["winner"] == "white" else row["black_player"]
        if winner != player and player in (row["white_player"], row["black_player"]):
            out.append(int(row["winner_score"]))
    return out


def write_result(path: Root, data: Mapping[str, Any]) -> None:
    """Atomically write a stage's result JSON (no NaN: JSON has none)."""

    text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))


def read_result(path: Root) -> dict[str, Any] | None:
    """A stage's result JSON, or None when the stage has not finished."""
    target = store_path(path)
    try:
        text = target.read_text()
    except FileNotFoundError:
        return None
    data: dict[str, Any] = json.loads(text)
    return data
