"""The main job: ladder (if missing), tune, calibrate, export, report - resumable, tracked.

Before any game: the config is validated (including cross-key checks), where it plays is
settled (in-process with an address is refused), a driver running as a Ray job is refused local
tracking, study storage and output paths (:mod:`pipeline.config.placement`), the run folder is
checked (another config's folder is refused; ``run`` needs ``--resume`` to continue its own),
MLflow and the Optuna storage are checked reachable, and studies and MLflow job runs that
belong to another output folder are refused. A folder that already holds the run has every
batch file of every stage checked against its checksum record, and damaged ones are played
again (:mod:`pipeline.games.storage_repair`), saying which. Then each stage skips what is
already done: verified batch files, finished trials (studies resume by name), stage result files.

The run folder (``<output root>/<run id>``) is a local folder or a pyarrow filesystem URI
(``s3://bucket/runs``); every file of it is read and written through
:mod:`pipeline.games.storage_fs`. An object-store output needs ``[optuna].storage`` (the
default journal file lives in a local run folder).

MLflow layout (:mod:`pipeline.tracking.mlflow_log`, ``docs/mainjob.md``): experiment per
variant; one JOB run ``<base>`` per job (``[optuna].study_name`` or the run id; tag ``kind`` job),
opened before the first stage, so its duration is the job's; the STAGE runs ``ladder``, ``tune``
and ``calibrate`` (``kind`` stage, tag ``stage``) are its children; a TRIAL run per Optuna trial
(``kind`` trial, tags ``trial_number``, ``state``; a pruned one ends KILLED; the chosen one is
tagged ``chosen``) is a child of its stage; a LEVEL run per level result (``kind`` calibrated,
product, candidate or anchor, tag ``level``, plain metric names: :mod:`pipeline.job.level_runs`) is
a child of its stage. The job run holds the level-named metrics ``elo_<level>`` (with CI), the
levels table, the level-ladder PNG, the exported profile and the report. A resumed job reuses its
own runs (the job run by name, config hash and output folder; the others by name under their
parent). The job run's id goes into the profile's provenance and into
``<run folder>/tracking.json``.
"""

from __future__ import annotations

import concurrent.futures as cf
import posixpath
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from engine.bench import run_bench
from engine.variants import get_variant
from pipeline.calibration.depth_check import DEPTH_FILE, depth_line, level_weights, run_depth_check
from pipeline.calibration.method import (
    EasyPlayed,
    play_easy,
    play_product_curves,
    run_calibration,
    warm_blunder_rate,
)
from pipeline.config.job_sections import (
    calibrate_section,
    export_section,
    job,
    ladder_section,
    tune_section,
)
from pipeline.config.placement import check_cluster_locations, placement
from pipeline.config.run_config import ConfigError, RunConfig, load_config
from pipeline.config.tracking_sections import mlflow_section, optuna_section
from pipeline.games.executor import RayOptions, load_ray, make_executor
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing
from pipeline.games.schedule import SCHEDULE_FILE, TaskTimeline, most_compiles, write_schedules
from pipeline.games.schedule_tasks import TASKS_FILE, write_task_rows
from pipeline.games.selfplay import check_run_folder, manifest
from pipeline.games.sizing import NOMINAL_NODES_PER_SECOND
from pipeline.games.stage import StageContext, read_result
from pipeline.games.stopping import lift_stop, request_stop, stop_requested
from pipeline.games.storage import run_dir, write_json
from pipeline.games.storage_fs import StorePath
from pipeline.games.storage_repair import replay_damaged
from pipeline.job.eta import JobClock, PlannedGames
from pipeline.job.export import TRACKING_FILE, TrackingRecord, export_run
from pipeline.job.job_plan import (
    CHOICE_GROUPS,
    CURVES_GROUP,
    REFINED_GROUPS,
    VALIDATION_GROUP,
    CurveGames,
    calibrate_plan,
    exact_plan,
    export_plan,
    tune_plan,
)
from pipeline.job.level_runs import (
    LevelResult,
    calibration_results,
    job_metrics,
    ladder_results,
    levels_table,
)
from pipeline.job.progress import ProgressPrinter, log_libraries_to
from pipeline.job.report import level_ladder, write_report
from pipeline.job.validate import validate_job
from pipeline.ladder.reference import ensure_ladder, ladder_summary
from pipeline.tracking.mlflow_log import (
    check_reachable,
    check_run_owner,
    experiment_name,
    make_tracker,
)
from pipeline.tracking.plots import LadderRow, elo_ladder_plot
from pipeline.tuning.studies import (
    TrialWindow,
    check_owners,
    check_storage,
    describe_storage,
    open_study,
    quiet_optuna,
    wilcoxon_pruner,
)
from pipeline.tuning.weights import run_tune, seed_weights

