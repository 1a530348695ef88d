"""The knob and feature declarations: each knob once, with its strength direction, scale and
tunability; everything that restates knobs (LevelProfile, schema, --help) follows them; every
variant has declared default weights."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

from engine.cli import main
from engine.errors import DeclarationError
from engine.features import DEFAULT_WEIGHTS, FEATURES, _check_defaults, default_weights
from engine.params import PARAM_INDEX, PARAMS, Param, default_knobs, describe_knobs, params_of, tunable_knobs
from engine.player import Player
from engine.profile import LevelProfile, profile_json_schema
from engine.variants import VARIANTS, get_variant

ENGLISH = get_variant("english")
GOOD: dict[str, Any] = {"name": "knob", "group": "search", "kind": "int", "default": 5, "low": 1,
                        "high": 10, "meaning": "a knob", "direction": "stronger", "log_scale": False,
                        "tunable": True}


def test_names_are_unique_and_grouped() -> None:
    names = [p.name for p in PARAMS]
    assert len(set(names)) == len(names) and set(PARAM_INDEX) == set(names)
    assert [p.name for p in params_of("search") + params_of("weakening")] == names
    assert default_knobs() == {p.name: p.default for p in PARAMS}


def test_declared_directions_scales_and_tunability() -> None:
    direction = {p.name: p.direction for p in PARAMS}
    assert direction == {"max_depth": "stronger", "node_budget": "stronger", "quiescence": "stronger",
                         "reductions": "stronger", "partial_iterations": "stronger", "tt_keep": "stronger",
                         "tt_log2": "none",
                         "noise_sigma": "weaker",
                         "random_move_prob": "weaker", "top_k": "weaker", "temperature": "weaker"}
    assert [p.name for p in PARAMS if p.log_scale] == ["node_budget"]
    assert tunable_knobs() == ("max_depth", "node_budget", "noise_sigma", "random_move_prob", "top_k",
                               "temperature")
    assert PARAM_INDEX["node_budget"].strongest == 20_000_000 and PARAM_INDEX["top_k"].strongest == 0
    assert PARAM_INDEX["quiescence"].strongest is True and PARAM_INDEX["tt_log2"].strongest is None


def test_weakening_knobs_are_off_by_default_at_their_low_end() -> None:
    for p in params_of("weakening"):
        assert p.direction == "weaker" and p.default == p.low == p.strongest == 0, p.name
    for p in PARAMS:
        if p.log_scale:  # a log-uniform search needs a range of decades
            assert p.low > 0 and p.high / p.low >= 1000, p.name


@pytest.mark.parametrize(("change", "needle"), [
    ({"name": "max depth"}, "identifier"),
    ({"kind": "bool", "default": True, "low": 0, "high": 1, "log_scale": True}, "bool knob"),
    ({"kind": "bool", "default": 1, "low": 0, "high": 1}, "bool knob"),
    ({"default": 11}, "outside the range"),
    ({"default": 5.5}, "integers"),
    ({"low": True}, "integers"),
    ({"kind": "float", "low": 0.0, "log_scale": True}, "positive range"),
    ({"direction": "better"}, "direction must be"),
    ({"group": "eval"}, "unknown group"),
])
def test_inconsistent_declarations_are_refused(change: dict[str, Any], needle: str) -> None:
    Param(**GOOD)
    with pytest.raises(DeclarationError, match=needle) as info:
        Param(**{**GOOD, **change})
    message = str(info.value)
    assert "\n" not in message and repr(change.get("name", "knob")) in message


def test_level_profile_fields_are_the_declared_knobs_with_their_types() -> None:
    fields = [f.name for f in dataclasses.fields(LevelProfile)]
    assert fields == ["variant", "level", "weights", *(p.name for p in PARAMS)]
    hints = typing.get_type_hints(LevelProfile)
    python_type = {"int": int, "float": float, "bool": bool}
    for p in PARAMS:
        assert hints[p.name] is python_type[p.kind], p.name


def test_unweakened_turns_every_weakening_knob_off() -> None:
    level = LevelProfile.from_knobs(ENGLISH, "easy", knobs={
        "max_depth": 3, "node_budget": 5000, "noise_sigma": 80.0, "random_move_prob": 0.25, "top_k": 3,
        "temperature": 20.0})
    strong = level.unweakened()
    assert strong.knobs() == {**level.knobs(), "noise_sigma": 0.0, "random_move_prob": 0.0, "top_k": 0,
                              "temperature": 0.0}
    assert strong.weights == level.weights and strong.level == "easy"
    assert LevelProfile.from_knobs(ENGLISH, "x").unweakened() == LevelProfile.from_knobs(ENGLISH, "x")
    assert isinstance(Player(strong), Player)


def test_schema_descriptions_come_from_the_declarations() -> None:
    level = profile_json_schema()["$defs"]["level"]["properties"]
    for p in PARAMS:
        spec = level[p.group]["properties"][p.name]
        assert spec["default"] == p.default and spec["description"] == f"{p.meaning}; {p.effect()}"


def test_help_describes_every_knob(capsys: pytest.CaptureFixture[str]) -> None:
    text = describe_knobs()
    for p in PARAMS:
        assert p.name in text and p.meaning in text and p.effect() in text
    for verb in ("bestmove", "play"):
        with pytest.raises(SystemExit):
            main([verb, "--help"])
        out = capsys.readouterr().out
        assert all(p.name in out and p.meaning in out for p in PARAMS), verb


# -- evaluation features ---------------------------------------------------------------------------
def test_every_variant_declares_its_default_weights() -> None:
    assert set(DEFAULT_WEIGHTS) == {v.name for v in VARIANTS}
    for variant in VARIANTS:
        weights = default_weights(variant)
        assert list(weights) == [f.name for f in FEATURES]
        assert weights == {f.name: DEFAULT_WEIGHTS[variant.name].get(f.name, 0.0) for f in FEATURES}


def test_a_variant_without_declared_weights_is_an_error() -> None:
    frisian = dataclasses.replace(ENGLISH, name="frisian")
    declared = "no default evaluation weights declared for variant 'frisian'"
    with pytest.raises(DeclarationError, match=declared):
        default_weights(frisian)
    with pytest.raises(DeclarationError, match="'frisian'"):
        LevelProfile.from_knobs(frisian, "easy")


@pytest.mark.parametrize(("table", "needle"), [
    ({"english": {"mann": 100.0}}, "unknown feature 'mann'"),
    ({"english": {"man": 1000.0}}, r"man = 1000.0 is outside \[-300.0, 300.0\]"),
])
def test_default_weight_tables_are_checked(table: dict[str, dict[str, float]], needle: str) -> None:
    _check_defaults({"english": {"man": 100.0}})
    with pytest.raises(DeclarationError, match=needle):
        _check_defaults(table)


def test_english_defaults_are_the_products_evaluation() -> None:
    w = default_weights(ENGLISH)
    assert (w["man"], w["king"], w["advance"], w["back_rank"], w["center_king"]) == (100, 160, 3, 8, 6)
