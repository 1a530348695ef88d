"""The calibration method: strength curves against the product's levels, one pooled fit, validation.

One run per variant (docs/calibration.md):

1. **Openings.** The deck is split once, by the run seed, into the curve openings and the
   validation openings; every curve pairing plays the same curve openings (each twice, colours
   swapped), so a bootstrap over openings resamples whole openings across every pairing.
2. **Curves.** Hard's points (node budgets) play the product's Hard and their neighbours;
   Medium's points (root noise at 4 plies, and 5 plies without noise) play the product's Medium
   and their neighbours; the product's Easy, Medium and Hard play each other.
3. **Easy.** Optuna chooses Easy's weakening mix at <= 2 plies, on the product Easy's evaluation
   weights (the tuned weights are tuned for searches of 4 plies and more with every capture, and
   need not carry over to 2 plies without: in suicide they scored 0.348 there against the
   product's Easy, weakening or none): each trial plays the product's Easy; the objective is the
   trial's blunder rate, the constraint its strength (within ``claims.EASY_TOLERANCE`` of the
   product's Easy). The chosen mix is then scaled along one axis (its noise, random-move rate
   and temperature times :data:`EASY_SCALES`), each point playing the product's Easy and its
   neighbour: Easy's strength is read off that curve, not off one trial's noisy estimate
   (picking within a narrow window among noisy trials favours those whose estimate erred).
4. **Choice.** One pooled score-based fit of every game so far (the product's Medium held at
   1500): Hard is the point at the product's budget; Easy the inversion of its axis at the
   product's Easy.
5. **Validation**, on the validation openings, in two parts. First what needs no Medium: Easy
   and Hard against their product levels and a chain of curve points linking Easy to Hard
   (:func:`choose_ends`). Medium is then aimed at the midpoint of Easy and Hard as that chain
   measures it (:func:`choose_medium_level`: the curves and the validation can disagree on how
   far apart Easy and Hard are by more than Medium's tolerance, and the claim is judged on the
   validation) and plays its own pairings. The claims (:mod:`pipeline.calibration.claims`) are
   judged on the validation's games alone. The exported Elo comes from one fit of every game of
   the run. Hard is always the curve's point at the product's budget, so its pairing against the
   product's Hard (the validation's dearest) is known before anything is fitted: it plays from
   the curves on, in slots the other work leaves idle, with the batch ids and seeds the
   validation gives it.

A pairing of two cheap players of which one is noisy (:func:`with_repeats`) plays each of its
openings :data:`NOISY_REPEATS` times: its games cost next to nothing and every repeat is a new
game, so Easy's and Medium's estimates get the precision their claims ask for at no cost in
openings. The bootstrap still resamples whole openings.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.board import Board
from engine.games import GamePlayer
from engine.player import Player
from engine.profile import LEVEL_NAMES
from pipeline.calibration import claims
from pipeline.calibration.blunder_checks import submit_blunder_check
from pipeline.calibration.dial import DialCheck, DialLevel, plan_dial, predicted_score, spot_checked
from pipeline.calibration.easy_tracking import STRENGTH_CONSTRAINT, easy_trial_record, track_easy_trials
from pipeline.calibration.outcome import CalibrationOutcome, EasyTrial, LevelOutcome
from pipeline.calibration.paths import (
    EASY_SPACE,
    MEDIUM_DEPTH,
    MEDIUM_FALLBACK_DEPTH,
    PathPlayer,
    easy_player,
    hard_player,
    medium_player,
)
from pipeline.calibration.product import ANCHOR_ELO, ProductLevels, product_levels
from pipeline.calibration.tactics_score import solve_rate
from pipeline.calibration.tactics_set import TacticalPosition, load_tactics
from pipeline.config.job_sections import CalibrateSection
from pipeline.games.match import BatchSpec
from pipeline.games.openings import Opening
from pipeline.games.pairings import Pairing
from pipeline.games.players import resolve_player
from pipeline.games.sizing import nodes_per_move
from pipeline.games.stage import (
    StageContext,
    player_move_cost,
    player_nodes_per_move,
    trial_slot,
    write_result,
)
from pipeline.games.storage_fs import StorePath
from pipeline.ratings.blunders import BlunderStats, blunder_rate, move_texts
from pipeline.ratings.curve import fit_curve
from pipeline.ratings.scale import (
    MIN_BOOTSTRAP,
    ScaleFit,
    distinct_games,
    match_score,
    measured_groups,
    scale_from_games,
)
from pipeline.tracking.plots import optimisation_history_plot
from pipeline.tuning.inflight import run_trials
from pipeline.tuning.studies import TrialWindow, complete_trials, space_from_engine, tell_trial

CAL_DIR = "calibrate"
RESULT_FILE = "result.json"
_DECK_TAG = 0x63616C69  # "cali": the opening split's stream
_STREAM = 0  # every pairing of a stage plays the same openings
CHAIN_STEPS = 6  # the validation links Easy to Hard in this many steps of about equal Elo
NOISY_REPEATS = 16  # pairs per opening of a pairing of cheap players of which one is noisy
#: decisions a blunder rate samples at most per player (deterministic, from the run seed): the
#: repeated cheap pairings would otherwise make the checks grow with their games
BLUNDER_SAMPLE = 20_000
VALIDATION_STAGE = f"{CAL_DIR}/validation"
#: the place of Hard against the product's Hard among the validation's pairings (choose_ends)
HARD_VALIDATION = 1
CHECKS_STAGE = f"{CAL_DIR}/checks"  # the validation's checks: blunder rates (tasks), depths, tactics
CHEAP_NODES = 5_000  # nominal nodes per move (pipeline.games.sizing) at most of a cheap player
EASY_SCALES = (0.0, 0.4, 0.7, 1.0, 1.3, 1.6)  # Easy's axis: the chosen mix's weakening times these
MAX_RANDOM_MOVE = 0.9  # the axis never makes Easy a random mover
DEPTH_POSITIONS = 60  # middlegame positions the median depth is measured on
_MIDDLEGAME_PLIES = (16, 24, 32)

Log = Callable[[str], None]


@dataclass(frozen=True)
class OpeningSplit:
    """The curve and validation openings of a run (disjoint, chosen by the run seed)."""

    curve: tuple[Opening, ...]
    validation: tuple[Opening, ...]
    unused: tuple[Opening, ...]


def measure_blunders(variant: str, table: pa.Table, player: str, seed: int) -> BlunderStats:
    """``player``'s blunder rate over the games of ``table``, on at most :data:`BLUNDER_SAMPLE` of
    its decisions drawn with ``seed`` (module-level: a task body of ``StageContext.compute``)."""
    return blunder_rate(variant, table, player, max_positions=BLUNDER_SAMPLE, seed=seed)


def games_blunders(table: pa.Table, variant: str, player: str, seed: int) -> BlunderStats:
    """:func:`measure_blunders` with the games first (:meth:`StageContext.play_then`'s order)."""
    return measure_blunders(variant, table, player, seed)


def warm_blunder_rate(spec: BatchSpec, table: pa.Table) -> None:
    """Compile the kernels of :func:`measure_blunders` (a warm-up task's extra,
    :data:`~pipeline.games.executor.WarmFn`): its scorer on one decision of the warm-up's game."""
    player = str(table.column("white_player")[0].as_py())
    blunder_rate(spec.variant, table, player, max_positions=1)


def split_openings(deck: Sequence[Opening], run_seed: int, curve: int, validation: int) -> OpeningSplit:
    """Shuffle the deck by the run seed and cut it; ValueError when it is too small."""
    need = curve + validation
    if len(deck) < need:
        raise ValueError(
            f"the opening deck has {len(deck)} openings; [calibrate] openings + "
            f"validation_openings = {need} needs at least that many (use a larger deck)"
        )
    rng = np.random.default_rng(np.random.SeedSequence(run_seed, spawn_key=(_DECK_TAG,)))
    order = [deck[int(i)] for i in rng.permutation(len(deck))]
    return OpeningSplit(tuple(order[:curve]), tuple(order[curve:need]), tuple(order[need:]))


@dataclass(frozen=True)
class Curves:
    """The players of the curve stage."""

    hard: tuple[PathPlayer, ...]  # by budget, weakest first
    medium: tuple[PathPlayer, ...]  # by noise, weakest first (4 plies), then 5 plies without noise
    medium_noise: tuple[float, ...]  # noise of each 4-ply medium point, weakest first


def curve_players(variant: str, weights: Mapping[str, float], section: CalibrateSection) -> Curves:
    hard = tuple(hard_player(variant, weights, b) for b in section.hard_budgets)
    noise = tuple(sorted(section.medium_noise, reverse=True))
    medium = tuple(medium_player(variant, weights, n) for n in noise)
    top = medium_player(variant, weights, 0.0, depth=MEDIUM_FALLBACK_DEPTH)
    return Curves(hard, (*medium, top), noise)


def product_pairings(product: ProductLevels, pairs: int) -> list[Pairing]:
    """The curve stage's first pairings: the product's levels in a chain. They need no tuned
    weights, so the job can play them before the calibration starts (:func:`play_product_curves`)."""
    return [
        Pairing(product.spec("easy"), product.spec("medium"), pairs, stream=_STREAM),
        Pairing(product.spec("medium"), product.spec("hard"), pairs, stream=_STREAM),
    ]


def curve_pairings(product: ProductLevels, curves: Curves, pairs: int) -> list[Pairing]:
    """Every pairing of the curve stage, each on the same ``pairs`` openings: the product's levels
    in a chain, each curve point against its reference and its neighbour, and the curves' ends
    against the next level's (Medium's weakest point against the product's Easy, Hard's weakest
    against Medium's strongest), so the curves overlap where the product's levels are far apart."""
    out = product_pairings(product, pairs)
    for path, ref in ((curves.hard, "hard"), (curves.medium, "medium")):
        for i, player in enumerate(path):
            out.append(Pairing(player.spec, product.spec(ref), pairs, stream=_STREAM))
            if i:
                out.append(Pairing(player.spec, path[i - 1].spec, pairs, stream=_STREAM))
    out.append(Pairing(curves.medium[0].spec, product.spec("easy"), pairs, stream=_STREAM))
    out.append(Pairing(curves.hard[0].spec, curves.medium[-1].spec, pairs, stream=_STREAM))
    return out


def play_product_curves(ctx: StageContext, section: CalibrateSection) -> pa.Table:
    """Play the curve stage's :func:`product_pairings` into its folder ahead of the calibration
    (the job does it in the slots the tuning leaves idle). Their batches are the first of the stage's plan,
    with the same ids and seeds, so the calibration reads them back instead of playing them."""
    split = split_openings(ctx.deck, ctx.run_seed, section.openings, section.validation_openings)
    pairings = with_repeats(ctx.variant, product_pairings(product_levels(ctx.variant), len(split.curve)))
    return replace(ctx, deck=split.curve).play(f"{CAL_DIR}/curves", pairings)


def hard_validation_pairing(product: ProductLevels, curves: Curves, n_val: int) -> Pairing:
    """The validation's Hard against the product's Hard (:func:`choose_ends`' pairing
    :data:`HARD_VALIDATION`): Hard is the Hard curve's last point whatever the fit says."""
    return Pairing(curves.hard[-1].spec, product.spec("hard"), n_val, stream=_STREAM)


def play_hard_validation(ctx: StageContext, pairing: Pairing) -> pa.Table:
    """Play ``pairing`` as the validation's pairing :data:`HARD_VALIDATION` (its batch ids and
    seeds depend on its place alone), into slots other stages leave idle; the places before it
    only hold it (``leave``), so nothing else is played."""
    plan = with_repeats(ctx.variant, [pairing] * (HARD_VALIDATION + 1))
    return replace(ctx, idle_only=True, on_play=None).play(VALIDATION_STAGE, plan,
                                                           leave=range(HARD_VALIDATION))


def with_repeats(variant: str, pairings: Sequence[Pairing]) -> list[Pairing]:
    """``pairings`` with each opening played :data:`NOISY_REPEATS` times where both players are
    cheap and one is noisy (new games on every repeat); the others as they are."""
    return [replace(p, pairs=p.pairs * NOISY_REPEATS) if _cheap_and_noisy(variant, p) else p
            for p in pairings]


def _cheap_and_noisy(variant: str, pairing: Pairing) -> bool:
    players = [resolve_player(spec, variant).game_player for spec in (pairing.a_spec, pairing.b_spec)]
    noisy = any(w.noise_sigma > 0 or w.random_move_prob > 0 or w.temperature > 0
                for w in (g.weakening for g in players))
    return noisy and all(nodes_per_move(g) <= CHEAP_NODES for g in players)


def scaled_mix(mix: Mapping[str, Any], scale: float) -> dict[str, Any]:
    """Easy's weakening ``mix`` with its noise, random-move rate and temperature times ``scale``."""
    out = dict(mix)
    for knob in ("noise_sigma", "temperature"):
        out[knob] = float(mix.get(knob, 0.0)) * scale
    out["random_move_prob"] = min(MAX_RANDOM_MOVE, float(mix.get("random_move_prob", 0.0)) * scale)
    return out


def easy_axis(variant: str, weights: Mapping[str, float], mix: Mapping[str, Any]) -> tuple[PathPlayer, ...]:
    """The points of Easy's axis: ``mix`` scaled by each of :data:`EASY_SCALES`."""
    return tuple(easy_player(variant, weights, scaled_mix(mix, s), f"easy-s{s:.2f}") for s in EASY_SCALES)


def easy_axis_pairings(product: ProductLevels, axis: Sequence[PathPlayer], pairs: int) -> list[Pairing]:
    """Every axis point against the product's Easy and against its neighbour."""
    out = []
    for i, player in enumerate(axis):
        out.append(Pairing(player.spec, product.spec("easy"), pairs, stream=_STREAM))
        if i:
            out.append(Pairing(player.spec, axis[i - 1].spec, pairs, stream=_STREAM))
    return out


def _interval(fit: ScaleFit, coefficients: Mapping[str, float]) -> tuple[float, float, float]:
    """A linear combination of ratings: point estimate and percentile bootstrap CI."""
    weights = np.zeros(len(fit.players))
    for name, c in coefficients.items():
        weights[fit.index(name)] = c
    est = fit.estimate(lambda e: e @ weights)
    return est.value, est.ci_low, est.ci_high


def _elo(fit: ScaleFit, name: str) -> float:
    return fit.rating(name).value


def _score(fit: ScaleFit, a: str, b: str) -> float:
    return fit.expected_score(a, b).value


# ---- Easy: Optuna's weakening mix -------------------------------------------------------------------


def _easy_trial(
    ctx: StageContext,
    study: Any,
    trial: Any,
    params: Mapping[str, Any],
    weights: Mapping[str, float],
    product: ProductLevels,
    pairs: int,
) -> EasyTrial:
    slot = trial_slot(study, trial)
    player = easy_player(ctx.variant, weights, dict(params), f"easy-t{slot:03d}")
    table, blunders = ctx.play_then(f"{CAL_DIR}/easy/trial-{slot:03d}",
                                    easy_trial_pairings(ctx.variant, player, product, pairs),
                                    games_blunders, ctx.variant, player.name, ctx.run_seed + slot)
    scores = [r["result_a"] for r in table.select(["result_a"]).to_pylist()]
    score = float(np.mean(scores))
    clipped = min(max(score, 0.5 / len(scores)), 1.0 - 0.5 / len(scores))
    gap = float(-400.0 * np.log10(1.0 / clipped - 1.0))
    rate = blunders.rate if blunders.rate is not None else 1.0
    constraint = abs(gap) - claims.EASY_TOLERANCE
    tell_trial(
        study,
        trial,
        rate,
        user_attrs={"gap": gap, "score": score, "slot": slot, "games": table.num_rows},
        constraints={STRENGTH_CONSTRAINT: constraint},
    )
    return EasyTrial(slot, player.name, dict(params), gap, score, rate, table.num_rows, constraint <= 0)


def easy_trial_pairings(variant: str, player: PathPlayer, product: ProductLevels,
                        pairs: int) -> list[Pairing]:
    """What an Easy trial plays: the product's Easy on ``pairs`` openings (repeated, both noisy)."""
    return with_repeats(variant, [Pairing(player.spec, product.spec("easy"), pairs, stream=_STREAM)])


def run_easy_study(
    ctx: StageContext,
    study: Any,
    section: CalibrateSection,
    weights: Mapping[str, float],
    product: ProductLevels,
    log: Log | None,
    window: TrialWindow | None = None,
    in_flight: int | None = None,
) -> list[EasyTrial]:
    """Play the Easy study's missing trials, up to the window's W at once (default: one at a
    time); every finished trial, in slot order. MLflow sees them later
    (:func:`~pipeline.calibration.easy_tracking.track_easy_trials`): the study may be played
    ahead, while another stage's run is open."""
    space = space_from_engine(knobs=list(EASY_SPACE), weights=[], ranges=dict(EASY_SPACE))
    pairs = min(section.easy_openings, section.openings)
    ended = itertools.count(len(complete_trials(study)) + 1)  # lines, not the study's count (see run_tune)

    def play(trial: Any, params: dict[str, Any]) -> tuple[EasyTrial, dict[str, Any], int]:
        return _easy_trial(ctx, study, trial, params, weights, product, pairs), params, trial.number

    def finish(done: tuple[EasyTrial, dict[str, Any], int]) -> None:
        outcome = done[0]
        if log is not None:
            log(
                f"easy trial {next(ended)}/{section.easy_trials} ({outcome.player}): blunder rate "
                f"{outcome.blunder_rate:.3f}, {outcome.gap:+.0f} Elo against the product's Easy "
                f"({'feasible' if outcome.feasible else 'too far'})"
            )

    run_trials(study, section.easy_trials, space, window or TrialWindow(1, ctx.run_seed), play, finish,
               in_flight=in_flight)
    return sorted((easy_trial_record(t) for t in complete_trials(study)), key=lambda e: e.slot)


@dataclass(frozen=True)
class EasyPlayed:
    """Easy's study and axis, played: every finished trial, the one chosen, its axis, and the
    trials' games then the axis's (in that order: the choice fit reads them so)."""

    trials: tuple[EasyTrial, ...]
    easy: EasyTrial
    axis: tuple[PathPlayer, ...]
    games: pa.Table


def play_easy(ctx: StageContext, section: CalibrateSection, study: Any, log: Log | None = None,
              window: TrialWindow | None = None, in_flight: int | None = None) -> EasyPlayed:
    """Easy's trials (up to ``window``'s W at once, ``in_flight`` of them), the choice among them,
    and the chosen mix's axis: everything of Easy the curve fit needs. Easy plays the product
    Easy's weights, so none of it waits for the tuning: the job plays it ahead, in the slots the
    tuning leaves idle (:class:`~pipeline.games.stage.StageContext`'s ``idle_only``)."""
    say = log or (lambda _text: None)
    product = product_levels(ctx.variant)
    split = split_openings(ctx.deck, ctx.run_seed, section.openings, section.validation_openings)
    curve_ctx = replace(ctx, deck=split.curve)
    weights = dict(product.level("easy").weights)  # Easy keeps the product Easy's evaluation
    trials = run_easy_study(curve_ctx, study, section, weights, product, say, window, in_flight)
    reader = replace(curve_ctx, progress=None)  # finished trials: read back, nothing to report
    tables = [
        reader.play(f"{CAL_DIR}/easy/trial-{t.slot:03d}",
                    easy_trial_pairings(ctx.variant, easy_player(ctx.variant, weights, t.params, t.player),
                                        product, min(section.easy_openings, section.openings)))
        for t in trials
    ]
    easy = choose_easy(trials)
    axis = easy_axis(ctx.variant, weights, easy.params)
    say(f"calibrate: Easy's axis, {easy.player}'s weakening times {', '.join(f'{x:g}' for x in EASY_SCALES)}")
    axis_plan = with_repeats(ctx.variant, easy_axis_pairings(product, axis, len(split.curve)))
    axis_games = curve_ctx.play(f"{CAL_DIR}/easy-axis", axis_plan)
    return EasyPlayed(tuple(trials), easy, tuple(axis), pa.concat_tables([*tables, axis_games]))


def _log_easy_choice(tracker: Any, study: Any, trials: Sequence[EasyTrial], easy: EasyTrial,
                     folder: StorePath) -> None:
    """On the open (stage) run: the study's best value (the lowest feasible blunder rate), the
    chosen trial (also tagged ``chosen`` on its own run) and Easy's history plot marking it."""
    feasible = [t.blunder_rate for t in trials if t.feasible]
    number = next(t.number for t in complete_trials(study) if int(t.user_attrs["slot"]) == easy.slot)
    tracker.log_metrics({"best_value": min(feasible or [t.blunder_rate for t in trials]),
                         "chosen_trial": float(number), "chosen_value": easy.blunder_rate})
    tracker.set_tags({"chosen_trial": str(number), "chosen_player": easy.player})
    tracker.tag_trial(number, {"chosen": "true"})
    path = folder / CAL_DIR / "easy" / "history.png"
    plot = optimisation_history_plot([t.blunder_rate for t in trials], path,
                                     direction="minimize", title="Easy's weakening mix",
                                     ylabel="blunder rate", chosen=[t.slot for t in trials].index(easy.slot))
    tracker.log_artifact(plot)


def choose_easy(trials: Sequence[EasyTrial]) -> EasyTrial:
    """The feasible trial with the lowest blunder rate, else the trial closest in strength."""
    if not trials:
        raise ValueError("the Easy study has no finished trial")
    feasible = [t for t in trials if t.feasible]
    if feasible:
        return min(feasible, key=lambda t: (t.blunder_rate, abs(t.gap), t.slot))
    return min(trials, key=lambda t: (abs(t.gap), t.blunder_rate, t.slot))


# ---- measures of a chosen level -------------------------------------------------------------------


def middlegame_positions(table: pa.Table, variant: str, limit: int) -> list[Board]:
    """Positions at plies 16, 24 and 32 of the games (in game order), at most ``limit``."""
    out: list[Board] = []
    for row in table.select(["opening_fen", "moves"]).to_pylist():
        board = Board(variant, row["opening_fen"])
        for ply, text in enumerate(move_texts(row["moves"]), start=1):
            board.push_text(text)
            if ply in _MIDDLEGAME_PLIES and board.outcome() is None:
                out.append(board.copy())
            if ply >= _MIDDLEGAME_PLIES[-1]:
                break
        if len(out) >= limit:
            break
    return out[:limit]


def median_depth(player: PathPlayer, positions: Sequence[Board]) -> float | None:
    """Median completed search depth of the level's unweakened search over ``positions``; with
    ``tt_keep``, the depth it reaches in a game (the Player first decides its side's earlier
    turns of each position's game, so its table holds what they stored)."""
    if not positions:
        return None
    searcher = Player(player.level.unweakened(), seed=0)
    return float(statistics.median(searcher.choose_move(b).depth for b in positions))


def hard_is_the_products(variant: str, weights: Mapping[str, float], product: ProductLevels) -> bool:
    """Whether Hard at the product's node budget plays exactly as the product's Hard (same search,
    same weights, no weakening): then it scores 0.5 against it by construction."""
    level = product.level("hard")
    ours = resolve_player(hard_player(variant, weights, level.node_budget).spec, variant).game_player
    return bool(ours == GamePlayer.from_level(level))


# ---- the run ----------------------------------------------------------------------------------------


def run_calibration(
    ctx: StageContext,
    section: CalibrateSection,
    weights: Mapping[str, float],
    easy_study: Any,
    *,
    tracker: Any,
    log: Log | None = None,
    window: TrialWindow | None = None,
    in_flight: int | None = None,
    ahead: cf.Future[pa.Table] | None = None,
    easy_ahead: cf.Future[EasyPlayed] | None = None,
) -> CalibrationOutcome:
    """The whole method (see the module docstring); writes ``calibrate/result.json``. Called inside
    the tracker's run of the stage: Easy's trials are its trial runs, the choice goes on it. The
    curve games and Easy's trials and axis (:func:`play_easy`, up to ``window``'s W trials at
    once, ``in_flight`` of them) are played side by side: neither needs the other's results.
    ``ahead``: the :func:`play_product_curves` still running; the curves play their other
    pairings beside it and join its games once it ends (so no batch is played twice).
    ``easy_ahead``: :func:`play_easy` already started (by the job, during the tuning)."""
    say = log or (lambda _text: None)
    product = product_levels(ctx.variant)
    split = split_openings(ctx.deck, ctx.run_seed, section.openings, section.validation_openings)
    curve_ctx = replace(ctx, deck=split.curve)
    curves = curve_players(ctx.variant, weights, section)
    if hard_is_the_products(ctx.variant, weights, product):
        say("calibrate: note: Hard at the product's budget is the product's Hard itself (the run plays the "
            "product's weights: the tuning kept its starting weights), so Hard's claim of +50 over it cannot "
            "hold in this run; the other levels are calibrated as usual")
    say(
        f"calibrate: curves on {len(split.curve)} openings ({len(curves.hard)} Hard points, "
        f"{len(curves.medium)} Medium points, the product's three levels)"
    )
    curve_games_plan = with_repeats(ctx.variant, curve_pairings(product, curves, len(split.curve)))
    played_ahead = range(len(product_pairings(product, len(split.curve))))  # the plan's first pairings

    def play_curves() -> pa.Table:
        if ahead is None:
            return curve_ctx.play(f"{CAL_DIR}/curves", curve_games_plan)
        # beside the product's pairings still playing ahead; theirs are the plan's first game ids
        rest = curve_ctx.play(f"{CAL_DIR}/curves", curve_games_plan, leave=played_ahead)
        return pa.concat_tables([ahead.result(), rest])

    val_ctx = replace(ctx, deck=split.validation)
    hard_pairing = hard_validation_pairing(product, curves, len(split.validation))
    with cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="curves") as pool:  # independent games
        curves_played = pool.submit(play_curves)
        hard_played = pool.submit(play_hard_validation, val_ctx, hard_pairing)
        if easy_ahead is None:
            say(f"calibrate: Easy's weakening mix, {section.easy_trials} Optuna trials, beside the curves")
            played = play_easy(ctx, section, easy_study, say, window, in_flight)
        else:
            played = easy_ahead.result()
        track_easy_trials(tracker, easy_study, ctx.run_folder / CAL_DIR / "easy", CAL_DIR)
        easy, axis = played.easy, played.axis
        _log_easy_choice(tracker, easy_study, played.trials, easy, ctx.run_folder)
        curve_games = curves_played.result()
        choice_games = pa.concat_tables([curve_games, played.games])
        fit = _fit(choice_games, product, section, ctx.run_seed)
        easy_weights = dict(product.level("easy").weights)
        easy_level, easy_elo, easy_note = _choose_easy_level(ctx.variant, easy_weights, easy, axis, fit,
                                                            _elo(fit, product.player("easy")))
        n_val = len(split.validation)
        ends = choose_ends(ctx.variant, weights, section, curves, fit, product, easy_level, easy_elo, n_val)
        if ends.pairings[HARD_VALIDATION] != hard_pairing:
            raise RuntimeError(f"the validation's pairing {HARD_VALIDATION} is not the one played ahead: "
                               f"{ends.pairings[HARD_VALIDATION]} != {hard_pairing}")
        say(f"calibrate: chose easy {easy_level.name} ({easy_note}), hard {ends.hard.name}")
        say(f"calibrate: validation on {n_val} fresh openings: Easy and Hard, and the chain between them "
            f"({', '.join(p.name for p in ends.chain[1:-1]) or 'no curve point'})")
        # the job's ETA is told the whole validation, Medium where the curves put the midpoint,
        # until Medium's part starts
        if val_ctx.on_play is not None:
            guess = choose_medium_level(ctx.variant, weights, curves, fit, product, ends, None, n_val)
            val_ctx.on_play(VALIDATION_STAGE, with_repeats(ctx.variant, guess.pairings))
        # beside Hard's games against the product's Hard, still playing ahead or played
        first = with_repeats(ctx.variant, ends.pairings)
        first_games = replace(val_ctx, on_play=None).play(VALIDATION_STAGE, first, leave=(HARD_VALIDATION,))
        choice = choose_medium_level(ctx.variant, weights, curves, fit, product, ends,
                                     chain_fit(first_games, ends, ctx.run_seed + 3), n_val)
        chosen, checked = choice.chosen, choice.checked
        say(f"calibrate: chose medium {chosen['medium'].name} (target {choice.target:.0f}); validation of "
            "Medium")
        rest = val_ctx.play(VALIDATION_STAGE, with_repeats(ctx.variant, choice.pairings),
                            leave=range(len(first)))
        validation = pa.concat_tables([first_games, rest, hard_played.result()]).sort_by("game_id")
    names = {n: chosen[n].name for n in LEVEL_NAMES}
    # the blunder rates are tasks on the workers, each split into shares (blunder_checks), all in
    # flight at once from here while the driver fits the games and measures depths and tactics;
    # each rate has its own seed, so their order changes nothing
    scored = [(names[level], ctx.run_seed + i) for i, level in enumerate(LEVEL_NAMES)]
    scored.append((product.player("easy"), ctx.run_seed))
    with cf.ThreadPoolExecutor(max_workers=len(scored), thread_name_prefix="checks") as pool:
        rates = [submit_blunder_check(ctx, pool, CHECKS_STAGE, validation, name, BLUNDER_SAMPLE, seed)
                 for name, seed in scored]
        vfit = _fit(validation, product, section, ctx.run_seed + 1)
        groups = measured_groups(validation)
        hard_players = (names["hard"], product.player("hard"))
        easy_players = (names["easy"], product.player("easy"))
        hard_gap = _interval(vfit, {hard_players[0]: 1.0, hard_players[1]: -1.0})
        easy_gap = _interval(vfit, {easy_players[0]: 1.0, easy_players[1]: -1.0})
        offset = _interval(vfit, {names["medium"]: 1.0, names["easy"]: -0.5, names["hard"]: -0.5})
        verdicts = [
            claims.unmeasured(claims.hard_claim(*hard_gap), hard_players, groups),
            claims.unmeasured(claims.easy_claim(*easy_gap), easy_players, groups),
            claims.unmeasured(claims.medium_claim(*offset), tuple(names[n] for n in LEVEL_NAMES), groups),
        ]
        everything = pa.concat_tables([choice_games, validation])
        pooled = _fit(everything, product, section, ctx.run_seed + 2)
        positions = middlegame_positions(validation, ctx.variant, DEPTH_POSITIONS)
        tactics = load_tactics(ctx.variant).positions
        levels: dict[str, LevelOutcome] = {}
        for i, level in enumerate(LEVEL_NAMES):
            player = chosen[level]
            depth, solved = median_depth(player, positions), _tactics(player, tactics)  # on the driver
            blunders = rates[i]()
            nxt = names[LEVEL_NAMES[i + 1]] if i + 1 < len(LEVEL_NAMES) else None
            elo, low, high = _interval(pooled, {player.name: 1.0})
            vs_product = {p: _score(pooled, player.name, product.player(p)) for p in LEVEL_NAMES}
            levels[level] = LevelOutcome(
                level=level,
                player=player.name,
                profile=player.level.to_json(),
                elo=elo,
                ci=(low, high),
                validation_elo=vfit.rating(player.name).value,
                validation_ci=(vfit.rating(player.name).ci_low, vfit.rating(player.name).ci_high),
                expected_score_next=None if nxt is None else _score(pooled, player.name, nxt),
                expected_score_product=vs_product,
                nodes_per_move=player_nodes_per_move(validation, player.name),
                median_depth=depth,
                blunder_rate=blunders.rate,
                blunder_ci=(blunders.ci_low, blunders.ci_high),
                games=int(pooled.games[pooled.index(player.name)]),
                tactics=solved,
                measured_scores=_measured(validation, player.name, section.bootstrap, ctx.run_seed),
            )
        product_blunders = rates[-1]()
    checks = []
    for lv, player in checked:
        measured = match_score(validation, player.name, product.anchor, bootstrap=section.bootstrap,
                               seed=ctx.run_seed)
        checks.append(DialCheck(lv.index, player.name, predicted_score(lv, _elo(fit, product.anchor)),
                                measured.score.value, (measured.score.ci_low, measured.score.ci_high),
                                measured.games))
    outcome = CalibrationOutcome(
        variant=ctx.variant,
        product_file=str(product.path),
        anchor=product.anchor,
        anchor_elo=ANCHOR_ELO,
        levels=levels,
        claims=tuple(verdicts),
        easy_trials=played.trials,
        easy_choice=easy.slot,
        product_elo={p: _interval(pooled, {product.player(p): 1.0}) for p in LEVEL_NAMES},
        product_easy_blunder_rate=product_blunders.rate,
        easy_blunder_halved=claims.blunder_claim(levels["easy"].blunder_rate, product_blunders.rate),
        medium_target=choice.target,
        medium_note=choice.medium_note,
        curves={
            "hard": _curve_json(
                pooled,
                [float(np.log2(b)) for b in section.hard_budgets],
                [p.name for p in curves.hard],
                "log2(node_budget)",
                everything,
            ),
            "medium": _curve_json(
                pooled,
                [-n for n in curves.medium_noise],
                [p.name for p in curves.medium[:-1]],
                "-noise_sigma",
                everything,
            ),
            "easy": {**_curve_json(pooled, [-x for x in EASY_SCALES], [p.name for p in axis],
                                   f"-scale of {easy.player}'s weakening", everything), "note": easy_note},
        },
        openings={"curve": len(split.curve), "validation": n_val, "unused": len(split.unused),
                  "validation_games": validation.num_rows,
                  "distinct_validation_games": distinct_games(validation).distinct},
        curve_openings=tuple(o.id for o in split.curve),
        validation_openings=tuple(o.id for o in split.validation),
        games=everything.num_rows,
        scale=pooled.to_json(samples=False),
        dial=tuple(lv for lv, _ in choice.dial),
        dial_checks=tuple(checks),
    )
    write_result(ctx.run_folder / CAL_DIR / RESULT_FILE, outcome.to_json())
    return outcome