STAGES = ("ladder", "tune", "calibrate", "export", "report")
JOB_LOG = "job.log"  # the libraries' log records (MLflow, Ray), in the run folder
CALIBRATE_STUDY = "easy"  # the calibrate stage's one study: Easy's weakening mix
LEVELS_TABLE = "levels_table.json"  # the job run's levels table (mlflow.log_table)
LEVEL_LADDER = "level_ladder.png"  # the job run's level-ladder plot


@dataclass(frozen=True)
class JobOptions:
    """Command-line overrides and switches of a job verb."""

    output: str | None = None
    resume: bool = False
    address: str | None = None
    storage: str | None = None
    tracking_uri: str | None = None
    in_process: bool = False
    progress: bool = True


@dataclass
class JobSummary:
    """What a job did, for the final summary."""

    run_id: str
    run_folder: StorePath
    seconds: float = 0.0
    lines: list[str] = field(default_factory=list)
    level_table: str = ""
    profile: StorePath | None = None
    tracking: str = ""
    tracking_uri: str | None = None  # the MLflow store the job logged to (None: tracking off)
    variant: str = ""


def load_job_config(path: str, opts: JobOptions) -> RunConfig:
    """The config file with command-line overrides applied (validated like the file)."""
    config = load_config(path)
    job(config)  # [job] is required by every job verb: a clean ConfigError when missing
    if opts.output:
        config = config.replace("run", output_root=opts.output)
    if opts.address:
        config = config.replace("ray", address=opts.address)
    if opts.storage:
        config = config.replace("optuna", storage=opts.storage)
    if opts.tracking_uri:
        config = config.replace("mlflow", tracking_uri=opts.tracking_uri)
    return config


def _check_folder(config: RunConfig, opts: JobOptions, full_run: bool) -> None:
    """``run`` needs --resume for its own folder; stage verbs add to it; other configs: refused."""

    check_run_folder(config, resume=opts.resume or not full_run)


def _write_manifest(config: RunConfig, folder: StorePath) -> None:

    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "run.json", manifest(config))


def study_base(config: RunConfig) -> str:
    return optuna_section(config).study_name or config.run_id


def study_names(config: RunConfig) -> list[str]:
    """Every Optuna study of the job: ``<base>-tune`` and ``<base>-calibrate-easy`` (Easy's mix)."""
    base = study_base(config)
    return [f"{base}-tune", f"{base}-calibrate-{CALIBRATE_STUDY}"]


def tracked_names(config: RunConfig) -> list[str]:
    """The job's top-level MLflow runs: its job run ``<base>`` (the stage runs are its children)."""
    return [study_base(config)]


def _study_storage(config: RunConfig, folder: StorePath) -> str | None:
    """The Optuna storage; an object-store run folder cannot hold the default journal file."""
    storage = optuna_section(config).storage
    if storage is None and not folder.is_local:
        raise ConfigError(
            f"{config.source}: [optuna].storage is unset, and the run folder {folder} is not on a local "
            "disk, so the default journal file cannot live in it: give --storage a database URL "
            "(postgresql+psycopg2://USER@HOST/DB) or a local journal file")
    return storage


def trial_window(config: RunConfig) -> TrialWindow:
    """How the job's studies draw trials: [optuna].parallel_trials at once, from the run seed."""
    opt = optuna_section(config)
    return TrialWindow(opt.parallel_trials, config.run.seed, opt.sampler, opt.n_startup_trials)


