"""MLflow tracking of a job; the only module of the project that imports mlflow.

Runs form a tree: one experiment per variant (``draughts-<variant>``); :meth:`Tracker.named_run`
opens a run by name, top-level when no run is open, else a child (tag ``mlflow.parentRunId``) of
the innermost open run; :meth:`Tracker.trial_run` opens a new child run per Optuna trial.
``log_*`` calls go to the innermost open run. A named run is REUSED when the job resumes: a
top-level run found by name, config hash and output folder, a child by name under the same
parent. The main job's layout on top of this (job run, stage runs, trial runs, level runs) is in
:mod:`pipeline.job.main_job` and ``docs/mainjob.md``.

Tags on every run: ``git_commit`` (``git rev-parse HEAD``, else "unknown"), ``git_dirty``,
``config_hash``, ``bench_signature``, ``engine_version``, ``variant``, ``output_folder`` (the run
folder the run belongs to; plus MLflow's own ``mlflow.source.git.commit``), ``trial_number`` on
trial runs, and what the caller adds.

Statuses: a run ends FINISHED, FAILED (an exception, or left RUNNING by a killed driver: marked
so when the job's top-level run is reused), KILLED (Ctrl-C), or what :meth:`Tracker.end_as` set
(a pruned trial ends KILLED).

Ownership: a top-level run belongs to one output folder (its ``output_folder`` tag). A job that
resumes reuses only its own folder's top-level run, and :func:`check_run_owner` refuses, before
any game, a run whose top-level runs (same names and config hash) belong to another folder.

Metric precision: every metric is rounded to the decimals its name documents
(:data:`METRIC_DECIMALS`; a name matches its longest listed prefix, so ``elo_easy_ci_low`` is an
``elo``), and a name the table does not list is refused:

- Elo, whole points: ``elo`` (with ``elo_ci_low``, ``elo_ci_high``, ``elo_gap``), ``target_elo``,
  ``validation_elo``, ``sprt_elo`` (a CI is tens of Elo wide; a decimal would be noise);
- 3 decimals: scores per game and rates, 0..1: ``expected_score``, ``score``, ``value``,
  ``best_value``, ``chosen_value``, ``blunder_rate``;
- whole nodes: ``nodes_per_move``; plies to 1 decimal: ``median_depth`` (a median of whole plies);
- counts and 0/1 flags: ``games``, ``pairs``, ``trials``, ``sprt_pairs``, ``chosen_trial``,
  ``accepted``, ``feasible``;
- 1 decimal: ``games_per_second``, ``pair_score`` (a colour-swapped pair's points, 0..2 in halves);
  2 decimals: ``sprt_llr``;
- the scheduler's figures per stage, ``schedule_<quantity>_<stage>`` on the job run (stage
  ``calibrate/curves`` as ``calibrate_curves``): ``busy_share``, ``small_task_share`` and
  ``driver_cpu_per_task`` to 3 decimals, ``mean_in_flight`` and ``task_seconds_p50`` to 1,
  ``max_in_flight``, ``tasks`` and ``driver_slot_limit`` whole; ``kernel_compiles_most_per_node``
  (the most times one node compiled one kernel), whole.

Level-named metrics ``<quantity>_<level>[_<stat>]`` (:func:`metric_name`, :func:`level_metrics`),
e.g. ``elo_easy_ci_low``, give one run one column per level (a job's run-table row).

Failure policy:

- :func:`check_reachable` is called when a run starts, BEFORE any game, and raises
  :class:`TrackingUnavailable` (a ValueError) with a one-line message naming the URI.
- Everything sent is first appended to a JSON-lines log in the run folder (``<run folder>/tracking/
  mlflow-log.jsonl``; on a store without appends, such as S3, the whole log is rewritten each time
  a run ends). If MLflow fails mid-run, the tracker logs ONE warning, goes offline and
  DROPS every later MLflow call for the rest of the run (nothing is buffered in memory or retried;
  the run itself never fails because of tracking). The events keep going to the local log, the
  summary says tracking failed, and :func:`replay_log` (``python -m pipeline.tracking replay LOG
  --uri URI``) re-creates the complete tree - runs with their parents at every depth, params,
  metrics with their original steps and times, tags, tables, artifacts, end statuses - at any
  tracking URI. Replayed runs are new runs tagged ``replayed_from_log`` (and
  ``replayed_from_run_id`` where the original had an id).
- For http URIs the tracker bounds MLflow's HTTP retries (MLFLOW_HTTP_REQUEST_MAX_RETRIES=2,
  _BACKOFF_FACTOR=1, _TIMEOUT=30 unless already set) so a dead server costs seconds, not the
  ~4 minutes of MLflow's defaults, before the run goes on; and it sets
  MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT=true unless set, so ending one of a job's many runs
  neither fetches the run again nor prints its URL on stdout, where the job's summary goes.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import logging
import os
import posixpath
import re
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mlflow
from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException

from engine import __version__
from pipeline.games.storage_fs import StorePath, store_path

log = logging.getLogger(__name__)

DEFAULT_URI_FILE = "mlflow.db"
LOG_SCHEMA = 1
LOG_NAME = "mlflow-log.jsonl"
_TOKEN_RE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
_HTTP_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
    # without it, every run ended over http costs one more request and prints two lines on stdout
    "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
}


class TrackingUnavailable(ValueError):
    """The tracking URI cannot be used; the message names it."""


class RunOwnerError(ValueError):
    """An MLflow run that belongs to another output folder (or to none on record)."""


OWNER_TAG = "output_folder"


# ---- names and precision ---------------------------------------------------------------------

#: Decimals each metric keeps, in its unit (see the module docstring); a name matches its
#: longest listed prefix (``elo_easy_ci_low`` -> ``elo``), and an unlisted name is refused.
METRIC_DECIMALS: dict[str, int] = {
    "elo": 0, "target_elo": 0, "validation_elo": 0, "sprt_elo": 0,
    "expected_score": 3, "score": 3, "value": 3, "best_value": 3, "chosen_value": 3, "blunder_rate": 3,
    "nodes_per_move": 0, "median_depth": 1,
    "games": 0, "pairs": 0, "trials": 0, "sprt_pairs": 0, "chosen_trial": 0, "accepted": 0, "feasible": 0,
    "games_per_second": 1, "pair_score": 1, "sprt_llr": 2,
    # how busy a stage kept the cluster (pipeline.games.schedule), schedule_<quantity>_<stage>
    "schedule_busy_share": 3, "schedule_mean_in_flight": 1, "schedule_max_in_flight": 0,
    "schedule_tasks": 0, "schedule_task_seconds_p50": 1, "schedule_small_task_share": 3,
    "schedule_driver_cpu_per_task": 3, "schedule_driver_slot_limit": 0,
    "kernel_compiles_most_per_node": 0,  # the most times one node compiled one kernel
}
_BY_LENGTH = sorted(METRIC_DECIMALS, key=len, reverse=True)


def metric_decimals(name: str) -> int:
    """The decimals metric ``name`` keeps (ValueError for a name without a documented unit)."""
    for prefix in _BY_LENGTH:
        if name == prefix or name.startswith(prefix + "_"):
            return METRIC_DECIMALS[prefix]
    raise ValueError(f"metric {name!r} has no documented unit and precision (METRIC_DECIMALS in "
                     f"{__name__})")


def rounded(name: str, value: float) -> float:
    """``value`` at the precision of metric ``name``."""
    return float(round(float(value), metric_decimals(name)))


def metric_name(quantity: str, level: str, stat: str | None = None) -> str:
    """``<quantity>_<level>[_<stat>]``, e.g. ``elo_easy_ci_low``; tokens are snake_case."""
    for what, token in (("quantity", quantity), ("level", level), ("stat", stat)):
        if token is not None and not _TOKEN_RE.match(token):
            raise ValueError(f"metric {what} {token!r} must be snake_case letters and digits")
    return f"{quantity}_{level}" + (f"_{stat}" if stat else "")


def level_metrics(
    level: str,
    *,
    elo: float | None = None,
    ci: tuple[float, float] | None = None,
    target_elo: float | None = None,
    nodes_per_move: float | None = None,
    games: int | None = None,
    score: float | None = None,
) -> dict[str, float]:
    """The metrics of one level under level-named names (missing values are left out)."""
    out: dict[str, float] = {}
    if elo is not None:
        out[metric_name("elo", level)] = float(elo)
    if ci is not None:
        out[metric_name("elo", level, "ci_low")] = float(ci[0])
        out[metric_name("elo", level, "ci_high")] = float(ci[1])
    for quantity, value in (("target_elo", target_elo), ("nodes_per_move", nodes_per_move),
                            ("games", games), ("score", score)):
        if value is not None:
            out[metric_name(quantity, level)] = float(value)
    return out


def experiment_name(variant: str) -> str:
    """The experiment of a variant: ``draughts-<variant>``."""
    return f"draughts-{variant}"


# ---- URIs and reachability -------------------------------------------------------------------


def resolve_tracking_uri(uri: str | None = None) -> str:
    """Explicit URI, else ``MLFLOW_TRACKING_URI``, else ``sqlite:///<cwd>/mlflow.db`` (absolute)."""
    chosen = uri or os.environ.get("MLFLOW_TRACKING_URI")
    if chosen:
        return chosen
    return f"sqlite:///{Path.cwd().resolve() / DEFAULT_URI_FILE}"


