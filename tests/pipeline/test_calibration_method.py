"""The calibration method's pieces without games: the opening split, the curve pairings, the
choice of Easy, the judging rules and the dial."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.features import default_weights
from engine.variants import get_variant
from pipeline.calibration import claims
from pipeline.calibration.dial import plan_dial, predicted_score, spot_checked
from pipeline.calibration.method import (
    EASY_SCALES,
    HARD_VALIDATION,
    MAX_RANDOM_MOVE,
    NOISY_REPEATS,
    choose_easy,
    curve_pairings,
    curve_players,
    easy_axis,
    easy_axis_pairings,
    hard_is_the_products,
    hard_validation_pairing,
    product_pairings,
    scaled_mix,
    split_openings,
    with_repeats,
)
from pipeline.calibration.outcome import EasyTrial
from pipeline.calibration.paths import PROVEN_SEARCH, easy_player, hard_player, medium_player
from pipeline.calibration.product import product_levels, product_profile_path
from pipeline.config.job_sections import CalibrateSection
from pipeline.games.match import BatchSpec
from pipeline.games.openings import load_deck
from pipeline.games.pairings import BATCH_STRIDE, Pairing, plan_pairings
from pipeline.games.players import parse_player_spec
from pipeline.ratings.curve import curve_from_samples

WEIGHTS = default_weights(get_variant("english"))


def test_the_split_is_disjoint_seeded_and_refuses_a_small_deck() -> None:
    deck = load_deck("english")
    split = split_openings(deck, 7, 40, 60)
    ids = [o.id for o in (*split.curve, *split.validation, *split.unused)]
    assert (
        len(split.curve) == 40 and len(split.validation) == 60 and sorted(ids) == sorted(o.id for o in deck)
    )
    assert split_openings(deck, 7, 40, 60) == split and split_openings(deck, 8, 40, 60) != split
    with pytest.raises(
        ValueError, match=r"the opening deck has 157 openings; .* = 200 needs at least that many"
    ):
        split_openings(deck, 7, 100, 100)


def test_the_product_levels_come_from_the_products_file() -> None:
    assert product_profile_path("english").name == "english-baseline.json"
    assert product_profile_path("brazilian").name == "brazilian-start.json"
    product = product_levels("english")
    assert product.anchor == "product-medium" and product.level("hard").node_budget == 200_000
    assert parse_player_spec(product.spec("easy")).level == "product-easy"


def test_every_curve_point_plays_its_reference_and_its_neighbour() -> None:
    section = CalibrateSection(hard_budgets=(1000, 4000, 16000), medium_noise=(0.0, 50.0, 100.0))
    curves = curve_players("english", WEIGHTS, section)
    assert [p.name for p in curves.hard] == ["hard-1000", "hard-4000", "hard-16000"]
    assert [p.name for p in curves.medium] == [
        "medium-d4-n100",
        "medium-d4-n50",
        "medium-d4-n0",
        "medium-d5-n0",
    ]
    pairings = curve_pairings(product_levels("english"), curves, 12)
    assert len(pairings) == 2 + (3 + 2) + (4 + 3) + 2
    assert all(p.pairs == 12 and p.stream == 0 for p in pairings)
    names = [(parse_player_spec(p.a_spec).level, parse_player_spec(p.b_spec).level) for p in pairings]
    assert ("hard-4000", "hard-1000") in names and ("medium-d5-n0", "medium-d4-n0") in names
    assert ("hard-16000", "product-hard") in names and ("medium-d4-n50", "product-medium") in names
    assert ("medium-d4-n100", "product-easy") in names and ("hard-1000", "medium-d5-n0") in names  # overlaps


def test_the_product_pairings_played_ahead_are_the_first_batches_of_the_curve_stage() -> None:
    """The job plays them beside the SPRT; the curve stage then finds the same batch files (ids,
    seeds, openings) finished and reads them back instead of playing them again."""
    section = CalibrateSection(hard_budgets=(1000, 200_000), medium_noise=(0.0, 100.0))
    product = product_levels("english")
    deck = load_deck("english")[:12]
    ahead = with_repeats("english", product_pairings(product, 12))
    full = with_repeats("english", curve_pairings(product, curve_players("english", WEIGHTS, section), 12))
    assert full[: len(ahead)] == ahead
    plan = {"run_id": "r", "stage": "calibrate/curves", "variant": "english", "run_seed": 5, "batch_size": 10,
            "ply_cap": 200, "deck": deck, "stage_seeds": True}
    ahead_specs = plan_pairings(pairings=ahead, **plan)  # type: ignore[arg-type]
    full_specs = plan_pairings(pairings=full, **plan)  # type: ignore[arg-type]
    assert len(full_specs) > len(ahead_specs) > 0 and full_specs[: len(ahead_specs)] == ahead_specs


def test_hards_validation_pairing_played_ahead_is_the_validations_own() -> None:
    """The job plays Hard against the product's Hard from the curves on; the validation's plan,
    known only after the fit, must give that pairing the same place, so the same batch ids,
    seeds and openings, whatever else it holds."""
    from pipeline.calibration.method import choose_ends
    from pipeline.ratings.scale import fit_scale

    section = CalibrateSection(hard_budgets=(1000, 4000), medium_noise=(0.0, 100.0))
    product = product_levels("english")
    curves = curve_players("english", WEIGHTS, section)
    easy = easy_player("english", WEIGHTS, {"noise_sigma": 50.0}, "easy-t000")
    names = ["easy-t000", product.player("easy"), *(p.name for p in curves.medium), product.player("medium"),
             *(p.name for p in curves.hard), product.player("hard")]
    games = [(x, y, float(k % 3 == 0), f"{i}-{k}")
             for i, (x, y) in enumerate(itertools.pairwise(names)) for k in range(6)]
    a, b, s, o = (list(column) for column in zip(*games, strict=True))
    fit = fit_scale(a, b, s, o, anchor=product.anchor, bootstrap=50, seed=1)
    choice = choose_ends("english", WEIGHTS, section, curves, fit, product, easy,
                         fit.rating("easy-t000").value, 12)
    ahead = hard_validation_pairing(product, curves, 12)
    assert choice.pairings[HARD_VALIDATION] == ahead and choice.hard == curves.hard[-1]
    deck = load_deck("english")[:12]

    def specs(pairings: list[Pairing]) -> list[BatchSpec]:
        return plan_pairings("r", "calibrate/validation", "english", with_repeats("english", pairings), 5, 10,
                             200, deck, stage_seeds=True)

    full, alone = specs(list(choice.pairings)), specs([ahead] * (HARD_VALIDATION + 1))
    hard_specs = [x for x in full if x.batch_id // BATCH_STRIDE == HARD_VALIDATION]
    assert hard_specs and [x for x in alone if x.batch_id // BATCH_STRIDE == HARD_VALIDATION] == hard_specs


def test_cheap_pairings_with_a_noisy_player_repeat_their_openings() -> None:
    section = CalibrateSection(hard_budgets=(1000, 4000, 200_000), medium_noise=(0.0, 50.0, 100.0))
    product = product_levels("english")
    pairings = curve_pairings(product, curve_players("english", WEIGHTS, section), 12)
    repeated = {(parse_player_spec(p.a_spec).level, parse_player_spec(p.b_spec).level): p.pairs
                for p in with_repeats("english", pairings)}
    assert repeated[("product-easy", "product-medium")] == 12 * NOISY_REPEATS  # both noisy, both cheap
    assert repeated[("medium-d4-n50", "product-medium")] == 12 * NOISY_REPEATS
    assert repeated[("medium-d5-n0", "medium-d4-n0")] == 12  # neither is noisy: a repeat is a replay
    assert repeated[("product-medium", "product-hard")] == 12  # a 200,000-node side is not cheap
    assert repeated[("hard-1000", "medium-d5-n0")] == 12
    assert len(repeated) == len(pairings)


def test_easys_axis_scales_the_chosen_mix() -> None:
    mix = {"max_depth": 2, "noise_sigma": 44.0, "random_move_prob": 0.447, "temperature": 65.9, "top_k": 2}
    half = {**mix, "noise_sigma": 22.0, "random_move_prob": 0.2235, "temperature": 32.95}
    assert scaled_mix(mix, 0.5) == half
    assert scaled_mix(mix, 4.0)["random_move_prob"] == MAX_RANDOM_MOVE  # never a random mover
    axis = easy_axis("english", WEIGHTS, mix)
    assert [p.name for p in axis] == [f"easy-s{s:.2f}" for s in EASY_SCALES]
    levels = [p.level for p in axis]
    assert all(lv.max_depth == 2 and lv.top_k == 2 for lv in levels)
    assert [lv.noise_sigma for lv in levels] == sorted(lv.noise_sigma for lv in levels)  # weaker along it
    pairings = easy_axis_pairings(product_levels("english"), axis, 10)
    assert len(pairings) == 2 * len(EASY_SCALES) - 1 and all(p.pairs == 10 for p in pairings)


def test_level_paths_keep_their_character() -> None:
    hard = hard_player("english", WEIGHTS, 200_000).level
    assert (hard.node_budget, hard.max_depth, hard.quiescence, hard.noise_sigma) == (200_000, 64, True, 0.0)
    medium = medium_player("english", WEIGHTS, 37.26).level
    assert (medium.max_depth, medium.quiescence, medium.noise_sigma) == (4, True, 37.3)
    easy = easy_player("english", WEIGHTS, {"noise_sigma": 123.456, "random_move_prob": 0.12345}, "e").level
    assert (easy.max_depth, easy.quiescence, easy.noise_sigma, easy.random_move_prob) == (
        2,
        False,
        123.5,
        0.123,
    )
    with pytest.raises(ValueError, match="unknown knob 'node_budget'"):
        easy_player("english", WEIGHTS, {"node_budget": 5}, "e")


def test_only_hard_gets_the_search_changes_proven_in_its_variant() -> None:
    weights = default_weights(get_variant("brazilian"))
    assert all(get_variant(name).name == name for name in PROVEN_SEARCH)  # canonical names only
    hard = hard_player("brazilian", weights, 200_000).level
    assert (hard.reductions, hard.partial_iterations) == (True, True)
    medium = medium_player("brazilian", weights, 0.0).level
    easy = easy_player("brazilian", weights, {}, "e").level
    english_hard = hard_player("english", WEIGHTS, 200_000).level
    for level in (medium, easy, english_hard, product_levels("brazilian").level("hard")):
        assert (level.reductions, level.partial_iterations) == (False, False), level.level
    suicide = default_weights(get_variant("suicide"))
    assert not hard_player("suicide", suicide, 200_000).level.tt_keep  # never tested for suicide
    for variant in ("english", "brazilian", "russian", "international"):  # the table kept
        weights = default_weights(get_variant(variant))
        assert hard_player(variant, weights, 200_000).level.tt_keep
        assert not medium_player(variant, weights, 0.0).level.tt_keep
        assert not product_levels(variant).level("hard").tt_keep


def _trial(slot: int, gap: float, blunders: float) -> EasyTrial:
    return EasyTrial(slot, f"easy-t{slot:03d}", {}, gap, 0.5, blunders, 40, abs(gap) <= claims.EASY_TOLERANCE)


def test_easy_is_the_least_blundering_feasible_trial_else_the_closest() -> None:
    assert choose_easy([_trial(0, 10, 0.2), _trial(1, -25, 0.1), _trial(2, 60, 0.01)]).slot == 1
    assert choose_easy([_trial(0, 80, 0.2), _trial(1, -45, 0.3)]).slot == 1
    with pytest.raises(ValueError, match="no finished trial"):
        choose_easy([])


def test_the_claims_are_the_pre_registered_rules() -> None:
    assert claims.hard_claim(55, 30, 80).holds and claims.hard_claim(55, 30, 80).precise
    assert not claims.hard_claim(45, 20, 70).holds and not claims.hard_claim(60, -5, 125).holds
    assert not claims.hard_claim(70, 10, 130).precise
    assert claims.easy_claim(-29, -50, -10).holds and not claims.easy_claim(31, 10, 50).holds
    assert claims.medium_claim(49, 10, 90).holds and not claims.medium_claim(-51, -90, -10).holds
    assert claims.blunder_claim(0.05, 0.1) and not claims.blunder_claim(0.06, 0.1)
    assert claims.blunder_claim(None, 0.1) is None


def _curve(xs: list[float], elos: list[float]) -> object:
    rng = np.random.default_rng(0)
    samples = np.array(elos)[None, :] + rng.normal(0, 10, size=(200, len(elos)))
    return curve_from_samples(xs, elos, samples, increasing=True)


def test_the_dial_spaces_levels_evenly_from_easy_to_hard() -> None:
    medium = _curve([-160.0, -80.0, 0.0], [900.0, 1200.0, 1500.0])
    hard = _curve([14.0, 16.0, 17.6], [1550.0, 1750.0, 1900.0])
    easy, top = (
        easy_player("english", WEIGHTS, {"noise_sigma": 100.0}, "easy-t001"),
        hard_player("english", WEIGHTS, 200_000),
    )
    dial = plan_dial(
        5,
        "english",
        WEIGHTS,
        {"easy": (easy, 700.0, (680.0, 720.0)), "hard": (top, 1900.0, (1880.0, 1920.0))},
        medium,
        hard,
    )  # type: ignore[arg-type]
    levels = [d for d, _ in dial]
    assert [d.index for d in levels] == [0, 1, 2, 3, 4] and levels[0].player == "easy-t001"
    assert [d.curve for d in levels] == ["easy", "medium", "medium", "hard", "hard"]
    assert 80 < levels[1].knob < 160 and levels[1].note == "on the medium curve"  # type: ignore[operator]
    assert levels[2].elo == pytest.approx(1300.0, abs=15) and 0 < levels[2].knob < 80  # type: ignore[operator]
    assert levels[3].knob is not None and 2**14 <= levels[3].knob <= 2**17.6
    assert [p.name for _, p in dial][1:4] == ["dial-1", "dial-2", "dial-3"]
    assert spot_checked(levels) == (2, 3)
    assert predicted_score(levels[2], 1500.0) == pytest.approx(1 / (1 + 10 ** (200 / 400)), abs=0.03)
    assert plan_dial(0, "english", WEIGHTS, {}, medium, hard) == ()  # type: ignore[arg-type]


def test_a_claim_split_by_perfect_scores_is_not_measured() -> None:
    import pyarrow as pa

    from pipeline.ratings.scale import measured_groups

    # a beats b every game; b and c trade points: {a} and {b, c} are measured groups
    rows = [("a", "b", 1.0), ("b", "a", 0.0), ("b", "c", 1.0), ("c", "b", 1.0), ("c", "b", 0.0)]
    table = pa.table(
        {
            "white_player": [r[0] for r in rows],
            "black_player": [r[1] for r in rows],
            "result_white": [r[2] for r in rows],
        }
    )
    groups = measured_groups(table)
    assert groups == (frozenset({"a"}), frozenset({"b", "c"}))
    claim = claims.hard_claim(80, 40, 100)
    assert claims.unmeasured(claim, ("b", "c"), groups) == claim
    refused = claims.unmeasured(claim, ("a", "b"), groups)
    assert not refused.holds and not refused.precise and "perfect scores split a | b" in refused.note


def _chain_games(names: list[str], won: dict[str, int] | None = None) -> tuple[list[str], ...]:
    """Six games per neighbour pair of ``names``, the stronger (later) side winning 4 (or
    ``won[stronger]``) of them: a fit spaces the names evenly unless ``won`` says otherwise."""
    a, b, s, o = [], [], [], []
    for i, (weak, strong) in enumerate(itertools.pairwise(names)):
        wins = (won or {}).get(strong, 4)
        for k in range(6):
            a.append(strong), b.append(weak), s.append(float(k < wins)), o.append(f"{i}-{k}")
    return a, b, s, o  # type: ignore[return-value]


def _choice_fixture(section: CalibrateSection) -> tuple:  # type: ignore[type-arg]
    from pipeline.ratings.scale import fit_scale

    product = product_levels("english")
    curves = curve_players("english", WEIGHTS, section)
    easy = easy_player("english", WEIGHTS, {"noise_sigma": 50.0}, "easy-t000")
    names = [product.player("easy"), *(p.name for p in curves.medium), *(p.name for p in curves.hard),
             product.player("hard")]
    a, b, s, o = _chain_games(names)
    a += [product.player("medium")] * 6
    b += [curves.medium[-2].name] * 6
    s += [0.5] * 6
    o += [f"m-{k}" for k in range(6)]
    fit = fit_scale(a, b, s, o, anchor=product.anchor, bootstrap=50, seed=1)
    return product, curves, easy, fit, fit.rating(product.player("easy")).value


def test_the_chain_runs_from_easy_to_hard_through_curve_points() -> None:
    from pipeline.calibration.method import choose_ends

    section = CalibrateSection(hard_budgets=(1000, 4000, 16000), medium_noise=(0.0, 100.0, 300.0))
    product, curves, easy, fit, easy_elo = _choice_fixture(section)
    ends = choose_ends("english", WEIGHTS, section, curves, fit, product, easy, easy_elo, 12)
    assert ends.chain[0] == easy and ends.chain[-1] == curves.hard[-1] == ends.hard
    inner = [fit.rating(p.name).value for p in ends.chain[1:-1]]
    assert len(inner) >= 3 and inner == sorted(inner)  # steps of about equal Elo, weakest first
    assert all(easy_elo < e < fit.rating(ends.hard.name).value for e in inner)
    links = {frozenset((p.a_spec, p.b_spec)) for p in ends.pairings}
    assert all(frozenset((x.spec, y.spec)) in links for x, y in itertools.pairwise(ends.chain))
    assert not any("medium" in p.b_spec.split(":")[1] and "product" in p.b_spec for p in ends.pairings)


def test_medium_is_aimed_at_the_midpoint_the_validations_chain_measures() -> None:
    """When the validation's chain puts Hard further from Easy than the curves did, Medium's target
    moves up with the midpoint; measured as the curves measured it, the target is the curves'
    midpoint. Medium's pairings come after the chain's, which are played first."""
    from pipeline.calibration.method import choose_ends, choose_medium_level
    from pipeline.ratings.scale import fit_scale

    section = CalibrateSection(hard_budgets=(1000, 4000, 16000), medium_noise=(0.0, 100.0, 300.0))
    product, curves, easy, fit, easy_elo = _choice_fixture(section)
    ends = choose_ends("english", WEIGHTS, section, curves, fit, product, easy, easy_elo, 12)
    own = (easy_elo + fit.rating(ends.hard.name).value) / 2
    same = choose_medium_level("english", WEIGHTS, curves, fit, product, ends, None, 12)
    assert same.target == pytest.approx(own)
    names = [p.name for p in ends.chain]
    # the top two links: Hard's side much stronger than on the curves
    wider = fit_scale(*_chain_games(names, {names[-1]: 6, names[-2]: 6}), anchor=easy.name,
                      anchor_elo=easy_elo, bootstrap=50, seed=1)
    aimed = choose_medium_level("english", WEIGHTS, curves, fit, product, ends, wider, 12)
    assert aimed.target > own + 30
    assert "validation chain's midpoint" in aimed.medium_note
    assert aimed.pairings[: len(ends.pairings)] == ends.pairings
    medium = aimed.chosen["medium"]
    theirs = aimed.pairings[len(ends.pairings):]
    met = {p.b_spec for p in theirs if p.a_spec == medium.spec}
    met |= {p.a_spec for p in theirs if p.b_spec == medium.spec}
    assert {product.spec("medium"), easy.spec, ends.hard.spec} <= met
    around = [p for p in ends.chain[1:-1] if p.spec in met]  # the chain's points on either side of its target
    assert 1 <= len(around) <= 2
    assert len({frozenset((p.a_spec, p.b_spec)) for p in aimed.pairings}) == len(aimed.pairings)


@pytest.mark.parametrize("variant", ["suicide"])
def test_hard_on_the_products_weights_is_known_to_be_the_products_hard(variant: str) -> None:
    product = product_levels(variant)
    weights = dict(product.level("hard").weights)
    assert hard_is_the_products(variant, weights, product)  # a tuning that kept the starting weights
    name = next(iter(weights))
    tuned = {**weights, name: weights[name] + 1.0}
    assert not hard_is_the_products(variant, tuned, product)


@pytest.mark.parametrize("variant", ["english", "russian", "international"])
def test_a_proven_search_change_sets_hard_apart_on_the_products_weights(variant: str) -> None:
    product = product_levels(variant)
    assert not hard_is_the_products(variant, dict(product.level("hard").weights), product)