def _open_studies(config: RunConfig, storage: Any, folder: StorePath, names: list[str]) -> dict[str, Any]:

    opt = optuna_section(config)
    base = study_base(config)
    owner = str(folder)
    out: dict[str, Any] = {}
    for name in names:
        if name == "tune":
            pruner = (wilcoxon_pruner(opt.wilcoxon_p_threshold, opt.wilcoxon_startup_steps)
                      if opt.pruner == "wilcoxon" else None)
            out[name] = open_study(f"{base}-tune", storage, run_seed=config.run.seed, direction="maximize",
                                   sampler=opt.sampler, n_startup_trials=opt.n_startup_trials,
                                   pruner=pruner, max_retries=opt.max_retries, owner=owner)
        else:  # Easy's weakening mix: minimise the blunder rate under the strength constraint
            out[name] = open_study(f"{base}-calibrate-{name}", storage, run_seed=config.run.seed,
                                   direction="minimize", sampler=opt.sampler,
                                   n_startup_trials=opt.n_startup_trials, max_retries=opt.max_retries,
                                   owner=owner)
    return out


def run_job(config: RunConfig, opts: JobOptions, stages: tuple[str, ...] = STAGES) -> JobSummary:
    """Run ``stages`` of the main job for ``config`` (see the module docstring)."""
    quiet_optuna()
    started = time.perf_counter()
    j = job(config)
    validate_job(config, tuple(s for s in stages if s in ("ladder", "tune", "calibrate")))
    variant = _canonical(j.variant)
    deck = tuple(load_deck(variant, part=j.deck_part, name=j.deck))
    where = placement(config, in_process_flag=opts.in_process, address_flag=opts.address)
    check_cluster_locations(config)
    folder = run_dir(config.run.output_root, config.run_id)
    owner = str(folder)
    full_run = stages == STAGES
    _check_folder(config, opts, full_run)
    resuming = (folder / "run.json").is_file()
    printer = ProgressPrinter(opts.progress)
    if folder.is_local:  # the libraries' start-up chatter goes to the run's log, not the terminal
        if not where.in_process:
            load_ray()  # Ray's import configures its loggers: route them after it
        log_libraries_to(folder.local_path() / JOB_LOG)
    ml = mlflow_section(config)
    uri = check_reachable(ml.tracking_uri, ml.check_timeout) if ml.enabled else None  # before any game
    storage_url = _study_storage(config, folder)
    storage = check_storage(storage_url, folder.local_path() if folder.is_local else None)
    shown = describe_storage(storage_url) if storage_url else f"journal file under {folder}"
    check_owners(storage, study_names(config), owner, shown)
    experiment = ml.experiment or experiment_name(variant)
    if uri is not None:
        check_run_owner(uri, experiment, tracked_names(config), config.config_hash(), owner)
    printer.log(f"run {config.run_id}: compiling the engine's kernels and measuring the bench signature "
                "(about a minute on a first run; numba's cache makes later starts take seconds)")
    bench = run_bench(variants=[variant])  # the signature, and the driver's search speed for the ETA
    signature = bench.signature
    tracker = make_tracker(enabled=ml.enabled, variant=variant, run_dir=folder,
                           config_hash=config.config_hash(), bench_signature=signature, uri=uri,
                           experiment=experiment, check=False, output_folder=owner)
    _write_manifest(config, folder)
    summary = JobSummary(config.run_id, folder, tracking_uri=uri, variant=variant)
    ray_cfg = config.ray
    executor = make_executor(
        in_process=where.in_process,
        options=RayOptions(address=where.address, num_cpus=ray_cfg.num_cpus,
                           node_ip_address=ray_cfg.node_ip_address, max_in_flight=j.max_in_flight,
                           task_seconds=j.task_seconds),
        warm_fns=(warm_blunder_rate,))  # the calibration's blunder rates run on the workers
    printer.log(f"run {config.run_id}: executor {executor.description}, output {folder}")
    timeline = TaskTimeline()
    ctx = StageContext(executor, folder.parent, config.run_id, variant, config.run.seed,
                       j.batch_size, j.ply_cap, deck, printer, timeline)
    nominal = NOMINAL_NODES_PER_SECOND[get_variant(variant).board_size]
    speed = nominal / bench.nps if bench.nps > 0 else 1.0
    clock = printer.clock = JobClock(timeline, executor.slots, speed=speed)
    clock.replan(_job_plan(config, ctx, stages))
    on_play, on_batch = _eta_hooks(config, ctx, clock, printer)
    ctx = replace(ctx, on_play=on_play, on_batch=on_batch)
    try:
        if resuming:
            replay_damaged(folder, executor, lambda text: _say(text, summary))
        _stages(config, ctx, stages, storage, tracker, signature, summary, printer)
    finally:
        record_schedules(ctx)  # a failed run's timeline too
        executor.close()
    summary.tracking = tracker.summary()
    summary.seconds = time.perf_counter() - started
    return summary