def _redact(uri: str) -> str:
    parts = urllib.parse.urlsplit(uri)
    if parts.password is None:
        return uri
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def _sqlite_path(uri: str) -> Path | None:
    if not uri.startswith("sqlite:///"):
        return None
    rest = uri[len("sqlite:///"):].split("?", 1)[0]
    return None if rest in ("", ":memory:") else Path(rest)


def _auth_headers() -> dict[str, str]:
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password:

        raw = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {raw}"}
    return {}


def _check_http(uri: str, timeout: float) -> None:
    url = uri.rstrip("/") + "/api/2.0/mlflow/experiments/search?max_results=1"
    request = urllib.request.Request(url, headers=_auth_headers())
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as err:
        raise TrackingUnavailable(
            f"MLflow tracking URI {_redact(uri)} answered HTTP {err.code} ({err.reason}) to an experiment "
            "search; is it an MLflow server, and are MLFLOW_TRACKING_* credentials right?"
        ) from None
    except (TimeoutError, urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise TrackingUnavailable(
            f"MLflow tracking URI {_redact(uri)} is unreachable ({reason}); start the server, fix "
            "[mlflow].tracking_uri / MLFLOW_TRACKING_URI, or set [mlflow].enabled = false"
        ) from None
    except ValueError:
        raise TrackingUnavailable(
            f"MLflow tracking URI {_redact(uri)} does not answer like an MLflow server (no JSON)"
        ) from None


def _check_sqlite(uri: str, path: Path, timeout: float) -> None:
    if not path.parent.is_dir():
        raise TrackingUnavailable(f"MLflow tracking URI {uri}: folder {path.parent} does not exist")
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=timeout)) as db:
            db.execute("select 1").fetchone()
    except sqlite3.Error as err:
        raise TrackingUnavailable(f"MLflow tracking URI {uri}: cannot open the database ({err})") from None