@dataclass(frozen=True)
class Ends:
    """Easy and Hard as chosen on the choice fit, the chain of curve points between them, the
    dial, and the validation's first pairings (nothing in them depends on Medium)."""

    easy: PathPlayer
    easy_elo: float  # Easy's Elo on the choice fit (an interpolated Easy has played no game)
    hard: PathPlayer
    chain: tuple[PathPlayer, ...]  # Easy, the curve points between, Hard: weakest first
    dial: tuple[tuple[DialLevel, PathPlayer], ...]  # the dial's levels (none when ``dial`` is 0)
    checked: tuple[tuple[DialLevel, PathPlayer], ...]  # those of them the validation spot-checks
    pairings: tuple[Pairing, ...]


@dataclass(frozen=True)
class LevelChoice:
    """The three levels and the whole validation: the first part (``Ends.pairings``, played before
    Medium is chosen) then Medium's pairings (before repeats)."""

    chosen: dict[str, PathPlayer]
    target: float  # Medium's Elo target on the choice fit: the midpoint of Easy and Hard
    medium_note: str
    ends: Ends
    pairings: tuple[Pairing, ...]

    @property
    def dial(self) -> tuple[tuple[DialLevel, PathPlayer], ...]:
        return self.ends.dial

    @property
    def checked(self) -> tuple[tuple[DialLevel, PathPlayer], ...]:
        return self.ends.checked


