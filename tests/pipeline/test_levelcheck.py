"""``python -m pipeline levelcheck``: fresh games, gaps vs claims, blunders, resume, clean errors."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import fields
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from engine.profile import (
    SCHEMA_VERSION,
    LevelProfile,
    LevelProvenance,
    Profile,
    Provenance,
    dump_profile,
    load_profile,
)
from engine.variants import get_variant
from pipeline.calibration.levelcheck import claimed_gap, distinct_games, elo_interval, markdown
from pipeline.calibration.levelcheck_results import (
    Claim,
    DavidsonGap,
    LevelCheckError,
    LevelCheckResult,
    LevelCheckSettings,
)
from pipeline.cli.common import EXIT_OK, EXIT_USAGE
from pipeline.cli.main import build_parser, main

from . import samples

# small, fast levels: easy half random at depth 1, medium depth 1, hard depth 2
KNOBS = {
    "easy": {"max_depth": 1, "random_move_prob": 0.5},
    "medium": {"max_depth": 1},
    "hard": {"max_depth": 2},
}
CLAIMS = {"easy": (100.0, (50.0, 150.0)), "medium": (300.0, (240.0, 360.0)), "hard": None}


def write_profile(path: Path, variant: str = "english", claims: dict | None = CLAIMS) -> Path:  # type: ignore[type-arg]
    """A 3-level profile with tiny searches; ``claims`` gives provenance Elo (None: no Elo)."""
    rules = get_variant(variant)
    levels = {name: LevelProfile.from_knobs(rules, name, knobs={"node_budget": 2000, "tt_log2": 10, **knobs})
              for name, knobs in KNOBS.items()}
    provenance = Provenance(levels={
        name: LevelProvenance() if (claims or {}).get(name) is None
        else LevelProvenance(claims[name][0], claims[name][1])  # type: ignore[index]
        for name in KNOBS
    })
    path.write_text(dump_profile(Profile(SCHEMA_VERSION, rules, levels, provenance)), encoding="utf-8")
    load_profile(path)  # the engine's strict loader accepts it
    return path


def _run(profile: Path, out: Path, *extra: str) -> int:
    return main(["levelcheck", str(profile), "--output", str(out), "--pairs", "2", "--batch-size", "2",
                 "--ply-cap", "40", "--in-process", "--seed", "5", "--deck-part", "odd",
                 "--blunder-positions", "200", *extra])


def _read(out: Path) -> LevelCheckResult:
    """levelcheck.json, read strictly; the file is exactly what its record writes."""
    data = json.loads((out / "levelcheck.json").read_text())
    result = LevelCheckResult.from_json(data)
    assert result.to_json() == data
    return result


def _batches(out: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(out)): (p.stat().st_mtime_ns, p.stat().st_ino)
            for p in out.rglob("batch-*.parquet")}


def test_levelcheck_reports_gaps_blunders_and_resumes(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    profile = write_profile(tmp_path / "p.json")
    out = tmp_path / "check"
    assert _run(profile, out) == EXIT_OK
    first = capsys.readouterr()
    assert "levelcheck.json" in first.out and "| medium - easy |" in first.err
    assert "[levelcheck adjacent] 8/8 games" in first.err
    result = _read(out)
    assert (out / "levelcheck.md").read_text().startswith("# Level check: english")
    assert (out / "levelcheck.png").read_bytes()[:4] == b"\x89PNG"

    assert result.variant == "english" and result.settings.seed == 5 and result.settings.deck_part == "odd"
    assert result.settings.pairs == 2 and (result.cpu_count or 0) >= 1 and result.wall_seconds > 0
    assert result.games_total == 8 and result.games_played_now == 8
    assert result.batches_played_now == 4
    assert [Path(f).name for f in result.files] == ["levelcheck.json", "levelcheck.md", "levelcheck.png"]
    easy_medium, medium_hard = result.adjacent
    measured = easy_medium.measured
    assert easy_medium.match == "medium - easy" and easy_medium.a.endswith("p.json:medium")
    assert measured.games == 4 and measured.pairs == 2
    assert measured.distinct_games == medium_hard.measured.distinct_games == 4  # two openings, no repeat
    assert "Repeated games" not in (out / "levelcheck.md").read_text()
    assert measured.wins + measured.draws + measured.losses == 4
    assert sum(measured.pentanomial) == 2
    assert easy_medium.claimed.gap == 200.0 and easy_medium.claimed.ci is not None
    low, high = easy_medium.claimed.ci
    assert low < 200.0 < high and high - 200.0 == pytest.approx((50.0**2 + 60.0**2) ** 0.5)
    davidson = measured.davidson.rating
    assert easy_medium.reproduced == davidson.holds(200.0)
    assert medium_hard.claimed.gap is None and medium_hard.reproduced is None  # hard has no Elo
    assert medium_hard.agrees is None and medium_hard.difference_test is None
    test = easy_medium.difference_test
    assert test is not None and test.difference == pytest.approx(davidson.elo - 200.0)
    assert easy_medium.agrees == test.agrees == (abs(test.z or 0.0) <= 1.96)
    assert "| measured - claimed [95 %] | agrees |" in (out / "levelcheck.md").read_text()

    levels = result.levels
    assert set(levels) == {"easy", "medium", "hard"}
    assert levels["medium"].games == 8 and levels["easy"].games == 4
    for lv in levels.values():
        b = lv.blunders
        assert b.moves > 0 and b.depth == 4 and b.threshold == 100.0 and b.player == lv.spec
        assert b.rate is not None and 0.0 <= b.ci_low <= b.rate <= b.ci_high <= 1.0
    assert levels["easy"].nodes_per_move < levels["hard"].nodes_per_move
    games = pq.read_table(out / "levelcheck" / "adjacent" / "games" / "variant=english").to_pylist()
    easy = levels["easy"].spec
    own = [g for g in games if easy in (g["white_player"], g["black_player"])]
    nodes = sum(g["white_nodes"] if g["white_player"] == easy else g["black_nodes"] for g in own)
    moves = sum((g["plies"] + 1) // 2 if (g["white_player"] == easy) == g["opening_fen"].startswith("W")
                else g["plies"] // 2 for g in own)
    assert levels["easy"].nodes_per_move == pytest.approx(nodes / moves)  # only easy's own games
    assert levels["easy"].claimed.elo == 100.0 and levels["hard"].claimed.elo is None

    before = _batches(out)
    assert len(before) == 4
    assert _run(profile, out) == EXIT_OK
    again = _read(out)
    assert again.games_played_now == 0 and again.batches_played_now == 0
    assert _batches(out) == before  # nothing replayed or rewritten
    assert again.adjacent[0].measured.pentanomial == measured.pentanomial

    assert _run(profile, out, "--seed", "6") == EXIT_USAGE  # other games: another folder
    assert "holds the games of another level check (settings that differ: seed;" in capsys.readouterr().err


def test_baseline_of_the_same_variant_plays_every_level_pair(tmp_path: Path) -> None:
    profile = write_profile(tmp_path / "p.json")
    base = write_profile(tmp_path / "base.json", claims=None)
    out = tmp_path / "check"
    args = ["levelcheck", str(profile), "--output", str(out), "--pairs", "1", "--batch-size", "2",
            "--ply-cap", "20", "--in-process", "--blunder-positions", "50"]
    assert main(args) == EXIT_OK  # first without a baseline: the baseline is added to the same folder
    assert main([*args, "--baseline", str(base), "--baseline-pairs", "1"]) == EXIT_OK
    result = _read(out)
    assert result.games_played_now == 18  # the adjacent games were resumed
    assert [m.match for m in result.baseline_matches][:3] == [
        "easy - baseline easy", "easy - baseline medium", "easy - baseline hard"]
    assert len(result.baseline_matches) == 9 and result.games_total == 4 + 18
    assert all(m.claimed.gap is None for m in result.baseline_matches)
    assert result.baseline_levels is not None and set(result.baseline_levels) == {"easy", "medium", "hard"}
    assert result.baseline_levels["easy"].games == 6


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = write_profile(tmp_path / "p.json")
    out = tmp_path / "check"
    assert _run(tmp_path / "missing.json", out) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "missing.json" in err

    suicide = write_profile(tmp_path / "s.json", variant="suicide")
    assert _run(profile, out, "--baseline", str(suicide)) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a suicide profile, but the checked profile is english" in err
    assert _run(profile, out, "--claimed-from", str(suicide)) == EXIT_USAGE
    assert _run(profile, out, "--batch-size", "3") == EXIT_USAGE
    assert "--batch-size must be even" in capsys.readouterr().err
    assert _run(profile, out, "--pairs", "0") == EXIT_USAGE
    assert not list(out.rglob("*.parquet"))  # nothing was played


def test_claimed_gap_needs_both_levels() -> None:
    missing = claimed_gap(Claim(None, None), Claim(10.0, (0.0, 20.0)))
    assert missing.gap is None and missing.ci is None and missing.ci_method is None
    assert missing.b == Claim(10.0, (0.0, 20.0))
    gap = claimed_gap(Claim(110.0, (80.0, 140.0)), Claim(10.0, (-30.0, 50.0)))
    assert gap.gap == 100.0 and gap.ci == pytest.approx((50.0, 150.0))


def test_a_head_to_head_claim_uses_the_rated_levels_own_ci() -> None:
    strong, weak = Claim(2221.0, (2187.0, 2254.0)), Claim(1773.0, (1742.0, 1804.0))
    a = claimed_gap(strong, weak, link="a")  # hard measured against medium held at +1773
    assert a.gap == 448.0 and a.ci == pytest.approx((414.0, 481.0))
    medium, easy = Claim(1773.0, (1742.0, 1804.0)), Claim(1305.0, (1271.0, 1335.0))
    b = claimed_gap(medium, easy, link="b")  # easy measured against medium
    assert b.gap == 468.0 and b.ci == pytest.approx((438.0, 502.0))
    approx = claimed_gap(strong, weak)  # ladder-rated: both CIs in quadrature, wider
    assert (approx.ci_method or "").startswith("approximate")
    width = [g.ci[1] - g.ci[0] for g in (approx, a) if g.ci is not None]
    assert width[0] > width[1]


def test_the_difference_test_uses_both_uncertainties() -> None:
    from pipeline.calibration.levelcheck import Z95, difference_test

    # brazilian's first validated check: +387 [+358, +423] measured, +448 [+414, +481] claimed
    t = difference_test(387.0, (358.0, 423.0), 448.0, (414.0, 481.0))
    se = ((423 - 358) / 2 / Z95) ** 2 + ((481 - 414) / 2 / Z95) ** 2
    assert t.difference == -61.0 and t.z == pytest.approx(-61.0 / se ** 0.5)
    assert not t.agrees and t.difference_ci[1] < 0
    # inside the measured CI, so reproduced, and of course agreeing
    assert difference_test(400.0, (360.0, 440.0), 430.0, (400.0, 460.0)).agrees
    # just outside the measured CI (not reproduced), yet consistent once the claim's error counts
    assert difference_test(400.0, (360.0, 440.0), 445.0, (410.0, 480.0)).agrees


def test_the_difference_test_rejects_unbiased_claims_about_one_time_in_twenty() -> None:
    """Simulated: the truth is 0; claim and measurement are independent draws with their own
    standard errors. ``agrees`` must fail about 5 % of the time; 'claim inside the measured CI'
    fails far more often when the claim is as uncertain as the measurement."""
    import numpy as np

    from pipeline.calibration.levelcheck import Z95, difference_test

    rng = np.random.default_rng(20261129)
    n, se_m, se_c = 4000, 20.0, 17.0
    measured, claimed = rng.normal(0, se_m, n), rng.normal(0, se_c, n)
    agree = sum(difference_test(m, (m - Z95 * se_m, m + Z95 * se_m),
                                c, (c - Z95 * se_c, c + Z95 * se_c)).agrees
                for m, c in zip(measured, claimed, strict=True))
    inside = sum(abs(m - c) <= Z95 * se_m for m, c in zip(measured, claimed, strict=True))
    assert 0.035 < 1 - agree / n < 0.065  # binomial sd at 5 %, n = 4000: 0.0034
    assert 1 - inside / n > 0.12  # about 14 %


def test_a_sweep_keeps_a_finite_bound() -> None:
    """Every pair won: the pentanomial interval collapses; the Wilson bound keeps a finite low end."""
    from pipeline.ratings import pentanomial_stats

    low, high, method = elo_interval(pentanomial_stats([0, 0, 0, 0, 20]))
    assert 200 < low < 400 and high == float("inf") and method.startswith("wilson")
    low, high, _ = elo_interval(pentanomial_stats([20, 0, 0, 0, 0]))
    assert low == -float("inf") and -400 < high < -200
    low, high, method = elo_interval(pentanomial_stats([1, 2, 3, 2, 1]))
    assert method == "pentanomial" and low < 0 < high


def test_cli_defaults_are_the_settings_defaults() -> None:
    args = build_parser().parse_args(["levelcheck", "p.json", "--output", "d"])
    parsed = LevelCheckSettings(**{f.name: getattr(args, f.name) for f in fields(LevelCheckSettings)})
    assert parsed == LevelCheckSettings("p.json", "d")


def test_the_davidson_gap_reads_the_win_loss_ratio_whatever_the_draws() -> None:
    import math

    from pipeline.calibration.levelcheck import davidson_gap, rate_games

    def rows(wins: int, draws: int, losses: int) -> list[dict[str, object]]:
        results = [1.0] * wins + [0.5] * draws + [0.0] * losses
        return [{"pair_id": i // 2, "opening_id": f"o{i // 2}", "result_a": r, "game_id": i}
                for i, r in enumerate(results)]

    few_draws, many_draws = rows(160, 0, 40), rows(160, 200, 40)
    expected = 400 * math.log10(4)  # W/L = 4 in both
    assert davidson_gap(few_draws).rating.elo == pytest.approx(expected, abs=15)
    assert davidson_gap(many_draws).rating.elo == pytest.approx(expected, abs=15)
    # the score-based Elo of the drawish match is far smaller: the two scales differ
    assert (rate_games(many_draws).elo or 0.0) < expected - 80
    assert davidson_gap(many_draws).rating.holds(expected)


def _game(opening: str, colour: str, moves: str, result: float = 1.0) -> dict[str, object]:
    return {"opening_id": opening, "a_color": colour, "moves": moves, "result_a": result, "pair_id": 0}


def test_repeated_games_are_counted_and_flagged() -> None:
    """Two noiseless levels replay each opening's game (as in international): the check says
    how many games differ and warns that its CIs count the repeats."""
    fixed = [_game(o, c, f"{o}-{c}") for o in ("a", "b") for c in ("white", "black")] * 6
    varied = [_game("a", "white", f"m{i}") for i in range(24)]
    assert distinct_games(fixed) == 4 and distinct_games(varied) == 24
    assert distinct_games([{"result_a": 1.0, "pair_id": 0}]) is None  # rows without moves: unknown
    base = samples.levelcheck()
    adjacent = tuple(dataclasses.replace(m, measured=dataclasses.replace(m.measured, games=24,
                                                                         distinct_games=distinct))
                     for m, distinct in zip(base.adjacent, (24, 4), strict=True))
    result = dataclasses.replace(base, adjacent=adjacent,
                                 settings=dataclasses.replace(base.settings, bootstrap_unit="pair"))
    text = markdown(result)  # the pair bootstrap counts the repeats
    assert "**Repeated games in hard - medium:** only 4 of its 24 games differ" in text
    assert "Its CIs count the repeats as independent and are about 2.4x too narrow" in text
    assert "Repeated games in medium - easy" not in text
    text = markdown(dataclasses.replace(result, settings=base.settings))
    assert "The gap's CI resamples whole openings" in text and "pentanomial CI counts the repeats" in text
    assert "+inf" in text  # a match whose score-based Elo is infinite


def test_the_davidson_gap_resamples_openings_so_replays_count_once() -> None:
    """International's Hard - Medium: 100 openings x 2 colours replayed 6 times. The
    opening bootstrap's CI is as wide as the distinct games' alone; the pair bootstrap's is
    about sqrt(6) narrower."""
    from pipeline.calibration.levelcheck import davidson_gap

    rng = np.random.default_rng(11)
    distinct = [(f"o{k}", float(rng.choice([1.0, 0.5, 0.0], p=[0.5, 0.3, 0.2])), float(rng.choice(
        [1.0, 0.5, 0.0], p=[0.5, 0.3, 0.2]))) for k in range(100)]
    rows = [{"pair_id": rep * 100 + k, "opening_id": o, "result_a": r}
            for rep in range(6) for k, (o, w, b) in enumerate(distinct) for r in (w, b)]
    once = rows[:200]

    def half(gap: DavidsonGap) -> float:
        return gap.rating.half_width

    by_opening, by_pair, alone = davidson_gap(rows), davidson_gap(rows, unit="pair"), davidson_gap(once)
    assert by_opening.ci_method == "opening bootstrap (400)"
    assert by_pair.ci_method == "pair bootstrap (400)"
    assert half(by_opening) == pytest.approx(half(alone), rel=0.2)
    assert half(by_pair) < 0.55 * half(by_opening)
    with pytest.raises(LevelCheckError, match="bootstrap unit must be one of opening, pair, got 'game'"):
        davidson_gap(rows, unit="game")


def test_a_bad_bootstrap_unit_is_refused_by_the_settings() -> None:
    with pytest.raises(LevelCheckError, match="--bootstrap-unit must be one of opening, pair, got 'games'"):
        LevelCheckSettings("p.json", "d", bootstrap_unit="games").check()
