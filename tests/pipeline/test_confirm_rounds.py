"""Confirmation rounds: when a candidate's CI counts as narrow, and when a hopeless one stops.

A candidate that has not lost a game (or not won one) has a prior-driven rating: every bootstrap
resample shares its degenerate score, so the CI looks narrow without measuring anything (a Hard
proposal at 66 W / 14 D / 0 L would stop after one round as a "narrow miss" at +2808 +- 19). A
candidate 200-400 Elo from its target after a few rounds would play up to confirm_max_pairs; with
a validation to follow, the futility stop ends it as a miss.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.calibration.chain import Neighbour
from pipeline.calibration.confirm import PRIOR_DRIVEN_STOP_PAIRS, confirm_candidate
from pipeline.calibration.results import Confirmation, Proposal
from pipeline.config.job_sections import calibrate_section
from pipeline.games.pairings import Pairing
from pipeline.job.main_job import JobOptions, load_job_config

from .conftest import REPO

MEDIUM = Neighbour("medium", "medium-t9001", "inline:medium-t9001:{}", elo=1800.0, chain_half_width=34.0)
CANDIDATE = "hard-t9002"


def _section(**changes: Any) -> Any:
    section = calibrate_section(load_job_config(str(REPO / "configs" / "runs" / "tiny.toml"), JobOptions()))
    assert section is not None
    levels = tuple(dataclasses.replace(level, target=2200.0) if level.name == "hard" else level
                   for level in section.levels)
    settings = {"levels": levels, "confirm_step_pairs": 40, "confirm_half_width": 35.0,
                "confirm_max_pairs": 1400, "confirm_bootstrap": 200, "tolerance": 15.0,
                "confirm_validate": False}
    return dataclasses.replace(section, **{**settings, **changes})


class _FakeContext:
    """Plays nothing: each round's games come from ``results(round)`` (A's points, per game)."""

    run_seed = 5

    def __init__(self, results: Callable[[int], Sequence[float]]) -> None:
        self.results = results
        self.rounds = 0

    def play(self, stage: str, pairings: Sequence[Pairing]) -> pa.Table:
        (pairing,) = pairings
        points = list(self.results(self.rounds))
        assert len(points) == 2 * pairing.pairs
        self.rounds += 1
        rows: dict[str, list[Any]] = {k: [] for k in (
            "white_player", "black_player", "result_white", "variant", "run_id", "pair_id", "white_nodes",
            "black_nodes", "plies", "opening_fen", "opening_id")}
        for g, a_points in enumerate(points):
            a_white = g % 2 == 0
            rows["white_player"].append(CANDIDATE if a_white else MEDIUM.name)
            rows["black_player"].append(MEDIUM.name if a_white else CANDIDATE)
            rows["result_white"].append(a_points if a_white else 1.0 - a_points)
            rows["variant"].append("brazilian")
            rows["run_id"].append(stage)
            rows["pair_id"].append(g // 2)
            rows["white_nodes"].append(100)
            rows["black_nodes"].append(100)
            rows["plies"].append(60)
            rows["opening_fen"].append("W:W21,22:B1,2")
            rows["opening_id"].append(f"{stage}/o{g // 2}")  # a fresh opening per pair
        return pa.table(rows)


def _confirm(ctx: _FakeContext, validate: bool = False, **changes: Any) -> Confirmation:
    rec = Proposal(9002, "calibrate/hard/confirm-9002/round-000", {"node_budget": 2273}, 2200.0)
    conf, games = confirm_candidate(ctx, None, _section(**changes), "hard", rec,  # type: ignore[arg-type]
                                    "inline:hard-t9002:{}", 1, neighbour=MEDIUM, validate=validate)
    assert games.num_rows == conf.games
    return conf


def _mixed(seed: int, win: float = 0.82, draw: float = 0.12) -> Callable[[int], Sequence[float]]:
    """By default about 82 % wins, 12 % draws, 6 % losses: a gap of about +400."""
    rng = np.random.default_rng(seed)
    return lambda _round: rng.choice([1.0, 0.5, 0.0], size=80, p=[win, draw, 1.0 - win - draw]).tolist()


def test_a_round_without_a_loss_is_not_a_measurement() -> None:
    """66 W / 14 D / 0 L first, then ordinary rounds: confirmation goes on."""
    mixed = _mixed(1)
    ctx = _FakeContext(lambda r: [1.0] * 66 + [0.5] * 14 if r == 0 else mixed(r))
    result = _confirm(ctx)
    assert result.rounds > 1 and not result.rating.prior_driven
    assert result.narrow == (result.rating.half_width <= 35.0)
    assert 2000 < result.rating.elo < 2400  # the data's gap, not the prior's cap


def test_a_candidate_that_never_loses_stops_as_a_miss() -> None:
    ctx = _FakeContext(lambda _r: [1.0] * 70 + [0.5] * 10)
    result = _confirm(ctx)
    assert result.rating.prior_driven
    assert result.pairs_per_opponent == PRIOR_DRIVEN_STOP_PAIRS
    assert not result.narrow and not result.within_ci and not result.hit


def test_an_ordinary_candidate_still_stops_once_narrow() -> None:
    result = _confirm(_FakeContext(_mixed(2)))
    assert not result.rating.prior_driven and result.narrow and result.rating.half_width <= 35.0
    assert result.pairs_per_opponent < 1400


def _far(seed: int) -> Callable[[int], Sequence[float]]:
    """About 72 % wins, 12 % draws, 16 % losses: a gap of about +230, some 170 Elo below +400."""
    return _mixed(seed, win=0.72, draw=0.12)


def test_a_hopeless_candidate_stops_early_when_a_validation_follows() -> None:
    full = _confirm(_FakeContext(_far(3)))  # the same games, measured to +-35
    early = _confirm(_FakeContext(_far(3)), confirm_validate=True)
    assert not full.futile and full.narrow and not full.hit
    assert early.futile and not early.hit and not early.narrow
    assert abs(early.rating.elo - 2200.0) > 15.0 + 2.0 * early.rating.half_width
    assert early.pairs_per_opponent < full.pairs_per_opponent


def test_no_futility_stop_in_a_validation() -> None:
    """A validation's numbers are reported, so it never stops early (nor does a confirmation
    without a validation to follow: the first test's ``full``)."""
    full = _confirm(_FakeContext(_far(3)))
    result = _confirm(_FakeContext(_far(3)), confirm_validate=True, validate=True)
    assert not result.futile and result.narrow
    assert result.pairs_per_opponent == full.pairs_per_opponent


