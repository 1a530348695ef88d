"""Hand-made records of every stage's result types, for tests that need one without playing games."""

from __future__ import annotations

from engine.profile import Knob
from pipeline.ladder.reference import Ladder, RatedAnchor
from pipeline.ratings import Rating
from pipeline.tuning.results import SprtSummary, TuneBest, TuneResult, TuneTrial
from pipeline.tuning.texel import TexelFit, TexelSeed

KNOBS: dict[str, Knob] = {"max_depth": 2, "random_move_prob": 0.25}


def rating(
    player: str = "cand",
    elo: float = 500.0,
    half_width: float = 100.0,
    games: int = 40,
    score: float = 0.5,
    prior_driven: bool = False,
) -> Rating:
    return Rating(player, elo, elo - half_width, elo + half_width, games, score, prior_driven)


def ladder() -> Ladder:
    anchors = tuple(
        RatedAnchor(spec, rating(name, elo, half, 80, score))
        for name, spec, elo, half, score in (
            ("random", "random", 0.0, 0.0, 0.2),
            ("d1", "inline:d1:{}", 600.0, 100.0, 0.5),
            ("d2", "inline:d2:{}", 900.0, 120.0, 0.8),
        )
    )
    results = (("random", "d1", 1, 2, 37), ("d1", "d2", 10, 20, 10))
    return Ladder("english", "h", anchors, results, ("a note",), 0.8, 25.0, "0.1.0")


def tune(decision: str = "rejected") -> TuneResult:
    weights = {"man": 100.0, "king": 130.0}
    trials = (
        TuneTrial(0, "COMPLETE", 0.48, {"weight.advance": 3.5}, False, 2, 0),
        TuneTrial(1, "FAIL", None, {}, False, None, 1),
        TuneTrial(2, "COMPLETE", 0.55, {"weight.advance": 7.0}, True, 1, 2),
    )
    best = TuneBest(2, 2, 0.55, {**weights, "advance": 7.0}, {"weight.advance": 7.0})
    sprt = SprtSummary(
        decision, -1.2, -2.94, 2.94, 40, 0.0, 10.0, 0.05, 0.05, (1, 5, 20, 10, 4), 0.52, 14.0, (-40.0, 68.0)
    )
    texel = TexelSeed(TexelFit({**weights, "advance": 5.0}, 0.004, 0.21, 0.19, 1200), 80)
    return TuneResult(
        "english", "run-tune", weights, weights, decision == "accepted", decision, trials, best, sprt, texel
    )
