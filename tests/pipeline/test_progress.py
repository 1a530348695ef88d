"""What the main job tells its user: the whole job's ETA, stage lines, next steps, quiet libraries."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from engine.features import default_weights
from engine.variants import get_variant
from pipeline.calibration.blunder_checks import DECISIONS_PER_TASK
from pipeline.calibration.method import BLUNDER_SAMPLE, curve_pairings, curve_players, with_repeats
from pipeline.calibration.paths import hard_player
from pipeline.calibration.product import product_levels
from pipeline.config.job_sections import CalibrateSection, calibrate_section, job, tune_section
from pipeline.config.run_config import load_config
from pipeline.config.tracking_sections import optuna_section
from pipeline.games.openings import load_deck
from pipeline.games.pairings import Pairing, Progress
from pipeline.games.players import resolve_player
from pipeline.games.schedule import TaskTimeline, TaskTiming
from pipeline.games.sizing import BUDGET_USE, pair_key
from pipeline.games.storage_fs import store_path
from pipeline.job.eta import Eta, JobClock, PlannedGames, driver_work, planned, side_by_side
from pipeline.job.job_plan import (
    CurveGames,
    calibrate_plan,
    checks_plan,
    exact_plan,
    stand_in_levels,
    tune_plan,
    validation_from_curves,
    validation_stand_ins,
)
from pipeline.job.main_job import JobSummary, next_steps
from pipeline.job.progress import ProgressPrinter, log_libraries_to


def _task(start: float, seconds: float, estimated: float, pairing: str) -> TaskTiming:
    return TaskTiming("n", start, start + seconds, 1, 2, estimated, pairing)


def test_eta_is_a_guess_until_a_task_has_finished() -> None:
    clock = JobClock(TaskTimeline(), slots=2)
    clock.replan([PlannedGames("calibrate/curves", "ab", 100, 1.0)])
    eta = clock.estimate(now=1000.0)
    assert eta.guess and eta.seconds == pytest.approx(50.0)  # 100 nominal CPU s on 2 slots
    assert eta.text() == "job ETA ~0m50s (guess)"


def test_measured_pairs_correct_their_remaining_games_and_others_pool_the_stage_ratio() -> None:
    timeline = TaskTimeline()
    clock = JobClock(timeline, slots=2)
    clock.replan([PlannedGames("calibrate/curves", "ab", 10, 4.0),  # 40 nominal s
                  PlannedGames("calibrate/curves", "cd", 10, 1.0)])  # 10 nominal s, not started
    for _ in range(2):  # two tasks of "ab", each 8 nominal s that took 16 s: ratio 2, both slots busy
        timeline.add("calibrate/curves", _task(0.0, 16.0, 8.0, "ab"))
    eta = clock.estimate(now=16.0)
    # "ab": 40 - 16 = 24 nominal left at ratio 2; "cd" (1 s a game, "ab"'s tasks 4 s a game: of like
    # cost) at the same ratio 2; on 2 busy slots
    assert not eta.guess and eta.seconds == pytest.approx((24 * 2 + 10 * 2) / 2)
    clock.finish("calibrate")
    assert clock.estimate(now=16.0).seconds == 0.0


def test_an_unmeasured_pairing_is_priced_by_tasks_alike_in_both_players() -> None:
    timeline = TaskTimeline()
    clock = JobClock(timeline, slots=1)
    even = (150_000.0, 150_000.0)  # two deep searches
    clock.replan([PlannedGames("calibrate/curves", "even", 10, 10.0, nodes=even)])  # 100 nominal s
    # a lopsided deep pairing (short games) is not alike: one side's nodes differ 500-fold
    timeline.add("calibrate/curves", replace(_task(0.0, 3.0, 10.0, "lopsided"), nodes=(300.0, 150_000.0)))
    assert clock.estimate(now=3.0).seconds == pytest.approx(100.0 - 10.0)  # the nominal model
    timeline.add("calibrate/curves", replace(_task(0.0, 15.0, 10.0, "alike"), nodes=(50_000.0, 150_000.0)))
    assert clock.estimate(now=15.0).seconds == pytest.approx((100.0 - 20.0) * 15.0 / 10.0)


def test_before_anything_alike_is_measured_the_searches_run_at_the_benchs_speed() -> None:
    clock = JobClock(TaskTimeline(), slots=1, speed=0.5)  # the bench searched twice the nominal speed
    clock.replan([PlannedGames("calibrate/curves", "ab", 10, 10.0, search_seconds=8.0)])  # 2 s of bookkeeping
    assert clock.estimate(now=0.0).seconds == pytest.approx(10 * (8.0 * 0.5 + 2.0))


def test_the_plan_carries_each_pairings_shape() -> None:
    hard = hard_player("english", default_weights(get_variant("english")), 200_000).spec
    medium = product_levels("english").spec("medium")
    p = planned("calibrate/curves", "english", hard, medium, 10, 200)
    assert p.nodes[1] == pytest.approx(BUDGET_USE * 200_000) and p.nodes[0] < 1_000
    assert 0 < p.search_seconds < p.seconds_per_game


def test_batches_read_back_on_a_resume_are_not_to_come() -> None:
    timeline = TaskTimeline()
    clock = JobClock(timeline, slots=1)
    clock.replan([PlannedGames("calibrate/curves", "ab", 10, 2.0),
                  PlannedGames("calibrate/curves", "cd", 10, 1.0)])
    timeline.add_resumed("calibrate/curves", "ab", 12.0)  # 12 of ab's 20 nominal s are on disk
    timeline.add_resumed("calibrate/curves", "zz", 5.0)  # a stand-in's games: against the unmeasured plan
    assert clock.estimate(now=0.0).seconds == pytest.approx(20.0 + 10.0 - 12.0 - 5.0)


def test_games_of_unplanned_players_count_against_the_stand_ins() -> None:
    timeline = TaskTimeline()
    clock = JobClock(timeline, slots=1)
    clock.replan([PlannedGames("calibrate/validation", "standin", 10, 2.0)])  # 20 nominal s
    timeline.add("calibrate/validation", _task(0.0, 5.0, 5.0, "chosen"))  # the real players: 5 done
    assert clock.estimate(now=5.0).seconds == pytest.approx(15.0)


def test_a_stage_is_costed_by_its_own_occupancy_not_the_previous_stages() -> None:
    timeline = TaskTimeline()
    clock = JobClock(timeline, slots=2)
    clock.replan([PlannedGames("tune/trials", "t", 10, 1.0, width=1),
                  PlannedGames("calibrate/curves", "ab", 10, 4.0)])
    timeline.add("tune/trials", _task(0.0, 5.0, 5.0, "t"))  # one trial in flight: half the slots busy
    eta = clock.estimate(now=5.0)
    # tune: 5 nominal s left at ratio 1 on a measured half of 2 slots (5 s); calibrate: 40 s on both (20 s)
    assert eta.seconds == pytest.approx(25.0)


def test_a_stage_that_fans_out_keeps_its_slots_busy_whatever_finished_first() -> None:
    timeline = TaskTimeline()
    clock = JobClock(timeline, slots=2)
    clock.replan([PlannedGames("calibrate/curves", "dear", 10, 4.0)])  # 40 nominal s, no width limit
    timeline.add("calibrate/easy/trials", _task(0.0, 0.1, 0.1, "e"))  # a tiny task beside long ones
    assert clock.estimate(now=5.0).seconds == pytest.approx(20.0)  # both slots, not 0.1 s in 5 s


def test_a_stage_not_started_fills_only_the_slots_its_width_allows() -> None:
    clock = JobClock(TaskTimeline(), slots=8)
    clock.replan([PlannedGames("tune/trials", "t", 10, 4.0, width=2)])  # 40 s, two tasks at once
    assert clock.estimate(now=0.0).seconds == pytest.approx(20.0)
    clock.replan([PlannedGames("tune/confirm", "s", 10, 4.0, width=2)])  # side by side: 4 at once
    assert clock.estimate(now=0.0).seconds == pytest.approx(20.0)


def test_the_tuning_is_as_wide_as_its_packed_tasks_not_its_batch_files() -> None:
    """english-cluster: a 1,500-pair step is 150 batch files but four tasks, so W = 16 trials keep
    64 tasks in flight (not 2,400); an SPRT step of 800 pairs is two tasks."""
    config = load_config(str(Path(__file__).parents[2] / "configs" / "runs" / "english-cluster.toml"))
    j, tune, opt = job(config), tune_section(config), optuna_section(config)
    assert tune is not None
    deck = load_deck(j.variant, part=j.deck_part, name=j.deck)
    plans = tune_plan(j.variant, default_weights(get_variant(j.variant)), tune, 5, j.ply_cap,
                      opt.parallel_trials, j.batch_size, deck, j.task_seconds)
    assert [p.width for p in plans] == [16 * 4, 2]
    assert plans[0].games == 2 * tune.pairs * 5


def test_the_depth_sprt_is_planned_to_its_cap_on_hards_path() -> None:
    """russian.toml checks the tuned weights at depth: the plan holds that SPRT's games too, at
    Hard's cost per game (far above a tuning game's), so the ETA does not miss them."""
    config = load_config(str(Path(__file__).parents[2] / "configs" / "runs" / "russian.toml"))
    j, tune, opt = job(config), tune_section(config), optuna_section(config)
    assert tune is not None and tune.depth_nodes == 50_000
    deck = load_deck(j.variant, part=j.deck_part, name=j.deck)
    plans = tune_plan(j.variant, default_weights(get_variant(j.variant)), tune, 0, j.ply_cap,
                      opt.parallel_trials, j.batch_size, deck, j.task_seconds)
    confirm, depth = plans
    assert depth.group == "tune/depth" and depth.games == 2 * tune.depth_max_pairs
    assert depth.seconds_per_game > 5 * confirm.seconds_per_game


def test_a_stage_group_starting_its_games_replaces_its_stand_ins() -> None:
    config = load_config(str(Path(__file__).parents[2] / "configs" / "runs" / "quickstart.toml"))
    section = calibrate_section(config)
    weights = default_weights(get_variant("english"))
    plan = calibrate_plan("english", weights, section, 200)
    clock = JobClock(TaskTimeline(), slots=1)
    clock.replan(plan)
    product = product_levels("english")
    chosen = [Pairing(product.spec("medium"), product.spec("easy"), 4)]
    exact = exact_plan("calibrate/validation", "english", chosen, 200)
    assert exact is not None and [p.games for p in exact] == [8]
    clock.replan(exact, ["calibrate/validation"])
    assert [p.pairing for p in clock.plan["calibrate/validation"]] == [exact[0].pairing]
    assert exact_plan("tune/confirm", "english", chosen, 200) is None  # played step by step


def test_the_validation_stand_ins_follow_the_methods_pairings() -> None:
    config = load_config(str(Path(__file__).parents[2] / "configs" / "runs" / "quickstart.toml"))
    section = calibrate_section(config)
    weights = default_weights(get_variant("english"))
    product = product_levels("english")
    plain = validation_stand_ins("english", weights, replace(section, dial=0))
    links = {(p.a_spec, p.b_spec) for p in plain}
    assert len(links) == len(plain)  # a shared link is played once
    # Easy's and Hard's product links, the six links of the chain from Easy to Hard, and Medium
    # against the product's Medium, Easy and Hard (Medium stands in the chain: no further points)
    assert len(plain) == 2 + 6 + 3
    assert sum(p.b_spec == product.spec("medium") for p in plain) == 1  # no dial checks
    dialled = validation_stand_ins("english", weights, replace(section, dial=5))
    assert sum(p.b_spec == product.spec("medium") for p in dialled) == 3  # and two spot checks
    assert {p.pairs for p in plain} == {section.validation_openings}


def test_the_drivers_own_work_is_wall_time_on_no_slot() -> None:
    clock = JobClock(TaskTimeline(), slots=4)
    clock.replan([PlannedGames("calibrate/validation", "ab", 10, 4.0), driver_work("calibrate/checks", 30.0)])
    assert clock.estimate(now=0.0).seconds == pytest.approx(40.0 / 4 + 30.0)  # not 30 / 4
    clock.finish("calibrate")
    assert clock.estimate(now=0.0).seconds == 0.0


def test_the_checks_after_the_validation_are_planned_from_its_games() -> None:
    config = load_config(str(Path(__file__).parents[2] / "configs" / "runs" / "quickstart.toml"))
    section = calibrate_section(config)
    weights = default_weights(get_variant("english"))
    checks = [p for p in calibrate_plan("english", weights, section, 200) if p.driver]
    assert [p.group for p in checks] == ["calibrate/checks"] * 2
    levels = stand_in_levels("english", weights, section)

    def cost(openings: int) -> tuple[float, int, float]:
        stand_ins = validation_stand_ins("english", weights, replace(section, validation_openings=openings))
        rates, searches = checks_plan("english", levels, with_repeats("english", stand_ins), 200)
        assert rates.width == rates.games and searches.width == 0
        return rates.nominal, rates.width, searches.nominal

    base, tasks, searches = cost(section.validation_openings)
    assert [p.nominal for p in checks] == [base, searches]
    more, _, same = cost(2 * section.validation_openings)
    assert base < more <= 2 * base and same == searches  # blunder checks grow with the games, searches not
    capped, most, _ = cost(100 * section.validation_openings)
    assert cost(200 * section.validation_openings)[:2] == (capped, most)  # at most BLUNDER_SAMPLE a rate
    assert most == 4 * (BLUNDER_SAMPLE // DECISIONS_PER_TASK) >= tasks  # the rates in tasks side by side


def test_work_side_by_side_takes_its_cpu_over_as_many_slots_as_it_has_tasks() -> None:
    work = [side_by_side("calibrate/checks", 80.0, 4), driver_work("calibrate/checks", 5.0)]
    for slots, wall in ((1, 85.0), (2, 45.0), (4, 25.0), (16, 25.0)):
        clock = JobClock(TaskTimeline(), slots=slots)
        clock.replan(work)
        assert clock.estimate(now=0.0).seconds == pytest.approx(wall)


def test_a_planned_stage_groups_eta_is_costed_by_its_pairings(capsys: pytest.CaptureFixture[str]) -> None:
    clock = JobClock(TaskTimeline(), slots=1)
    clock.replan([PlannedGames("calibrate/validation", "cheap", 90, 0.01),
                  PlannedGames("calibrate/validation", "dear", 10, 30.0)])  # 300.9 nominal s
    printer = ProgressPrinter(True, clock=clock)
    printer(Progress("calibrate/validation", 90, 100, 9.0, 1.1))  # games/s says 1 s left
    assert "stage ETA 301s; job ETA ~5m01s (guess)" in capsys.readouterr().err


def test_eta_text() -> None:
    assert Eta(3725.0, guess=False).text() == "job ETA 1h02m"
    assert Eta(59.4, guess=False).text() == "job ETA 0m59s"


def test_stage_lines_carry_the_job_eta(capsys: pytest.CaptureFixture[str]) -> None:
    clock = JobClock(TaskTimeline(), slots=1)
    clock.replan([PlannedGames("tune/trials", "x", 6, 10.0)])
    ProgressPrinter(True, clock=clock).stage(1, 3, "tune", "3 trials")
    assert capsys.readouterr().err == "stage 1/3: tune (3 trials); job ETA ~1m00s (guess)\n"


def test_next_steps_name_the_store_the_export_and_the_profile(tmp_path: Path) -> None:
    folder = store_path(tmp_path / "runs" / "q-1")
    summary = JobSummary("q-1", folder, profile=folder / "profiles" / "english.json",
                         tracking_uri="sqlite:///mlflow.db", variant="english")
    text = "\n".join(next_steps(summary))
    assert "mlflow ui --backend-store-uri sqlite:///mlflow.db" in text
    assert f"python -m pipeline export q-1 --output {tmp_path / 'runs'}" in text
    assert f"engine play --variant english --level medium --profile {folder}/profiles/english.json" in text
    served = JobSummary("q-1", folder, tracking_uri="http://127.0.0.1:5000", variant="english")
    assert "open http://127.0.0.1:5000" in "\n".join(next_steps(served))
    assert next_steps(JobSummary("q-1", folder)) == []


def test_library_chatter_goes_to_the_log_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger("mlflow.store.db.utils")
    saved = {n: (logging.getLogger(n).handlers[:], logging.getLogger(n).propagate) for n in ("mlflow", "ray")}
    last_resort = logging.lastResort
    try:
        path = log_libraries_to(tmp_path / "job.log")
        logger.warning("Creating initial MLflow database tables...")
        assert "Creating initial" not in capsys.readouterr().err
        assert "Creating initial MLflow database tables" in path.read_text()
        logging.getLogger("ray").handlers.clear()  # as ray.init leaves it
        logging.getLogger("ray._private.x").warning("Token authentication is enabled")
        assert "Token authentication" in path.read_text()
        assert "Token authentication" not in capsys.readouterr().err
    finally:
        logging.lastResort = last_resort
        for name, (handlers, propagate) in saved.items():
            target = logging.getLogger(name)
            for h in target.handlers[:]:
                if h not in handlers:
                    target.removeHandler(h)
                    h.close()
            target.propagate = propagate


def test_a_refined_plan_replaces_its_groups_at_most_every_interval_until_stopped() -> None:
    clock = JobClock(TaskTimeline(), slots=1)
    clock.replan([PlannedGames("calibrate/validation", "stand-in", 10, 3.0),
                  driver_work("calibrate/checks", 5.0)])
    answers: list[list[PlannedGames] | None] = [None, [PlannedGames("calibrate/validation", "real", 10, 1.0)]]
    calls: list[float] = []

    def plan() -> list[PlannedGames] | None:
        calls.append(0.0)
        return answers[len(calls) - 1]

    clock.refine(["calibrate/validation", "calibrate/checks"], plan, every=20.0)
    assert clock.estimate(now=100.0).seconds == pytest.approx(35.0)  # None: the stand-ins stay
    assert clock.estimate(now=110.0).seconds == pytest.approx(35.0) and len(calls) == 1  # not yet again
    assert clock.estimate(now=121.0).seconds == pytest.approx(10.0)  # the checks' plan went with it
    clock.stop_refining()
    clock.replan([PlannedGames("calibrate/validation", "exact", 10, 2.0)], ["calibrate/validation"])
    assert clock.estimate(now=500.0).seconds == pytest.approx(20.0) and len(calls) == 2


def _curve_games(section: CalibrateSection, elos: dict[str, float], weights: dict[str, float]) -> pa.Table:
    """Curve games of the quickstart's pairings with results drawn from ``elos`` (player id: Elo)."""
    product = product_levels("english")
    curves = curve_players("english", weights, section)
    rng = np.random.default_rng(7)
    rows: dict[str, list[object]] = {name: [] for name in ("white_player", "black_player", "result_white",
                                                           "opening_id")}
    for p in with_repeats("english", curve_pairings(product, curves, section.openings)):
        a, b = (resolve_player(s, "english").player_id for s in (p.a_spec, p.b_spec))
        for k in range(p.pairs):
            for white, black in ((a, b), (b, a)):
                expected = 1.0 / (1.0 + 10.0 ** ((elos[black] - elos[white]) / 400.0))
                rows["white_player"].append(white)
                rows["black_player"].append(black)
                rows["result_white"].append(float(rng.random() < expected))
                rows["opening_id"].append(k % section.openings)
    return pa.table(rows)


