"""A request to stop that every thread playing games sees, so Ctrl-C ends a job promptly.

Python raises KeyboardInterrupt in the main thread only. The threads that play a trial, the
curves or the games played ahead never see it, and a thread pool waits for them on its way out,
so without this a job kept playing for as long as its longest stage had left. Inside
:func:`stop_on_interrupt` a Ctrl-C also sets a flag; the executors look at it between tasks (at
most :data:`POLL_SECONDS` apart) and raise :class:`StopRequested` in their thread. Finished
batch files are already on disk, so the same command with ``--resume`` continues the run.

A few writes must not be cut in half by Ctrl-C (the Optuna journal's lock file, taken and
released by renames, is left half-released by an interrupt between them): inside
:func:`interrupts_held` an interrupt requests the stop at once but raises only when the block
ends.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType

POLL_SECONDS = 1.0  # how long a thread waiting for tasks goes without looking at the flag

_stop = threading.Event()


@dataclass
class _Hold:
    """The main thread's open :func:`interrupts_held` blocks and whether one interrupt waits."""

    depth: int = 0
    pending: bool = False


_hold = _Hold()


class StopRequested(KeyboardInterrupt):
    """Raised in a game-playing thread after a stop was requested (an interrupt, not an error)."""


def request_stop() -> None:
    """Ask every game-playing thread to stop at its next look (:func:`check_stop`)."""
    _stop.set()


def stop_requested() -> bool:
    """Whether a stop has been requested and not lifted yet."""
    return _stop.is_set()


def lift_stop() -> None:
    """Lift a stop requested for some threads only, once they have stopped (see
    :func:`stop_on_interrupt` for the flag's life in a run)."""
    _stop.clear()


def check_stop() -> None:
    """Raise :class:`StopRequested` if a stop was requested."""
    if _stop.is_set():
        raise StopRequested("a stop was requested (Ctrl-C)")


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """While inside, Ctrl-C requests a stop (then raises KeyboardInterrupt as usual). The flag
    is cleared on the way in and on the way out, so a stop never outlives the run that asked for
    it (a later run or test in the same process starts clear); outside the main thread signals
    cannot be caught, so no handler is installed."""
    _stop.clear()
    main = threading.current_thread() is threading.main_thread()

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        request_stop()
        if _hold.depth:
            _hold.pending = True
            return
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt) if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
        _stop.clear()


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold a Ctrl-C that arrives inside until the block ends, then raise it. Signals reach the
    main thread only, so in any other thread this does nothing (none can arrive there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _hold.depth += 1
    try:
        yield
    finally:
        _hold.depth -= 1
        if not _hold.depth and _hold.pending:
            _hold.pending = False
            raise KeyboardInterrupt