def _eta_hooks(config: RunConfig, ctx: StageContext, clock: JobClock, printer: ProgressPrinter) -> tuple[
        Callable[[str, Sequence[Pairing]], None], Callable[[str, pa.Table], None]]:
    """The stage hooks that keep the job's plan current: a stage group that starts playing is
    planned exactly; while the curves play, the validation is re-planned from their games."""
    collector: CurveGames | None = None
    early: list[pa.Table] = []  # curve batches played ahead of the curve stage (beside the tuning)

    def refined(games: CurveGames) -> Callable[[], list[PlannedGames] | None]:
        def plan() -> list[PlannedGames] | None:
            try:
                return games.plan()
            except ValueError as exc:  # a partial fit can fail (RatingsError); the stand-ins stay
                printer.log(f"job ETA: the validation stays planned with stand-ins ({exc})")
                return None
        return plan

    def on_play(stage: str, pairings: Sequence[Pairing]) -> None:
        nonlocal collector
        exact = exact_plan(stage, ctx.variant, pairings, ctx.ply_cap)
        if exact is not None:
            clock.replan(exact, [stage])
        if stage == VALIDATION_GROUP:
            clock.stop_refining()
            for group in CHOICE_GROUPS:  # ended: a plan of theirs the estimate missed is not to come
                clock.finish(group)
        elif stage == CURVES_GROUP:
            weights = level_weights(ctx.run_folder, ctx.variant, job(config).seed_profile)
            collector = CurveGames(ctx.variant, weights, calibrate_section(config), ctx.ply_cap)
            for table in early:
                collector.add(stage, table)
            early.clear()
            clock.refine(REFINED_GROUPS, refined(collector))

    def on_batch(stage: str, table: pa.Table) -> None:
        if collector is not None:
            collector.add(stage, table)
        elif stage == CURVES_GROUP:
            early.append(table)

    return on_play, on_batch


def _job_plan(config: RunConfig, ctx: StageContext, stages: tuple[str, ...]) -> list[PlannedGames]:
    """The games still to come of the stages that have not finished (for the job's ETA)."""
    j, out = job(config), []
    tune = tune_section(config)
    if "tune" in stages and tune is not None and read_result(ctx.run_folder / "tune" / "result.json") is None:
        opt = optuna_section(config)
        weights = seed_weights(ctx.variant, j.seed_profile)
        out += tune_plan(ctx.variant, weights, tune, opt.n_trials, ctx.ply_cap,
                         opt.trials_in_flight or opt.parallel_trials, ctx.batch_size, ctx.deck,
                         j.task_seconds)
    if "calibrate" in stages and read_result(ctx.run_folder / "calibrate" / "result.json") is None:
        out += calibrate_plan(ctx.variant, level_weights(ctx.run_folder, ctx.variant, j.seed_profile),
                              calibrate_section(config), ctx.ply_cap)
    if "export" in stages:
        out.append(export_plan())
    return out


def record_schedules(ctx: StageContext, tracker: Any = None) -> None:
    """Write how busy each stage kept the cluster so far (``<run folder>/schedule.json``), and log
    it on the open (job) run when a tracker is given."""
    if ctx.timeline is None or not ctx.timeline.tasks:
        return
    schedules = ctx.timeline.schedules(ctx.executor.slots)
    compiles = ctx.executor.compiles_by_node()
    write_schedules(ctx.run_folder / SCHEDULE_FILE, schedules, compiles,
                    ctx.timeline.idle(ctx.executor.slots))
    write_task_rows(ctx.run_folder / TASKS_FILE, ctx.timeline.rows())
    if tracker is not None:
        metrics: dict[str, float] = {"kernel_compiles_most_per_node": float(most_compiles(compiles))}
        for s in schedules:
            stage = s.stage.replace("/", "_")
            values = {"busy_share": s.busy_share, "mean_in_flight": s.mean_in_flight,
                      "max_in_flight": s.max_in_flight, "tasks": s.tasks,
                      "task_seconds_p50": s.task_seconds_p50,
                      "small_task_share": s.small_task_share, "driver_cpu_per_task": s.driver_cpu_per_task,
                      "driver_slot_limit": s.driver_slot_limit}
            metrics.update({f"schedule_{k}_{stage}": float(v) for k, v in values.items() if v is not None})
        tracker.log_metrics(metrics)


