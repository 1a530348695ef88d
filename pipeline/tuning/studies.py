"""Optuna study storage and the ask/tell helpers of a driver that owns its study.

Storage: by default a journal file under the run's output folder
(``<run folder>/optuna/journal.log``, :class:`optuna.storages.JournalStorage` over
:class:`optuna.storages.journal.JournalFileBackend`): no server, append-only, safe to copy. Any
SQLAlchemy URL (``sqlite:///...``, ``postgresql://...``) selects an RDB storage instead (a shared
database on a cluster); a value without ``://`` is a journal file path. :func:`check_storage`
fails with a clear :class:`StorageUnavailable` before any game is played.

Ownership: a study belongs to one output folder, recorded in its user attr ``output_folder``
when it is created. Opening it for another folder is refused with an error naming both
(:func:`check_owners` before any game, and :func:`open_study` again), so a second run of a config
into a new folder never reuses, and silently finishes on, the first run's trials.

Resuming (:func:`open_study`): the study is created or loaded by name (``load_if_exists``), so
finished trials are kept. Exactly ONE driver owns a study, so a trial still RUNNING when the
study is opened was left by a killed driver: it is marked FAIL and its parameters are enqueued
again (at most ``max_retries`` times along a chain of retries, recorded in the user attrs
``retry_of`` / ``retry_attempt``), so the study still reaches its target of COMPLETE trials and
nothing is counted twice (a FAIL trial never counts; the retry is a new trial).

Drawing trials (:class:`TrialWindow`, what the main job uses): every draw builds a fresh
sampler seeded from the run seed, the study name and the trial's slot, fed only the trials of
slots 0..n-W, so W trials can be in flight and a resumed driver draws what an uninterrupted one
would. The plain :func:`ask_trial` draws from the study's own sampler, built at every open:
samplers are not stored with a study. Its seed is derived from
the run seed, the study name and the number of finished trials (:func:`sampler_seed`): reusing
the bare run seed would replay the random stream the first driver already consumed, so a resumed
study would propose again the very points it has evaluated (exactly so for the random sampler
and TPE's startup trials); deriving it from the history gives fresh draws after a resume while
the same history still gives the same proposals (reproducible resumes).

Pruning: :class:`optuna.pruners.WilcoxonPruner` compares the per-pair scores of the running trial
with those of the best trial at the same steps. A step must therefore name the same ballot
opening (pair) in every trial (``PairScores.wilcoxon_steps()``). As Optuna's documentation
advises for this pruner, a pruned trial is told COMPLETE with the mean of the scores it played
(user attrs ``pruned`` and ``pruned_at_step``) so the sampler learns from it; it counts towards
the target like any finished trial, since it consumed budget.
"""

from __future__ import annotations

import hashlib
import math
import posixpath
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import optuna
from optuna.storages import BaseStorage, JournalStorage, RDBStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import FrozenTrial, TrialState

from engine.features import FEATURES
from engine.params import PARAMS
from pipeline.games.stopping import interrupts_held

JOURNAL_PATH = Path("optuna") / "journal.log"
WEIGHT_PREFIX = "weight."
Kind = Literal["int", "float", "bool", "categorical"]
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


class StudyError(ValueError):
    """A bad study request (space, directions, storage); the message quotes the input."""


class StudyOwnerError(StudyError):
    """A study that belongs to another output folder (or to none on record)."""


OWNER_ATTR = "output_folder"


class StorageUnavailable(StudyError):
    """The study storage cannot be used; the message names it (password hidden)."""


# ---- storage ---------------------------------------------------------------------------------


def default_storage(run_dir: str | Path) -> str:
    """The default journal file of a run: ``<run folder>/optuna/journal.log``."""
    return str(Path(run_dir) / JOURNAL_PATH)


def is_rdb_url(storage: str) -> bool:
    return "://" in storage


def describe_storage(storage: str) -> str:
    """The storage as it may be printed: an RDB URL with its password hidden."""
    if not is_rdb_url(storage):
        return f"journal file {storage}"
    try:
        from sqlalchemy.engine import make_url

        return make_url(storage).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL: show the scheme only
        return storage.split("://", 1)[0] + "://..."