def choose_ends(
    variant: str,
    weights: Mapping[str, float],
    section: CalibrateSection,
    curves: Curves,
    fit: ScaleFit,
    product: ProductLevels,
    easy: PathPlayer,
    easy_elo: float,
    n_val: int,
) -> Ends:
    """Hard on ``fit`` given Easy (``easy`` at ``easy_elo``), the dial's spot checks, and the
    validation's first part: Easy and Hard against their product levels, each link of the chain
    from Easy to Hard through the curve points nearest each :data:`CHAIN_STEPS`-th of the way
    (adjacent levels are often too far apart to score against each other), and the spot checks
    against the product's Medium."""
    hard = curves.hard[-1]
    dial = _plan_dial(variant, weights, section, curves, fit, easy, hard)
    checked = tuple((lv, player) for lv, player in dial if lv.index in spot_checked([d for d, _ in dial]))
    chain = _chain(fit, curves, easy, easy_elo, hard)
    pairings = [Pairing(easy.spec, product.spec("easy"), n_val, stream=_STREAM),
                Pairing(hard.spec, product.spec("hard"), n_val, stream=_STREAM)]
    pairings += [Pairing(strong.spec, weak.spec, n_val, stream=_STREAM)
                 for weak, strong in itertools.pairwise(chain)]
    pairings += [Pairing(player.spec, product.spec("medium"), n_val, stream=_STREAM) for _, player in checked]
    return Ends(easy, easy_elo, hard, chain, tuple(dial), checked, tuple(pairings))


