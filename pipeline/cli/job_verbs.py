"""Verbs of the main job: ``run``, ``ladder``, ``tune``, ``calibrate``, ``export``, ``report``.

Each handler imports its stage when it runs: the stages pull in mlflow, optuna, scipy and
matplotlib (seconds), which ``--help`` and a bad argument should not wait for.

Registered in :data:`pipeline.cli.common.COMMANDS` on import (``pipeline.cli.main`` imports this module), so
bad input ends like every verb: exit status 2 and one ``error: ...`` line.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from typing import TYPE_CHECKING

from pipeline.cli.common import EXIT_FAILURE, EXIT_OK, UsageError, command

if TYPE_CHECKING:
    from pipeline.games.storage_fs import StorePath


def _job_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="run config (TOML), e.g. configs/runs/quickstart.toml")
    p.add_argument("--output", help="output root: a folder or a pyarrow filesystem URI such as "
                                    "s3://BUCKET/runs (overrides [run].output_root)")
    p.add_argument("--resume", action="store_true",
                   help="continue this config's run folder (every batch file is checked against its "
                        "checksum; damaged ones are played again)")
    p.add_argument("--address", help="Ray cluster address (overrides [ray].address and RAY_ADDRESS)")
    p.add_argument("--storage", help="Optuna storage: RDB URL or journal file (overrides [optuna].storage)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (overrides [mlflow].tracking_uri)")
    p.add_argument("--in-process", action="store_true", help="play in this process, without Ray")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")


def _run_stages(args: argparse.Namespace, stages: tuple[str, ...]) -> int:
    from pipeline.job.main_job import (  # heavy, see docstring
        STAGES,
        JobOptions,
        format_summary,
        load_job_config,
        run_job,
    )

    opts = JobOptions(output=args.output, resume=args.resume, address=args.address, storage=args.storage,
                      tracking_uri=args.tracking_uri, in_process=args.in_process,
                      progress=not args.no_progress)
    config = load_job_config(args.config, opts)
    try:
        summary = run_job(config, opts, stages if stages else STAGES)
    except ValueError:
        raise  # bad input or an unreachable service at start: one line, exit 2 (pipeline.cli.main.main)
    except Exception as err:  # lost mid-run (Optuna storage, files, workers): say how to go on
        text = " ".join(str(err).split())[:300]
        print(f"error: the run stopped: {type(err).__name__}: {text}. Finished games and trials are "
              "saved in the run folder; fix the cause and rerun the same command with --resume",
              file=sys.stderr)
        return EXIT_FAILURE
    print(format_summary(summary))
    return EXIT_OK


@command("run", "main job: ladder (if missing), tune, calibrate, export and report a run config", _job_args)
def _run(args: argparse.Namespace) -> int:
    return _run_stages(args, ())


@command("ladder", "rate (or reuse) the reference ladder of a run config", _job_args)
def _ladder(args: argparse.Namespace) -> int:
    return _run_stages(args, ("ladder",))


@command("tune", "tune the evaluation weights of a run config (Optuna, SPRT-confirmed)", _job_args)
def _tune(args: argparse.Namespace) -> int:
    return _run_stages(args, ("tune",))


@command("calibrate", "calibrate easy/medium/hard of a run config on its ladder", _job_args)
def _calibrate(args: argparse.Namespace) -> int:
    return _run_stages(args, ("calibrate",))


def _run_folder(run: str, output: str | None) -> StorePath:
    """RUN as a run id under the output root, or as a path (or URI) of a run folder."""
    from pipeline.games.storage_fs import joined, store_path  # heavy, see docstring

    try:
        candidate = joined(output or "runs", run)
    except ValueError:  # an absolute path or a URI: not a run id
        candidate = None
    if candidate is not None and (candidate / "run.json").is_file():
        return candidate
    if (store_path(run) / "run.json").is_file():
        return store_path(run)
    raise UsageError(f"no run {run!r} under {str(output or 'runs')!r} (and no run folder at that path)")


def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="run id (under --output) or run folder")
    p.add_argument("--output", help="output root holding the run, a folder or a URI (default: runs)")
    p.add_argument("--profiles-dir",
                   help="folder of <variant>.json (default: the engine's shipped profiles, engine/profiles, "
                        "or $DRAUGHTS_PROFILE_DIR)")
    p.add_argument("--description", default="",
                   help="free text for the profile's provenance, e.g. the experiment write-up it ships with")


@command("export", "write a run's levels as <profiles-dir>/<variant>.json and verify it", _export_args)
def _export(args: argparse.Namespace) -> int:
    from engine.profile import profile_dir  # heavy, see docstring
    from pipeline.job.export import export_run

    result = export_run(_run_folder(args.run, args.output), args.profiles_dir or profile_dir(),
                        description=args.description)
    levels = ", ".join(f"{name} {elo:+.0f} [{low:+.0f}, {high:+.0f}]"
                       for name, (elo, low, high) in result.levels.items())
    print(f"exported {result.path} ({result.variant}; bench signature {result.bench_signature}; reloaded "
          f"by the engine): {levels}")
    return EXIT_OK


def _report_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="run id (under --output) or run folder")
    p.add_argument("--output", help="output root holding the run (default: runs)")


@command("report", "level table (markdown + JSON) and plots of a run, from its folder alone", _report_args)
def _report(args: argparse.Namespace) -> int:
    from pipeline.job.report import write_report  # heavy, see docstring

    report = write_report(_run_folder(args.run, args.output))
    sys.stdout.write(report.table_markdown)
    print(f"report written to {report.folder} ({len(report.files)} files)")
    return EXIT_OK


def _levelcheck_args(p: argparse.ArgumentParser) -> None:
    # defaults mirror pipeline.calibration.levelcheck.LevelCheckSettings (a test keeps them equal)
    p.add_argument("profile", metavar="PROFILE.json", help="profile file to check (its variant is used)")
    p.add_argument("--output", required=True, metavar="DIR", help="folder for the games and the results")
    p.add_argument("--openings", type=int, default=60,
                   help="openings per match, each played twice with colours swapped (default 60)")
    p.add_argument("--seed", type=int, default=0, help="master seed of the check's games (default 0)")
    p.add_argument("--deck", default=None, help="opening deck of the variant (default: its own deck)")
    p.add_argument("--deck-part", choices=("all", "even", "odd"), default="odd",
                   help="openings to play: the half the calibration did not use (default odd)")
    p.add_argument("--ply-cap", type=int, default=200,
                   help="adjudicated draw after this many plies (default 200)")
    p.add_argument("--batch-size", type=int, default=10,
                   help="games per task and Parquet file, even (default 10)")
    p.add_argument("--bootstrap", type=int, default=400,
                   help="bootstrap resamples over openings (default 400)")
    p.add_argument("--in-process", action="store_true", help="play in this process, without Ray")
    p.add_argument("--address", help="Ray cluster address (default RAY_ADDRESS or a private local Ray)")


@command("levelcheck", "check a profile on fresh openings against the product's levels: predicted vs "
         "measured scores, Elo on the calibration's scale, blunder rate, nodes per move", _levelcheck_args)
def _levelcheck(args: argparse.Namespace) -> int:
    from pipeline.calibration.levelcheck import (  # heavy, see docstring
        LevelCheckSettings,
        markdown,
        run_levelcheck,
    )
    from pipeline.job.progress import ProgressPrinter  # heavy, see docstring


    settings = LevelCheckSettings(**{f.name: getattr(args, f.name) for f in fields(LevelCheckSettings)})
    result = run_levelcheck(settings, ProgressPrinter(True))
    sys.stderr.write(markdown(result))
    print(f"level check written to {args.output} (levelcheck.json, levelcheck.md): {result['reproduced']} of "
          f"{result['judged']} predicted scores inside the measured 95 % CI")
    return EXIT_OK