def _password(storage: str | None) -> str | None:
    if not storage or not is_rdb_url(storage):
        return None
    try:
        from sqlalchemy.engine import make_url

        return make_url(storage).password
    except Exception:
        return None


def _engine_kwargs(url: str) -> dict[str, Any]:
    if url.startswith(("postgresql", "mysql")):
        return {"connect_args": {"connect_timeout": 10}}
    if url.startswith("sqlite"):
        return {"connect_args": {"timeout": 30}}
    return {}


def make_storage(storage: str | None, run_dir: str | Path | None = None) -> BaseStorage:
    """A storage object: RDB for URLs, a journal file for paths (default under ``run_dir``)."""
    if storage is None:
        if run_dir is None:
            raise StudyError("no storage given and no run folder to put the default journal file in")
        storage = default_storage(run_dir)
    if is_rdb_url(storage):
        return RDBStorage(storage, engine_kwargs=_engine_kwargs(storage))
    path = Path(storage)
    path.parent.mkdir(parents=True, exist_ok=True)
    return JournalStorage(_WholeWriteJournal(str(path)))


class _WholeWriteJournal(JournalFileBackend):
    """The journal file, each append finished before a Ctrl-C is raised. Optuna's lock file is
    released by a rename then an unlink; an interrupt between them made the release raise
    FileNotFoundError, which hid the interrupt and could leave the lock behind."""

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        with interrupts_held():
            super().append_logs(logs)


def check_storage(storage: str | None, run_dir: str | Path | None = None) -> BaseStorage:
    """Open the storage now and fail with a one-line :class:`StorageUnavailable` if it is unusable.

    Call it when a run starts, before any game; the returned storage can be passed on."""
    shown = describe_storage(storage) if storage else f"journal file under {run_dir}"
    if storage and is_rdb_url(storage) and storage.startswith("sqlite:///"):
        db = storage[len("sqlite:///"):].split("?", 1)[0]
        if db and db != ":memory:" and not Path(db).parent.is_dir():
            raise StorageUnavailable(f"Optuna storage {shown}: folder {Path(db).parent} does not exist")
    try:
        made = make_storage(storage, run_dir)
        made.get_all_studies()
    except StudyError:
        raise
    except Exception as err:  # driver missing, bad URL, refused connection, unwritable file
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
        secret = _password(storage)
        if secret:
            first = first.replace(secret, "***")
        raise StorageUnavailable(
            f"Optuna storage {shown} is unusable: {type(err).__name__}: {first}"
        ) from None
    return made


# ---- search space ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamSpec:
    """One dimension of the search space: name, kind, inclusive range, log scale, or choices."""

    name: str
    kind: Kind
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    choices: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if not self.name:
            raise StudyError(f"parameter {self!r}: empty name")
        if self.kind not in ("int", "float", "bool", "categorical"):
            raise StudyError(f"parameter {self.name!r}: unknown kind {self.kind!r}")
        if self.kind in ("int", "float"):
            if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.low > self.high:
                raise StudyError(f"parameter {self.name!r}: bad range [{self.low}, {self.high}]")
            if self.log and self.low <= 0:
                raise StudyError(f"parameter {self.name!r}: log scale needs low > 0, got {self.low}")
        if self.kind == "categorical" and not self.choices:
            raise StudyError(f"parameter {self.name!r}: categorical needs choices")

    def suggest(self, trial: optuna.Trial) -> Any:
        if self.kind == "int":
            return trial.suggest_int(self.name, int(self.low), int(self.high), log=self.log)
        if self.kind == "float":
            return trial.suggest_float(self.name, float(self.low), float(self.high), log=self.log)
        if self.kind == "bool":
            return trial.suggest_categorical(self.name, [False, True])
        return trial.suggest_categorical(self.name, list(self.choices))


