"""Anchored Davidson Elo: recovery of known ratings, CI coverage, priors and error cases."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from pipeline.ratings import GameResults, RatingsError, fit_elo, simulate_pairs
from pipeline.ratings.davidson import loglik_terms

TRUE_ELOS = {"random": 0.0, "p1": 240.0, "p2": 480.0, "p3": 720.0, "p4": 960.0, "p5": 1200.0}
TRUE_NU = 1.0
TRUE_ADV = 30.0
PAIRS_PER_PAIRING = 100  # 15 pairings x 100 pairs x 2 games = 3000 games


def _games(seed: int, pairs: int = PAIRS_PER_PAIRING) -> GameResults:
    rng = np.random.default_rng(seed)
    return simulate_pairs(TRUE_ELOS, pairs, nu=TRUE_NU, advantage=TRUE_ADV, rng=rng)


def _coverage(seeds: range, **fit_kwargs: object) -> tuple[float, float, float, list[float]]:
    """(player-CI coverage, advantage-CI coverage, nu-CI coverage, advantage estimates)."""
    hits = total = adv_hits = nu_hits = 0
    advs = []
    for seed in seeds:
        table = fit_elo(_games(seed), "random", **fit_kwargs)  # type: ignore[arg-type]
        for r in table.ratings:
            if r.player != "random":
                total += 1
                hits += r.ci_low <= TRUE_ELOS[r.player] <= r.ci_high
        adv = table.first_move_advantage
        adv_hits += adv.ci_low <= TRUE_ADV <= adv.ci_high
        nu = table.draw_nu
        nu_hits += nu.ci_low <= TRUE_NU <= nu.ci_high
        advs.append(adv.value)
    n = len(seeds)
    return hits / total, adv_hits / n, nu_hits / n, advs


def test_single_fit_recovers_truth() -> None:
    table = fit_elo(_games(1), "random")
    assert table.n_games == 3000
    assert table.players[0] == "p5" and table.players[-1] == "random"  # strongest first
    for r in table.ratings:
        assert r.elo == pytest.approx(TRUE_ELOS[r.player], abs=4 * table.se(r.player) + 1e-9)
        assert r.games == 1000
        assert not r.prior_driven
    assert table.first_move_advantage.value == pytest.approx(TRUE_ADV, abs=40)
    assert table.draw_nu.value == pytest.approx(TRUE_NU, rel=0.2)
    assert table.notes == ()
    assert math.isfinite(table.log_likelihood) and table.log_likelihood < 0


def test_hessian_ci_coverage_over_seeds() -> None:
    player_cov, adv_cov, nu_cov, advs = _coverage(range(20))
    assert player_cov >= 0.85, player_cov  # nominal 0.95 over 100 intervals
    assert adv_cov >= 0.8 and nu_cov >= 0.8, (adv_cov, nu_cov)
    # per-fit SE of the advantage is ~10 Elo, so the mean of 20 fits is within ~2.3
    assert np.mean(advs) == pytest.approx(TRUE_ADV, abs=8)


@pytest.mark.slow
def test_hessian_ci_coverage_many_seeds() -> None:
    player_cov, adv_cov, nu_cov, advs = _coverage(range(100, 1100))
    assert 0.935 <= player_cov <= 0.965, player_cov  # 5000 intervals: SD of coverage ~0.003
    assert 0.93 <= adv_cov <= 0.97 and 0.93 <= nu_cov <= 0.97, (adv_cov, nu_cov)
    assert np.mean(advs) == pytest.approx(TRUE_ADV, abs=1.5)  # SE of the mean ~0.33


@pytest.mark.slow
def test_bootstrap_ci_coverage_over_seeds() -> None:
    player_cov, adv_cov, _, _ = _coverage(range(500, 540), ci_method="bootstrap", n_bootstrap=100)
    assert player_cov >= 0.88, player_cov
    assert adv_cov >= 0.8, adv_cov


def test_bootstrap_agrees_with_hessian() -> None:
    games = _games(2)
    hess = fit_elo(games, "random")
    boot = fit_elo(games, "random", ci_method="bootstrap", n_bootstrap=150, seed=3)
    assert boot.ci_method == "bootstrap"
    for h, b in zip(hess.ratings, boot.ratings, strict=True):
        assert b.player == h.player and b.elo == h.elo  # same point estimate
        if h.player != "random":
            assert 0.7 < boot.se(b.player) / hess.se(h.player) < 1.4, (h.player, hess.se(h.player))
            assert b.ci_low < b.elo < b.ci_high
    assert 0.6 < boot.difference("p5", "p4").ci_high - boot.difference("p5", "p4").ci_low
    # deterministic for a given seed
    again = fit_elo(games, "random", ci_method="bootstrap", n_bootstrap=150, seed=3)
    assert [r.ci_low for r in again.ratings] == [r.ci_low for r in boot.ratings]


def test_anchor_is_exact_and_choice_of_anchor_only_shifts() -> None:
    games = _games(3)
    a = fit_elo(games, "random", anchor_elo=0.0)
    b = fit_elo(games, "p3", anchor_elo=1234.5)
    assert b["p3"].elo == 1234.5 and b["p3"].ci_low == b["p3"].ci_high == 1234.5 and b.se("p3") == 0.0
    assert a["random"].elo == 0.0
    shift = b["p3"].elo - a["p3"].elo
    for r in a.ratings:
        assert b[r.player].elo - r.elo == pytest.approx(shift, abs=1e-6)
    # differences between two free players have the same uncertainty whatever the anchor
    da, db = a.difference("p5", "p1"), b.difference("p5", "p1")
    assert da.value == pytest.approx(db.value, abs=1e-6)
    assert da.ci_high - da.ci_low == pytest.approx(db.ci_high - db.ci_low, rel=1e-6)


def test_difference_uses_covariance() -> None:
    t = fit_elo(_games(4), "random")
    d = t.difference("p2", "p1")
    assert d.value == pytest.approx(t["p2"].elo - t["p1"].elo)
    # a difference to the anchor is just the player's own CI
    d0 = t.difference("p1", "random")
    assert (d0.ci_low, d0.ci_high) == pytest.approx((t["p1"].ci_low, t["p1"].ci_high))
    # adjacent players are positively correlated (both measured against the same anchor)
    naive = math.hypot(t.se("p2"), t.se("p1"))
    assert (d.ci_high - d.value) / 1.959964 < naive
    with pytest.raises(KeyError, match="nobody"):
        t.difference("nobody", "p1")


def test_fixed_advantage() -> None:
    games = _games(5)
    t = fit_elo(games, "random", advantage=30.0)
    adv = t.first_move_advantage
    assert adv.value == adv.ci_low == adv.ci_high == 30.0
    free = fit_elo(games, "random")
    assert t["p5"].elo == pytest.approx(free["p5"].elo, abs=2 * free.se("p5"))
    assert t.se("p5") <= free.se("p5") + 1e-9


def test_advantage_sign_and_size_follow_the_data() -> None:
    rng = np.random.default_rng(6)
    g = simulate_pairs({"a": 0.0, "b": 100.0}, 1500, nu=0.5, advantage=-120.0, rng=rng)
    t = fit_elo(g, "a")
    adv = t.first_move_advantage
    assert adv.ci_low <= -120.0 <= adv.ci_high and adv.ci_high < 0
    assert t["b"].ci_low <= 100.0 <= t["b"].ci_high


def test_record_columns_and_arrow_export() -> None:
    g = GameResults.from_arrays(["a", "b", "a", "b"], ["b", "a", "b", "a"], [1.0, 0.5, 0.0, 0.0])
    t = fit_elo(g, "a")
    assert t["a"].points == 1.0 + 0.5 + 0 + 1.0 and t["a"].games == 4 and t["a"].score == 0.625
    assert t["b"].points == 4 - t["a"].points
    out = t.to_arrow()
    assert isinstance(out, pa.Table)
    assert out.column_names == [
        "player", "elo", "ci_low", "ci_high", "se", "games", "points", "score", "prior_driven"
    ]  # fmt: skip
    assert out.num_rows == 2
    assert out.column("se").to_pylist() == list(t.standard_errors)
    assert out.column("points").to_pylist() == [r.points for r in t.ratings]
    assert 0.0 < t.draw_rate_equal < 1.0


def test_perfect_score_is_finite_flagged_and_explained() -> None:
    rng = np.random.default_rng(7)
    base = simulate_pairs({"random": 0.0, "a": 300.0, "b": 500.0}, 50, nu=1.0, advantage=30.0, rng=rng)
    first, second, result = list(base.first), list(base.second), list(base.result)
    for i in range(60):  # "monster" wins every game, both colours, against everyone
        opp = ("random", "a", "b")[i % 3]
        first += ["monster", opp]
        second += [opp, "monster"]
        result += [1.0, 0.0]
    t = fit_elo(GameResults.from_arrays(first, second, result), "random")
    m = t["monster"]
    assert all(math.isfinite(v) for v in (m.elo, m.ci_low, m.ci_high, t.se("monster")))
    assert m.prior_driven and m.score == 1.0
    assert m.elo > t["b"].elo + 300
    assert not t["b"].prior_driven
    assert any("perfect scores" in n and "monster" in n for n in t.notes)
    # a weaker prior lets the estimate run further, as a divergent MLE should
    loose = fit_elo(GameResults.from_arrays(first, second, result), "random", prior_sd=4000.0)
    assert loose["monster"].elo > m.elo + 200


def test_all_losses_player_is_finite() -> None:
    g = GameResults.from_arrays(
        ["a", "b", "a", "c", "a", "c"] * 5, ["b", "a", "c", "a", "b", "a"] * 5, [1, 0, 0.5, 0.5, 1, 1] * 5
    )
    t = fit_elo(g, "a")
    assert t["b"].score == 0.0 and t["b"].prior_driven and math.isfinite(t["b"].elo)
    assert t["b"].elo < t["a"].elo


def test_no_draws_noted_and_finite() -> None:
    g = GameResults.from_arrays(["a", "b"] * 50, ["b", "a"] * 50, [1.0, 0.0, 0.0, 1.0] * 25)
    t = fit_elo(g, "a")
    assert 0.0 < t.draw_nu.value < 0.05
    assert math.isfinite(t.draw_nu.ci_low) and math.isfinite(t.draw_nu.ci_high)
    assert any("no draws" in n for n in t.notes)


def test_empty_table_raises() -> None:
    with pytest.raises(RatingsError, match="empty"):
        fit_elo(GameResults.from_arrays([], [], []), "random")


def test_unknown_anchor_raises_listing_players() -> None:
    with pytest.raises(RatingsError, match=r"anchor 'zz' played no games; players are \['a', 'b'\]"):
        fit_elo(GameResults.from_arrays(["a", "b"], ["b", "a"], [1.0, 0.5]), "zz")


def test_disconnected_graph_names_the_cut_off_players() -> None:
    g = GameResults.from_arrays(["a", "b", "c", "d", "e"], ["b", "a", "d", "c", "c"], [1, 0.5, 1, 0, 0.5])
    with pytest.raises(RatingsError, match=r"disconnected.*3 player\(s\).*anchor 'a': \['c', 'd', 'e'\]"):
        fit_elo(g, "a")


def test_unidentifiable_advantage_raises() -> None:
    g = GameResults.from_arrays(["a", "a", "b"], ["b", "b", "c"], [1.0, 0.5, 0.0])
    with pytest.raises(RatingsError, match="first-move advantage cannot be separated"):
        fit_elo(g, "a")
    fit_elo(g, "a", advantage=0.0)  # fine once the advantage is fixed


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"anchor_elo": math.nan}, "anchor_elo"),
        ({"advantage": math.inf}, "advantage"),
        ({"prior_sd": 0.0}, "prior_sd"),
        ({"level": 1.0}, "level"),
        ({"ci_method": "jackknife"}, "ci_method"),
        ({"ci_method": "bootstrap", "n_bootstrap": 5}, "n_bootstrap"),
    ],
)
def test_bad_arguments_raise(kwargs: dict, message: str) -> None:
    g = GameResults.from_arrays(["a", "b"], ["b", "a"], [1.0, 0.5])
    with pytest.raises(RatingsError, match=message):
        fit_elo(g, "a", **kwargs)


def test_loglik_derivatives_match_finite_differences() -> None:
    rng = np.random.default_rng(8)
    x = rng.normal(0, 2, 7)
    w, d, lo = (rng.integers(0, 30, 7).astype(float) for _ in range(3))
    log_nu, h = 0.3, 1e-5
    ll, g_x, g_nu, h_xx, h_xnu, h_nunu = loglik_terms(x, log_nu, w, d, lo)
    for k in range(7):
        e = np.zeros(7)
        e[k] = h
        num = (loglik_terms(x + e, log_nu, w, d, lo)[0] - loglik_terms(x - e, log_nu, w, d, lo)[0]) / (2 * h)
        assert g_x[k] == pytest.approx(num, rel=1e-6, abs=1e-6)
        gp, gm = loglik_terms(x + e, log_nu, w, d, lo)[1], loglik_terms(x - e, log_nu, w, d, lo)[1]
        assert h_xx[k] == pytest.approx((gp[k] - gm[k]) / (2 * h), rel=1e-5, abs=1e-6)
        gnp, gnm = loglik_terms(x + e, log_nu, w, d, lo)[2], loglik_terms(x - e, log_nu, w, d, lo)[2]
        assert h_xnu[k] == pytest.approx((gnp - gnm) / (2 * h), rel=1e-5, abs=1e-6)
    num_nu = (loglik_terms(x, log_nu + h, w, d, lo)[0] - loglik_terms(x, log_nu - h, w, d, lo)[0]) / (2 * h)
    assert g_nu == pytest.approx(num_nu, rel=1e-6)
    num_nunu = (loglik_terms(x, log_nu + h, w, d, lo)[2] - loglik_terms(x, log_nu - h, w, d, lo)[2]) / (2 * h)
    assert h_nunu == pytest.approx(num_nunu, rel=1e-5)
    assert math.isfinite(ll)


def test_an_optimiser_that_stops_just_short_is_finished_by_newton_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Brazilian validated run 4 (experiments/archive/2026-11-29-brazilian-calibration): on 19,200 games
    trust-exact stopped on rounding noise one Newton step of 1.01e-6 short, and the fit raised. A few
    Newton steps finish the job."""
    import scipy.optimize

    exact = fit_elo(_games(3), "random")
    real_minimize = scipy.optimize.minimize

    def short(*args: object, **kwargs: object) -> scipy.optimize.OptimizeResult:
        res = real_minimize(*args, **kwargs)  # type: ignore[call-overload]
        res.x = res.x + 3e-5  # a few times the old 1e-6 bound, in natural units
        res.message = "stopped short (simulated)"
        return res

    monkeypatch.setattr(scipy.optimize, "minimize", short)
    polished = fit_elo(_games(3), "random")
    for a, b in zip(exact.ratings, polished.ratings, strict=True):
        assert a.player == b.player and a.elo == pytest.approx(b.elo, abs=1e-6)

    def lost(*args: object, **kwargs: object) -> scipy.optimize.OptimizeResult:
        res = real_minimize(*args, **kwargs)  # type: ignore[call-overload]
        res.x = res.x * np.nan
        return res

    monkeypatch.setattr(scipy.optimize, "minimize", lost)
    with pytest.raises(RuntimeError, match="Elo fit did not converge"):
        fit_elo(_games(3), "random")
