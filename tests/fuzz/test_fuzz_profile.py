"""Fuzzing profile JSON text and files: ``parse_profile_text`` and ``load_profile``.

tests/engine/test_profile_fuzz.py already mutates the decoded baseline document and damages
bytes; this file works on the TEXT and judges every outcome against an independent oracle
written from the documented rules (module docstring, engine.params, engine.features):

- the loader accepts a text exactly when the oracle does (strict both ways: nothing out of
  range, mistyped, duplicated, non-finite or unknown gets in, and nothing valid is refused);
- an accepted profile holds exactly the values written (ints stay ints, floats equal) and
  survives dump -> load unchanged;
- only :class:`~engine.errors.ProfileError` escapes, for text, bytes and files; no hang.

Inputs: JSON token soup, token-level mutations of the shipped profiles (numbers made huge,
negative, NaN, float-for-int, bool; keys duplicated or dropped; deep nesting; unicode), one
declared field at a time set to boundary values, random valid profiles in random JSON layouts,
and files (random bytes, BOMs, UTF-16, oversize, odd paths).
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import ProfileError
from engine.features import FEATURES
from engine.params import PARAMS
from engine.profile import (
    MAX_MEASURE,
    MAX_PROFILE_BYTES,
    dump_profile,
    load_profile,
    parse_profile_text,
    profile_to_json,
)
from engine.variants import VARIANTS
from tests.fuzz.conftest import (
    REPO,
    fuzz_case,
    fuzz_settings,
    mutate_tokens,
    outcome,
    tolerate,
    undocumented,
    weird_token,
)

PARSER = "profile"
SHIPPED = sorted((REPO / "engine" / "profiles").glob("*.json"))
SHIPPED_TEXT = [path.read_text(encoding="utf-8") for path in SHIPPED]
LEVELS = ("easy", "medium", "hard")
ELO_LIMIT = 10_000.0
SHORT, LONG = 256, 10_000

# ---- the oracle: the documented rules, written independently of engine/profile.py -------------


class Invalid(Exception):
    pass


def _keys(obj: Any, keys: list[str] | tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(obj, dict) or set(obj) != set(keys):
        raise Invalid(f"expected exactly {sorted(keys)}")
    return obj


def _number(value: Any, kind: str, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Invalid("not a number")
    if kind == "int" and not isinstance(value, int):
        raise Invalid("not an integer")
    if isinstance(value, float) and not math.isfinite(value):
        raise Invalid("not finite")
    if not low <= value <= high:
        raise Invalid("out of range")


def _text(value: Any, limit: int, nullable: bool) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, str) or len(value) > limit or any("\ud800" <= c <= "\udfff" for c in value):
        raise Invalid("bad text")


def check_document(doc: Any) -> None:
    """Raise Invalid unless ``doc`` (decoded JSON) is a valid profile by the documented rules."""
    top = _keys(doc, ("schema_version", "variant", "levels", "provenance"))
    if type(top["schema_version"]) is not int or top["schema_version"] != 1:
        raise Invalid("schema_version")
    if top["variant"] not in [v.name for v in VARIANTS]:
        raise Invalid("variant")
    for level in _keys(top["levels"], LEVELS).values():
        groups = _keys(level, ("weights", "search", "weakening"))
        weights = _keys(groups["weights"], [f.name for f in FEATURES])
        for f in FEATURES:
            _number(weights[f.name], "float", f.low, f.high)
        for group in ("search", "weakening"):
            params = [p for p in PARAMS if p.group == group]
            section = _keys(groups[group], [p.name for p in params])
            for p in params:
                if p.kind == "bool":
                    if not isinstance(section[p.name], bool):
                        raise Invalid(p.name)
                else:
                    _number(section[p.name], p.kind, p.low, p.high)
    prov = _keys(
        top["provenance"],
        (
            "engine_version", "bench_signature", "source_config_hash", "tracking_run_id", "experiment",
            "levels", "description",
        ),
    )
    _text(prov["engine_version"], SHORT, nullable=False)
    if prov["bench_signature"] is not None:
        _number(prov["bench_signature"], "int", 0, 2**63 - 1)
    for key in ("source_config_hash", "tracking_run_id", "experiment"):
        _text(prov[key], SHORT, nullable=True)
    _text(prov["description"], LONG, nullable=False)
    prov_levels = _keys(prov["levels"], LEVELS)
    for name, lp in prov_levels.items():
        optional = tuple(k for k in ("rated_against", "measures") if isinstance(lp, dict) and k in lp)
        lp = _keys(lp, ("elo", "elo_ci", "description", *optional))
        if "measures" in lp:
            _check_measures(lp["measures"])
        if "rated_against" in lp and (lp["rated_against"] not in LEVELS or lp["rated_against"] == name):
            raise Invalid("rated_against names another level")
        if "rated_against" in lp and lp["elo"] is None:
            raise Invalid("rated_against needs an Elo")
        _text(lp["description"], LONG, nullable=False)
        if lp["elo"] is not None:
            _number(lp["elo"], "float", -ELO_LIMIT, ELO_LIMIT)
        ci = lp["elo_ci"]
        if ci is not None:
            if not isinstance(ci, list) or len(ci) != 2:
                raise Invalid("elo_ci")
            for bound in ci:
                _number(bound, "float", -ELO_LIMIT, ELO_LIMIT)
            if ci[0] > ci[1]:
                raise Invalid("elo_ci order")
        if (lp["elo"] is None) != (ci is None):
            raise Invalid("elo and elo_ci")
        if ci is not None and not ci[0] <= lp["elo"] <= ci[1]:
            raise Invalid("elo outside elo_ci")
    for name in LEVELS:  # following rated_against must end at a level rated on its own, no cycle
        seen = [name]
        step = prov_levels[name].get("rated_against")
        while step is not None:
            if prov_levels[step]["elo"] is None or step in seen:
                raise Invalid("rated_against chain")
            seen.append(step)
            step = prov_levels[step].get("rated_against")


def _check_measures(measures: Any) -> None:
    """``provenance.levels.<name>.measures``: nodes per move and median depth in [0, MAX_MEASURE]
    (the depth may be null), shares in [0, 1] (blunder rate and score against the next level may
    be null), a score against each of the product's levels."""
    m = _keys(measures, ("nodes_per_move", "median_depth", "blunder_rate", "expected_score_next",
                         "expected_score_product"))
    for key, high in (("nodes_per_move", MAX_MEASURE), ("median_depth", MAX_MEASURE), ("blunder_rate", 1.0),
                      ("expected_score_next", 1.0)):
        if m[key] is not None or key == "nodes_per_move":
            _number(m[key], "float", 0.0, high)
    for score in _keys(m["expected_score_product"], LEVELS).values():
        _number(score, "float", 0.0, 1.0)


