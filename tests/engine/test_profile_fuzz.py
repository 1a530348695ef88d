"""Fuzzing the strict profile loader: any input gives a Profile or a ProfileError, nothing else.

Random JSON-ish documents, structural mutations of a valid profile (wrong types, huge
numbers, NaN, nested junk, unicode), byte-level damage and deep nesting. A fast default run
and a larger ``slow`` run. Whatever the loader accepts must also satisfy the JSON Schema and
survive a dump/load round trip.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import ProfileError
from engine.profile import (
    Profile,
    dump_profile,
    parse_profile,
    parse_profile_text,
    profile_json_schema,
)

REPO = Path(__file__).resolve().parents[2]
BASELINE_TEXT = (REPO / "engine" / "profiles" / "english-baseline.json").read_text()
BASELINE: dict[str, Any] = json.loads(BASELINE_TEXT)

FAST = settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=3000, deadline=2000, suppress_health_check=[HealthCheck.too_slow])

try:
    import jsonschema

    _VALIDATOR: Any = jsonschema.Draft202012Validator(profile_json_schema())
except ImportError:  # jsonschema is a dev/test-only dependency
    _VALIDATOR = None

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**60), max_value=10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 2, 64, 65, 100, 99, 200_000, 20_000_001, 0.5, 1.0, -0.0, 1e308, 5e-324]),
    st.text(max_size=30),
    st.text(alphabet=st.characters(codec=None), max_size=10),  # includes surrogates
    st.sampled_from(["english", "checkers", "easy", "hard", "weights", "search", "NaN", "\x00", "\u202e"]),
)
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.text(max_size=12), inner, max_size=5),
    ),
    max_leaves=25,
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys / indices) inside a JSON document."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(paths(value, (*prefix, index)))
    return out


ALL_PATHS = paths(BASELINE)[1:]


def check_outcome(obj: Any, source: str = "<fuzz>") -> Profile | None:
    """Parse; only ProfileError may escape. Accepted documents must be schema-valid and round-trip."""
    try:
        profile = parse_profile(obj, source=source)
    except ProfileError as err:
        message = str(err)
        assert message.startswith(f"invalid profile {source}:") and len(message) < 2000
        return None
    assert parse_profile_text(dump_profile(profile)) == profile
    if _VALIDATOR is not None:
        assert not list(_VALIDATOR.iter_errors(obj))
    return profile


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """The baseline with 1-3 structural mutations at random paths."""
    doc = copy.deepcopy(BASELINE)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(ALL_PATHS))
        parent: Any = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            last = path[-1]
            _ = parent[last]  # the path may no longer exist after an earlier mutation
        except (KeyError, IndexError, TypeError):
            continue
        action = draw(st.sampled_from(["replace", "delete", "add", "wrap", "numeric"]))
        if action == "replace":
            parent[last] = draw(junk)
        elif action == "delete" and isinstance(parent, dict):
            del parent[last]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=10))] = draw(junk)
        elif action == "wrap":
            parent[last] = [parent[last]] if draw(st.booleans()) else {"value": parent[last]}
        elif action == "numeric":
            parent[last] = draw(st.one_of(st.floats(), st.integers(), st.booleans()))
    return doc


def damage(edits: list[tuple[int, bytes]]) -> None:
    """Overwrite single bytes of the valid file with short byte strings, then load it."""
    data = bytearray(BASELINE_TEXT.encode())
    for position, chunk in edits:
        data[position:position + 1] = chunk
    run_text(bytes(data))


def run_text(data: bytes) -> None:
    try:
        parse_profile_text(data, source="<bytes>")
    except ProfileError:
        pass


# -- fast runs ----------------------------------------------------------------------------------
@FAST
@given(junk)
def test_random_documents(obj: Any) -> None:
    assert check_outcome(obj) is None  # random junk is never a valid profile


@FAST
@given(mutated())
def test_mutated_profiles(doc: Any) -> None:
    check_outcome(doc)


@FAST
@given(st.lists(st.tuples(st.integers(0, len(BASELINE_TEXT)), st.binary(max_size=4)), min_size=1, max_size=4))
def test_byte_damage(edits: list[tuple[int, bytes]]) -> None:
    damage(edits)


@FAST
@given(junk)
def test_random_json_text(obj: Any) -> None:
    try:
        text = json.dumps(obj)
    except (ValueError, TypeError):
        return
    run_text(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=30, deadline=5000)
@given(st.integers(1, 300_000), st.sampled_from(["[", '{"a":', '{"levels":']))
def test_deep_nesting(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    inner = "1" if opener != "[" else ""
    text = opener * depth + inner + closer * depth
    if len(text) > 1 << 20:
        text = text[: 1 << 20]
    with pytest.raises(ProfileError):
        parse_profile_text(text)


def test_python_objects_that_are_not_json() -> None:
    """parse_profile on in-memory objects: tuples, sets, bytes, NaN, non-string keys."""
    for bad in ((1, 2), {1, 2}, b"{}", math.nan, object(), {1: 2}, {None: 1}, {("a",): 1}, 10**6000):
        with pytest.raises(ProfileError):
            parse_profile(bad)
    doc = copy.deepcopy(BASELINE)
    doc["levels"]["hard"]["search"]["node_budget"] = 10**6000
    with pytest.raises(ProfileError, match="too long to print"):
        parse_profile(doc)
    doc = copy.deepcopy(BASELINE)
    doc["levels"]["easy"]["weights"] = tuple(doc["levels"]["easy"]["weights"].items())
    with pytest.raises(ProfileError, match=r"levels\.easy\.weights"):
        parse_profile(doc)


# -- slow runs ----------------------------------------------------------------------------------
@pytest.mark.slow
@SLOW
@given(mutated())
def test_mutated_profiles_many(doc: Any) -> None:
    check_outcome(doc)


@pytest.mark.slow
@SLOW
@given(junk)
def test_random_documents_many(obj: Any) -> None:
    assert check_outcome(obj) is None


@pytest.mark.slow
@SLOW
@given(st.lists(st.tuples(st.integers(0, len(BASELINE_TEXT)), st.binary(max_size=8)), min_size=1, max_size=8))
def test_byte_damage_many(edits: list[tuple[int, bytes]]) -> None:
    damage(edits)
