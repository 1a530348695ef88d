"""Hand-made records of every stage's result types, for tests that need one without playing games."""

from __future__ import annotations

import dataclasses
from typing import Any

from engine.profile import Knob, LevelProfile
from engine.variants import get_variant
from pipeline.calibration.levelcheck_results import (
    Claim,
    ClaimedGap,
    DavidsonGap,
    DifferenceTest,
    LevelCheckResult,
    LevelCheckSettings,
    LevelStats,
    MatchRating,
    MatchResult,
)
from pipeline.calibration.results import (
    CalibrationResult,
    Confirmation,
    LevelResult,
    LevelTrial,
    NeighbourRef,
    Proposal,
    WinScores,
)
from pipeline.config.job_sections import LEVELS
from pipeline.ladder.reference import Ladder, RatedAnchor
from pipeline.ratings import Rating
from pipeline.ratings.blunders import BlunderStats
from pipeline.tuning.results import SprtSummary, TuneBest, TuneResult, TuneTrial
from pipeline.tuning.texel import TexelFit, TexelSeed

KNOBS: dict[str, Knob] = {"max_depth": 2, "random_move_prob": 0.25}


def rating(player: str = "cand", elo: float = 500.0, half_width: float = 100.0, games: int = 40,
           score: float = 0.5, prior_driven: bool = False) -> Rating:
    return Rating(player, elo, elo - half_width, elo + half_width, games, score, prior_driven)


def trial(number: int = 0, elo: float = 500.0, target: float = 520.0, nodes: float = 100.0,
          half_width: float = 100.0, *, hit: bool | None = None, knobs: dict[str, Knob] | None = None,
          level: str = "easy") -> LevelTrial:
    """A level trial; ``hit`` defaults to the target lying inside the CI."""
    within = abs(elo - target) <= half_width
    return LevelTrial(
        number=number, slot=number, stage=f"calibrate/{level}/trial-{number:04d}",
        knobs=dict(KNOBS if knobs is None else knobs),
        rating=rating(f"{level}-t{number:04d}", elo, half_width), nodes_per_move=nodes, target=target,
        within_ci=within, hit=within if hit is None else hit, value=abs(elo - target), anchors=("d1", "d2"),
        opponent_wins=WinScores.of([700, 900, 1100]), games_per_second=12.5)


def confirmation(elo: float = 510.0, trial_number: int | None = 0, *, hit: bool = True,
                 knobs: dict[str, Knob] | None = None, level: str = "easy", games: int = 80) -> Confirmation:
    return Confirmation(
        trial=trial_number, knobs=dict(KNOBS if knobs is None else knobs),
        rating=rating(f"{level}-t0000", elo, 30.0, games, 0.55), games=games, within_ci=hit, narrow=hit,
        hit=hit, nodes_per_move=120.0, rounds=2, pairs_per_opponent=20, opponents=("d1", "d2"), pin="d1",
        futile=False, saturated=False, distinct_games=games,
        stages=(f"calibrate/{level}/confirm-0000/round-000", f"calibrate/{level}/confirm-0000/round-001"),
        ci_method="opening bootstrap (200 resamples)")


def profile_json(level: str, knobs: dict[str, Knob] | None = None) -> dict[str, Any]:
    chosen = KNOBS if knobs is None else knobs
    return LevelProfile.from_knobs(get_variant("english"), level, knobs=chosen).to_json()


def level_result(level: str = "easy", elo: float = 500.0, target: float = 520.0, *, confirmed: bool = True,
                 knobs: dict[str, Knob] | None = None, ci: tuple[float, float] | None = None) -> LevelResult:
    """A calibrated level: a trial, confirmed at ``elo`` (or, unconfirmed, rated there itself)."""
    chosen = trial(0, elo, target, knobs=knobs, level=level)
    if ci is not None:
        r = dataclasses.replace(chosen.rating, ci_low=ci[0], ci_high=ci[1])
        chosen = dataclasses.replace(chosen, rating=r)
    conf = None
    if confirmed:
        conf = confirmation(elo, 0, knobs=knobs, level=level)
        if ci is not None:
            r = dataclasses.replace(conf.rating, ci_low=ci[0], ci_high=ci[1])
            conf = dataclasses.replace(conf, rating=r)
    return LevelResult(chosen, conf, () if conf is None else (conf,), profile_json(level, knobs),
                       f"target {target:+.0f}")


def calibration(elos: tuple[float, float, float] = (500.0, 900.0, 1300.0), *, confirmed: bool = True,
                knobs: dict[str, dict[str, Knob]] | None = None) -> CalibrationResult:
    """A calibration of english with every level at its target."""
    levels = {level: level_result(level, elo, elo, confirmed=confirmed, knobs=(knobs or {}).get(level))
              for level, elo in zip(LEVELS, elos, strict=True)}
    return CalibrationResult(
        variant="english", ladder_hash="h", weights={"man": 100.0}, pin="d1", pin_elo=600.0, chain_from=None,
        ordered=True, notes=("a note",), levels=levels,
        trials={level: tuple(t for t in (levels[level].trial, trial(5, 100.0, 400.0, level=level)) if t)
                for level in LEVELS})