def _strict_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Invalid("duplicate key")
    return dict(pairs)


def decode(data: str | bytes) -> Any:
    """The document ``data`` holds, or Invalid (not UTF-8, too big, bad JSON, duplicate keys)."""
    if len(data) > MAX_PROFILE_BYTES:
        raise Invalid("too big")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Invalid("not UTF-8") from None
    try:
        return json.loads(data, object_pairs_hook=_strict_pairs)
    except (ValueError, RecursionError) as err:  # JSONDecodeError, over-long integers
        raise Invalid(str(err)[:80]) from None


def same_values(written: Any, read: Any, path: str = "") -> None:
    """Every leaf of the accepted document equals what the profile holds, with the same kind."""
    if isinstance(written, dict):
        assert isinstance(read, dict) and set(written) == set(read), path
        for key in written:
            same_values(written[key], read[key], f"{path}.{key}")
    elif isinstance(written, list):
        assert isinstance(read, list | tuple) and len(written) == len(read), path
        for i, (w, r) in enumerate(zip(written, read, strict=True)):
            same_values(w, r, f"{path}[{i}]")
    else:
        assert written == read, f"{path}: wrote {written!r}, profile holds {read!r}"
        assert isinstance(written, bool) == isinstance(read, bool), path
        if type(written) is int and type(read) is float:  # an int where a float is declared is fine
            return
        assert type(written) is type(read), f"{path}: wrote {written!r}, profile holds {read!r}"


def check_profile(data: str | bytes, path: Path | None = None) -> None:
    """One input (text, bytes or a file): accepted exactly when the oracle accepts, values exact."""
    show = path if path is not None else data
    try:
        doc = decode(data)
        check_document(doc)
        valid = True
    except Invalid:
        valid = False
    with fuzz_case(PARSER, show=show):
        try:
            profile = parse_profile_text(data, "<fuzz>") if path is None else load_profile(path)
        except ProfileError as err:
            assert len(str(err)) < 2000 and "\n" not in str(err).strip(), "error is not one short line"
            outcome("rejected", str(err).split(": ", 2)[-1][:24])
            assert not valid, f"a valid profile was refused: {err}"
            return
        except Exception as err:
            if tolerate(err, "nul-path"):
                return
            undocumented(PARSER, err, show)
    outcome("accepted")
    assert valid, f"the loader accepted a profile the documented rules refuse: {show!r:.300}"
    same_values(doc, profile_to_json(profile))
    text = dump_profile(profile)
    assert parse_profile_text(text) == profile
    assert dump_profile(parse_profile_text(text)) == text


# ---- strategies --------------------------------------------------------------------------------