def _say(text: str, summary: JobSummary) -> None:
    """A line that is always printed (stderr) and kept for the final summary."""
    print(text, file=sys.stderr, flush=True)
    summary.lines.append(text)


def _canonical(variant: str) -> str:

    return get_variant(variant).name


def _stages(config: RunConfig, ctx: Any, stages: tuple[str, ...], storage: Any, tracker: Any, signature: int,
            summary: JobSummary, printer: ProgressPrinter) -> None:
    """Every stage inside the job's run (opened first, so its duration is the job's)."""
    params = {"parquet": str(ctx.run_folder), "variant": ctx.variant}
    with tracker.named_run(study_base(config), params=params, tags={"kind": "job"}) as job_run:
        tracker.set_tags({"parquet_location": str(ctx.run_folder)})
        if "export" in stages or "report" in stages:
            _write_tracking(ctx.run_folder, job_run.run_id, getattr(tracker, "experiment", None))
        _job_stages(config, ctx, stages, storage, tracker, signature, summary, printer)


def _stage_tags(stage: str, study: Any = None) -> dict[str, str]:
    tags = {"kind": "stage", "stage": stage}
    return tags if study is None else {**tags, "study_name": study.study_name}


def _job_stages(config: RunConfig, ctx: Any, stages: tuple[str, ...], storage: Any, tracker: Any,
                signature: int, summary: JobSummary, printer: ProgressPrinter) -> None:

    j = job(config)
    ladder = None
    tune = tune_section(config)
    texel = "tune" in stages and tune is not None and tune.texel
    plays_ladder = "ladder" in stages and (texel or stages == ("ladder",))
    active = [s for s in stages if s != "ladder" or plays_ladder]
    if "export" in active and "report" in active:
        active.remove("report")  # shown as one step: the profile and the report from the same results
    step = _Steps(printer, active)
    if plays_ladder:
        step("ladder", "the reference ladder for the Texel seed")
        ladder_params = _section_params(config, "ladder")
        with tracker.named_run("ladder", params=ladder_params, tags=_stage_tags("ladder")):
            ladder, source = ensure_ladder(
                executor=ctx.executor, output_root=ctx.output_root, run_id=ctx.run_id, variant=ctx.variant,
                section=ladder_section(config), run_seed=ctx.run_seed, batch_size=ctx.batch_size,
                ply_cap=ctx.ply_cap, deck=ctx.deck, progress=ctx.progress, deck_part=j.deck_part)
            _log_ladder(tracker, ladder, ctx.run_folder)
        summary.lines.append(f"{ladder_summary(ladder)} ({source})")
        printer.log(summary.lines[-1])
    ahead = _Ahead(config, ctx, stages, storage, printer)
    try:
        _tune_and_calibrate(config, ctx, stages, storage, tracker, summary, printer, step, ahead)
    except BaseException:
        ahead.abandon()  # the job fails now, not after the work played ahead has finished
        raise
    finally:
        ahead.close()
    if "export" in stages or "report" in stages:
        step("export" if "export" in active else "report",
             "the profile and the report" if "export" in active and "report" in stages else "")
        record_schedules(ctx, tracker)  # the report and the job run show them
    if "export" in stages:
        _run_export_stage(config, ctx, tracker, signature, summary, printer)
    if "report" in stages:

        report = write_report(ctx.run_folder)
        summary.level_table = report.table_markdown
        for path in report.files:
            tracker.log_artifact(path, "report")
        summary.lines.append(f"report: {report.folder}")