def space_from_engine(
    knobs: Iterable[str] | None = None,
    weights: Iterable[str] | None = None,
    *,
    ranges: Mapping[str, tuple[float, float]] | None = None,
    log: Iterable[str] | None = None,
) -> list[ParamSpec]:
    """The search space from the engine's declarations (``engine.params.PARAMS``, ``FEATURES``).

    ``knobs`` / ``weights``: names to tune (None: all; empty: none). Weights are named
    ``weight.<feature>``. ``ranges`` narrows a dimension (within its declared range); ``log``
    lists the dimensions on a log scale (default: the knobs ``engine.params`` declares log-scale)."""

    ranges = dict(ranges or {})
    log_set = set(log) if log is not None else None
    by_knob = {p.name: p for p in PARAMS}
    by_weight = {f"{WEIGHT_PREFIX}{f.name}": f for f in FEATURES}
    chosen_knobs = list(by_knob) if knobs is None else list(knobs)
    chosen_weights = list(by_weight) if weights is None else [
        w if w.startswith(WEIGHT_PREFIX) else WEIGHT_PREFIX + w for w in weights]
    for name in chosen_knobs:
        if name not in by_knob:
            raise StudyError(f"unknown engine knob {name!r}; known: {', '.join(by_knob)}")
    for name in chosen_weights:
        if name not in by_weight:
            raise StudyError(f"unknown evaluation feature {name!r}; known: {', '.join(by_weight)}")
    unknown = sorted(set(ranges) - set(chosen_knobs) - set(chosen_weights))
    if unknown:
        raise StudyError(f"range given for {unknown[0]!r}, which is not in the search space")
    space: list[ParamSpec] = []
    declared: list[tuple[str, Kind, float, float]] = [
        (n, by_knob[n].kind, float(by_knob[n].low), float(by_knob[n].high)) for n in chosen_knobs]
    declared += [(n, "float", by_weight[n].low, by_weight[n].high) for n in chosen_weights]
    for name, kind, low, high in declared:
        if kind == "bool":
            space.append(ParamSpec(name, "bool"))
            continue
        lo, hi = ranges.get(name, (low, high))
        if not low <= lo <= hi <= high:
            raise StudyError(f"range {name} = [{lo}, {hi}] is outside its declared range [{low}, {high}]")
        declared_log = name in by_knob and by_knob[name].log_scale
        on_log = declared_log if log_set is None else name in log_set
        space.append(ParamSpec(name, kind, float(lo), float(hi), log=on_log))
    return space


def split_params(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, float]]:
    """Trial params -> (engine knobs, evaluation weights by feature name)."""
    knobs = {k: v for k, v in params.items() if not k.startswith(WEIGHT_PREFIX)}
    weights = {k[len(WEIGHT_PREFIX):]: float(v) for k, v in params.items() if k.startswith(WEIGHT_PREFIX)}
    return knobs, weights


# ---- opening and resuming --------------------------------------------------------------------


def sampler_seed(run_seed: int, study_name: str, n_finished: int) -> int:
    """A 32-bit seed from the run seed, the study and its history length (see the module doc)."""
    text = f"{run_seed}:{study_name}:{n_finished}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "little")


def make_sampler(kind: str, seed: int, n_startup_trials: int = 10) -> optuna.samplers.BaseSampler:
    """A seeded sampler. TPE honours the constraints a trial carries (:func:`tell_trial`'s
    ``constraints``: feasible when every value is <= 0), Optuna's constrained optimisation."""
    if kind == "tpe":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=n_startup_trials)
    if kind == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise StudyError(f"unknown sampler {kind!r}; known: tpe, random")


def wilcoxon_pruner(p_threshold: float = 0.1, n_startup_steps: int = 20) -> optuna.pruners.BasePruner:
    """Optuna's WilcoxonPruner on per-pair scores (steps = opening ids, higher = better)."""
    with warnings.catch_warnings():  # experimental since 3.6; chosen knowingly, pinned by tests
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.pruners.WilcoxonPruner(p_threshold=p_threshold, n_startup_steps=n_startup_steps)


def recover_interrupted(study: optuna.Study, max_retries: int = 1) -> list[int]:
    """Mark RUNNING trials (left by a killed driver) FAIL and re-enqueue their params.

    Returns the numbers of the trials failed. Idempotent: a trial that already has a retry is
    not enqueued again (so a driver killed during recovery does not double a retry)."""
    trials = study.get_trials(deepcopy=False)
    has_retry = {t.user_attrs.get("retry_of") for t in trials}
    failed = []
    for trial in trials:
        if trial.state != TrialState.RUNNING:
            continue
        attempt = int(trial.user_attrs.get("retry_attempt", 0))
        if trial.number not in has_retry and attempt < max_retries and trial.params:
            study.enqueue_trial(dict(trial.params),
                                user_attrs={"retry_of": trial.number, "retry_attempt": attempt + 1})
        study.tell(trial.number, state=TrialState.FAIL)
        failed.append(trial.number)
    return failed