_JSON_TOKEN = re.compile(
    r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|[{}\[\]:,]|\s+)'
)
KEY_NAMES = sorted(
    {
        "schema_version", "variant", "levels", "provenance", *LEVELS, "weights", "search", "weakening",
        *(f.name for f in FEATURES),
        *(p.name for p in PARAMS),
        "engine_version", "bench_signature", "source_config_hash", "tracking_run_id", "experiment",
        "description", "elo", "elo_ci", "rated_against",
    }
)
json_numbers = st.one_of(
    st.sampled_from(
        [
            "0", "-0", "1", "-1", "4.0", "1e2", "1E2", "1e400", "-1e400", "1e-400", "0.1", "-0.0", "64", "65",
            "100", "99", "20000001", "9223372036854775807", "9223372036854775808", "NaN", "Infinity",
            "-Infinity", "01", "+1", ".5", "1.", "0x10", "1" * 4301, "1" * 30, "3.0000000000000001",
        ]
    ),
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: json.dumps(x)),
)
json_strings = st.one_of(
    st.sampled_from(
        [f'"{k}"' for k in KEY_NAMES]
        + [
            '"english"', '"checkers"', '"English"', '""', '"\\ud800"', '"\\u0000"', '"max\\u005fdepth"',
            '"\\"',
            '"x' + "y" * 300 + '"',
        ]
    ),
    st.text(max_size=8).map(json.dumps),
)
json_tokens = st.one_of(
    json_numbers,
    json_strings,
    st.sampled_from(["{", "}", "[", "]", ":", ",", "true", "false", "null", " ", "\n", "\ufeff", "//", "'"]),
    st.sampled_from(["[" * 3000, '{"a":' * 3000, "[" * 100 + "]" * 100]),
)
json_soup = st.lists(json_tokens, max_size=40).map("".join)


SHIPPED_TOKENS = [[t for t in _JSON_TOKEN.split(text) if t] for text in SHIPPED_TEXT]


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    tokens = draw(st.sampled_from(SHIPPED_TOKENS))
    return draw(mutate_tokens(tokens, st.one_of(json_tokens, weird_token), max_ops=4))


def numeric_fields() -> list[tuple[tuple[str, ...], str, float, float]]:
    """(path, kind, low, high) of every declared number in a profile document."""
    out: list[tuple[tuple[str, ...], str, float, float]] = []
    for level in LEVELS:
        out += [(("levels", level, "weights", f.name), "float", f.low, f.high) for f in FEATURES]
        out += [(("levels", level, p.group, p.name), p.kind, p.low, p.high) for p in PARAMS]
        out += [(("provenance", "levels", level, "elo"), "float", -ELO_LIMIT, ELO_LIMIT)]
    out.append((("provenance", "bench_signature"), "int", 0, 2**63 - 1))
    return out


NUMERIC_FIELDS = numeric_fields()


@st.composite
def boundary_values(draw: st.DrawFn, kind: str, low: float, high: float) -> Any:
    if kind == "bool":
        return draw(st.sampled_from([True, False, 0, 1, "true", None]))
    edges = [low, high, (low + high) / 2, math.nextafter(low, -math.inf), math.nextafter(high, math.inf)]
    ints = [int(low), int(high), int(low) - 1, int(high) + 1, 0, -1, 10**20, -(10**20), 2**63, 2**64]
    return draw(
        st.one_of(
            st.sampled_from(
                edges
                + ints
                + [
                    -0.0, 1e308, -1e308, 5e-324,
                    float(int(high)),
                    True, False, None, "5", [], {}, [1], math.nan, math.inf, -math.inf,
                ]
            ),
            st.floats(min_value=low, max_value=high) if kind == "float" else st.integers(int(low), int(high)),
        )
    )


@st.composite
def one_field_changed(draw: st.DrawFn) -> str:
    doc = json.loads(draw(st.sampled_from(SHIPPED_TEXT)))
    path, kind, low, high = draw(st.sampled_from(NUMERIC_FIELDS))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = draw(boundary_values(kind, low, high))
    if path[-1] == "elo" and draw(st.booleans()):  # keep the interval consistent half the time
        value = node["elo"]
        node["elo_ci"] = None if value is None else [value, value]
    return json.dumps(doc)  # NaN and infinities become NaN/Infinity literals