def test_a_candidate_near_its_target_is_never_futile() -> None:
    result = _confirm(_FakeContext(_mixed(4)), confirm_validate=True)
    assert not result.futile and result.narrow


def test_a_validation_plays_to_its_own_half_width() -> None:
    """validate_half_width: the confirmation plays down to +-20 (a precise choice) while the
    validation stops at +-35 as before (so the reported CI is not narrowed)."""
    changes = {"confirm_half_width": 20.0, "validate_half_width": 35.0, "confirm_validate": True,
               "confirm_max_pairs": 8000, "confirm_bootstrap": 100}
    confirm = _confirm(_FakeContext(_mixed(5)), **changes)
    validate = _confirm(_FakeContext(_mixed(5)), validate=True, **changes)
    assert confirm.narrow and confirm.rating.half_width <= 20.0
    assert validate.narrow and 20.0 < validate.rating.half_width <= 35.0
    assert validate.pairs_per_opponent < confirm.pairs_per_opponent
    same = _confirm(_FakeContext(_mixed(5)), validate=True, **{**changes, "validate_half_width": 0.0})
    assert same.rating.half_width <= 20.0 and same.pairs_per_opponent == confirm.pairs_per_opponent


class _ReplayContext(_FakeContext):
    """Two noiseless players on a deck of 80 openings: round r plays openings 40r .. 40r + 39
    (mod 80), and each (opening, colour) always gives the same game and result."""

    def __init__(self) -> None:
        rng = np.random.default_rng(7)
        self.by_opening = {k: rng.choice([1.0, 0.5, 0.0], size=2, p=[0.8, 0.12, 0.08]).tolist()
                           for k in range(80)}
        super().__init__(lambda r: [x for k in range(40) for x in self.by_opening[(40 * r + k) % 80]])

    def play(self, stage: str, pairings: Sequence[Pairing]) -> pa.Table:
        round_ = self.rounds
        table = super().play(stage, pairings)
        openings = [f"o{(40 * round_ + g // 2) % 80}" for g in range(table.num_rows)]
        moves = [f"{o}/{'white' if g % 2 == 0 else 'black'}" for g, o in enumerate(openings)]
        return table.set_column(table.column_names.index("opening_id"), "opening_id", pa.array(openings)) \
            .append_column("moves", pa.array(moves))


def test_a_confirmation_that_only_replays_stops() -> None:
    """Candidate and neighbour without noise: after the deck has gone round (two rounds here)
    every game is a replay, so the bootstrap over openings cannot narrow: the third round stops it."""
    stopped = _confirm(_ReplayContext(), confirm_half_width=20.0)
    assert stopped.saturated and stopped.rounds == 3 and stopped.distinct_games == 160
    assert not stopped.narrow and not stopped.hit