def open_study(
    name: str,
    storage: str | BaseStorage | None,
    *,
    run_seed: int,
    direction: str | None = "maximize",
    directions: Sequence[str] | None = None,
    run_dir: str | Path | None = None,
    sampler: str = "tpe",
    n_startup_trials: int = 10,
    pruner: optuna.pruners.BasePruner | None = None,
    max_retries: int = 1,
    owner: str | None = None,
) -> optuna.Study:
    """Create or resume study ``name``: finished trials kept, interrupted ones failed and retried,
    a fresh sampler seeded from the run seed and the history (see the module docstring).

    ``owner``: the output folder the study belongs to (recorded when new, refused when another)."""
    if directions is not None:
        direction = None
        if pruner is not None and len(directions) > 1:
            raise StudyError("pruning works on single-objective studies only")
    store = storage if isinstance(storage, BaseStorage) else make_storage(storage, run_dir)
    try:
        study = optuna.create_study(
            storage=store, study_name=name, direction=cast(Any, direction), directions=cast(Any, directions),
            load_if_exists=True,
            sampler=optuna.samplers.RandomSampler(seed=0),
            pruner=pruner or optuna.pruners.NopPruner(),  # Optuna's default would be a median pruner
        )
    except ValueError as err:
        raise StudyError(f"study {name!r}: {err}") from None
    wanted = [d.lower() for d in (directions or [direction or "minimize"])]
    have = [d.name.lower() for d in study.directions]
    if wanted != have:
        raise StudyError(f"study {name!r} exists with directions {have}, not {wanted}")
    if owner is not None:
        _claim(study, owner)
    recover_interrupted(study, max_retries)
    n_finished = len(study.get_trials(deepcopy=False, states=FINISHED))
    study.sampler = make_sampler(sampler, sampler_seed(run_seed, name, n_finished), n_startup_trials)
    return study


def _owner_problem(name: str, shown: str, theirs: Any, ours: str, n_trials: int) -> str | None:
    """Why the study may not be used for output folder ``ours`` (None when it may)."""
    own = "give this run a study of its own ([optuna].study_name, [run].id or another --storage)"
    if theirs is None:
        if n_trials == 0:
            return None  # created and not yet claimed: nothing to reuse
        return (f"Optuna study {name!r} in {shown} has {n_trials} trials and no recorded output folder, so "
                f"it cannot be told apart from another run's: {own}, or delete that study")
    if str(theirs) == ours:
        return None
    return (f"Optuna study {name!r} in {shown} belongs to output folder {theirs}, not {ours}: continue that "
            f"run with --resume --output {posixpath.dirname(str(theirs))}, or {own}")


def check_owners(storage: BaseStorage, names: Iterable[str], owner: str, shown: str) -> None:
    """Refuse (StudyOwnerError) before any game when an existing study belongs to another folder."""
    for name in names:
        try:
            study_id = storage.get_study_id_from_name(name)
        except KeyError:
            continue
        attrs = storage.get_study_user_attrs(study_id)
        problem = _owner_problem(name, shown, attrs.get(OWNER_ATTR), owner,
                                 len(storage.get_all_trials(study_id, deepcopy=False)))
        if problem:
            raise StudyOwnerError(problem)


def _claim(study: optuna.Study, owner: str) -> None:
    """Record ``owner`` on a new study, or refuse one that belongs to another folder."""
    problem = _owner_problem(study.study_name, "its storage", study.user_attrs.get(OWNER_ATTR), owner,
                             len(study.get_trials(deepcopy=False)))
    if problem:
        raise StudyOwnerError(problem)
    if OWNER_ATTR not in study.user_attrs:
        study.set_user_attr(OWNER_ATTR, owner)


def count_complete(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))


def remaining_trials(study: optuna.Study, target: int) -> int:
    """COMPLETE trials still needed to reach ``target``."""
    return max(0, target - count_complete(study))


# ---- ask / report / tell ---------------------------------------------------------------------