def chained_calibration() -> CalibrationResult:
    """Every kind of candidate and confirmation: a proposal, a validation, a joint fit, a chain."""
    base = calibration()
    medium = base.levels["medium"]
    assert medium.confirmation is not None
    proposed = Proposal(9001, "calibrate/easy/confirm-9001/round-000", {"max_depth": 2, "noise_sigma": 12.5},
                        500.0)
    selection = confirmation(505.0, None, level="easy")
    easy_conf = dataclasses.replace(
        confirmation(498.0, None, level="easy", knobs=proposed.knobs), selection=selection,
        neighbour=NeighbourRef("medium", "medium-t0000", 900.0), chain_half_width=41.5,
        joint_stages=("calibrate/joint/easy-medium",), alone=confirmation(470.0, None, level="easy"),
        distinct_games=None)
    easy = LevelResult(proposed, easy_conf, (confirmation(430.0, 0, hit=False), easy_conf),
                       profile_json("easy", dict(proposed.knobs)), "chained")
    medium = dataclasses.replace(medium, confirmation=dataclasses.replace(medium.confirmation,
                                                                          chain_half_width=30.0))
    levels = {**base.levels, "easy": easy, "medium": medium}
    return dataclasses.replace(base, chain_from="medium", levels=levels, notes=())


def ladder() -> Ladder:
    anchors = tuple(RatedAnchor(spec, rating(name, elo, half, 80, score))
                    for name, spec, elo, half, score in (("random", "random", 0.0, 0.0, 0.2),
                                                        ("d1", "inline:d1:{}", 600.0, 100.0, 0.5),
                                                        ("d2", "inline:d2:{}", 900.0, 120.0, 0.8)))
    results = (("random", "d1", 1, 2, 37), ("d1", "d2", 10, 20, 10))
    return Ladder("english", "h", anchors, results, ("a note",), 0.8, 25.0, "0.1.0")


def tune(decision: str = "rejected") -> TuneResult:
    weights = {"man": 100.0, "king": 130.0}
    trials = (TuneTrial(0, "COMPLETE", 0.48, {"weight.advance": 3.5}, False, 2, 0),
              TuneTrial(1, "FAIL", None, {}, False, None, 1),
              TuneTrial(2, "COMPLETE", 0.55, {"weight.advance": 7.0}, True, 1, 2))
    best = TuneBest(2, 2, 0.55, {**weights, "advance": 7.0}, {"weight.advance": 7.0})
    sprt = SprtSummary(decision, -1.2, -2.94, 2.94, 40, 0.0, 10.0, 0.05, 0.05, (1, 5, 20, 10, 4), 0.52,
                       14.0, (-40.0, 68.0))
    texel = TexelSeed(TexelFit({**weights, "advance": 5.0}, 0.004, 0.21, 0.19, 1200), 80)
    return TuneResult("english", "run-tune", weights, weights, decision == "accepted", decision, trials, best,
                      sprt, texel)


def _match(label: str, elo: float | None, claimed: float | None) -> MatchResult:
    measured = MatchRating(
        games=24, distinct_games=20, pairs=12, wins=14, draws=6, losses=4, score=0.708, score_ci=(0.6, 0.8),
        elo=elo, elo_ci=(None if elo is None else elo - 60.0, None), ci_method="pentanomial", los=0.99,
        pentanomial=(0, 1, 3, 5, 3),
        davidson=DavidsonGap(rating("A", 220.0, 70.0, 24, 0.708), 0.9, "opening bootstrap (400)"))
    a, b = Claim(900.0, (870.0, 930.0)), Claim(None if claimed is None else 900.0 - claimed, (650.0, 720.0))
    gap = ClaimedGap(claimed, None if claimed is None else (claimed - 40.0, claimed + 40.0),
                     None if claimed is None else "approximate (both levels' CIs in quadrature)", a, b)
    test = None if claimed is None else DifferenceTest(220.0 - claimed, (-60.0, 100.0), 0.5, True)
    return MatchResult(label, f"p.json:{label[:4]}", "p.json:easy", measured, gap,
                       None if claimed is None else True, None if claimed is None else True, test)


def levelcheck() -> LevelCheckResult:
    blunders = BlunderStats("p.json:easy", 300, 30, 0.1, 0.07, 0.14, 4, 100.0, 420)
    claims = {"easy": Claim(500.0, (450.0, 550.0)), "medium": Claim(700.0, (650.0, 750.0)),
              "hard": Claim(None, None)}
    levels = {name: LevelStats(f"p.json:{name}", 48, 150.0 * (i + 1), blunders, claims[name])
              for i, name in enumerate(LEVELS)}
    return LevelCheckResult(
        variant="english", profile="p.json", profile_hash="abc", baseline="b.json", claimed_from="p.json",
        settings=LevelCheckSettings("p.json", "out", baseline="b.json", pairs=12), deck_openings=100,
        adjacent=(_match("medium - easy", 180.0, 200.0), _match("hard - medium", None, None)),
        baseline_matches=(_match("easy - baseline easy", 5.0, None),), levels=levels,
        baseline_levels=levels, engine_version="0.1.0", games_total=48, games_played_now=24,
        batches_played_now=12, executor="in-process", cpu_count=2, wall_seconds=3.5,
        files=("out/levelcheck.json", "out/levelcheck.md", "out/levelcheck.png"))