def check_reachable(uri: str | None = None, timeout: float = 10.0) -> str:
    """Fail fast, before any game, when the tracking URI cannot be used; returns the resolved URI.

    http(s): an experiment search must answer within ``timeout``. sqlite: the file's folder must
    exist and the database open. Anything else: an MLflow client must list experiments."""
    resolved = resolve_tracking_uri(uri)
    scheme = urllib.parse.urlsplit(resolved).scheme.lower()
    if scheme in ("http", "https"):
        _check_http(resolved, timeout)
        return resolved
    path = _sqlite_path(resolved)
    if path is not None:
        _check_sqlite(resolved, path, timeout)
        return resolved
    try:
        mlflow.MlflowClient(tracking_uri=resolved).search_experiments(max_results=1)
    except Exception as err:  # any backend error means: unusable
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise TrackingUnavailable(f"MLflow tracking URI {_redact(resolved)} is unusable: {first}") from None
    return resolved


# ---- provenance ------------------------------------------------------------------------------


def _git(args: Sequence[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit(repo: Path | None = None) -> str:
    """HEAD of the repository holding this code (or ``repo``), else "unknown"."""
    return _git(["rev-parse", "HEAD"], repo or Path(__file__).resolve().parent) or "unknown"


def git_dirty(repo: Path | None = None) -> str:
    """"true" when tracked files differ from HEAD, "false", or "unknown" without git."""
    out = _git(["status", "--porcelain", "--untracked-files=no"], repo or Path(__file__).resolve().parent)
    return "unknown" if out is None else ("true" if out else "false")


def standard_tags(
    *, config_hash: str, bench_signature: int | str | None, engine_version: str | None = None,
    variant: str | None = None, output_folder: str | None = None,
) -> dict[str, str]:
    """The tags every run carries (see the module docstring)."""
    if engine_version is None:

        engine_version = __version__
    commit = git_commit()
    tags = {
        "git_commit": commit,
        "git_dirty": git_dirty(),
        "config_hash": config_hash,
        "bench_signature": "unknown" if bench_signature is None else str(bench_signature),
        "engine_version": engine_version,
        "mlflow.source.git.commit": commit,
    }
    if variant is not None:
        tags["variant"] = variant
    if output_folder is not None:
        tags[OWNER_TAG] = output_folder
    return tags


# ---- the tracker -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRef:
    """An open run: the local log key, the MLflow run id (None when disabled or offline), its name."""

    key: str
    run_id: str | None
    name: str


END_STATUSES = ("FINISHED", "FAILED", "KILLED")
MAX_BATCH_METRICS = 1000  # MLflow accepts at most this many metrics per log_batch
_TABLE_TYPES = (str, int, float, bool, type(None))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _clean_params(params: Mapping[str, Any] | None) -> dict[str, str]:
    return {str(k): (json.dumps(v) if isinstance(v, list | tuple | dict) else str(v))
            for k, v in (params or {}).items()}


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"metric {name!r} = {value!r}: expected a number")
    return rounded(name, value)


def _clean_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    """The metrics at their documented precision (ValueError: not a number, or no documented unit)."""
    return {str(key): _number(str(key), value) for key, value in metrics.items()}


def _clean_points(name: str, points: Sequence[tuple[int, float]]) -> list[list[float]]:
    """``[step, value]`` pairs of one metric, values at its precision."""
    out: list[list[float]] = []
    for step, value in points:
        if isinstance(step, bool) or not isinstance(step, int):
            raise ValueError(f"metric {name!r}: step {step!r} is not an int")
        out.append([step, _number(name, value)])
    return out


def _clean_table(data: Mapping[str, Sequence[Any]], artifact_file: str) -> dict[str, list[Any]]:
    """Columns of equal length holding plain values; the artifact a ``.json`` file."""
    if not artifact_file.endswith(".json") or artifact_file.startswith("/"):
        raise ValueError(f"table artifact {artifact_file!r}: expected a relative path ending in .json")
    columns = {str(k): list(v) for k, v in data.items()}
    if not columns or len({len(v) for v in columns.values()}) != 1:
        raise ValueError(f"table {artifact_file!r}: expected columns of one length, got "
                         f"{ {k: len(v) for k, v in columns.items()} }")
    for name, values in columns.items():
        bad = [v for v in values if not isinstance(v, _TABLE_TYPES)]
        if bad:
            raise ValueError(f"table {artifact_file!r} column {name!r}: {bad[0]!r} is not a plain value")
    return columns


class Tracker:
    """Tracking interface; this base class is the null implementation (tracking disabled)."""

    enabled = False

    def __init__(self) -> None:
        self._stack: list[RunRef] = []
        self._end: dict[str, str] = {}

    @contextlib.contextmanager
    def named_run(self, name: str, params: Mapping[str, Any] | None = None,
                  tags: Mapping[str, str] | None = None) -> Iterator[RunRef]:
        """Open run ``name``: top-level when no run is open, else a child of the innermost open run;
        reused when the job resumes (see the module docstring)."""
        parent = self._stack[-1] if self._stack else None
        ref = RunRef(name if parent is None else f"{parent.key}/{name}", None, name)
        with self._opened(ref):
            yield ref

    @contextlib.contextmanager
    def trial_run(self, number: int, params: Mapping[str, Any] | None = None,
                  tags: Mapping[str, str] | None = None) -> Iterator[RunRef]:
        """Open a new child run for trial ``number`` inside the innermost open run."""
        self._parent()
        ref = RunRef(f"trial:{number}:{uuid.uuid4().hex[:8]}", None, f"trial-{number:04d}")
        with self._opened(ref):
            yield ref

    @contextlib.contextmanager
    def _opened(self, ref: RunRef) -> Iterator[None]:
        self._stack.append(ref)
        try:
            yield
        finally:
            self._stack.pop()
            self._end.pop(ref.key, None)

    def _parent(self) -> RunRef:
        if not self._stack:
            raise RuntimeError("trial_run() needs an open named_run() run")
        return self._stack[-1]

    def _current(self) -> RunRef:
        if not self._stack:
            raise RuntimeError("no open run: call inside named_run() / trial_run()")
        return self._stack[-1]

    # The null versions check their input like the MLflow ones, so a driver bug shows up
    # whether tracking is on or off.

    def end_as(self, status: str) -> None:
        """End the innermost open run with ``status`` (e.g. KILLED for a pruned trial) unless it
        raises; without this call it ends FINISHED."""
        if status not in END_STATUSES:
            raise ValueError(f"run status {status!r}: expected one of {', '.join(END_STATUSES)}")
        self._end[self._current().key] = status

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log numbers to the innermost open run (``step``: e.g. the trial number), each rounded
        to its documented precision."""
        self._current()
        _clean_metrics(metrics)

    def log_series(self, name: str, points: Sequence[tuple[int, float]]) -> None:
        """Log one metric at many ``(step, value)`` points (e.g. a trial's intermediate values)."""
        self._current()
        _clean_points(name, points)

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log parameters (stringified) to the innermost open run."""
        self._current()

    def log_artifact(self, path: str | Path | StorePath, artifact_path: str | None = None) -> None:
        """Upload a file (plot, profile JSON) to the innermost open run."""
        self._current()
        if not store_path(path).is_file():
            raise ValueError(f"artifact {str(path)!r} is not a file")

    def log_table(self, data: Mapping[str, Sequence[Any]], artifact_file: str) -> None:
        """Log a table (columns of plain values) with ``mlflow.log_table`` to the innermost open run;
        a run that already has ``artifact_file`` keeps it (a resumed job logs the same table again)."""
        self._current()
        _clean_table(data, artifact_file)

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """Set tags on the innermost open run."""
        self._current()

    def tag_trial(self, number: int, tags: Mapping[str, str]) -> None:
        """Set tags on the trial run ``number`` under the innermost open run (whichever driver of the
        job opened it)."""
        self._current()

    @property
    def failed(self) -> bool:
        """Whether MLflow failed during the run (the local log then holds what is missing)."""
        return False

    def summary(self) -> str:
        """One line for the end-of-run report."""
        return "tracking: disabled"


NullTracker = Tracker


class MlflowTracker(Tracker):
    """Tracker logging to MLflow, with a local JSON-lines log of every event (see module doc)."""

    enabled = True

    def __init__(
        self, *, uri: str | None, experiment: str, run_dir: str | Path | StorePath, tags: Mapping[str, str],
    ) -> None:
        super().__init__()
        self.uri = resolve_tracking_uri(uri)
        self.experiment = experiment
        self.base_tags = dict(tags)
        self.log_path = log_path(run_dir)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        #: a store without appends keeps the whole log here and rewrites it when a run ends
        self._held: list[str] | None = None
        if not self.log_path.is_local:
            try:
                self._held = [self.log_path.read_text()]
            except FileNotFoundError:
                self._held = []
        if urllib.parse.urlsplit(self.uri).scheme.lower() in ("http", "https"):
            for key, value in _HTTP_DEFAULTS.items():
                os.environ.setdefault(key, value)
        self._client = mlflow.MlflowClient(tracking_uri=self.uri)
        self._experiment_id: str | None = None
        self._failure: str | None = None
        self._dropped = 0
        self._sent = 0

    # -- local log and guarded sending ---------------------------------------------------------

    def _write(self, event: dict[str, Any]) -> None:
        event = {"v": LOG_SCHEMA, "time": _now_ms(), **event}
        line = json.dumps(event, sort_keys=True, allow_nan=True) + "\n"
        if self._held is None:
            with open(self.log_path.local_path(), "a", encoding="utf-8") as out:
                out.write(line)
            return
        self._held.append(line)
        if event["op"] in ("end_run", "offline"):
            self.log_path.write_text("".join(self._held))

    def _send(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if self._failure is not None:
            self._dropped += 1
            return None
        try:
            result = fn(*args, **kwargs)
        except Exception as err:  # tracking must never end the run
            first = (str(err).splitlines() or [type(err).__name__])[0][:300]
            self._failure = f"{what} failed: {type(err).__name__}: {first}"
            self._dropped += 1
            self._write({"op": "offline", "error": self._failure})
            log.warning("MLflow tracking at %s failed (%s); the run goes on without it, events are kept in "
                        "%s; re-log later with: python -m pipeline.tracking replay %s --uri URI",
                        _redact(self.uri), self._failure, self.log_path, self.log_path)
            return None
        self._sent += 1
        return result

    def _experiment(self) -> str | None:
        if self._experiment_id is None:
            self._experiment_id = self._send("experiment", _ensure_experiment, self._client, self.experiment,
                                             self.uri)
        return self._experiment_id

    # -- runs ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def named_run(self, name: str, params: Mapping[str, Any] | None = None,
                  tags: Mapping[str, str] | None = None) -> Iterator[RunRef]:
        parent = self._stack[-1] if self._stack else None
        all_tags = {**self.base_tags, **(tags or {})}
        key = (f"run:{self.experiment}:{name}:{all_tags.get('config_hash', '')}" if parent is None
               else f"{parent.key}/{name}")
        start = _now_ms()
        self._write({"op": "start_run", "key": key, "parent": None if parent is None else parent.key,
                     "name": name, "experiment": self.experiment, "tags": all_tags, "start_time": start})
        run_id = None
        exp = self._experiment()
        if exp is not None and (parent is None or parent.run_id is not None):
            run_id = self._send("named_run", _open_run, self._client, exp, name, all_tags, start,
                                None if parent is None else parent.run_id)
        with self._run(RunRef(key, run_id, name), params) as ref:
            yield ref

    @contextlib.contextmanager
    def trial_run(self, number: int, params: Mapping[str, Any] | None = None,
                  tags: Mapping[str, str] | None = None) -> Iterator[RunRef]:
        parent = self._parent()
        key = f"trial:{number}:{uuid.uuid4().hex[:12]}"
        name = f"trial-{number:04d}"
        all_tags = {**self.base_tags, **(tags or {}), "trial_number": str(number)}
        start = _now_ms()
        self._write({"op": "start_run", "key": key, "parent": parent.key, "name": name,
                     "experiment": self.experiment, "tags": all_tags, "start_time": start})
        run_id = None
        if parent.run_id is not None and self._experiment_id is not None:
            run_id = self._send("trial_run", _create_run, self._client, self._experiment_id, name,
                                {**all_tags, "mlflow.parentRunId": parent.run_id}, start)
        with self._run(RunRef(key, run_id, name), params) as ref:
            yield ref

    @contextlib.contextmanager
    def _run(self, ref: RunRef, params: Mapping[str, Any] | None) -> Iterator[RunRef]:
        if ref.run_id is not None:
            self._write({"op": "run_id", "key": ref.key, "run_id": ref.run_id})
        status: str | None = None
        self._stack.append(ref)
        try:
            self.log_params(params or {})
            yield ref
        except KeyboardInterrupt:
            status = "KILLED"
            raise
        except BaseException:
            status = "FAILED"
            raise
        finally:
            self._stack.pop()
            chosen = self._end.pop(ref.key, "FINISHED")
            end = _now_ms()
            self._write({"op": "end_run", "key": ref.key, "status": status or chosen, "end_time": end})
            if ref.run_id is not None:
                self._send("end_run", self._client.set_terminated, ref.run_id, status or chosen, end)

    # -- logging -------------------------------------------------------------------------------

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        ref = self._current()
        clean = _clean_metrics(metrics)
        if not clean:
            return
        stamp = _now_ms()
        self._write({"op": "metrics", "key": ref.key, "metrics": clean, "step": step, "timestamp": stamp})
        if ref.run_id is not None:
            batch = [Metric(k, v, stamp, step or 0) for k, v in clean.items()]
            self._send("log_metrics", self._client.log_batch, ref.run_id, metrics=batch)

    def log_series(self, name: str, points: Sequence[tuple[int, float]]) -> None:
        ref = self._current()
        clean = _clean_points(name, points)
        if not clean:
            return
        stamp = _now_ms()
        self._write({"op": "series", "key": ref.key, "name": name, "points": clean, "timestamp": stamp})
        if ref.run_id is not None:
            self._send("log_series", _log_series, self._client, ref.run_id, name, clean, stamp)

    def log_params(self, params: Mapping[str, Any]) -> None:
        ref = self._current()
        clean = _clean_params(params)
        if not clean:
            return
        self._write({"op": "params", "key": ref.key, "params": clean})
        if ref.run_id is not None:
            self._send("log_params", _log_new_params, self._client, ref.run_id, clean)

    def log_artifact(self, path: str | Path | StorePath, artifact_path: str | None = None) -> None:
        ref = self._current()
        file = store_path(path)
        if not file.is_file():
            raise ValueError(f"artifact {str(path)!r} is not a file")
        same_store = (file.scheme, file.query) == (self.log_path.scheme, self.log_path.query)
        shown = posixpath.relpath(file.path, self.log_path.parent.path) if same_store else file.uri
        self._write({"op": "artifact", "key": ref.key, "path": shown, "artifact_path": artifact_path})
        if ref.run_id is not None:
            with file.local_copy() as local:
                self._send("log_artifact", self._client.log_artifact, ref.run_id, str(local), artifact_path)

    def log_table(self, data: Mapping[str, Sequence[Any]], artifact_file: str) -> None:
        ref = self._current()
        clean = _clean_table(data, artifact_file)
        self._write({"op": "table", "key": ref.key, "artifact_file": artifact_file, "data": clean,
                     "columns": list(clean)})  # the log's keys are sorted; this keeps the order
        if ref.run_id is not None:
            self._send("log_table", _log_table, self._client, ref.run_id, clean, artifact_file)

    def set_tags(self, tags: Mapping[str, str]) -> None:
        ref = self._current()
        clean = {str(k): str(v) for k, v in tags.items()}
        if not clean:
            return
        self._write({"op": "tags", "key": ref.key, "tags": clean})
        if ref.run_id is not None:
            batch = [RunTag(k, v) for k, v in clean.items()]
            self._send("set_tags", self._client.log_batch, ref.run_id, tags=batch)

    def tag_trial(self, number: int, tags: Mapping[str, str]) -> None:
        ref = self._current()
        clean = {str(k): str(v) for k, v in tags.items()}
        if not clean:
            return
        self._write({"op": "trial_tags", "key": ref.key, "number": int(number), "tags": clean})
        if ref.run_id is not None and self._experiment_id is not None:
            self._send("tag_trial", _tag_trial, self._client, self._experiment_id, ref.run_id, int(number),
                       clean)

    # -- report --------------------------------------------------------------------------------

    @property
    def failed(self) -> bool:
        return self._failure is not None

    @property
    def failure(self) -> str | None:
        return self._failure

    def summary(self) -> str:
        where = f"{_redact(self.uri)} (experiment {self.experiment})"
        if self._failure is None:
            return f"tracking: {self._sent} MLflow calls to {where}; local log {self.log_path}"
        return (f"tracking FAILED: {self._failure}; {self._dropped} MLflow calls dropped; everything is in "
                f"{self.log_path}; re-log with: python -m pipeline.tracking replay {self.log_path} --uri URI")


def log_path(run_dir: str | Path | StorePath) -> StorePath:
    """Where a run keeps its tracking log: ``<run folder>/tracking/mlflow-log.jsonl``."""
    return store_path(run_dir) / "tracking" / LOG_NAME


def make_tracker(
    *, enabled: bool, variant: str, run_dir: str | Path | StorePath, config_hash: str,
    bench_signature: int | str | None,
    uri: str | None = None, experiment: str | None = None, engine_version: str | None = None,
    check: bool = True, timeout: float = 10.0, output_folder: str | None = None,
) -> Tracker:
    """The run's tracker: null when disabled, else MLflow (reachability checked first, by default);
    ``output_folder`` (default: ``run_dir``) is tagged on every run as its owner."""
    if not enabled:
        return NullTracker()
    resolved = check_reachable(uri, timeout) if check else resolve_tracking_uri(uri)
    owner = output_folder if output_folder is not None else str(store_path(run_dir))
    tags = standard_tags(config_hash=config_hash, bench_signature=bench_signature,
                         engine_version=engine_version, variant=variant, output_folder=owner)
    return MlflowTracker(uri=resolved, experiment=experiment or experiment_name(variant), run_dir=run_dir,
                         tags=tags)


# ---- MLflow calls (raise on failure; the tracker guards them) --------------------------------


def _artifact_root(uri: str) -> str | None:
    """Artifacts of a sqlite store go beside the database (MLflow's default is the cwd)."""
    path = _sqlite_path(uri)
    return None if path is None else str(path.resolve().parent / "mlartifacts")


def _ensure_experiment(client: Any, name: str, uri: str) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None:
        if found.lifecycle_stage == "deleted":
            client.restore_experiment(found.experiment_id)
        return str(found.experiment_id)
    try:
        return str(client.create_experiment(name, artifact_location=_artifact_root(uri)))
    except MlflowException:
        again = client.get_experiment_by_name(name)  # another driver created it meanwhile
        if again is None:
            raise
        return str(again.experiment_id)


def _create_run(client: Any, experiment_id: str, name: str, tags: Mapping[str, str], start: int) -> str:
    run = client.create_run(experiment_id, start_time=start, tags=dict(tags), run_name=name)
    return str(run.info.run_id)


def _quoted(text: str) -> str:
    """A filter-string literal (names and hashes here never hold quotes)."""
    if "'" in text or "\\" in text:
        raise ValueError(f"cannot search MLflow for {text!r}: it holds a quote or backslash")
    return f"'{text}'"


def _find_runs(client: Any, experiment_id: str, name: str, config_hash: str,
               parent_id: str | None) -> list[Any]:
    """Runs named ``name`` made from the config with ``config_hash`` directly under run ``parent_id``
    (None: top-level runs), newest first."""
    where = [f"attributes.run_name = {_quoted(name)}", f"tags.config_hash = {_quoted(config_hash)}"]
    if parent_id is not None:
        where.append(f"tags.`mlflow.parentRunId` = {_quoted(parent_id)}")
    found = client.search_runs([experiment_id], filter_string=" and ".join(where), max_results=200,
                               order_by=["attributes.start_time DESC"])
    return [r for r in found if r.data.tags.get("mlflow.parentRunId") == parent_id]


def check_run_owner(uri: str, experiment: str, run_names: Sequence[str], config_hash: str,
                    output_folder: str) -> None:
    """Refuse (RunOwnerError), before any game, top-level runs of these names from another folder."""
    try:
        client = mlflow.MlflowClient(tracking_uri=uri)
        found = client.get_experiment_by_name(experiment)
        runs = [] if found is None else [
            r for name in run_names for r in _find_runs(client, found.experiment_id, name, config_hash, None)]
    except Exception as err:  # any backend error means: unusable
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise TrackingUnavailable(f"MLflow tracking URI {_redact(uri)}: cannot look up the runs of "
                                  f"{experiment!r}: {first}") from None
    for run in runs:
        theirs = run.data.tags.get(OWNER_TAG)
        if theirs == output_folder:
            continue
        where = (f"MLflow run {run.info.run_name!r} (id {run.info.run_id}, experiment {experiment!r} at "
                 f"{_redact(uri)})")
        own = ("give this run its own name ([optuna].study_name or [run].id) or experiment "
               "([mlflow].experiment)")
        if theirs is None:
            raise RunOwnerError(f"{where} has no recorded output folder, so it cannot be told apart from "
                                f"another run's: {own}")
        raise RunOwnerError(f"{where} belongs to output folder {theirs}, not {output_folder}: continue that "
                            f"run with --resume --output {posixpath.dirname(theirs)}, or {own}")


def _open_run(client: Any, experiment_id: str, name: str, tags: Mapping[str, str], start: int,
              parent_id: str | None) -> str:
    """Reuse run ``name`` of a resumed job (a top-level run: same name, config hash and output
    folder; a child: same name under ``parent_id``), else create it.

    Runs left RUNNING by a killed driver are marked FAILED, like their Optuna trials: when a
    top-level run is reused, every such run of its output folder and config; when a child is
    reused, its own children."""
    owner = tags.get(OWNER_TAG)
    config_hash = tags.get("config_hash", "")
    found = [r for r in _find_runs(client, experiment_id, name, config_hash, parent_id)
             if r.data.tags.get(OWNER_TAG) == owner]
    if not found:
        full = dict(tags) if parent_id is None else {**tags, "mlflow.parentRunId": parent_id}
        return _create_run(client, experiment_id, name, full, start)
    run_id = str(found[0].info.run_id)
    if parent_id is None:
        running = f"tags.config_hash = {_quoted(config_hash)} and attributes.status = 'RUNNING'"
    else:
        running = f"tags.`mlflow.parentRunId` = {_quoted(run_id)} and attributes.status = 'RUNNING'"
    for stale in client.search_runs([experiment_id], filter_string=running, max_results=1000):
        if stale.info.run_id != run_id and stale.data.tags.get(OWNER_TAG) == owner:
            client.set_terminated(stale.info.run_id, "FAILED")
    client.update_run(run_id, status="RUNNING")
    client.log_batch(run_id, tags=[RunTag(k, v) for k, v in tags.items()])
    return run_id


def _log_new_params(client: Any, run_id: str, params: Mapping[str, str]) -> None:
    """Log params; keys the run already has are skipped (params are immutable in MLflow)."""
    have = client.get_run(run_id).data.params
    new = {k: v for k, v in params.items() if k not in have}
    changed = sorted(k for k, v in params.items() if k in have and have[k] != v)
    if changed:
        log.warning("run %s keeps its logged value of params %s (MLflow params are immutable)", run_id,
                    ", ".join(changed))
    items = list(new.items())
    for i in range(0, len(items), 100):  # MLflow accepts at most 100 params per batch
        client.log_batch(run_id, params=[Param(k, v) for k, v in items[i:i + 100]])


def _log_series(client: Any, run_id: str, name: str, points: Sequence[Sequence[float]], stamp: int) -> None:
    metrics = [Metric(name, float(value), stamp, int(step)) for step, value in points]
    for i in range(0, len(metrics), MAX_BATCH_METRICS):
        client.log_batch(run_id, metrics=metrics[i:i + MAX_BATCH_METRICS])


def _log_table(client: Any, run_id: str, data: Mapping[str, list[Any]], artifact_file: str) -> None:
    """``log_table`` unless the run has the file already (MLflow would append the rows again)."""
    folder = posixpath.dirname(artifact_file) or None
    if artifact_file in {f.path for f in client.list_artifacts(run_id, folder)}:
        return
    client.log_table(run_id, data=dict(data), artifact_file=artifact_file)


def _tag_trial(client: Any, experiment_id: str, parent_id: str, number: int, tags: Mapping[str, str]) -> None:
    """Tags on the newest child run of ``parent_id`` for trial ``number`` (none found: nothing)."""
    where = (f"tags.`mlflow.parentRunId` = {_quoted(parent_id)} and "
             f"tags.trial_number = {_quoted(str(number))}")
    found = client.search_runs([experiment_id], filter_string=where, max_results=10,
                               order_by=["attributes.start_time DESC"])
    if found:
        client.log_batch(found[0].info.run_id, tags=[RunTag(k, v) for k, v in tags.items()])


# ---- replay ----------------------------------------------------------------------------------


def read_log(path: str | Path | StorePath) -> list[dict[str, Any]]:
    """The events of a tracking log (ValueError naming the line when one is not JSON)."""
    events = []
    lines = store_path(path).read_text().splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError as err:
            if number == len(lines):
                break  # a driver killed mid-write leaves a torn last line: ignore it
            raise ValueError(f"{path}:{number}: not a JSON event ({err.msg})") from None
    return events


def replay_log(path: str | Path, uri: str | None = None, *, experiment: str | None = None,
               timeout: float = 10.0) -> dict[str, str]:
    """Re-create every run of a local tracking log at ``uri``; returns log key -> new run id.

    Runs, parent links at every depth, params, metrics and series (original steps and
    timestamps), tags (a trial's tags set later included), tables, artifacts and end statuses are
    replayed in order; a run the log never ended (its driver was killed) is marked FAILED, as the
    tracker marks it when the job resumes. Raises on any MLflow error (unlike the tracker, a
    replay should fail loudly)."""
    log_file = store_path(path)
    resolved = check_reachable(uri, timeout)
    client = mlflow.MlflowClient(tracking_uri=resolved)
    experiments: dict[str, str] = {}
    ids: dict[str, str] = {}
    ended: set[str] = set()
    trials: dict[tuple[str, int], str] = {}  # (parent key, trial number) -> the newest trial's key
    for event in read_log(log_file):
        op, key = event.get("op"), str(event.get("key"))
        if op == "run_id":
            if key in ids:
                client.set_tag(ids[key], "replayed_from_run_id", event["run_id"])
            continue
        if op == "start_run":
            if key in ids:  # a resumed study: same parent
                client.update_run(ids[key], status="RUNNING")
                ended.discard(key)
                continue
            name = experiment or event["experiment"]
            if name not in experiments:
                experiments[name] = _ensure_experiment(client, name, resolved)
            tags = {**event["tags"], "replayed_from_log": str(log_file)}
            parent = event.get("parent")
            if parent is not None:
                tags["mlflow.parentRunId"] = ids[parent]
                if "trial_number" in event["tags"]:
                    trials[(str(parent), int(event["tags"]["trial_number"]))] = key
            ids[key] = _create_run(client, experiments[name], event["name"], tags, event["start_time"])
        elif op == "params":
            _log_new_params(client, ids[key], event["params"])
        elif op == "metrics":
            metrics = [Metric(k, float(v), event["timestamp"], event.get("step") or 0)
                       for k, v in event["metrics"].items()]
            client.log_batch(ids[key], metrics=metrics)
        elif op == "series":
            _log_series(client, ids[key], str(event["name"]), event["points"], event["timestamp"])
        elif op == "tags":
            client.log_batch(ids[key], tags=[RunTag(k, v) for k, v in event["tags"].items()])
        elif op == "trial_tags":
            trial = trials.get((key, int(event["number"])))
            if trial is not None:
                client.log_batch(ids[trial], tags=[RunTag(k, v) for k, v in event["tags"].items()])
        elif op == "table":
            data = {name: event["data"][name] for name in event.get("columns", event["data"])}
            _log_table(client, ids[key], data, str(event["artifact_file"]))
        elif op == "artifact":
            file = _artifact_file(log_file, str(event["path"]))
            if not file.is_file():
                raise ValueError(f"{log_file}: artifact {file} of run {key} is missing")
            with file.local_copy() as local:
                client.log_artifact(ids[key], str(local), event.get("artifact_path"))
        elif op == "end_run":
            client.set_terminated(ids[key], event["status"], event["end_time"])
            ended.add(key)
    for key, run_id in ids.items():
        if key not in ended:
            client.set_terminated(run_id, "FAILED")
    return ids


def _artifact_file(log_file: StorePath, shown: str) -> StorePath:
    """An artifact named in a log: a URI or absolute path as it is, else relative to the log's folder."""
    if "://" in shown or shown.startswith("/"):
        return store_path(shown)
    folder = log_file.parent
    joined_path = posixpath.normpath(posixpath.join(folder.path, shown))
    return StorePath(folder.fs, joined_path, folder.scheme, folder.query)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pipeline.tracking replay LOG [--uri URI] [--experiment NAME]``."""
    parser = argparse.ArgumentParser(prog="python -m pipeline.tracking",
                                     description="Re-log a run's local tracking log to MLflow.")
    sub = parser.add_subparsers(dest="verb", required=True)
    replay = sub.add_parser("replay", help="replay a local tracking log")
    replay.add_argument("log", help=f"path of a {LOG_NAME}")
    replay.add_argument("--uri", help="tracking URI (default: MLFLOW_TRACKING_URI, else ./mlflow.db)")
    replay.add_argument("--experiment", help="put every run in this experiment instead")
    args = parser.parse_args(argv)
    try:
        ids = replay_log(args.log, args.uri, experiment=args.experiment)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"replayed {len(ids)} runs to {_redact(resolve_tracking_uri(args.uri))}")
    return 0


