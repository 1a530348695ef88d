"""Checks that span config sections of the main job (steps aligned to batches, the deck large
enough for the calibration's openings): every verb of the job calls :func:`validate_job` before
any game.
"""

from __future__ import annotations

from engine.profile import load_profile
from pipeline.config.job_sections import calibrate_section, job, tune_section
from pipeline.config.run_config import ConfigError, RunConfig
from pipeline.config.tracking_sections import optuna_section
from pipeline.games.openings import load_deck


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
        if cal.easy_openings > cal.openings:
            raise ConfigError(f"{src}: calibrate.easy_openings = {cal.easy_openings} must be at most "
                              f"calibrate.openings = {cal.openings} (Easy's trials play curve openings)")
        try:
            deck = load_deck(j.variant, part=j.deck_part, name=j.deck)
        except ValueError as err:
            raise ConfigError(f"{src}: job.deck = {j.deck!r}: {err}") from None
        need = cal.openings + cal.validation_openings
        if len(deck) < need:
            raise ConfigError(f"{src}: calibrate.openings + calibrate.validation_openings = {need}, but the "
                              f"deck {j.deck or j.variant!r} (job.deck_part = {j.deck_part!r}) has "
                              f"{len(deck)} "
                              "openings")
    opt = optuna_section(config)
    if opt.trials_in_flight > opt.parallel_trials:
        raise ConfigError(f"{src}: optuna.trials_in_flight = {opt.trials_in_flight} must be at most "
                          f"optuna.parallel_trials = {opt.parallel_trials} (the draws' window)")
    if j.seed_profile is not None:

        try:
            load_profile(j.seed_profile, j.variant)
        except ValueError as err:
            raise ConfigError(f"{src}: job.seed_profile = {j.seed_profile!r}: {err}") from None