def _tune_and_calibrate(config: RunConfig, ctx: Any, stages: tuple[str, ...], storage: Any, tracker: Any,
                        summary: JobSummary, printer: ProgressPrinter, step: _Steps, ahead: _Ahead) -> None:
    j = job(config)
    if "tune" in stages:
        section = tune_section(config)
        if section is None:
            if stages == ("tune",):

                raise ConfigError(f"{config.source}: missing section [tune]")
            summary.lines.append("tune: no [tune] section; the seed weights are used")
        else:
            opt = optuna_section(config)
            in_flight = opt.trials_in_flight or opt.parallel_trials
            window = "" if in_flight == opt.parallel_trials else f" (W = {opt.parallel_trials})"
            step("tune", f"{opt.n_trials} Optuna trials of {section.pairs} pairs, {in_flight} in flight at "
                         f"most{window}, then an SPRT of the best"
                         f"{' (and one at depth)' if section.depth_nodes else ''}")
            ahead.start()  # the product's own games and Easy's fill the slots the trials leave idle
            _run_tune_stage(config, ctx, section, storage, tracker, summary, printer)
            ahead.release()  # the calibration waits for them now
        if printer.clock is not None:
            printer.clock.finish("tune")
    weights = level_weights(ctx.run_folder, ctx.variant, j.seed_profile)
    if "calibrate" in stages:
        cal = calibrate_section(config)
        if printer.clock is not None and read_result(ctx.run_folder / "calibrate" / "result.json") is None:
            printer.clock.replan(calibrate_plan(ctx.variant, weights, cal, ctx.ply_cap),
                                 [g for g in printer.clock.plan if g.startswith("calibrate")])
        step("calibrate", f"curves on {cal.openings} openings, {cal.easy_trials} Easy trials, validation on "
                          f"{cal.validation_openings} fresh openings")
        _run_calibrate_stage(config, ctx, weights, storage, tracker, summary, printer, ahead)
        if printer.clock is not None:
            printer.clock.finish("calibrate")


class _Ahead:
    """The calibration's work that needs no tuned weights, played from the start of the tuning
    when the job runs both stages: the pairings between the product's own levels, and Easy's
    study and axis (Easy plays the product Easy's weights). While the tuning runs they take only
    the slots its trials and SPRT leave idle (``idle_only``); from :meth:`release` on, when the
    calibration waits for them, they go at full speed. The calibration reads their batches and
    Easy's finished trials back."""

    def __init__(self, config: RunConfig, ctx: Any, stages: tuple[str, ...], storage: Any,
                 printer: ProgressPrinter) -> None:
        self.config, self.ctx, self.stages, self.storage, self.printer = config, ctx, stages, storage, printer
        self.future: cf.Future[pa.Table] | None = None
        self.easy: cf.Future[EasyPlayed] | None = None
        self.easy_study: Any = None
        self._pool: cf.ThreadPoolExecutor | None = None
        self._released = threading.Event()

    def _idle_only(self) -> bool:
        return not self._released.is_set()

    def start(self) -> None:
        ctx, config = self.ctx, self.config
        if ("calibrate" not in self.stages or self.future is not None
                or read_result(ctx.run_folder / "calibrate" / "result.json") is not None):
            return
        section = calibrate_section(config)
        gated = replace(ctx, on_play=None, idle_only=self._idle_only)
        self._pool = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="ahead")
        self.future = self._pool.submit(play_product_curves, gated, section)
        studies = _open_studies(config, self.storage, ctx.run_folder, [CALIBRATE_STUDY])
        self.easy_study = studies[CALIBRATE_STUDY]
        self.printer.log(f"calibrate: Easy's weakening mix, {section.easy_trials} Optuna trials, ahead in "
                         "the slots the tuning leaves idle")
        self.easy = self._pool.submit(play_easy, gated, section, self.easy_study, self.printer.log,
                                      trial_window(config), optuna_section(config).trials_in_flight or None)

    def release(self) -> None:
        """The tuning has ended: what is still to play goes ahead of nothing, at full speed."""
        self._released.set()

    def close(self) -> None:
        """Wait for the games still playing (their batch files stay for a resume)."""
        self.release()
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def abandon(self) -> None:
        """The job is failing: the work played ahead stops at its next look between tasks (as
        on Ctrl-C; its finished batch files stay for a resume), then the stop is lifted again
        unless it was a Ctrl-C's."""
        if self._pool is None:
            return
        interrupted = stop_requested()
        request_stop()
        self._pool.shutdown(wait=True)
        if not interrupted:
            lift_stop()