def ask_trial(study: optuna.Study, space: Sequence[ParamSpec]) -> tuple[optuna.Trial, dict[str, Any]]:
    """Start a trial and draw every parameter of ``space`` (an enqueued retry gets its old values)."""
    names = [spec.name for spec in space]
    if len(set(names)) != len(names):
        raise StudyError(f"duplicate parameter names in the space: {names}")
    trial = study.ask()
    return trial, {spec.name: spec.suggest(trial) for spec in space}


def report_step(trial: optuna.Trial, step: int, value: float, window: TrialWindow | None = None) -> bool:
    """Report one per-pair score at ``step`` (the opening id); True when the trial should stop.
    With a ``window`` the pruner sees only the trials the window allows (:class:`TrialWindow`)."""
    trial.report(float(value), int(step))
    if window is None:
        return bool(trial.should_prune())
    return window.should_prune(trial.study, trial)


def report_pairs(trial: optuna.Trial, steps: Iterable[tuple[int, float]],
                 window: TrialWindow | None = None) -> int | None:
    """Report many (step, score) pairs in order; the step at which pruning was decided, or None."""
    for step, value in steps:
        if report_step(trial, step, value, window):
            return int(step)
    return None


# ---- trials in flight ---------------------------------------------------------------------------


def slot_of(trial: FrozenTrial | optuna.Trial) -> int:
    """A trial's slot: its place in the study's sequence of parameter draws (a retry keeps the
    slot of the trial it retries; see :func:`TrialWindow.ask`)."""
    return int(trial.user_attrs.get("slot", trial.number))


@dataclass(frozen=True)
class TrialWindow:
    """Deterministic parallel trials: the trial of slot n is sampled, and pruned, from the
    COMPLETE trials of slots 0..n-W only (W = ``size``), never from whichever results happened
    to arrive first. Up to W trials can then be in flight at once, and the same config gives the
    same trials however many actually are. Each draw uses a fresh sampler seeded from the run
    seed, the study name and the slot, fed the trials of its window, so a resumed driver draws
    exactly what an uninterrupted one would. W = 1 is the sequential study.

    The price: a draw does not see the last W-1 trials, so with a budget of trials close to W,
    TPE draws almost at random (its first ``n_startup_trials`` + W - 1 draws are random)."""

    size: int
    run_seed: int
    sampler: str = "tpe"
    n_startup_trials: int = 10
    #: the pruner's view of each running trial's window, built once (its trials are COMPLETE and
    #: do not change while the trial runs): rebuilding it for every reported pair cost the driver
    #: about 17 ms a pair with 16 finished trials of 1,800 pairs
    _views: OrderedDict[tuple[Any, ...], optuna.Study] = field(
        default_factory=OrderedDict, init=False, repr=False, compare=False)
    _views_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.size < 1:
            raise StudyError(f"trial window {self.size}: must be at least 1")

    def _view(self, study: optuna.Study, slot: int, seed: int | None = None) -> optuna.Study:
        """An in-memory study holding the COMPLETE trials of slots 0..slot-W."""
        return self._study_of(study, self._window_trials(study, slot), seed)

    def _window_trials(self, study: optuna.Study, slot: int) -> list[FrozenTrial]:
        """The COMPLETE trials of slots 0..slot-W; an error if one of those slots is unfinished."""
        horizon = slot - self.size
        early = [t for t in study.get_trials(deepcopy=False) if slot_of(t) <= horizon]
        unfinished = sorted(slot_of(t) for t in early if t.state in (TrialState.RUNNING, TrialState.WAITING))
        if unfinished:
            raise StudyError(f"study {study.study_name!r}: slot {slot} needs slots up to {horizon} finished, "
                             f"but {unfinished} are still running")
        return [t for t in early if t.state == TrialState.COMPLETE]

    def _study_of(self, study: optuna.Study, trials: Sequence[FrozenTrial], seed: int | None) -> optuna.Study:
        memory = optuna.storages.InMemoryStorage()
        memory.create_new_study(study.directions, study.study_name)
        view = optuna.Study(study.study_name, memory,
                            sampler=make_sampler(self.sampler, seed or 0, self.n_startup_trials),
                            pruner=study.pruner)
        view.add_trials(list(trials))
        return view

    def next_slot(self, study: optuna.Study) -> int:
        """The slot of the next new draw: one past every slot the study has used."""
        return 1 + max((slot_of(t) for t in study.get_trials(deepcopy=False)), default=-1)

    def ask(self, study: optuna.Study, space: Sequence[ParamSpec]) -> tuple[optuna.Trial, dict[str, Any]]:
        """Start the next trial: a waiting retry (its old parameters and slot) if there is one,
        else the draw of the next slot from its window. Call it only when every slot up to
        ``next_slot - W`` has finished."""
        waiting = study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
        if waiting:
            trial, params = ask_trial(study, space)
            retry_of = trial.user_attrs.get("retry_of")
            old = next((t for t in study.get_trials(deepcopy=False) if t.number == retry_of), None)
            trial.set_user_attr("slot", slot_of(old) if old is not None else trial.number)
            return trial, params
        slot = self.next_slot(study)
        view = self._view(study, slot, sampler_seed(self.run_seed, study.study_name, slot))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            drawn = view.ask()
            params = {spec.name: spec.suggest(drawn) for spec in space}
        study.enqueue_trial(params, user_attrs={"slot": slot}, skip_if_exists=False)
        trial, again = ask_trial(study, space)
        if again != params:
            raise StudyError(f"study {study.study_name!r}: a queued trial was taken before slot {slot}")
        return trial, params

    def ready(self, study: optuna.Study) -> bool:
        """Whether the next draw's window has finished (a waiting retry is always ready)."""
        if study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
            return True
        horizon = self.next_slot(study) - self.size
        return not any(slot_of(t) <= horizon for t in study.get_trials(deepcopy=False)
                       if t.state == TrialState.RUNNING)

    def should_prune(self, study: optuna.Study, trial: optuna.Trial) -> bool:
        """The study's pruner on ``trial``'s reported values, against its window's trials only."""
        if study.pruner is None or isinstance(study.pruner, optuna.pruners.NopPruner):
            return False
        frozen = next(t for t in study.get_trials(deepcopy=False) if t.number == trial.number)
        return bool(study.pruner.prune(self._pruning_view(study, slot_of(frozen)), frozen))

    def _pruning_view(self, study: optuna.Study, slot: int) -> optuna.Study:
        """:meth:`_view` of ``slot``, kept for the trial's later reports (the last 4 W views), and
        found again only for the very same finished trials (numbers and completion times)."""
        trials = self._window_trials(study, slot)
        key = (study.study_name, slot, tuple((t.number, t.datetime_complete) for t in trials))
        with self._views_lock:
            view = self._views.get(key)
            if view is not None:
                self._views.move_to_end(key)
                return view
        view = self._study_of(study, trials, None)
        with self._views_lock:
            self._views[key] = view
            while len(self._views) > 4 * self.size:
                self._views.popitem(last=False)
        return view


