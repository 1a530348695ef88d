"""Checks that span config sections of the main job (steps aligned to batches, the pin on the
ladder, confirmation settings): every verb of the job calls :func:`validate_job` before any game.
"""

from __future__ import annotations

from engine.profile import load_profile
from pipeline.config.job_sections import calibrate_section, job, ladder_section, tune_section
from pipeline.config.run_config import ConfigError, RunConfig
from pipeline.ladder.reference import anchors


def validate_job(config: RunConfig, stages: tuple[str, ...] = ("ladder", "tune", "calibrate")) -> None:
    """Cross-key checks of the sections ``stages`` need; ConfigError naming the keys."""
    src = config.source
    j = job(config)
    bp = j.batch_size // 2
    tune = tune_section(config)
    if "tune" in stages and tune is not None:
        for key in ("step_pairs", "sprt_step_pairs"):
            value = getattr(tune, key)
            if value % bp:
                raise ConfigError(f"{src}: tune.{key} = {value}: must be a multiple of job.batch_size / 2 "
                                  f"= {bp} (steps end on batch boundaries)")
        if tune.sprt_elo0 >= tune.sprt_elo1:
            raise ConfigError(f"{src}: tune.sprt_elo0 = {tune.sprt_elo0} must be below tune.sprt_elo1 = "
                              f"{tune.sprt_elo1}")
        if tune.sprt_alpha + tune.sprt_beta >= 1:
            raise ConfigError(f"{src}: tune.sprt_alpha + tune.sprt_beta must be below 1")
    if "calibrate" in stages:
        cal = calibrate_section(config)
        _check_pin(config, cal.pin)
        if cal.chain_from and not cal.confirm_step_pairs:
            raise ConfigError(f"{src}: calibrate.chain_from = {cal.chain_from!r} needs confirmation: set "
                              "calibrate.confirm_step_pairs (each chained level is rated against its "
                              "neighbour's confirmed Elo)")
        if cal.chain_from and cal.confirm_joint_pairs:
            raise ConfigError(f"{src}: calibrate.chain_from and calibrate.confirm_joint_pairs exclude each "
                              "other (a chain already rates adjacent levels head to head); set one of them")
        if cal.confirm_validate and not cal.confirm_step_pairs:
            raise ConfigError(f"{src}: calibrate.confirm_validate needs confirmation: set "
                              "calibrate.confirm_step_pairs")
        if cal.confirm_step_pairs and cal.confirm_step_pairs % bp:
            raise ConfigError(f"{src}: calibrate.confirm_step_pairs = {cal.confirm_step_pairs}: must be a "
                              f"multiple of job.batch_size / 2 = {bp} (rounds end on batch boundaries)")
    if j.seed_profile is not None:

        try:
            load_profile(j.seed_profile, j.variant)
        except ValueError as err:
            raise ConfigError(f"{src}: job.seed_profile = {j.seed_profile!r}: {err}") from None


def _check_pin(config: RunConfig, pin: str) -> None:
    """The pin must be one of the ladder's anchors."""

    names = [a.name for a in anchors(job(config).variant, ladder_section(config))]
    if pin not in names:
        raise ConfigError(f"{config.source}: calibrate.pin = {pin!r} is not a ladder anchor; anchors: "
                          f"{', '.join(names)}")