class _Steps:
    """Prints ``stage k/N: name (detail)`` as each of the job's stages starts."""

    def __init__(self, printer: ProgressPrinter, active: list[str]) -> None:
        self.printer, self.active = printer, active

    def __call__(self, name: str, detail: str = "") -> None:
        if name in self.active:
            self.printer.stage(self.active.index(name) + 1, len(self.active), name, detail)


def _section_params(config: RunConfig, name: str) -> dict[str, Any]:
    section = config.to_dict().get(name, {})
    return {f"{name}.{k}": v for k, v in section.items() if v is not None}


def _log_levels(tracker: Any, results: list[LevelResult], stage: str) -> None:
    """One level run per result, a child of the open stage run (reused when the job resumes)."""
    for result in results:
        with tracker.named_run(result.name, params=result.params, tags={**result.run_tags(), "stage": stage}):
            tracker.log_metrics(result.metrics)


def _log_ladder(tracker: Any, ladder: Any, folder: StorePath) -> None:
    """On the ladder's stage run: its games, ladder.json, its plot, and a level run per anchor."""
    tracker.log_metrics({"games": float(ladder.n_games)})
    tracker.log_artifact(folder / "ladder.json")

    rows = [LadderRow(a.name, a.elo, a.rating.ci_low, a.rating.ci_high) for a in ladder.anchors]
    plot = elo_ladder_plot(rows, folder / "ladder.png", title=f"{ladder.variant}: reference ladder")
    tracker.log_artifact(plot)
    _log_levels(tracker, ladder_results(ladder), "ladder")


def _run_tune_stage(config: RunConfig, ctx: Any, section: Any, storage: Any, tracker: Any,
                    summary: JobSummary, printer: ProgressPrinter) -> None:

    study = _open_studies(config, storage, ctx.run_folder, ["tune"])["tune"]
    opt = optuna_section(config)
    params = {**_section_params(config, "tune"), "optuna.n_trials": opt.n_trials, "optuna.pruner": opt.pruner,
              "optuna.sampler": opt.sampler}
    result = run_tune(ctx, section, study, opt.n_trials, seed_profile=job(config).seed_profile,
                      tracker=tracker, log=printer.log, params=params, window=trial_window(config),
                      in_flight=opt.trials_in_flight or None)
    line = f"tune: {result.decision}"
    t = result.sprt
    if t is not None:
        line += f" ({t.describe()})"
    summary.lines.append(line)
    printer.log(line)
    if section.depth_nodes:
        _run_depth_check(ctx, section, result, tracker, summary, printer)


def _run_depth_check(ctx: Any, section: Any, tune: Any, tracker: Any, summary: JobSummary,
                     printer: ProgressPrinter) -> None:
    """The tuned weights' second SPRT, at Hard's depth (:mod:`pipeline.calibration.depth_check`),
    tracked as the stage run ``tune-depth``."""
    params = {"tune.depth_nodes": section.depth_nodes, "tune.depth_max_pairs": section.depth_max_pairs}
    line = "tune at depth: not played (the tuning kept the seed weights)"
    if tune.accepted:
        with tracker.named_run("tune-depth", params=params, tags=_stage_tags("tune-depth")):
            check = run_depth_check(ctx, section, tune)
            assert check is not None  # an accepted tuning with a depth budget is checked
            tracker.log_metrics({"accepted": float(check.accepted), **check.sprt.metrics()})
            tracker.set_tags({"decision": check.sprt.decision})
            tracker.log_artifact(ctx.run_folder / DEPTH_FILE)
            line = f"tune at depth: {depth_line(check)}"
    summary.lines.append(line)
    printer.log(line)