def test_the_validation_is_planned_from_the_curve_fit_with_the_methods_chain() -> None:
    config = load_config(str(Path(__file__).parents[2] / "configs" / "runs" / "quickstart.toml"))
    section = replace(calibrate_section(config), openings=40)
    weights = default_weights(get_variant("english"))
    curves = curve_players("english", weights, section)
    elos = {"product-easy": 1100.0, "product-medium": 1500.0, "product-hard": 2000.0}
    elos |= {p.name: e for p, e in zip(curves.hard, (1750.0, 2250.0, 2300.0), strict=True)}
    elos |= {p.name: 1300.0 + 100.0 * i for i, p in enumerate(curves.medium[:-1])}  # 4 plies up to 1700
    five = curves.medium[-1]
    elos[five.name] = 2000.0  # 5 plies: between the two weaker budgets
    games = _curve_games(section, elos, weights)
    partial = games.filter(pc.not_equal(games.column("black_player"), five.name))
    partial = partial.filter(pc.not_equal(partial.column("white_player"), five.name))
    assert validation_from_curves("english", weights, section, partial, 200) is None  # 5 plies unrated
    plan = validation_from_curves("english", weights, section, games, 200)
    assert plan is not None
    keys = {p.pairing for p in plan if p.group == "calibrate/validation"}
    # Easy (the product's, about 1100) to Hard (about 2400 in this fit) in steps of about 220, as
    # the method links them by Elo: the noisiest 4-ply point (1300) first, then 2,000 nodes,
    # 5 plies (2000) and 20,000 nodes; the stand-ins' evenly spaced points would start at the
    # second noisiest and link 2,000 nodes to 20,000
    product = product_levels("english")
    assert pair_key(curves.medium[0].spec, product.spec("easy")) in keys
    assert pair_key(five.spec, curves.hard[0].spec) in keys
    assert pair_key(curves.hard[1].spec, five.spec) in keys
    assert pair_key(curves.hard[1].spec, curves.hard[0].spec) not in keys
    stand_ins = {pair_key(p.a_spec, p.b_spec) for p in validation_stand_ins("english", weights, section)}
    assert pair_key(curves.medium[0].spec, product.spec("easy")) not in stand_ins
    assert [p.group for p in plan if p.driver] == ["calibrate/checks"] * 2
    collector = CurveGames("english", weights, section, 200)
    assert collector.plan() is None
    collector.add("calibrate/easy-axis", games)  # another stage's games are not the curves'
    assert collector.plan() is None
    collector.add("calibrate/curves", games)
    assert collector.plan() == plan


def test_the_choice_groups_leave_the_plan_when_the_validation_starts(tmp_path: Path) -> None:
    """The curves, Easy's trials and Easy's axis have all ended when the validation starts; what
    their plans priced above the games they played must not stay in the estimate through the
    validation."""
    from pipeline.games.executor import InProcessExecutor
    from pipeline.games.stage import StageContext
    from pipeline.job.main_job import _eta_hooks

    config = load_config(str(Path(__file__).parents[2] / "configs" / "runs" / "quickstart.toml"))
    clock = JobClock(TaskTimeline(), slots=2)
    left = {g: PlannedGames(g, "stand-in", 100, 1.0) for g in
            ("calibrate/curves", "calibrate/easy/trials", "calibrate/easy-axis", "calibrate/checks")}
    clock.replan(left.values())
    ctx = StageContext(InProcessExecutor(), store_path(tmp_path), "run", "english", 1, 2, 200,
                       tuple(load_deck("english")))
    on_play, _ = _eta_hooks(config, ctx, clock, ProgressPrinter(False, clock=clock))
    on_play("calibrate/validation", [Pairing("easy", "medium", 2)])
    assert {g for g, plans in clock.plan.items() if plans} == {"calibrate/validation", "calibrate/checks"}
