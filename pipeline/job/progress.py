"""What the main job tells its user while it runs: stage and trial counters, progress, job ETA.

Progress goes to stderr (the final summary to stdout): one rewritten line on a terminal, a line
every few seconds otherwise. Each progress line ends with the whole job's time left when a
:class:`~pipeline.job.eta.JobClock` is attached, and a stage group the clock has planned (the
curves, the validation) gets its own ETA from it, costed by player pair, not from its games/s
so far (its pairings differ in cost by orders of magnitude). The libraries' own start-up chatter (MLflow's
database set-up, Ray's notices) goes to the run's log file instead (:func:`log_libraries_to`).
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

from pipeline.games.pairings import Progress
from pipeline.job.eta import JobClock

#: loggers of libraries whose INFO and WARNING lines are for the log file, not the terminal
LIBRARY_LOGGERS = ("mlflow", "alembic", "ray", "urllib3", "filelock")


class ProgressPrinter:
    """Progress on stderr: one rewritten line on a terminal, a line every few seconds otherwise."""

    def __init__(self, enabled: bool, every: float = 5.0, clock: JobClock | None = None) -> None:
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.every = every
        self.clock = clock
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        final = p.games_done >= p.games_total
        if not final and now - self._last < (0.5 if self.tty else self.every):
            return
        self._last = now
        eta = "-" if p.eta_seconds is None else f"{p.eta_seconds:.0f}s"
        if self.clock is not None and not final and self.clock.planned_group(p.stage):
            eta = f"{self.clock.estimate(time.time(), p.stage).seconds:.0f}s"  # costed by player pair
        text = (f"[{p.stage}] {p.games_done}/{p.games_total} games, {p.games_per_second:.1f} games/s, "
                f"stage ETA {eta}")
        if self.clock is not None:
            text += f"; {self.clock.estimate(time.time()).text()}"
        if self.tty:
            print(f"\r{text}\033[K", end="\n" if final else "", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)

    def log(self, text: str) -> None:
        if self.enabled:
            print(text, file=sys.stderr, flush=True)

    def stage(self, number: int, total: int, name: str, detail: str = "") -> None:
        """``stage k/N: name (detail)``, with the job's time left when it is known."""
        eta = f"; {self.clock.estimate(time.time()).text()}" if self.clock is not None else ""
        self.log(f"stage {number}/{total}: {name}{f' ({detail})' if detail else ''}{eta}")


def log_libraries_to(path: Path) -> Path:
    """Send the libraries' log records to ``path`` (appended) instead of the terminal."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            if isinstance(old, logging.StreamHandler) and not isinstance(old, logging.FileHandler):
                logger.removeHandler(old)
        logger.addHandler(handler)
        logger.propagate = False
    # ray.init clears the "ray" logger's handlers, so its start-up notices reach Python's last-resort
    # handler: send the libraries' records that end there to the file too, anything else to stderr
    logging.lastResort = _LibraryLastResort(handler, logging.lastResort)
    return path


class _LibraryLastResort(logging.Handler):
    """Python's last-resort handler, with the libraries' records sent to the run's log file."""

    def __init__(self, library: logging.Handler, fallback: logging.Handler | None) -> None:
        super().__init__(logging.WARNING)
        self.library = library
        self.fallback: logging.Handler | None = fallback
        if isinstance(fallback, _LibraryLastResort):  # routed twice: keep Python's own handler
            self.fallback = fallback.fallback

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.split(".")[0] in LIBRARY_LOGGERS:
            self.library.handle(record)
        elif self.fallback is not None:
            self.fallback.handle(record)