def choose_medium_level(
    variant: str,
    weights: Mapping[str, float],
    curves: Curves,
    fit: ScaleFit,
    product: ProductLevels,
    ends: Ends,
    ends_fit: ScaleFit | None,
    n_val: int,
) -> LevelChoice:
    """Medium aimed at the midpoint of Easy and Hard as the validation measures it, and its
    pairings. ``ends_fit``: the fit of the chain's validation games (:func:`chain_fit`); the
    midpoint is found there, between two of the chain's points, and carried to the choice fit
    ``fit`` by the same fraction of the way between those points, where Medium's noise curve is
    inverted. A long chain of curve games and the validation's own chain can disagree on how far
    apart Easy and Hard are by more than Medium's tolerance, and the claim is judged on the
    validation's. None: the choice fit's own midpoint (what the job's ETA plans the validation
    with before the validation has measured it, ``pipeline.job.job_plan``).

    Medium then plays the product's Medium, Easy, Hard, and the chain's points on either side of
    its target, so its place on the chain is measured by scores away from 0 and 1."""
    def chosen_elo(p: PathPlayer) -> float:
        return ends.easy_elo if p.name == ends.easy.name else _elo(fit, p.name)

    def measured(p: PathPlayer) -> float:
        return chosen_elo(p) if ends_fit is None else _elo(ends_fit, p.name)

    midpoint = (measured(ends.easy) + measured(ends.hard)) / 2.0
    ordered = sorted(ends.chain, key=measured)
    below, above = ordered[0], ordered[-1]
    for lo, hi in itertools.pairwise(ordered):
        if measured(lo) <= midpoint <= measured(hi):
            below, above = lo, hi
            break
    span = measured(above) - measured(below)
    share = 0.5 if span <= 0 else min(1.0, max(0.0, (midpoint - measured(below)) / span))
    target = chosen_elo(below) + share * (chosen_elo(above) - chosen_elo(below))
    medium, medium_note = _choose_medium(variant, weights, curves, fit, target)
    if ends_fit is not None:
        own = (ends.easy_elo + chosen_elo(ends.hard)) / 2.0
        medium_note += (f"; the target is the validation chain's midpoint of Easy and Hard, {share:.2f} "
                        f"of the way from {below.name} to {above.name} (the curve fit's own midpoint: "
                        f"{own:.0f})")
    pairings = list(ends.pairings)
    met = {frozenset((p.a_spec, p.b_spec)) for p in pairings}
    opponents = [(medium.spec, product.spec("medium")), (medium.spec, ends.easy.spec),
                 (ends.hard.spec, medium.spec)]
    opponents += [(medium.spec, point.spec) for point in (below, above)]
    for a, b in opponents:  # Medium may be a point of the chain, whose links are played already
        if a != b and frozenset((a, b)) not in met:
            met.add(frozenset((a, b)))
            pairings.append(Pairing(a, b, n_val, stream=_STREAM))
    chosen = {"easy": ends.easy, "medium": medium, "hard": ends.hard}
    return LevelChoice(chosen, target, medium_note, ends, tuple(pairings))


