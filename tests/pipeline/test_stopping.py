"""Ctrl-C stops every thread that plays games, not only the main one."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from pipeline.games.executor import InProcessExecutor
from pipeline.games.match import make_batch_spec
from pipeline.games.openings import load_deck
from pipeline.games.stopping import (
    StopRequested,
    check_stop,
    interrupts_held,
    request_stop,
    stop_on_interrupt,
    stop_requested,
)


def _specs(n: int) -> list:  # type: ignore[type-arg]
    opening = load_deck("english")[0]
    return [make_batch_spec(run_id="r", batch_id=i, variant="english", player_a="random", player_b="random",
                            run_seed=3, first_game_id=2 * i, openings=[(opening.id, opening.fen)], ply_cap=20)
            for i in range(n)]


def test_a_requested_stop_ends_a_playing_thread_between_batches() -> None:
    specs = _specs(4)
    with stop_on_interrupt():  # starts with the flag cleared
        played = []
        games = InProcessExecutor().run(specs)
        played.append(next(games))
        request_stop()
        with pytest.raises(StopRequested):
            next(games)
        assert len(played) == 1
    with stop_on_interrupt():
        check_stop()  # a new run starts clear
        assert len(list(InProcessExecutor().run(specs))) == 4


def test_ctrl_c_in_the_main_thread_stops_the_other_threads() -> None:
    outcome: list[BaseException] = []
    started = threading.Event()

    def curves() -> None:  # stands in for a thread playing curve games
        try:
            started.set()
            while True:
                for _ in InProcessExecutor().run(_specs(1)):
                    pass
        except BaseException as err:  # what the thread ended with is the result
            outcome.append(err)

    previous = signal.getsignal(signal.SIGINT)
    thread = threading.Thread(target=curves)
    with pytest.raises(KeyboardInterrupt), stop_on_interrupt():
        try:
            thread.start()
            started.wait(10)
            os.kill(os.getpid(), signal.SIGINT)
            thread.join(10)  # interrupted here, as a job's main thread is
        finally:
            thread.join(30)  # inside the run, as a thread pool joins its threads on the way out
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], StopRequested)
    assert signal.getsignal(signal.SIGINT) is previous  # the handler is put back
    check_stop()  # the stop ended with its run: games played later in this process are not refused


def test_a_stop_requested_inside_does_not_outlive_the_run() -> None:
    with stop_on_interrupt():
        request_stop()
        with pytest.raises(StopRequested):
            check_stop()
    check_stop()  # cleared on the way out
    assert len(list(InProcessExecutor().run(_specs(2)))) == 2


def test_ctrl_c_inside_a_held_block_is_raised_when_the_block_ends() -> None:
    finished = []
    with pytest.raises(KeyboardInterrupt), stop_on_interrupt():
        with interrupts_held():
            with interrupts_held():  # nested: raised at the outer end only
                os.kill(os.getpid(), signal.SIGINT)
                assert stop_requested()  # the other threads are told at once
                finished.append("inner")
            finished.append("outer")
        finished.append("after")  # not reached: the interrupt is raised as the block ends
    assert finished == ["inner", "outer"]
    with stop_on_interrupt(), interrupts_held():
        pass  # nothing is left pending for a later block
