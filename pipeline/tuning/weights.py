"""Weight tuning: an Optuna study of evaluation weights, scored by paired matches, confirmed by SPRT.

The driver owns the study (ask/tell through :mod:`pipeline.tuning.studies`). Each trial draws the
configured subset of ``engine.features`` weights (declared or narrower ranges), plays
colour-swapped pairs against the *seed* weights (the variant's defaults, or a profile's) at a
fixed tuning search setting, and scores the candidate by its mean per-game score. Games come in
steps of ``step_pairs``; after each step every pair's score is reported at its pair index (the
same opening in every trial, so the Wilcoxon pruner compares like with like) and a trial worse
than the best is stopped early.

The best candidate is then CONFIRMED against the seed by an SPRT on fresh openings (another
opening stream: the study chose it on the tuning openings, so confirming there would be
biased), in steps up to ``sprt_max_pairs``. Only an accepted H1 replaces the seed weights;
H0, an undecided test ("inconclusive") or no candidate above the seed keep them, and the
result says which.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa

from engine.features import default_weights
from engine.profile import LevelProfile, load_profile
from engine.variants import get_variant
from pipeline.config.job_sections import TuneSection
from pipeline.games.pairings import Pairing
from pipeline.games.players import inline_spec
from pipeline.games.stage import StageContext, read_result, trial_slot, write_result
from pipeline.games.storage import Root
from pipeline.games.storage_fs import StorePath, joined
from pipeline.jsonrecord import Scalar
from pipeline.ratings import games_from_color_table, pair_scores, pentanomial_counts, pentanomial_stats, sprt
from pipeline.tracking.plots import optimisation_history_plot
from pipeline.tuning.inflight import run_trials
from pipeline.tuning.results import RESULT_FILE, SprtSummary, TuneBest, TuneResult, TuneTrial, read_tune
from pipeline.tuning.studies import (
    TrialWindow,
    complete_trials,
    report_pairs,
    space_from_engine,
    split_params,
    tell_trial,
)
from pipeline.tuning.texel import TexelSeed, run_texel

TUNE_DIR = "tune"
TEXEL_FILE = "tune/texel.json"
SEED_NAME = "seed"
TUNE_STREAM, CONFIRM_STREAM, DEPTH_STREAM = 0, 1, 2


@dataclass(frozen=True)
class TrialOutcome:
    """What one tuning trial measured."""

    number: int
    slot: int
    params: dict[str, Any]  # the trial's drawn parameters
    weights: dict[str, float]
    value: float  # mean per-game score of the candidate against the seed
    pairs: int
    pruned_at: int | None
    elo: float
    elo_ci: tuple[float, float]
    games_per_second: float
    intermediate: tuple[tuple[int, float], ...] = ()  # (pair id, pair score) as reported to the pruner


def seed_weights(variant: str, seed_profile: str | None) -> dict[str, float]:
    """The weights tuning starts from: a profile's hard level, else the engine's defaults."""

    if seed_profile is None:
        return default_weights(get_variant(variant))

    return dict(load_profile(seed_profile, variant).level("hard").weights)


def tuning_level(variant: str, name: str, weights: Mapping[str, float], section: TuneSection) -> Any:
    """A LevelProfile playing ``weights`` at the fixed tuning search setting (no weakening)."""

    knobs = {"max_depth": section.max_depth, "node_budget": section.node_budget,
             "quiescence": section.quiescence, "tt_log2": section.tt_log2}
    return LevelProfile.from_knobs(get_variant(variant), name, dict(weights), knobs)


def tuning_spec(variant: str, name: str, weights: Mapping[str, float], section: TuneSection) -> str:

    return inline_spec(name, tuning_level(variant, name, weights, section))


def search_space(section: TuneSection) -> tuple[list[Any], dict[str, float]]:
    """The study's dimensions (``weight.<feature>``) and the weights fixed to one value."""

    searched = [r for r in section.weights if not r.fixed]
    fixed = {r.name: r.low for r in section.weights if r.fixed}
    space = space_from_engine(knobs=[], weights=[r.name for r in searched],
                              ranges={f"weight.{r.name}": (r.low, r.high) for r in searched}, log=[])
    return space, fixed