def chain_fit(games: pa.Table, ends: Ends, seed: int) -> ScaleFit:
    """The fit of the validation games among the chain's players, Easy held at its choice-fit Elo
    (only differences along the chain are read from it)."""
    names = pa.array([p.name for p in ends.chain])
    among = pc.and_(pc.is_in(games.column("white_player"), names),
                    pc.is_in(games.column("black_player"), names))
    return scale_from_games(games.filter(among), anchor=ends.easy.name, anchor_elo=ends.easy_elo,
                            bootstrap=MIN_BOOTSTRAP, seed=seed)


def _fit(games: pa.Table, product: ProductLevels, section: CalibrateSection, seed: int) -> ScaleFit:
    """The score-based fit of ``games`` with the product's Medium held at the scale's fixed point."""
    return scale_from_games(games, anchor=product.anchor, anchor_elo=ANCHOR_ELO, bootstrap=section.bootstrap,
                            seed=seed)


def _chain(fit: ScaleFit, curves: Curves, easy: PathPlayer, easy_elo: float,
           hard: PathPlayer) -> tuple[PathPlayer, ...]:
    """Easy, the curve points (Medium's and Hard's) nearest each :data:`CHAIN_STEPS`-th of the way
    from Easy's Elo to Hard's on the choice fit, and Hard, weakest first: each link is a step of
    about equal Elo, so its score stays away from 0 and 1."""
    low, high = easy_elo, _elo(fit, hard.name)
    candidates = [p for p in (*curves.medium, *curves.hard) if p.name not in (easy.name, hard.name)]
    steps: dict[str, PathPlayer] = {}
    for k in range(1, CHAIN_STEPS):
        if candidates:
            at = low + (high - low) * k / CHAIN_STEPS
            point = min(candidates, key=lambda p: abs(_elo(fit, p.name) - at))
            steps[point.name] = point
    return (easy, *sorted(steps.values(), key=lambda p: _elo(fit, p.name)), hard)


