"""Profiles: strict loader (every rejection path), dumper round trip, JSON Schema, shipped files."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.errors import ProfileError
from engine.features import FEATURES, default_weights
from engine.params import PARAMS
from engine.profile import (
    LEVEL_NAMES,
    MAX_PROFILE_BYTES,
    PROFILE_DIR_ENV,
    LevelProfile,
    LevelProvenance,
    Profile,
    Provenance,
    dump_json_schema,
    dump_profile,
    load_level,
    load_profile,
    parse_profile,
    parse_profile_text,
    profile_json_schema,
    profile_to_json,
    shipped_profile,
    shipped_profile_path,
)
from engine.variants import VARIANTS, Variant, get_variant

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "engine" / "profiles"
SCHEMA_FILE = REPO / "configs" / "profile.schema.json"
SHIPPED_FILES = sorted(PROFILES.glob("*.json"))
#: Calibrated profiles written by the pipeline's export; the rest are hand-written
#: starting points (product baseline, other product, per-variant starts) with default weights.
CALIBRATED_FILES = sorted(p for p in SHIPPED_FILES if "-" not in p.stem)
HAND_WRITTEN_FILES = sorted(p for p in SHIPPED_FILES if "-" in p.stem)
ENGLISH = get_variant("english")


def valid_doc() -> dict[str, Any]:
    """A fresh, valid english profile document."""
    doc: dict[str, Any] = json.loads((PROFILES / "english-baseline.json").read_text())
    return doc


def at(doc: dict[str, Any], path: str) -> tuple[Any, str]:
    """The container holding ``path`` and the last key."""
    *parents, last = path.split(".")
    node: Any = doc
    for key in parents:
        node = node[key]
    return node, last


def setter(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        node, last = at(doc, path)
        node[last] = value

    return mutate


def deleter(path: str) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        node, last = at(doc, path)
        del node[last]

    return mutate


def _rated(against: dict[str, Any], elo: bool = True) -> Callable[[dict[str, Any]], None]:
    """A mutation giving every level an Elo (unless ``elo`` is False) and these ``rated_against``."""
    def mutate(doc: dict[str, Any]) -> None:
        for name, lp in doc["provenance"]["levels"].items():
            if elo:
                lp.update(elo=100.0, elo_ci=[50.0, 150.0])
            if name in against:
                lp["rated_against"] = against[name]
    return mutate


# (id, mutation, substrings the message must contain)
REJECTIONS: list[tuple[str, Callable[[dict[str, Any]], None], tuple[str, ...]]] = [
    ("unknown-top-key", setter("extra", 1), ("extra", "unknown key")),
    ("unknown-search-key", setter("levels.hard.search.depth", 5),
     ("levels.hard.search.depth", "unknown key")),
    ("unknown-level", setter("levels.expert", {}), ("levels.expert", "unknown key")),
    ("unknown-weight", setter("levels.easy.weights.queen", 1.0), ("levels.easy.weights.queen",)),
    ("unknown-provenance-key", setter("provenance.author", "me"), ("provenance.author",)),
    ("missing-knob", deleter("levels.hard.search.node_budget"), ("levels.hard.search", "'node_budget'")),
    ("missing-level", deleter("levels.hard"), ("levels", "missing key 'hard'")),
    ("missing-weight", deleter("levels.medium.weights.man"), ("levels.medium.weights", "'man'")),
    ("missing-provenance", deleter("provenance"), ("missing key 'provenance'",)),
    ("missing-variant", deleter("variant"), ("missing key 'variant'",)),
    ("missing-schema-version", deleter("schema_version"), ("missing key 'schema_version'",)),
    ("missing-weakening", deleter("levels.easy.weakening"), ("levels.easy", "'weakening'")),
    ("missing-elo", deleter("provenance.levels.easy.elo"), ("provenance.levels.easy", "'elo'")),
    ("string-int", setter("levels.hard.search.node_budget", "200000"),
     ("levels.hard.search.node_budget", "expected an integer", "'200000'")),
    ("bool-int", setter("levels.hard.search.node_budget", True),
     ("levels.hard.search.node_budget", "expected an integer", "True")),
    ("float-int", setter("levels.medium.search.max_depth", 4.0), ("levels.medium.search.max_depth", "4.0")),
    ("bool-float", setter("levels.easy.weakening.noise_sigma", False),
     ("levels.easy.weakening.noise_sigma", "False")),
    ("int-bool", setter("levels.easy.search.quiescence", 1),
     ("levels.easy.search.quiescence", "true or false")),
    ("null-knob", setter("levels.easy.search.tt_log2", None), ("levels.easy.search.tt_log2", "None")),
    ("list-knob", setter("levels.easy.weakening.top_k", [1]), ("levels.easy.weakening.top_k", "[1]")),
    ("string-weight", setter("levels.hard.weights.king", "160"), ("levels.hard.weights.king", "'160'")),
    ("nan-knob", setter("levels.easy.weakening.noise_sigma", math.nan),
     ("levels.easy.weakening.noise_sigma", "finite", "nan")),
    ("inf-weight", setter("levels.easy.weights.man", math.inf), ("levels.easy.weights.man", "inf")),
    ("neg-inf-weight", setter("levels.easy.weights.man", -math.inf), ("levels.easy.weights.man", "-inf")),
    ("budget-too-big", setter("levels.hard.search.node_budget", 20_000_001),
     ("levels.hard.search.node_budget", "20000001", "[100, 20000000]")),
    ("budget-huge", setter("levels.hard.search.node_budget", 10**100), ("levels.hard.search.node_budget",)),
    ("depth-zero", setter("levels.hard.search.max_depth", 0), ("levels.hard.search.max_depth", "(got 0)")),
    ("depth-too-deep", setter("levels.hard.search.max_depth", 65), ("levels.hard.search.max_depth", "65")),
    ("tt-too-big", setter("levels.hard.search.tt_log2", 25), ("levels.hard.search.tt_log2", "25")),
    ("prob-above-one", setter("levels.easy.weakening.random_move_prob", 1.5), ("random_move_prob", "1.5")),
    ("negative-sigma", setter("levels.easy.weakening.noise_sigma", -1), ("noise_sigma", "-1")),
    ("negative-top-k", setter("levels.easy.weakening.top_k", -1), ("top_k", "-1")),
    ("hot-temperature", setter("levels.easy.weakening.temperature", 1e6), ("temperature", "1000000.0")),
    ("weight-out-of-range", setter("levels.easy.weights.man", 301), ("levels.easy.weights.man", "301")),
    ("schema-version-2", setter("schema_version", 2), ("schema_version", "(got 2)")),
    ("schema-version-text", setter("schema_version", "1"), ("schema_version", "'1'")),
    ("schema-version-bool", setter("schema_version", True), ("schema_version", "True")),
    ("unknown-variant", setter("variant", "chess"), ("variant", "'chess'", "known variants")),
    ("alias-variant", setter("variant", "checkers"), ("variant", "'checkers'", "'english'")),
    ("variant-not-text", setter("variant", 5), ("variant", "(got 5)")),
    ("levels-not-object", setter("levels", []), ("levels", "expected an object")),
    ("level-not-object", setter("levels.easy", "easy"), ("levels.easy", "expected an object")),
    ("search-not-object", setter("levels.easy.search", None), ("levels.easy.search", "expected an object")),
    ("elo-without-ci", setter("provenance.levels.hard.elo", 1500), ("provenance.levels.hard", "both")),
    ("ci-reversed", lambda d: d["provenance"]["levels"]["hard"].update(elo=5, elo_ci=[10, 0]),
     ("provenance.levels.hard.elo_ci", "low is above high")),
    ("elo-outside-ci", lambda d: d["provenance"]["levels"]["hard"].update(elo=50, elo_ci=[0, 10]),
     ("provenance.levels.hard.elo", "50")),
    ("ci-three", lambda d: d["provenance"]["levels"]["hard"].update(elo=5, elo_ci=[0, 5, 10]),
     ("provenance.levels.hard.elo_ci", "[0, 5, 10]")),
    ("ci-nan", lambda d: d["provenance"]["levels"]["hard"].update(elo=5, elo_ci=[0, math.nan]),
     ("provenance.levels.hard.elo_ci[1]", "nan")),
    ("elo-huge", lambda d: d["provenance"]["levels"]["hard"].update(elo=1e9, elo_ci=[0, 2e9]),
     ("provenance.levels.hard.elo",)),
    ("engine-version-number", setter("provenance.engine_version", 1),
     ("provenance.engine_version", "(got 1)")),
    ("experiment-number", setter("provenance.experiment", 7), ("provenance.experiment", "(got 7)")),
    ("description-too-long", setter("provenance.description", "x" * 10_001),
     ("provenance.description", "longer")),
    ("surrogate", setter("provenance.description", "bad \ud800"), ("provenance.description", "surrogate")),
    ("bench-negative", setter("provenance.bench_signature", -1), ("provenance.bench_signature", "-1")),
    ("bench-text", setter("provenance.bench_signature", "abc"), ("provenance.bench_signature", "'abc'")),
    ("bench-bool", setter("provenance.bench_signature", False), ("provenance.bench_signature", "False")),
    ("rated-against-itself", _rated({"hard": "hard"}), ("provenance.levels.hard.rated_against", "'hard'")),
    ("rated-against-unknown", _rated({"hard": "expert"}),
     ("provenance.levels.hard.rated_against", "'expert'")),
    ("rated-against-null", _rated({"hard": None}), ("provenance.levels.hard.rated_against", "None")),
    ("rated-against-cycle", _rated({"easy": "medium", "medium": "easy"}),
     ("cycle", "easy -> medium -> easy")),
    ("rated-against-no-elo", _rated({"hard": "medium"}, elo=False),
     ("provenance.levels.hard", "rated_against needs elo")),
]


@pytest.mark.parametrize(
    ("mutate", "needles"), [(m, n) for _, m, n in REJECTIONS], ids=[r[0] for r in REJECTIONS]
)
def test_rejections_name_file_field_and_value(
    mutate: Callable[[dict[str, Any]], None], needles: tuple[str, ...]
) -> None:
    doc = valid_doc()
    mutate(doc)
    with pytest.raises(ProfileError) as info:
        parse_profile(doc, source="'my.json'")
    message = str(info.value)
    assert message.startswith("invalid profile 'my.json': ")
    for needle in needles:
        assert needle in message, (needle, message)
    assert "\n" not in message and len(message) < 600


@pytest.mark.parametrize("param", PARAMS, ids=lambda p: p.name)
def test_every_knob_bound_is_enforced(param: Any) -> None:
    """Generated from the declaration table: just outside each bound is rejected, the bound is not."""
    if param.kind == "bool":
        return
    path = f"levels.hard.{param.group}.{param.name}"
    step = 1 if param.kind == "int" else 1e-9 * max(1.0, abs(param.high))
    for bad in (param.low - step, param.high + step):
        doc = valid_doc()
        setter(path, bad)(doc)
        with pytest.raises(ProfileError, match=path.replace(".", r"\.")):
            parse_profile(doc)
    for good in (param.low, param.high):
        doc = valid_doc()
        setter(path, good)(doc)
        assert getattr(parse_profile(doc).levels["hard"], param.name) == good


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: f.name)
def test_every_weight_bound_is_enforced(feature: Any) -> None:
    for bad in (feature.low - 0.5, feature.high + 0.5):
        doc = valid_doc()
        doc["levels"]["easy"]["weights"][feature.name] = bad
        with pytest.raises(ProfileError, match=rf"levels\.easy\.weights\.{feature.name}"):
            parse_profile(doc)


def test_int_accepted_for_float_and_normalised() -> None:
    doc = valid_doc()
    doc["levels"]["easy"]["weakening"]["noise_sigma"] = 150
    doc["levels"]["easy"]["weights"]["man"] = 100
    doc["levels"]["easy"]["weights"]["tempo"] = -0.0
    level = parse_profile(doc).levels["easy"]
    assert isinstance(level.noise_sigma, float) and level.noise_sigma == 150.0
    assert isinstance(level.weights["man"], float)
    assert level == parse_profile(valid_doc()).levels["easy"]
    assert level.profile_hash() == parse_profile(valid_doc()).levels["easy"].profile_hash()


# -- text and file level --------------------------------------------------------------------------
TEXT_REJECTIONS: list[tuple[str, bytes, str]] = [
    ("invalid-json", b"{", "invalid JSON"),
    ("empty", b"", "invalid JSON"),
    ("trailing-garbage", b"{} x", "invalid JSON"),
    ("top-array", b"[]", "expected an object"),
    ("top-number", b"3", "expected an object"),
    ("non-utf8", b'{"variant": "\xff\xfe"}', "not UTF-8"),
    ("bom", b"\xef\xbb\xbf{}", "invalid JSON"),
    ("deep-nesting", b"[" * 200_000 + b"]" * 200_000, "invalid JSON"),
    ("deep-objects", b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "invalid JSON"),
    ("huge-int-literal", b'{"schema_version": ' + b"9" * 5000 + b"}", "invalid JSON"),
]


@pytest.mark.parametrize(("data", "needle"), [(d, n) for _, d, n in TEXT_REJECTIONS],
                         ids=[t[0] for t in TEXT_REJECTIONS])
def test_text_rejections(tmp_path: Path, data: bytes, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert str(path) in str(info.value) and needle in str(info.value)


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ('"noise_sigma": 150.0', '"noise_sigma": NaN', "NaN"),
        ('"noise_sigma": 150.0', '"noise_sigma": Infinity', "Infinity"),
        ('"noise_sigma": 150.0', '"noise_sigma": -Infinity', "Infinity"),
        ('"noise_sigma": 150.0', '"noise_sigma": 1e400', "levels.easy.weakening.noise_sigma"),
        ('"schema_version": 1', '"schema_version": 1, "schema_version": 1', "duplicate key 'schema_version'"),
    ],
)
def test_json_literals_rejected(old: str, new: str, needle: str) -> None:
    text = (PROFILES / "english-baseline.json").read_text()
    assert old in text
    with pytest.raises(ProfileError, match=needle):
        parse_profile_text(text.replace(old, new, 1), source="'x.json'")


def test_file_too_large(tmp_path: Path) -> None:
    text = (PROFILES / "english-baseline.json").read_text()
    path = tmp_path / "big.json"
    path.write_text(text + " " * (MAX_PROFILE_BYTES + 1 - len(text)))  # valid JSON, just too big
    with pytest.raises(ProfileError, match="larger than"):
        load_profile(path)
    path.write_text(text + " " * (MAX_PROFILE_BYTES - len(text)))  # exactly at the cap: fine
    assert load_profile(path).variant == ENGLISH


def test_unreadable_paths(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"cannot read profile .*missing\.json"):
        load_profile(tmp_path / "missing.json")
    with pytest.raises(ProfileError, match="cannot read profile"):
        load_profile(tmp_path)


def test_requested_variant_must_match(tmp_path: Path) -> None:
    path = PROFILES / "english-baseline.json"
    assert load_profile(path, "english").variant == ENGLISH
    assert load_profile(path, "checkers").variant == ENGLISH  # the request may use an alias
    with pytest.raises(ProfileError, match=r"variant: this profile is for english, but brazilian"):
        load_profile(path, "brazilian")


# -- round trip, schema, shipped files ------------------------------------------------------------
@pytest.mark.parametrize("path", SHIPPED_FILES, ids=lambda p: p.name)
def test_shipped_files_load_and_are_canonical(path: Path) -> None:
    profile = load_profile(path)
    text = path.read_text()
    assert dump_profile(profile) == text  # files are written by dump_profile (sorted, indent 2)
    again = parse_profile_text(dump_profile(profile))
    assert again == profile and again.profile_hash() == profile.profile_hash()
    assert profile.schema_version == 1 and tuple(profile.levels) == LEVEL_NAMES
    calibrated = path in CALIBRATED_FILES
    for name, level in profile.levels.items():
        assert level.level == name and level.variant == profile.variant
        assert 1 <= level.max_depth <= 64 and level.node_budget <= 20_000_000 and level.tt_log2 <= 24
        elo, ci = profile.provenance.levels[name].elo, profile.provenance.levels[name].elo_ci
        if calibrated:  # measured: an Elo inside its CI
            assert elo is not None and ci is not None and ci[0] <= elo <= ci[1]
        else:  # hand-written starting points: never measured, default weights
            assert elo is None and ci is None
            assert dict(level.weights) == default_weights(profile.variant)


def test_every_variant_ships_a_calibrated_profile() -> None:
    assert [p.stem for p in CALIBRATED_FILES] == sorted(v.name for v in VARIANTS)
    for variant in VARIANTS:
        assert shipped_profile_path(variant).name == f"{variant.name}.json"  # calibrated wins


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_hand_written_starting_profile_for_every_variant(variant: Variant) -> None:
    name = "english-baseline" if variant.name == "english" else f"{variant.name}-start"
    profile = load_profile(PROFILES / f"{name}.json", variant)
    assert profile.variant == variant
    easy, medium, hard = (profile.levels[n] for n in LEVEL_NAMES)
    assert (easy.max_depth, easy.random_move_prob, easy.quiescence) == (2, 0.25, False)
    assert easy.noise_sigma > 0
    assert (medium.max_depth, medium.quiescence) == (4, True)
    assert (medium.noise_sigma, medium.random_move_prob, medium.top_k, medium.temperature) == (0, 0, 0, 0)
    assert (hard.max_depth, hard.node_budget, hard.quiescence) == (64, 200_000, True)
    assert load_level(variant, "hard", PROFILES / f"{name}.json") == hard


def test_english_baseline_reproduces_the_product() -> None:
    profile = load_profile(PROFILES / "english-baseline.json", "english")
    w = profile.levels["easy"].weights
    assert (w["man"], w["king"], w["advance"], w["back_rank"], w["center_king"]) == (100, 160, 3, 8, 6)
    assert "quiescence" in profile.provenance.levels["easy"].description.lower()
    other = load_profile(PROFILES / "english-otherproduct.json", "english")
    for level in other.levels.values():
        assert (level.max_depth, level.node_budget) == (2, 4000)


def test_shipped_dir_override_and_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROFILE_DIR_ENV, str(tmp_path))
    with pytest.raises(ProfileError, match="no shipped profile for english"):
        shipped_profile("english")
    baseline = (PROFILES / "english-baseline.json").read_text()
    (tmp_path / "english-baseline.json").write_text(baseline)
    assert shipped_profile_path("english").name == "english-baseline.json"
    calibrated = valid_doc()
    calibrated["levels"]["hard"]["search"]["node_budget"] = 123_456
    (tmp_path / "english.json").write_text(json.dumps(calibrated))
    assert shipped_profile("english").levels["hard"].node_budget == 123_456
    (tmp_path / "english.json").write_text(json.dumps(dict(calibrated, variant="suicide")))
    with pytest.raises(ProfileError, match="variant"):
        shipped_profile("english")
    with pytest.raises(ProfileError, match="unknown level 'expert'"):
        load_level("english", "expert", path=tmp_path / "english-baseline.json")


def test_schema_file_is_generated_from_the_tables() -> None:
    regenerate = 'python -c "from engine.profile import write_json_schema; write_json_schema()"'
    assert SCHEMA_FILE.read_text() == dump_json_schema(), f"schema file is stale; run {regenerate}"
    schema = profile_json_schema()
    level = schema["$defs"]["level"]["properties"]
    for p in PARAMS:
        spec = level[p.group]["properties"][p.name]
        if p.kind != "bool":
            assert (spec["minimum"], spec["maximum"]) == (p.low, p.high)
    weights = schema["$defs"]["weights"]["properties"]
    assert list(weights) == [f.name for f in FEATURES]


def test_schema_accepts_shipped_and_rejects_bad() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(profile_json_schema())
    jsonschema.Draft202012Validator.check_schema(profile_json_schema())
    for path in SHIPPED_FILES:
        validator.validate(json.loads(path.read_text()))
    loader_only = {"float-int", "ci-reversed", "elo-outside-ci", "elo-without-ci", "surrogate",
                   "rated-against-itself", "rated-against-cycle", "rated-against-no-elo"}  # relations
    for ident, mutate, _ in REJECTIONS:
        doc = valid_doc()
        mutate(doc)
        try:
            json.dumps(doc, allow_nan=False)
        except ValueError:
            continue  # NaN/inf cannot be written as JSON at all
        errors = list(validator.iter_errors(doc))
        assert bool(errors) != (ident in loader_only), ident


# -- value types ----------------------------------------------------------------------------------
def test_level_fields_match_the_declarations() -> None:
    names = [f.name for f in dataclasses.fields(LevelProfile)]
    assert names == ["variant", "level", "weights", *(p.name for p in PARAMS)]
    level = LevelProfile.from_knobs(ENGLISH, "x")
    assert level.knobs() == {p.name: p.default for p in PARAMS}
    assert list(level.weight_array()) == [default_weights(ENGLISH)[f.name] for f in FEATURES]


def test_level_construction_validates() -> None:
    with pytest.raises(ProfileError, match="node_budget"):
        LevelProfile.from_knobs(ENGLISH, "x", knobs={"node_budget": 10**9})
    with pytest.raises(ProfileError, match="unknown knob 'depth'"):
        LevelProfile.from_knobs(ENGLISH, "x", knobs={"depth": 3})
    level = LevelProfile.from_knobs(ENGLISH, "x")
    with pytest.raises(ProfileError, match="max_depth"):
        dataclasses.replace(level, max_depth=0)
    with pytest.raises(ProfileError, match="weights"):
        dataclasses.replace(level, weights={"man": 1.0})
    with pytest.raises(TypeError):
        level.weights["man"] = 5.0  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        level.max_depth = 3  # type: ignore[misc]


def test_profile_hash_identifies_behaviour() -> None:
    level = load_profile(PROFILES / "english-baseline.json", "english").levels["hard"]
    assert level.profile_hash() == "e7ebcf06774e6fef"  # changes only if the file's knobs or numbers change
    assert len(level.profile_hash()) == 16
    renamed = dataclasses.replace(level, level="other")
    assert renamed.profile_hash() == level.profile_hash()
    assert dataclasses.replace(level, node_budget=200_001).profile_hash() != level.profile_hash()
    weights = dict(level.weights, tempo=1.0)
    assert dataclasses.replace(level, weights=weights).profile_hash() != level.profile_hash()
    assert hash(level) == hash(copy.deepcopy(level))
    assert len({level, renamed}) == 2  # equal hash, different level name: different values


def test_profiles_pickle_and_copy() -> None:
    """Ray ships levels to workers by pickle; read-only mappings must survive it."""
    profile = shipped_profile("brazilian")
    again = pickle.loads(pickle.dumps(profile))
    assert again == profile and again.profile_hash() == profile.profile_hash()
    assert copy.deepcopy(profile.levels["easy"]) == profile.levels["easy"]
    with pytest.raises(TypeError):
        again.levels["easy"].weights.update(man=1.0)  # type: ignore[attr-defined]


def test_profile_constructed_in_code_round_trips() -> None:
    levels = {name: LevelProfile.from_knobs(get_variant("russian"), name, knobs={"noise_sigma": 12})
              for name in LEVEL_NAMES}
    prov = Provenance(bench_signature=123, source_config_hash="abc", tracking_run_id="run1",
                      experiment="experiments/001",
                      levels={"easy": LevelProvenance(900.5, (850.0, 950.0), "measured"),
                              "medium": LevelProvenance(), "hard": LevelProvenance()},
                      description="unit test")
    profile = Profile(1, get_variant("russian"), levels, prov)
    assert parse_profile_text(dump_profile(profile)) == profile
    assert profile_to_json(profile)["provenance"]["levels"]["easy"]["elo_ci"] == [850.0, 950.0]
    with pytest.raises(ProfileError, match="elo_ci"):
        Provenance(levels={"easy": LevelProvenance(900.0, (950.0, 850.0)), "medium": LevelProvenance(),
                           "hard": LevelProvenance()})
    with pytest.raises(ProfileError):
        Profile(1, get_variant("english"), levels, prov)  # russian levels in an english profile
    with pytest.raises(ProfileError):
        Profile(2, get_variant("russian"), levels, prov)
    with pytest.raises(ProfileError):
        Profile(1, get_variant("russian"), {"easy": levels["easy"]}, prov)


def test_rated_against_round_trips_and_is_written_only_when_set() -> None:
    doc = valid_doc()
    plain = dump_profile(parse_profile(copy.deepcopy(doc)))
    assert "rated_against" not in plain  # profiles without it keep their exact text
    _rated({"easy": "medium", "hard": "medium"})(doc)
    profile = parse_profile(doc)
    assert {n: lp.rated_against for n, lp in profile.provenance.levels.items()} == {
        "easy": "medium", "medium": None, "hard": "medium"}
    again = parse_profile(json.loads(dump_profile(profile)))
    assert again == profile and again.profile_hash() == profile.profile_hash()


def test_rated_against_chain_through_a_level_is_accepted_and_cycles_are_not() -> None:
    doc = valid_doc()
    _rated({"easy": "medium", "medium": "hard"})(doc)  # easy -> medium -> hard: a chain, no cycle
    assert parse_profile(doc).provenance.levels["easy"].rated_against == "medium"
    levels = dict(parse_profile(doc).provenance.levels)
    levels["hard"] = dataclasses.replace(levels["hard"], rated_against="easy")
    with pytest.raises(ProfileError, match="cycle"):
        Provenance(levels=levels)