def candidate_scores(table: pa.Table, name: str) -> tuple[list[tuple[int, float]], np.ndarray]:
    """(pair index, pair score) steps of ``name`` and the scores, in pair order."""
    games = games_from_color_table(table, pair_id="pair_id")
    scores = pair_scores(games, name)
    return scores.wilcoxon_steps(), scores.scores


def run_trial(ctx: StageContext, study: Any, trial: Any, params: Mapping[str, Any],
              base: Mapping[str, float], fixed: Mapping[str, float], section: TuneSection,
              seed_spec: str, window: TrialWindow | None = None) -> TrialOutcome:
    """Play one trial in steps, reporting every pair to the pruner; tell the study the result."""

    slot = trial_slot(study, trial)
    _, sampled = split_params(params)
    weights = {**base, **fixed, **sampled}
    name = f"t{slot:04d}"
    spec = tuning_spec(ctx.variant, name, weights, section)
    stage = f"{TUNE_DIR}/trial-{slot:04d}"
    started = time.perf_counter()
    all_scores: list[float] = []
    reported: list[tuple[int, float]] = []
    pruned_at = None
    games = 0
    for start in range(0, section.pairs, section.step_pairs):
        count = min(section.step_pairs, section.pairs - start)
        table = ctx.play(stage, [Pairing(spec, seed_spec, count, start=start, stream=TUNE_STREAM)])
        games += table.num_rows
        steps, scores = candidate_scores(table, name)
        all_scores += scores.tolist()
        pruned_at = report_pairs(trial, steps, window)
        told = len(steps) if pruned_at is None else [k for k, _ in steps].index(pruned_at) + 1
        reported += steps[:told]  # what Optuna was told, in order (steps are opening ids, not ordered)
        if pruned_at is not None:
            break
    seconds = time.perf_counter() - started
    value = float(np.mean(all_scores)) / 2.0
    stats = pentanomial_stats(pentanomial_counts(np.asarray(all_scores)))
    outcome = TrialOutcome(trial.number, slot, dict(params), weights, value, len(all_scores), pruned_at,
                           _finite(stats.elo), (_finite(stats.elo_ci_low), _finite(stats.elo_ci_high)),
                           games / seconds if seconds > 0 else 0.0, tuple(reported))
    tell_trial(study, trial, value, pruned_at_step=pruned_at,
               user_attrs={"pairs": len(all_scores), "stage": stage, "elo": outcome.elo,
                           "elo_ci": list(outcome.elo_ci)})
    return outcome


def _finite(x: float, limit: float = 2000.0) -> float:
    """Elo from a score of 0 or 1 is infinite; clip for JSON and MLflow."""
    return float(max(-limit, min(limit, x))) if not math.isnan(x) else 0.0


def confirm(ctx: StageContext, name: str, spec: str, seed_spec: str, section: TuneSection, *,
            stage: str = f"{TUNE_DIR}/confirm", stream: int = CONFIRM_STREAM,
            max_pairs: int | None = None) -> SprtSummary:
    """SPRT of ``spec`` against the seed on fresh openings (opening ``stream``), in steps of
    ``sprt_step_pairs``, up to ``max_pairs`` (default ``sprt_max_pairs``); games under ``stage``."""
    scores: list[float] = []
    result = None
    cap = section.sprt_max_pairs if max_pairs is None else max_pairs
    for start in range(0, cap, section.sprt_step_pairs):
        count = min(section.sprt_step_pairs, cap - start)
        table = ctx.play(stage, [Pairing(spec, seed_spec, count, start=start, stream=stream)])
        scores += candidate_scores(table, name)[1].tolist()
        counts = pentanomial_counts(np.asarray(scores))
        result = sprt(counts, section.sprt_elo0, section.sprt_elo1, section.sprt_alpha, section.sprt_beta,
                      min_pairs=section.sprt_min_pairs)
        if result.decision.value != "continue":
            break
    assert result is not None  # sprt_max_pairs >= 1
    counts = pentanomial_counts(np.asarray(scores))
    stats = pentanomial_stats(counts)
    decision = {"H1": "accepted", "H0": "rejected"}.get(result.decision.value, "inconclusive")
    return SprtSummary(decision=decision, llr=result.llr, lower=result.lower, upper=result.upper,
                       pairs=len(scores), elo0=result.elo0, elo1=result.elo1, alpha=result.alpha,
                       beta=result.beta, pentanomial=tuple(int(c) for c in counts), score=stats.score,
                       elo=_finite(stats.elo), elo_ci=(_finite(stats.elo_ci_low), _finite(stats.elo_ci_high)))