def _measured(games: pa.Table, player: str, bootstrap: int,
              seed: int) -> dict[str, tuple[float, float, float]]:
    """The player's score with its bootstrap CI against every opponent it met in ``games``."""
    rows = games.select(["player_a", "player_b"]).to_pylist()
    opponents = sorted({r["player_b"] if r["player_a"] == player else r["player_a"] for r in rows
                        if player in (r["player_a"], r["player_b"])})
    out = {}
    for other in opponents:
        m = match_score(games, player, other, bootstrap=bootstrap, seed=seed)
        out[other] = (m.score.value, m.score.ci_low, m.score.ci_high)
    return out


def _tactics(player: PathPlayer, positions: Sequence[TacticalPosition]) -> tuple[int, int]:
    """Positions of the tactical test set the level solves (``pipeline.calibration.tactics_score``)."""
    result = solve_rate(player.level, positions, seed=0)
    return result.solved, result.total


def _plan_dial(variant: str, weights: Mapping[str, float], section: CalibrateSection, curves: Curves,
               fit: ScaleFit, easy: PathPlayer, hard: PathPlayer) -> tuple[tuple[DialLevel, PathPlayer], ...]:
    """``[calibrate] dial`` levels on the choice fit's curves (none when the key is 0)."""
    if section.dial == 0:
        return ()
    medium_curve = fit_curve([-n for n in curves.medium_noise], fit, [p.name for p in curves.medium[:-1]],
                             increasing=True)
    hard_curve = fit_curve([float(np.log2(b)) for b in section.hard_budgets], fit,
                           [p.name for p in curves.hard], increasing=True)

    def end(player: PathPlayer) -> tuple[PathPlayer, float, tuple[float, float]]:
        r = fit.rating(player.name)
        return player, r.value, (r.ci_low, r.ci_high)

    return plan_dial(section.dial, variant, weights, {"easy": end(easy), "hard": end(hard)}, medium_curve,
                     hard_curve)