def tell_trial(
    study: optuna.Study,
    trial: optuna.Trial,
    value: float | Sequence[float],
    *,
    pruned_at_step: int | None = None,
    user_attrs: Mapping[str, Any] | None = None,
    constraints: Mapping[str, float] | None = None,
) -> FrozenTrial:
    """Finish a trial as COMPLETE with its objective value(s).

    A pruned trial passes ``pruned_at_step`` and the mean of the scores it played as ``value``.
    ``constraints``: named values, feasible when all are <= 0 (TPE samples towards feasibility)."""
    for key, attr in (user_attrs or {}).items():
        trial.set_user_attr(key, attr)
    for key, bound in (constraints or {}).items():
        trial.set_constraint(key, float(bound))
    if pruned_at_step is not None:
        trial.set_user_attr("pruned", True)
        trial.set_user_attr("pruned_at_step", int(pruned_at_step))
    return study.tell(trial, value)


def fail_trial(study: optuna.Study, trial: optuna.Trial, reason: str) -> FrozenTrial:
    """Finish a trial as FAIL (e.g. its games crashed), keeping the reason in a user attr."""
    trial.set_user_attr("fail_reason", reason[:500])
    return study.tell(trial, state=TrialState.FAIL)


def complete_trials(study: optuna.Study) -> list[FrozenTrial]:
    """The study's COMPLETE trials (pruned ones included: they end COMPLETE with a partial value)."""
    return list(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))


def quiet_optuna() -> None:
    """Silence Optuna's per-trial INFO lines: the job prints its own trial lines."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