def best_trial(study: Any) -> Any | None:
    """The best COMPLETE trial that played all its pairs, else the best pruned one, else None."""
    done = complete_trials(study)
    full = [t for t in done if not t.user_attrs.get("pruned")]
    pool = full or done
    return max(pool, key=lambda t: (t.value, -t.number)) if pool else None


def run_tune(ctx: StageContext, section: TuneSection, study: Any, n_trials: int, *,
             seed_profile: str | None, tracker: Any, log: Any = None,
             params: Mapping[str, Any] | None = None, window: TrialWindow | None = None,
             in_flight: int | None = None) -> TuneResult:
    """Run (or finish) the study, confirm its best by SPRT, write and return ``tune/result.json``.

    ``window``: how trials are drawn and how many may be in flight (default: one at a time,
    :class:`~pipeline.tuning.studies.TrialWindow`); ``in_flight``: how many are (default W).

    Tracked as the stage run ``tune`` (``params``: the settings to log on it; a child of the
    job's run when one is open) with one child run per trial, logged as each trial ends; a
    finished stage (its result file exists) is returned as it is.
    """
    path = ctx.run_folder / RESULT_FILE
    done = read_tune(path)
    if done is not None:
        return done
    with tracker.named_run(TUNE_DIR, params=params,
                           tags={"kind": "stage", "stage": TUNE_DIR, "study_name": study.study_name}):
        result = _tune(ctx, section, study, n_trials, seed_profile, tracker, log,
                       window or TrialWindow(1, ctx.run_seed), in_flight)
        write_result(path, result.to_json())
        _log_result(tracker, result, ctx.run_folder)
    return result


def _log_result(tracker: Any, result: TuneResult, folder: StorePath) -> None:
    """On the stage run: the study's best value, the chosen trial (also tagged ``chosen`` on its own
    run), the SPRT outcome, the decision tag, the result file and the history plot marking the pick."""
    values = {t.number: t.value for t in result.trials if t.state == "COMPLETE" and t.value is not None}
    metrics = {"accepted": float(result.accepted), "trials": float(len(result.trials))}
    if values:
        metrics["best_value"] = max(values.values())
    if result.best is not None:
        metrics.update(chosen_trial=float(result.best.number), chosen_value=float(result.best.value))
        tracker.set_tags({"chosen_trial": str(result.best.number)})
        tracker.tag_trial(result.best.number, {"chosen": "true"})
    test = result.sprt
    if test is not None:
        metrics.update(test.metrics())
    tracker.log_metrics(metrics)
    tracker.set_tags({"decision": result.decision})
    tracker.log_artifact(folder / RESULT_FILE)
    history = result.history()
    if any(v is not None for v in history):
        numbers = sorted(t.number for t in result.trials)
        chosen = numbers.index(result.best.number) if result.best is not None else None
        plot = optimisation_history_plot(history, folder / TUNE_DIR / "history.png", title="Weight tuning",
                                         ylabel="score against the seed", chosen=chosen)
        tracker.log_artifact(plot)