def _choose_easy_level(
    variant: str, weights: Mapping[str, float], easy: EasyTrial, axis: Sequence[PathPlayer], fit: ScaleFit,
    target: float,
) -> tuple[PathPlayer, float, str]:
    """Easy at ``target`` (the product's Easy): the chosen mix scaled where its axis reaches it,
    or the axis end nearest to it; with the Elo the choice fit gives it and a note saying which."""
    curve = fit_curve([-x for x in EASY_SCALES], fit, [p.name for p in axis], increasing=True)
    knob = curve.invert(target)
    scale = -float(knob.value)
    player = easy_player(variant, weights, scaled_mix(easy.params, scale), f"easy-s{scale:.3f}")
    if knob.clamped:
        note = f"the axis does not reach the product's Easy ({target:.0f}); its nearest end, scale {scale:g}"
    else:
        note = f"axis of {easy.player} inverted at {target:.0f}: scale {scale:.3f}"
    return player, curve.at(float(knob.value)).value, note


def _choose_medium(
    variant: str, weights: Mapping[str, float], curves: Curves, fit: ScaleFit, target: float
) -> tuple[PathPlayer, str]:
    """Medium at ``target``: the noise curve's inversion, or 5 plies when 4 cannot reach it."""
    noiseless = curves.medium[-2]
    top = curves.medium[-1]
    if target > _elo(fit, noiseless.name):
        if abs(_elo(fit, top.name) - target) < abs(_elo(fit, noiseless.name) - target):
            return top, f"the target is above 4 plies without noise; {MEDIUM_FALLBACK_DEPTH} plies is closer"
        return noiseless, "the target is above 4 plies without noise; 4 plies without noise is closest"
    names = [p.name for p in curves.medium[:-1]]
    xs = [-n for n in curves.medium_noise]
    curve = fit_curve(xs, fit, names, increasing=True)
    x = curve.invert(target)
    noise = max(0.0, -float(x.value))
    return medium_player(variant, weights, noise, depth=MEDIUM_DEPTH), f"noise curve inverted at {target:.0f}"


def _curve_json(fit: ScaleFit, xs: Sequence[float], names: Sequence[str], axis: str,
                games: pa.Table) -> dict[str, Any]:
    """A curve's points (Elo with CI, and what a move of each cost in ``games``) and its fit."""
    points = []
    for x, n in zip(xs, names, strict=True):
        r = fit.rating(n)
        nodes, seconds = player_move_cost(games, n)
        points.append({"x": x, "player": n, "elo": r.value, "ci": [r.ci_low, r.ci_high],
                       "nodes_per_move": nodes, "ms_per_move": 1000.0 * seconds})
    curve = fit_curve(list(xs), fit, list(names), increasing=True)
    return {"axis": axis, "points": points, "curve": curve.to_json()}