@st.composite
def valid_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A random profile that the documented rules accept."""

    def number(kind: str, low: float, high: float) -> Any:
        if kind == "int":
            return draw(st.integers(int(low), int(high)))
        return draw(st.one_of(st.floats(low, high), st.integers(math.ceil(low), math.floor(high))))

    def text(limit: int) -> str:  # short random text, now and then exactly at the length limit
        if draw(st.integers(0, 15)) == 0:
            return draw(st.sampled_from(["a" * limit, "\U0001f600" * limit, '\n"\\' * (limit // 3)]))
        return draw(st.text(max_size=12).filter(lambda s: not any("\ud800" <= c <= "\udfff" for c in s)))

    levels = {}
    for level in LEVELS:
        entry: dict[str, Any] = {"weights": {f.name: number("float", f.low, f.high) for f in FEATURES}}
        for group in ("search", "weakening"):
            entry[group] = {
                p.name: draw(st.booleans()) if p.kind == "bool" else number(p.kind, p.low, p.high)
                for p in PARAMS
                if p.group == group
            }
        levels[level] = entry
    prov_levels = {}
    for level in LEVELS:
        if draw(st.booleans()):
            a, b, c = sorted(number("float", -ELO_LIMIT, ELO_LIMIT) for _ in range(3))
            prov_levels[level] = {"elo": b, "elo_ci": [a, c], "description": text(LONG)}
        else:
            prov_levels[level] = {"elo": None, "elo_ci": None, "description": text(LONG)}
    if prov_levels["medium"]["elo"] is not None:  # a chained calibration: easy and hard against medium
        for level in ("easy", "hard"):
            if prov_levels[level]["elo"] is not None and draw(st.booleans()):
                prov_levels[level]["rated_against"] = "medium"
    optional = st.one_of(
        st.none(), st.text(max_size=SHORT).filter(lambda s: not re.search("[\ud800-\udfff]", s))
    )
    return {
        "schema_version": 1,
        "variant": draw(st.sampled_from([v.name for v in VARIANTS])),
        "levels": levels,
        "provenance": {
            "engine_version": text(SHORT),
            "bench_signature": draw(st.one_of(st.none(), st.integers(0, 2**63 - 1))),
            "source_config_hash": draw(optional),
            "tracking_run_id": draw(optional),
            "experiment": draw(optional),
            "levels": prov_levels,
            "description": text(LONG),
        },
    }


layouts = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 0, 2, "\t"]),
        "sort_keys": st.booleans(),
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([None, (",", ":"), (" , ", " : ")]),
    }
)

file_bytes = st.one_of(
    st.binary(max_size=200),
    st.sampled_from(SHIPPED_TEXT).map(lambda t: t.encode("utf-8")),
    st.sampled_from(SHIPPED_TEXT).map(lambda t: b"\xef\xbb\xbf" + t.encode("utf-8")),
    st.sampled_from(SHIPPED_TEXT).map(lambda t: t.encode("utf-16")),
    st.sampled_from(SHIPPED_TEXT).map(lambda t: t.encode("utf-8") + b" " * (MAX_PROFILE_BYTES + 1 - len(t))),
    mutated_text().map(lambda t: t.encode("utf-8", "surrogatepass")),
)

_TMP: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _scratch_dir() -> Iterator[None]:
    with tempfile.TemporaryDirectory(prefix="fuzz-profile-") as name:
        _TMP[:] = [Path(name)]
        (Path(name) / "a-directory.json").mkdir()
        yield


# ---- properties --------------------------------------------------------------------------------


@fuzz_settings(200)
@given(text=json_soup)
def test_json_token_soup(text: str) -> None:
    check_profile(text)


@fuzz_settings(200)
@given(text=mutated_text())
def test_mutated_shipped_profile_text(text: str) -> None:
    check_profile(text)


@fuzz_settings(200)
@given(text=one_field_changed())
def test_declared_ranges_are_exact(text: str) -> None:
    check_profile(text)


@fuzz_settings(50)
@given(doc=valid_documents(), layout=layouts)
def test_valid_profiles_round_trip_in_any_layout(doc: dict[str, Any], layout: dict[str, Any]) -> None:
    text = json.dumps(doc, **layout)
    check_document(doc)
    check_profile(text)
    assert parse_profile_text(text) == parse_profile_text(json.dumps(doc))


@fuzz_settings(100)
@given(
    data=file_bytes,
    name=st.sampled_from(
        ["p.json", "missing.json", "a-directory.json", "x" * 300, "nul\x00.json", "sub/dir.json"]
    ),
)
def test_profile_files(data: bytes, name: str) -> None:
    path = _TMP[0] / name
    if name == "p.json":
        path.write_bytes(data)
        check_profile(data, path)
    else:
        check_missing_file(path)


def check_missing_file(path: Path) -> None:
    with fuzz_case(PARSER, show=path):
        try:
            load_profile(path)
        except ProfileError:
            outcome("rejected", "file")
            return
        except Exception as err:
            if tolerate(err, "nul-path"):
                return
            undocumented(PARSER, err, path)
    raise AssertionError(f"load_profile({str(path)!r}) succeeded on a path that holds no profile")


# ---- known bugs ---------------------------------------------------------------------------------


def test_regression_profile_path_with_nul_byte() -> None:
    with pytest.raises(ProfileError):
        load_profile("engine/profiles/english\x00.json")