def _tune(ctx: StageContext, section: TuneSection, study: Any, n_trials: int, seed_profile: str | None,
          tracker: Any, log: Any, window: TrialWindow, in_flight: int | None) -> TuneResult:

    base = seed_weights(ctx.variant, seed_profile)
    seed_spec = tuning_spec(ctx.variant, SEED_NAME, base, section)
    space, fixed = search_space(section)
    texel = _texel_seed(ctx, section, study, {**base, **fixed}, log) if section.texel else None

    def play(trial: Any, params: dict[str, Any]) -> TrialOutcome:
        return run_trial(ctx, study, trial, params, base, fixed, section, seed_spec, window)

    # trials are told to the study on their own threads, so a count of the study's complete trials
    # can include one whose line is still to come: count the lines instead
    ended = itertools.count(len(complete_trials(study)) + 1)

    def finish(outcome: TrialOutcome) -> None:
        tags = {"kind": "trial", "stage": TUNE_DIR, "study_name": study.study_name}
        with tracker.trial_run(outcome.number, outcome.params, tags):
            tracker.log_series("pair_score", outcome.intermediate)
            tracker.log_metrics({
                "value": outcome.value, "score": outcome.value, "elo": outcome.elo,
                "elo_ci_low": outcome.elo_ci[0], "elo_ci_high": outcome.elo_ci[1], "pairs": outcome.pairs,
                "games": 2 * outcome.pairs, "games_per_second": outcome.games_per_second})
            if outcome.pruned_at is None:
                tracker.set_tags({"state": "complete"})
            else:  # told COMPLETE to Optuna (see pipeline.tuning.studies), stopped early all the same
                tracker.set_tags({"state": "pruned", "pruned_at_pair": str(outcome.pruned_at)})
                tracker.end_as("KILLED")
        if log is not None:
            state = f"pruned at pair {outcome.pruned_at}" if outcome.pruned_at is not None else "complete"
            log(f"tune trial {next(ended)}/{n_trials} (t{outcome.slot:04d}): score "
                f"{outcome.value:.3f} over {outcome.pairs} pairs (Elo {outcome.elo:+.0f}), {state}")

    run_trials(study, n_trials, space, window, play, finish, in_flight=in_flight)
    best = best_trial(study)
    result = TuneResult(variant=ctx.variant, study=study.study_name, seed_weights=base, weights=base,
                        accepted=False, decision="no trial finished",
                        trials=tuple(_trial_record(t) for t in study.get_trials(deepcopy=False)), best=None,
                        sprt=None, texel=texel)
    if best is None:
        return result
    _, sampled = split_params(best.params)
    weights = {**base, **fixed, **sampled}
    slot = int(best.user_attrs.get("slot", best.number))
    result = replace(result, best=TuneBest(best.number, slot, best.value, weights, dict(best.params)))
    if best.value <= 0.5:
        return replace(result, decision="skipped: no candidate scored above the seed weights")
    name = f"t{slot:04d}"
    test = confirm(ctx, name, tuning_spec(ctx.variant, name, weights, section), seed_spec, section)
    result = replace(result, sprt=test, decision=test.decision)
    return replace(result, weights=weights, accepted=True) if test.decision == "accepted" else result


def _texel_seed(ctx: StageContext, section: TuneSection, study: Any, base: Mapping[str, float],
                log: Any) -> TexelSeed:
    """Run the Texel fit once (kept in tune/texel.json) and enqueue it into a fresh study."""

    path = ctx.run_folder / TEXEL_FILE
    stored = read_result(path)
    ranges = [r for r in section.weights if not r.fixed]
    if stored is None:
        texel = run_texel(ctx.run_folder, ctx.run_id, ctx.variant, base, ranges, section.texel_max_positions,
                          ctx.run_seed)
        write_result(path, texel.to_json())
        if log is not None and texel.fit is not None:
            log(f"texel: {texel.fit.positions} positions, loss {texel.fit.loss_seed:.4f} -> "
                f"{texel.fit.loss_fit:.4f}")
    else:
        texel = TexelSeed.from_json(stored, str(path))
    if texel.fit is not None and not study.get_trials(deepcopy=False):
        study.enqueue_trial({f"weight.{r.name}": texel.fit.weights[r.name] for r in ranges},
                            user_attrs={"texel": True})
    return texel


def _trial_record(t: Any) -> TuneTrial:
    value = t.value if t.value is not None and math.isfinite(t.value) else None
    params: dict[str, Scalar] = dict(t.params)
    return TuneTrial(t.number, t.state.name, value, params, bool(t.user_attrs.get("pruned", False)),
                     t.user_attrs.get("pairs"), int(t.user_attrs.get("slot", t.number)))


def tuned_weights(run_folder: Root, variant: str, seed_profile: str | None) -> dict[str, float]:
    """The weights later stages play: the accepted tuning result, else the seed weights."""
    done = read_tune(joined(run_folder, RESULT_FILE))
    return seed_weights(variant, seed_profile) if done is None else dict(done.weights)
