"""Run-config sections of the tracking and study layer: ``[mlflow]`` and ``[optuna]``.

Declared like every other section (one frozen dataclass, one :func:`~pipeline.config.run_config.setting`
per key) and registered with :func:`~pipeline.config.run_config.register_section` when this module is
imported, so whoever loads a config that may hold these sections must import this module
first (the tune/calibrate verbs do). Both sections are optional: :func:`mlflow_section` and
:func:`optuna_section` give the defaults when a file has none.

Where results are *recorded* (tracking URI, experiment name, study storage) never changes what a
run computes, so those keys are not hashed; the sampler, the pruner and the trial target are.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.config.run_config import (
    RunConfig,
    at_least,
    between,
    identifier,
    non_empty,
    one_of,
    register_section,
    setting,
)

SAMPLERS = ("tpe", "random")
PRUNERS = ("none", "wilcoxon")


def open_unit(v: float) -> str | None:
    return None if 0.0 < v < 1.0 else "must be strictly between 0 and 1"


@dataclass(frozen=True)
class MlflowSection:
    """[mlflow]: where run summaries go. Never affects results, so never hashed."""

    enabled: bool = setting(True, doc="log to MLflow (false: no tracking at all)", hashed=False)
    tracking_uri: str | None = setting(
        None, doc="tracking URI (default: MLFLOW_TRACKING_URI, else sqlite:///mlflow.db in the working dir)",
        check=non_empty, hashed=False)
    experiment: str | None = setting(
        None, doc="experiment name (default: draughts-<variant>)", check=non_empty, hashed=False)
    check_timeout: float = setting(
        10.0, doc="seconds to wait for the tracking server when the run starts", check=between(0.1, 600.0),
        hashed=False)


@dataclass(frozen=True)
class OptunaSection:
    """[optuna]: study storage, sampler, pruner and the number of trials to finish."""

    storage: str | None = setting(
        None, doc="RDB URL (sqlite:///..., postgresql://...) or journal file path "
                  "(default: <run folder>/optuna/journal.log)", check=non_empty, hashed=False)
    study_name: str | None = setting(None, doc="study name (default: the run id)", check=identifier,
                                     hashed=False)
    n_trials: int = setting(50, doc="target number of COMPLETE trials (resumes count the ones already done)",
                            check=at_least(1))
    sampler: str = setting("tpe", doc=f"sampler: {', '.join(SAMPLERS)}", check=one_of(*SAMPLERS))
    n_startup_trials: int = setting(10, doc="random trials before TPE models the results", check=at_least(0))
    pruner: str = setting("none", doc=f"pruner: {', '.join(PRUNERS)} (wilcoxon: on per-pair scores)",
                          check=one_of(*PRUNERS))
    wilcoxon_p_threshold: float = setting(
        0.1, doc="p-value under which the Wilcoxon pruner stops a trial worse than the best", check=open_unit)
    wilcoxon_startup_steps: int = setting(
        20, doc="pairs a trial plays before the Wilcoxon pruner may stop it", check=at_least(0))
    parallel_trials: int = setting(
        1, doc="W: trials kept in flight; trial n is drawn and pruned from trials 0..n-W only, so the "
               "results do not depend on how many actually run (docs/cluster.md)", check=at_least(1))
    trials_in_flight: int = setting(
        0, doc="trials actually in flight, 1..parallel_trials (0: parallel_trials); never changes results",
        check=at_least(0), hashed=False)
    max_retries: int = setting(
        1, doc="times the parameters of a trial killed mid-run are tried again on resume", check=at_least(0),
        hashed=False)


register_section("mlflow", MlflowSection)
register_section("optuna", OptunaSection)


def mlflow_section(config: RunConfig) -> MlflowSection:
    """The [mlflow] section of ``config``, or the defaults when the file has none."""
    section = config.resolved("mlflow")
    return section if isinstance(section, MlflowSection) else MlflowSection()


def optuna_section(config: RunConfig) -> OptunaSection:
    """The [optuna] section of ``config``, or the defaults when the file has none."""
    section = config.resolved("optuna")
    return section if isinstance(section, OptunaSection) else OptunaSection()
