"""Calibration pieces: knob spaces, rating on the ladder, compute, picking ordered levels."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pyarrow as pa
import pytest

from engine.profile import Knob
from pipeline.calibration.levels import knob_space, objective, pick_levels, rank, rate_on_ladder
from pipeline.calibration.results import LevelTrial, WinScores
from pipeline.config.job_sections import read_knob_ranges
from pipeline.games.stage import player_nodes_per_move, wins_against
from pipeline.ladder.reference import ANCHOR, Anchor, fit_ladder
from pipeline.ratings import Rating

from .samples import trial as _rec
from .test_ladder import TRUE, synthetic_table


def test_rank_prefers_hits_at_least_compute_then_nearest_misses() -> None:
    recs = [_rec(0, 500, 520, 900), _rec(1, 530, 520, 100), _rec(2, 800, 520, 5), _rec(3, 300, 520, 5)]
    assert [r.number for r in rank(recs)] == [1, 0, 3, 2]


def test_pick_levels_finds_an_ordered_combination() -> None:
    by_level = {
        "easy": [_rec(0, 600, 500, 10), _rec(1, 450, 500, 50)],
        "medium": [_rec(0, 580, 700, 10, 200), _rec(1, 720, 700, 90)],
        "hard": [_rec(0, 1000, 1000, 100)],
    }
    picks, ordered = pick_levels(by_level)
    assert ordered
    # the cheapest hits are easy 600 and medium 580 (not ordered); the best ordered pick keeps
    # easy's cheapest hit and takes medium's second one.
    assert (picks["easy"].number, picks["medium"].number, picks["hard"].number) == (0, 1, 0)


def test_pick_levels_reports_when_no_order_exists() -> None:
    by_level = {"easy": [_rec(0, 900, 500, 1)], "medium": [_rec(0, 800, 700, 1)],
                "hard": [_rec(0, 1000, 1000, 1)]}
    picks, ordered = pick_levels(by_level)
    assert not ordered and picks["easy"].rating.elo == 900
    with pytest.raises(ValueError, match="no finished calibration trial"):
        pick_levels({"easy": [], "medium": [], "hard": []})


def test_knob_space_splits_searched_and_fixed() -> None:
    space, fixed = knob_space(read_knob_ranges({"max_depth": [1, 3], "node_budget": 2000, "quiescence": False,
                                                "noise_sigma": [0, 50]}))
    assert fixed == {"node_budget": 2000, "quiescence": False}
    assert {(p.name, p.kind, p.low, p.high) for p in space} == {("max_depth", "int", 1, 3),
                                                               ("noise_sigma", "float", 0.0, 50.0)}
    rating = Rating("x", 450.0, 400.0, 500.0, 10, 0.5, False)
    assert objective(rating, 500.0, 2000.0, 1.0) == pytest.approx(52.0)


def _games(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table({k: [r[k] for r in rows] for k in rows[0]})


def test_nodes_per_move_and_opponent_wins() -> None:
    base = {"opening_fen": "B:W21:B1", "variant": "english", "run_id": "r", "winner_score": 0}
    rows = [
        # cand is White; Black moved first, 5 plies -> White made 2 moves
        {**base, "white_player": "cand", "black_player": "d1", "white_nodes": 100, "black_nodes": 7,
         "plies": 5, "winner": "black", "winner_score": 450, "result_white": 0.0, "pair_id": 0},
        # cand is Black and moved first, 4 plies -> 2 moves
        {**base, "white_player": "d1", "black_player": "cand", "white_nodes": 9, "black_nodes": 60,
         "plies": 4, "winner": None, "result_white": 0.5, "pair_id": 0},
    ]
    other = {**base, "white_player": "d1", "black_player": "d2", "white_nodes": 10**6, "black_nodes": 10**6,
             "plies": 9, "winner": None, "result_white": 0.5, "pair_id": 1}
    table = _games([*rows, other])  # a game cand did not play counts for nothing
    assert player_nodes_per_move(table, "cand") == pytest.approx(160 / 4)
    assert wins_against(table, "cand") == [450]
    assert WinScores.of([450]).wins == 1 and WinScores.of([]).mean is None


def test_rate_on_ladder_uses_ladder_and_trial_games() -> None:
    names = [Anchor(n, n if n == ANCHOR else f"inline:{n}:{{}}") for n in TRUE]
    ladder = fit_ladder("english", names, synthetic_table(pairs=40), "h")
    # A candidate as strong as d1r50 that scores about half against it and loses to d1.
    rows = []
    for k in range(20):
        for white, black, result in (("cand", "d1r50", 1.0 if k % 2 else 0.0), ("d1r50", "cand", 0.5),
                                     ("cand", "d1", 0.0), ("d1", "cand", 1.0)):
            rows.append({"white_player": white, "black_player": black, "result_white": result,
                         "variant": "english", "pair_id": k})
    rating = rate_on_ladder(ladder, _games(rows), "cand")
    d1r50, d1 = ladder.anchor("d1r50"), ladder.anchor("d1")
    assert rating.ci_low < d1r50.elo < rating.ci_high
    assert rating.elo < d1.elo and rating.games == 80


def test_a_hit_also_needs_the_elo_within_the_tolerance() -> None:
    loose = _rec(0, 420, 500, 5, half_width=150, hit=False)  # CI holds 500, but 80 Elo off
    close = _rec(1, 490, 500, 400, hit=True)
    assert [r.number for r in rank([loose, close])] == [1, 0]


def _candidate_rows(pairs: int) -> list[dict[str, Any]]:
    rows = []
    for k in range(pairs):
        for white, black, result in (("cand", "d1r50", 1.0 if k % 2 else 0.0), ("d1r50", "cand", 0.5),
                                     ("cand", "d1", 0.0 if k % 3 else 0.5), ("d1", "cand", 1.0)):
            rows.append({"white_player": white, "black_player": black, "result_white": result,
                         "variant": "english", "pair_id": k, "run_id": "run/confirm",
                         "opening_id": f"o{k % 7}"})
    return rows


def test_a_pin_holds_its_ladder_elo_and_narrows_the_ci_to_its_neighbourhood() -> None:
    names = [Anchor(n, n if n == ANCHOR else f"inline:{n}:{{}}") for n in TRUE]
    ladder = fit_ladder("english", names, synthetic_table(pairs=40), "h")
    table = _games(_candidate_rows(20))
    from_random = rate_on_ladder(ladder, table, "cand")
    from_d1r50 = rate_on_ladder(ladder, table, "cand", "d1r50")
    # same games: nearly the same estimate (the pin stays at its ladder-only Elo while the joint
    # fit may move it a little); the CI no longer carries the random -> d1r50 link of the ladder
    assert from_d1r50.elo == pytest.approx(from_random.elo, abs=30.0)
    assert from_d1r50.ci_high - from_d1r50.ci_low < from_random.ci_high - from_random.ci_low - 20
    boot = rate_on_ladder(ladder, table, "cand", "d1r50", bootstrap=200, seed=3)
    assert boot.ci_low < from_d1r50.elo < boot.ci_high
    assert boot == rate_on_ladder(ladder, table, "cand", "d1r50", bootstrap=200, seed=3)  # seeded
    with pytest.raises(ValueError, match="no anchor 'd9'"):
        rate_on_ladder(ladder, table, "cand", "d9")


def test_rate_on_ladder_by_pair_resamples_ladder_games_and_pairs() -> None:
    """unit="pair": the ladder's games one by one and the run's games by run id and pair id, the
    keys of a plain bootstrap over pairs (and so the same resamples)."""
    import numpy as np

    from pipeline.ratings import GameResults, fit_elo, games_from_color_table

    names = [Anchor(n, n if n == ANCHOR else f"inline:{n}:{{}}") for n in TRUE]
    ladder = fit_ladder("english", names, synthetic_table(pairs=40), "h")
    table = _games(_candidate_rows(20))
    now = rate_on_ladder(ladder, table, "cand", "d1r50", bootstrap=100, seed=5, unit="pair")
    ladder_games = ladder.game_results()
    trial = games_from_color_table(table, pair_id=("run_id", "pair_id"))
    ids = np.concatenate([np.char.add("ladder/", np.arange(len(ladder_games)).astype(np.str_)),
                          np.asarray(trial.pair_id).astype(np.str_)])
    games = GameResults.from_arrays(np.concatenate([ladder_games.first, trial.first]),
                                    np.concatenate([ladder_games.second, trial.second]),
                                    np.concatenate([ladder_games.result, trial.result]), ids)
    before = fit_elo(games, "d1r50", ladder.anchor("d1r50").elo, ci_method="bootstrap", n_bootstrap=100,
                     seed=5)["cand"]
    assert (now.elo, now.ci_low, now.ci_high) == (before.elo, before.ci_low, before.ci_high)
    by_opening = rate_on_ladder(ladder, table, "cand", "d1r50", bootstrap=100, seed=5)
    assert by_opening.elo == now.elo and (by_opening.ci_low, by_opening.ci_high) != (now.ci_low, now.ci_high)


def test_confirmation_opponents_are_the_pin_and_the_bracket_without_repeats() -> None:
    from pipeline.calibration.confirm import opponents

    names = [Anchor(n, n if n == ANCHOR else f"inline:{n}:{{}}") for n in TRUE]
    ladder = fit_ladder("english", names, synthetic_table(pairs=40), "h")
    d1 = ladder.anchor("d1").elo
    assert [n for n, _ in opponents(ladder, "d1", d1 - 10)] == ["d1", "d1r50"]
    assert [n for n, _ in opponents(ladder, "random", 500.0)] == ["random", "d1r50", "d1"]
    # a pin 600 Elo or more from the target only wins or only loses: it is left out
    assert [n for n, _ in opponents(ladder, "random", d1 + 10)] == ["d1", "d2"]


def test_depth_seeds_put_every_other_knob_at_its_strongest() -> None:
    import optuna

    from pipeline.calibration.levels import depth_seed_points, seed_depth_trials

    space, _ = knob_space(read_knob_ranges({"max_depth": [2, 8], "noise_sigma": [10, 40],
                                            "node_budget": [300, 30000]}))
    points = depth_seed_points(space)
    assert [p["max_depth"] for p in points] == [2, 3, 4, 5]
    assert all(p["noise_sigma"] == 10.0 and p["node_budget"] == 30000 for p in points)
    assert depth_seed_points(knob_space(read_knob_ranges({"noise_sigma": [0, 40]}))[0]) == []

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study()
    seed_depth_trials(study, space, trials=6)  # at most half the trials are seeds
    from pipeline.tuning.studies import ask_trial

    drawn = [ask_trial(study, space)[1] for _ in range(3)]
    assert [d["max_depth"] for d in drawn] == [2, 3, 4] and drawn[0]["noise_sigma"] == 10.0
    seed_depth_trials(study, space, trials=6)  # a study with trials gets no more seeds
    assert len([t for t in study.get_trials(deepcopy=False) if t.state.name == "WAITING"]) == 0


def _trial(number: int, depth: int, noise: float, elo: float) -> LevelTrial:
    return _rec(number, elo, elo, knobs={"max_depth": depth, "noise_sigma": noise, "node_budget": 5000})


def test_a_missed_confirmation_proposes_a_newton_step_on_the_weakening_knob() -> None:
    from pipeline.calibration.confirm import propose

    # trials at depth 3 fall about 4 Elo per unit of noise; depth 2 trials must be ignored
    trials = [_trial(0, 3, 80, 2160), _trial(1, 3, 120, 2000), _trial(2, 3, 150, 1780),
              _trial(3, 3, 200, 1600),
              _trial(4, 2, 10, 900)]
    ranges = {"noise_sigma": (0.0, 200.0), "max_depth": (1.0, 3.0)}
    picked = trials[2]
    step = propose([(picked, 1980.0)], trials, 1800.0, ranges)
    assert step is not None and step["max_depth"] == 3
    assert 180 < step["noise_sigma"] < 200  # 150 + 180 / ~4.3
    # with two confirmed points on the line, their secant sets the slope (here 2 Elo per unit)
    second = dataclasses.replace(picked, knobs={**picked.knobs, "noise_sigma": 190.0})
    step2 = propose([(picked, 1980.0), (second, 1900.0)], trials, 1800.0, ranges)
    assert step2 is not None and step2["noise_sigma"] == 200.0  # 190 + 100 / 2 = 240, clipped to the range
    # clipped onto a point already measured: nothing new to learn
    third = dataclasses.replace(picked, knobs={**picked.knobs, "noise_sigma": 200.0})
    assert propose([(second, 1900.0), (third, 1850.0)], trials, 1800.0, ranges) is None
    # no weakening knob (hard): no proposal; a rising slope (nonsense): no proposal
    assert propose([(picked, 1980.0)], trials, 1800.0, {"node_budget": (300.0, 3e4)}) is None
    rising = [_trial(i, 3, 50.0 * i, 1500.0 + 100 * i) for i in range(4)]
    assert propose([(rising[1], 1980.0)], rising, 1800.0, ranges) is None


def test_hard_adjusts_its_node_budget_on_a_log_scale() -> None:
    from pipeline.calibration.confirm import propose

    def hard(number: int, budget: int, elo: float) -> LevelTrial:
        return _rec(number, elo, elo, knobs={"max_depth": 6, "node_budget": budget})

    # +100 Elo per e-fold of budget at depth 6
    trials = [hard(i, b, 2500 + 100 * math.log(b / 1000)) for i, b in enumerate((1000, 3000, 9000, 27000))]
    ranges = {"node_budget": (300.0, 30000.0), "max_depth": (4.0, 10.0)}
    step = propose([(trials[2], 2800.0)], trials, 2700.0, ranges)
    assert step is not None and isinstance(step["node_budget"], int)
    assert step["node_budget"] == pytest.approx(9000 / math.e, rel=0.02)


def test_the_next_trial_skips_clones_and_looks_past_the_miss() -> None:
    from pipeline.calibration.confirm import next_trial

    def rec(number: int, elo: float, nodes: float) -> LevelTrial:
        return _rec(number, elo, 2700.0, nodes, knobs={"node_budget": 100 + number})

    ranked = [rec(11, 2664, 457), rec(0, 2663, 461), rec(5, 2663, 461), rec(19, 2740, 1041),
              rec(3, 2600, 300)]
    # trial 11 confirmed below the target: trial 0 and 5 are other depth-4 searches that rated
    # lower still, so the next one worth confirming is the stronger trial 19
    assert next_trial(ranked, [(ranked[0], 2626.0)], 2700.0).number == 19  # type: ignore[union-attr]
    assert next_trial(ranked, [(ranked[0], 2750.0)], 2700.0).number == 0  # type: ignore[union-attr]
    tried = [(r, 2626.0) for r in ranked]
    assert next_trial(ranked, tried, 2700.0) is None
    assert next_trial(ranked, [], 2700.0) is ranked[0]  # the first candidate is the pick


def test_the_same_knobs_are_not_confirmed_twice() -> None:
    """A Newton proposal (depth 3, noise 0) with a trial's exact knobs is the same player as that
    trial, so once the proposal is confirmed the trial is skipped."""
    from pipeline.calibration.confirm import next_trial
    from pipeline.calibration.results import Proposal

    def knobs(noise: float) -> dict[str, Knob]:
        return {"max_depth": 3, "node_budget": 20000, "noise_sigma": noise}

    def rec(number: int, elo: float, noise: float) -> LevelTrial:
        return _rec(number, elo, 2050.0, 400.0 + noise, knobs=knobs(noise))

    ranked = [rec(11, 2001.0, 16.0), rec(1, 2040.0, 0.0), rec(5, 2090.0, 30.0)]
    proposal = Proposal(9001, "stage", knobs(0.0), 2050.0)  # trial 1's knobs, no trial games of its own
    tried = [(ranked[0], 1995.0), (proposal, 2031.0)]
    assert next_trial(ranked, tried, 2050.0).number == 5  # type: ignore[union-attr]


def test_a_proposal_with_confirmed_knobs_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import pipeline.calibration.confirm as confirm

    from .samples import confirmation

    knobs: dict[str, Knob] = {"max_depth": 3, "node_budget": 20000, "noise_sigma": 0.0}
    ranked = [_rec(1, 2040.0, 2050.0, 400.0, knobs=knobs, level="medium"),
              _rec(5, 2090.0, 2050.0, 430.0, knobs={**knobs, "noise_sigma": 30.0}, level="medium")]
    confirmed: list[dict[str, Any]] = []

    def fake_confirm(*args: Any, **kwargs: Any) -> tuple[Any, None]:
        confirmed.append(dict(args[4].knobs))
        return confirmation(2000.0, hit=False), None

    monkeypatch.setattr(confirm, "confirm_candidate", fake_confirm)
    monkeypatch.setattr(confirm, "propose", lambda *a, **k: dict(knobs))  # proposes trial 1 again
    section = dataclasses.replace(_section_for_confirm(), confirm_candidates=3)
    confirm.confirm_level(None, None, section, "medium", ranked, lambda r: "spec")  # type: ignore[arg-type]
    assert confirmed == [knobs, {**knobs, "noise_sigma": 30.0}]  # never trial 1's knobs twice


def _section_for_confirm() -> Any:
    from pipeline.config.job_sections import calibrate_section
    from pipeline.job.main_job import JobOptions, load_job_config

    from .conftest import REPO

    section = calibrate_section(load_job_config(str(REPO / "configs" / "runs" / "tiny.toml"), JobOptions()))
    assert section is not None
    return section


def test_a_level_description_says_what_the_level_is() -> None:
    """Target, Elo and CI, the games that measured it (and whether they chose it), compute: no
    trial numbers or proposals, which tell how the level was found, not what it is."""
    from pipeline.calibration.levels import describe_level

    from . import samples

    chained = samples.chained_calibration().levels["easy"]  # a proposal, validated, chained
    assert describe_level(chained.candidate, chained.measured) == (
        "target +500; Elo +498 [+468, +528] relative to medium (held at +900; about +/-42 relative to the "
        "pin) from 80 games head to head against medium, none of them used to choose the level; 120 nodes "
        "per move")
    confirmed = samples.calibration().levels["medium"]
    assert describe_level(confirmed.candidate, confirmed.measured) == (
        "target +900; Elo +900 [+870, +930] from 80 games against d1 and d2 (pin d1), the confirmation "
        "that chose the level; 120 nodes per move")
    joint = dataclasses.replace(confirmed.measured, joint_stages=("calibrate/joint/easy-medium",))
    assert "against d1 and d2 and the adjacent levels (pin d1)" in describe_level(confirmed.candidate, joint)
    unconfirmed = samples.calibration(confirmed=False).levels["hard"]
    assert describe_level(unconfirmed.candidate, unconfirmed.measured) == (
        "target +1300; Elo +1300 [+1200, +1400] from 40 games against d1 and d2 in the level's search, not "
        "measured again on separate games; 100 nodes per move")