def _run_calibrate_stage(config: RunConfig, ctx: Any, weights: dict[str, float], storage: Any,
                         tracker: Any, summary: JobSummary, printer: ProgressPrinter,
                         ahead: _Ahead | None = None) -> None:
    """The calibrate stage run (Easy's trials, then a level run per level result), then on the job
    run: the levels' level-named metrics, the levels table and the level-ladder PNG."""
    study = (ahead.easy_study if ahead is not None and ahead.easy_study is not None
             else _open_studies(config, storage, ctx.run_folder, [CALIBRATE_STUDY])[CALIBRATE_STUDY])
    with tracker.named_run("calibrate", params=_section_params(config, "calibrate"),
                           tags=_stage_tags("calibrate", study)):
        outcome = run_calibration(ctx, calibrate_section(config), weights, study, tracker=tracker,
                                  log=printer.log, window=trial_window(config),
                                  in_flight=optuna_section(config).trials_in_flight or None,
                                  ahead=None if ahead is None else ahead.future,
                                  easy_ahead=None if ahead is None else ahead.easy)
        tracker.log_artifact(ctx.run_folder / "calibrate" / "result.json")
        results = calibration_results(outcome)
        _log_levels(tracker, results, "calibrate")
    tracker.log_metrics(job_metrics(outcome))
    tracker.log_table(levels_table(results), LEVELS_TABLE)
    tracker.log_artifact(level_ladder(outcome, ctx.run_folder / "calibrate" / LEVEL_LADDER))
    for level, rec in outcome.levels.items():
        depth = "-" if rec.median_depth is None else f"{rec.median_depth:g}"
        blunders = "-" if rec.blunder_rate is None else f"{rec.blunder_rate:.3f}"
        summary.lines.append(
            f"{level}: Elo {rec.elo:.0f} [{rec.ci[0]:.0f}, {rec.ci[1]:.0f}] ({rec.player}), "
            f"{rec.nodes_per_move:.0f} nodes/move, median depth {depth}, blunder rate {blunders}")
    for claim in outcome.claims:
        summary.lines.append(
            f"claim {claim.what}: {claim.estimate:+.0f} [{claim.ci_low:+.0f}, {claim.ci_high:+.0f}] "
            f"{'holds' if claim.holds else 'MISSED'}{'' if claim.precise else ' (CI wider than asked)'}")


def _run_export_stage(config: RunConfig, ctx: Any, tracker: Any, signature: int, summary: JobSummary,
                      printer: ProgressPrinter) -> None:

    section = export_section(config)
    result = export_run(ctx.run_folder, section.profiles_dir, bench_signature=signature,
                        description=section.description)
    tracker.log_artifact(result.path, "profile")
    summary.profile = result.path
    dial = f"; dial: {result.dial_path}" if result.dial_path else ""
    summary.lines.append(f"export: {result.path} (bench signature {result.bench_signature}, "
                         f"reloaded by the engine){dial}")


def _write_tracking(folder: StorePath, run_id: str | None, experiment: str | None) -> None:
    write_json(folder / TRACKING_FILE, TrackingRecord(run_id, experiment).to_json())


def format_summary(summary: JobSummary) -> str:
    """The final summary printed on stdout."""
    lines = [f"run {summary.run_id} finished in {summary.seconds:.0f} s; output {summary.run_folder}"]
    lines += summary.lines
    if summary.level_table:
        lines += ["", summary.level_table.rstrip()]
    if summary.tracking:
        lines.append(summary.tracking)
    lines += next_steps(summary)
    return "\n".join(lines)


def next_steps(summary: JobSummary) -> list[str]:
    """The commands a user runs next: look at the runs, ship the profile, play it."""
    out = ["", "next steps:"]
    uri = summary.tracking_uri
    if uri is not None and uri.startswith(("http://", "https://")):
        out.append(f"  open {uri} in a browser                      # the runs in MLflow")
    elif uri is not None:
        out.append(f"  mlflow ui --backend-store-uri {uri}   # then open http://127.0.0.1:5000")
    if summary.profile is not None:
        root = posixpath.dirname(str(summary.run_folder).rstrip("/"))
        out.append(f"  python -m pipeline export {summary.run_id} --output {root}   # ship it as "
                   f"engine/profiles/{summary.variant}.json")
        out.append(f"  python -m engine play --variant {summary.variant} --level medium --profile "
                   f"{summary.profile}")
    return out if len(out) > 2 else []


Log = Callable[[str], None]
