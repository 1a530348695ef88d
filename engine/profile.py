"""Difficulty profiles: typed values, a strict JSON loader, a dumper and the JSON Schema.

A profile file holds, for one variant, three levels (easy, medium, hard), each made of the
evaluation weights (``engine.features.FEATURES``) and the search and weakening knobs
(``engine.params.PARAMS``), plus provenance. Both tables are the single source of names,
types and ranges: the loader, :func:`profile_json_schema` and the dumper all read them.

The loader is strict on purpose: unknown or missing keys, wrong types (``true`` is not an
integer; an integer is accepted where a float is expected), NaN/infinity, values outside the
declared range, a wrong schema version or variant, duplicate keys, invalid JSON, non-UTF-8
bytes and oversized files all raise :class:`~engine.errors.ProfileError` naming the file, the
JSON path of the field and the offending value. Nothing is clamped and nothing is executed.
Every value is bounded by the declarations, so no profile can make the search unbounded.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import numpy as np
import numpy.typing as npt

from engine import __version__
from engine.errors import ProfileError
from engine.features import FEATURES, default_weights, weight_vector
from engine.params import GROUPS, PARAMS, Param, default_knobs, params_of
from engine.variants import VARIANTS, Variant, get_variant

SCHEMA_VERSION = 1
LEVEL_NAMES: tuple[str, ...] = ("easy", "medium", "hard")
MAX_PROFILE_BYTES = 1 << 20  # a profile is a few kB; anything near 1 MiB is not a profile
PROFILE_DIR_ENV = "DRAUGHTS_PROFILE_DIR"
PACKAGE_PROFILES = "profiles"  # package data folder of the shipped profiles, inside engine/
ELO_LIMIT = 10_000.0  # |elo| and |elo_ci| bounds: finite, far beyond any real rating
MAX_SHORT_TEXT = 256  # engine_version, hashes, run ids, experiment path
MAX_DESCRIPTION = 10_000
MAX_BENCH_SIGNATURE = 2**63 - 1
MAX_MEASURE = 1e12  # nodes per move and depth: finite, far beyond any real search
# Shipped files, most specific first: calibrated export, hand-written baseline, starting point.
SHIPPED_SUFFIXES: tuple[str, ...] = ("", "-baseline", "-start")

Knob = int | float | bool
_LEVEL_KEYS: tuple[str, ...] = ("weights", *GROUPS)
_TOP_KEYS: tuple[str, ...] = ("schema_version", "variant", "levels", "provenance")
_PROVENANCE_KEYS: tuple[str, ...] = (
    "engine_version",
    "bench_signature",
    "source_config_hash",
    "tracking_run_id",
    "experiment",
    "levels",
    "description",
)
_OPTIONAL_TEXT: tuple[str, ...] = ("source_config_hash", "tracking_run_id", "experiment")
_LEVEL_PROVENANCE_KEYS: tuple[str, ...] = ("elo", "elo_ci", "description")
#: Optional: written only when set, so profiles without it keep their exact text.
_LEVEL_PROVENANCE_OPTIONAL: tuple[str, ...] = ("rated_against", "measures")
#: What a calibration measured about a level (``provenance.levels.<name>.measures``, optional).
_MEASURE_KEYS: tuple[str, ...] = ("nodes_per_move", "median_depth", "blunder_rate", "expected_score_next",
                                  "expected_score_product")
_NULLABLE_MEASURES: tuple[str, ...] = ("median_depth", "blunder_rate", "expected_score_next")

_SHOW = reprlib.Repr()
_SHOW.maxlevel = 2
_SHOW.maxstring = 60
_SHOW.maxother = 60
_SHOW.maxlong = 40
_SHOW.maxdict = _SHOW.maxlist = _SHOW.maxtuple = 4


_K = TypeVar("_K")
_V = TypeVar("_V")


class FrozenDict(dict[_K, _V]):
    """A dict that refuses changes: read-only profile values that still pickle (Ray) and dump."""

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("profile values are read-only; build a new one (dataclasses.replace)")

    def __setitem__(self, key: _K, value: _V) -> None:
        self._read_only()

    def __delitem__(self, key: _K) -> None:
        self._read_only()

    def clear(self) -> None:
        self._read_only()

    def popitem(self) -> tuple[_K, _V]:
        self._read_only()

    pop = setdefault = update = __ior__ = _read_only

    def __reduce__(self) -> tuple[type[FrozenDict[_K, _V]], tuple[dict[_K, _V]]]:
        return (type(self), (dict(self),))


def _show(value: object) -> str:
    """A short, safe rendering of any value for an error message (depth and length capped)."""
    try:
        return _SHOW.repr(value)
    except ValueError:  # an int too long to print (sys.get_int_max_str_digits)
        return f"<{type(value).__name__} too long to print>"


class _Where:
    """Builds the errors of one source: ``invalid profile SOURCE: PATH: PROBLEM (got VALUE)``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str, value: object = None, show_value: bool = True) -> ProfileError:
        got = f" (got {_show(value)})" if show_value else ""
        where = path or "<top level>"
        return ProfileError(f"invalid profile {self.source}: {where}: {problem}{got}")

    def obj(self, value: object, path: str, keys: tuple[str, ...],
            optional: tuple[str, ...] = ()) -> dict[str, Any]:
        """``value`` must be an object with exactly ``keys``, plus any of ``optional``."""
        if not isinstance(value, dict):
            raise self.fail(path, "expected an object", value)
        allowed = keys + optional
        unknown = [k for k in value if k not in allowed]
        if unknown:
            key = unknown[0]
            name = key if isinstance(key, str) and len(key) <= 60 else _show(key)
            raise self.fail(f"{path}.{name}" if path else name,
                            f"unknown key; expected only {', '.join(allowed)}", value[key])
        missing = [k for k in keys if k not in value]
        if missing:
            raise self.fail(path, f"missing key {missing[0]!r}", show_value=False)
        return value

    def number(self, value: object, path: str, kind: str, low: float, high: float) -> int | float:
        """An int (``kind == 'int'``) or a finite float in ``[low, high]``; never a bool."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(path, f"expected {'an integer' if kind == 'int' else 'a number'}", value)
        if kind == "int" and not isinstance(value, int):
            raise self.fail(path, "expected an integer", value)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(path, "expected a finite number", value)
        if not low <= value <= high:
            raise self.fail(path, f"outside the declared range [{_fmt(low)}, {_fmt(high)}]", value)
        if kind == "int":
            return int(value)
        return float(value) + 0.0  # normalises -0.0 so equal profiles hash equally

    def param(self, p: Param, value: object, path: str) -> Knob:
        if p.kind == "bool":
            if not isinstance(value, bool):
                raise self.fail(path, "expected true or false", value)
            return value
        return self.number(value, path, p.kind, p.low, p.high)

    def text(self, value: object, path: str, limit: int, nullable: bool) -> str | None:
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise self.fail(path, "expected a string or null" if nullable else "expected a string", value)
        if len(value) > limit:
            raise self.fail(path, f"longer than {limit} characters", value)
        if any("\ud800" <= ch <= "\udfff" for ch in value):
            raise self.fail(path, "contains an unpaired UTF-16 surrogate", value)
        return value


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


# -- value types --------------------------------------------------------------------------------
@dataclass(frozen=True)
class LevelProfile:
    """One playing strength: evaluation weights plus every search and weakening knob.

    Construction validates everything against the declaration tables (so even a profile
    built in code, e.g. by the tuner, is bounded); weights are stored read-only. The knob
    fields are those of ``engine.params.PARAMS`` in order, typed by their kind, so that code
    reading ``level.max_depth`` is statically typed; a test holds the two equal, and every
    check loops over PARAMS.
    """

    variant: Variant
    level: str
    weights: Mapping[str, float]
    max_depth: int
    node_budget: int
    quiescence: bool
    reductions: bool
    partial_iterations: bool
    tt_keep: bool
    tt_log2: int
    noise_sigma: float
    random_move_prob: float
    top_k: int
    temperature: float

    def __post_init__(self) -> None:
        where = _Where(f"level {self.level!r}")
        if not isinstance(self.variant, Variant):
            raise where.fail("variant", "expected a Variant", self.variant)
        if not isinstance(self.level, str) or not self.level:
            raise where.fail("level", "expected a non-empty name", self.level)
        object.__setattr__(self, "weights", FrozenDict(_check_weights(where, self.weights, "weights")))
        for p in PARAMS:
            object.__setattr__(self, p.name, where.param(p, getattr(self, p.name), f"{p.group}.{p.name}"))

    @classmethod
    def from_knobs(
        cls,
        variant: Variant,
        level: str,
        weights: Mapping[str, float] | None = None,
        knobs: Mapping[str, Knob] | None = None,
    ) -> LevelProfile:
        """A level from a weights dict and a knobs dict; omitted ones take their defaults."""
        chosen = dict(default_knobs())
        if knobs is not None:
            unknown = sorted(set(knobs) - set(chosen))
            if unknown:
                raise ProfileError(f"invalid level {level!r}: unknown knob {unknown[0]!r}")
            chosen.update(knobs)
        return cls(variant, level, default_weights(variant) if weights is None else dict(weights), **chosen)  # type: ignore[arg-type]

    def weight_array(self) -> npt.NDArray[np.float64]:
        """Weights in feature order, as the search kernel expects them."""
        return weight_vector(dict(self.weights))

    def knobs(self) -> dict[str, Knob]:
        """Every knob of ``engine.params.PARAMS`` by name, in declaration order."""
        return {p.name: getattr(self, p.name) for p in PARAMS}

    def unweakened(self) -> LevelProfile:
        """This level at full strength: every knob that weakens when raised set to its lowest
        value (its off position), the search knobs unchanged. A hint's player, for example."""
        off = {p.name: p.low for p in PARAMS if p.direction == "weaker"}
        return dataclasses.replace(self, **off)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, Any]:
        """The level as it appears in a profile file (``weights``, ``search``, ``weakening``)."""
        out: dict[str, Any] = {"weights": {f.name: self.weights[f.name] for f in FEATURES}}
        for group in GROUPS:
            out[group] = {p.name: getattr(self, p.name) for p in params_of(group)}
        return out

    def profile_hash(self) -> str:
        """Stable id of the playing behaviour: variant, weights and knobs (not the level's name)."""
        canonical = json.dumps({"variant": self.variant.name, **self.to_json()}, sort_keys=True,
                               separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]

    def __hash__(self) -> int:
        return hash(self.profile_hash())


@dataclass(frozen=True)
class LevelProvenance:
    """Measured strength of one level; all None/empty for a hand-written profile.

    ``rated_against``: the level this one was measured head to head against, held at its own Elo
    (a chained calibration); ``elo_ci`` is then relative to that level, so the CI of the gap
    between the two is ``elo_ci`` minus that level's Elo. None: rated on the ladder.
    """

    elo: float | None = None
    elo_ci: tuple[float, float] | None = None
    description: str = ""
    rated_against: str | None = None
    measures: LevelMeasures | None = None


@dataclass(frozen=True)
class LevelMeasures:
    """What the calibration measured about a level besides its Elo (all on the validation games).

    ``expected_score_next``: the predicted score against the next stronger level (None for the
    strongest); ``expected_score_product``: against each of the product's levels; ``blunder_rate``:
    the share of moves a 4-ply material-only search scores a man or more below its best.
    """

    nodes_per_move: float
    median_depth: float | None
    blunder_rate: float | None
    expected_score_next: float | None
    expected_score_product: Mapping[str, float]

    def to_json(self) -> dict[str, Any]:
        return {"nodes_per_move": self.nodes_per_move, "median_depth": self.median_depth,
                "blunder_rate": self.blunder_rate, "expected_score_next": self.expected_score_next,
                "expected_score_product": {n: self.expected_score_product[n] for n in LEVEL_NAMES}}


@dataclass(frozen=True)
class Provenance:
    """Where a profile came from: engine, bench signature, run config, tracking run, experiment.

    ``bench_signature`` is ``engine.bench.bench_signature`` of the profile's variant in the
    engine that measured it (None for a hand-written profile).
    """

    engine_version: str = __version__
    bench_signature: int | None = None
    source_config_hash: str | None = None
    tracking_run_id: str | None = None
    experiment: str | None = None
    levels: Mapping[str, LevelProvenance] = field(
        default_factory=lambda: {name: LevelProvenance() for name in LEVEL_NAMES}
    )
    description: str = ""

    def __post_init__(self) -> None:
        where = _Where("provenance")
        if not isinstance(self.levels, Mapping) or set(self.levels) != set(LEVEL_NAMES):
            raise where.fail("provenance.levels", f"expected exactly the levels {', '.join(LEVEL_NAMES)}",
                             self.levels)
        for name, lp in self.levels.items():
            if not isinstance(lp, LevelProvenance):
                raise where.fail(f"provenance.levels.{name}", "expected a LevelProvenance", lp)
        object.__setattr__(self, "levels", FrozenDict({n: self.levels[n] for n in LEVEL_NAMES}))
        _provenance_fields(where, _provenance_json(self))  # same checks as a file gets

    def __hash__(self) -> int:
        return hash(json.dumps(_provenance_json(self), sort_keys=True))


@dataclass(frozen=True)
class Profile:
    """A profile file: schema version, variant, the three levels and provenance."""

    schema_version: int
    variant: Variant
    levels: Mapping[str, LevelProfile]
    provenance: Provenance

    def __post_init__(self) -> None:
        if self.schema_version != SCHEMA_VERSION:
            raise ProfileError(
                f"invalid profile: schema_version must be {SCHEMA_VERSION}, got {self.schema_version!r}"
            )
        if set(self.levels) != set(LEVEL_NAMES):
            raise ProfileError(
                f"invalid profile: levels must be exactly {LEVEL_NAMES}, got {sorted(self.levels)}"
            )
        for name, level in self.levels.items():
            if level.variant != self.variant or level.level != name:
                raise ProfileError(
                    f"invalid profile: level {name!r} is {level.variant.name}/{level.level!r}, "
                    f"expected {self.variant.name}/{name!r}"
                )
        object.__setattr__(self, "levels", FrozenDict({n: self.levels[n] for n in LEVEL_NAMES}))

    def level(self, name: str) -> LevelProfile:
        """The level called ``name`` (ProfileError listing the levels if there is none)."""
        try:
            return self.levels[name]
        except KeyError:
            raise ProfileError(f"unknown level {name!r}; levels: {', '.join(LEVEL_NAMES)}") from None

    def profile_hash(self) -> str:
        """Stable id of the whole file's content (first 16 hex chars of the dump's sha256)."""
        return hashlib.sha256(dump_profile(self).encode("utf-8")).hexdigest()[:16]

    def __hash__(self) -> int:
        return hash(self.profile_hash())


# -- parsing ------------------------------------------------------------------------------------
def _check_weights(where: _Where, value: object, path: str) -> dict[str, float]:
    if isinstance(value, Mapping) and not isinstance(value, dict):
        value = dict(value)
    obj = where.obj(value, path, tuple(f.name for f in FEATURES))
    return {f.name: float(where.number(obj[f.name], f"{path}.{f.name}", "float", f.low, f.high))
            for f in FEATURES}


def _parse_level(where: _Where, variant: Variant, name: str, value: object) -> LevelProfile:
    path = f"levels.{name}"
    obj = where.obj(value, path, _LEVEL_KEYS)
    weights = _check_weights(where, obj["weights"], f"{path}.weights")
    knobs: dict[str, Knob] = {}
    for group in GROUPS:
        params = params_of(group)
        section = where.obj(obj[group], f"{path}.{group}", tuple(p.name for p in params))
        for p in params:
            knobs[p.name] = where.param(p, section[p.name], f"{path}.{group}.{p.name}")
    return LevelProfile(variant, name, weights, **knobs)  # type: ignore[arg-type]


def _parse_level_provenance(where: _Where, name: str, value: object) -> LevelProvenance:
    path = f"provenance.levels.{name}"
    obj = where.obj(value, path, _LEVEL_PROVENANCE_KEYS, _LEVEL_PROVENANCE_OPTIONAL)
    elo = None if obj["elo"] is None else float(
        where.number(obj["elo"], f"{path}.elo", "float", -ELO_LIMIT, ELO_LIMIT))
    raw_ci = obj["elo_ci"]
    ci: tuple[float, float] | None = None
    if raw_ci is not None:
        if not isinstance(raw_ci, list) or len(raw_ci) != 2:
            raise where.fail(f"{path}.elo_ci", "expected null or a [low, high] pair", raw_ci)
        low, high = (float(where.number(v, f"{path}.elo_ci[{i}]", "float", -ELO_LIMIT, ELO_LIMIT))
                     for i, v in enumerate(raw_ci))
        if low > high:
            raise where.fail(f"{path}.elo_ci", "low is above high", raw_ci)
        ci = (low, high)
    if (elo is None) != (ci is None):
        raise where.fail(path, "elo and elo_ci must both be null or both be set", obj)
    if elo is not None and ci is not None and not ci[0] <= elo <= ci[1]:
        raise where.fail(f"{path}.elo", f"outside its own interval [{ci[0]}, {ci[1]}]", elo)
    description = where.text(obj["description"], f"{path}.description", MAX_DESCRIPTION, nullable=False)
    against = obj.get("rated_against")
    if "rated_against" in obj and (against not in LEVEL_NAMES or against == name):
        raise where.fail(f"{path}.rated_against", f"expected another level ({', '.join(LEVEL_NAMES)})",
                         against)
    if against is not None and elo is None:
        raise where.fail(path, "rated_against needs elo and elo_ci", obj)
    measures = _parse_measures(where, f"{path}.measures", obj["measures"]) if "measures" in obj else None
    return LevelProvenance(elo, ci, description or "", against, measures)


def _parse_measures(where: _Where, path: str, value: object) -> LevelMeasures:
    obj = where.obj(value, path, _MEASURE_KEYS)
    out: dict[str, Any] = {}
    for key in _MEASURE_KEYS[:-1]:
        raw = obj[key]
        if raw is None and key in _NULLABLE_MEASURES:
            out[key] = None
            continue
        high = 1.0 if key in ("blunder_rate", "expected_score_next") else MAX_MEASURE
        out[key] = float(where.number(raw, f"{path}.{key}", "float", 0.0, high))
    scores = where.obj(obj["expected_score_product"], f"{path}.expected_score_product", LEVEL_NAMES)
    out["expected_score_product"] = FrozenDict({
        n: float(where.number(scores[n], f"{path}.expected_score_product.{n}", "float", 0.0, 1.0))
        for n in LEVEL_NAMES})
    return LevelMeasures(**out)


def _check_rated_against(where: _Where, levels: Mapping[str, LevelProvenance]) -> None:
    """Each ``rated_against`` (already checked to name another level) names a measured level,
    and following them ends (no cycle)."""
    for name, lp in levels.items():
        seen = [name]
        step = lp.rated_against
        while step is not None:
            path = f"provenance.levels.{seen[-1]}.rated_against"
            if levels[step].elo is None:
                raise where.fail(path, f"level {step!r} has no measured Elo to be rated against", step)
            if step in seen:
                cycle = " -> ".join([*seen, step])
                raise where.fail(path, f"levels rated against each other in a cycle: {cycle}", step)
            seen.append(step)
            step = levels[step].rated_against


def _provenance_fields(where: _Where, value: object) -> dict[str, Any]:
    """The validated keyword arguments of :class:`Provenance` from its JSON object."""
    obj = where.obj(value, "provenance", _PROVENANCE_KEYS)
    version = where.text(obj["engine_version"], "provenance.engine_version", MAX_SHORT_TEXT, nullable=False)
    signature = obj["bench_signature"]
    if signature is not None:
        signature = int(where.number(signature, "provenance.bench_signature", "int", 0, MAX_BENCH_SIGNATURE))
    texts = {
        key: where.text(obj[key], f"provenance.{key}", MAX_SHORT_TEXT, nullable=True)
        for key in _OPTIONAL_TEXT
    }
    levels_obj = where.obj(obj["levels"], "provenance.levels", LEVEL_NAMES)
    levels = {name: _parse_level_provenance(where, name, levels_obj[name]) for name in LEVEL_NAMES}
    _check_rated_against(where, levels)
    description = where.text(obj["description"], "provenance.description", MAX_DESCRIPTION, nullable=False)
    return {"engine_version": version or "", "bench_signature": signature, "levels": levels,
            "description": description or "", **texts}


def _parse_variant(where: _Where, value: object, expected: Variant | None) -> Variant:
    if not isinstance(value, str):
        raise where.fail("variant", "expected a variant name", value)
    names = [v.name for v in VARIANTS]
    if value not in names:
        hint = ""
        try:
            hint = f"; write its canonical name {get_variant(value).name!r}"
        except ValueError:
            hint = f"; known variants: {', '.join(names)}"
        raise where.fail("variant", f"unknown variant{hint}", value)
    variant = get_variant(value)
    if expected is not None and variant != expected:
        raise where.fail(
            "variant", f"this profile is for {variant.name}, but {expected.name} was requested", value
        )
    return variant


def parse_profile(obj: object, source: str = "<object>", variant: Variant | str | None = None) -> Profile:
    """Validate an already-decoded JSON document and build the :class:`Profile` it describes."""
    where = _Where(source)
    expected = None if variant is None else get_variant(variant)
    top = where.obj(obj, "", _TOP_KEYS)
    version = top["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version != SCHEMA_VERSION:
        raise where.fail(
            "schema_version", f"unsupported schema version; this engine reads {SCHEMA_VERSION}", version
        )
    chosen = _parse_variant(where, top["variant"], expected)
    levels_obj = where.obj(top["levels"], "levels", LEVEL_NAMES)
    levels = {name: _parse_level(where, chosen, name, levels_obj[name]) for name in LEVEL_NAMES}
    provenance = Provenance(**_provenance_fields(where, top["provenance"]))
    return Profile(SCHEMA_VERSION, chosen, levels, provenance)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed in a profile")


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` object hook of the strict loaders: a key given twice is a ValueError."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def parse_profile_text(
    text: str | bytes, source: str = "<text>", variant: Variant | str | None = None
) -> Profile:
    """Decode JSON text (UTF-8 if bytes) strictly, then :func:`parse_profile` it."""
    where = _Where(source)
    if isinstance(text, bytes):
        if len(text) > MAX_PROFILE_BYTES:
            raise where.fail("", f"file larger than {MAX_PROFILE_BYTES} bytes", len(text))
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise where.fail("", f"not UTF-8 text ({err.reason} at byte {err.start})",
                             err.object[err.start:err.start + 8]) from None
    if len(text) > MAX_PROFILE_BYTES:
        raise where.fail("", f"text longer than {MAX_PROFILE_BYTES} characters", len(text))
    try:
        obj = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=no_duplicate_keys)
    except json.JSONDecodeError as err:
        raise where.fail("", f"invalid JSON: {err.msg} at line {err.lineno} column {err.colno}",
                         err.doc[max(0, err.pos - 20):err.pos + 20]) from None
    except ValueError as err:  # NaN/Infinity, duplicate keys, over-long integer literals
        raise where.fail("", f"invalid JSON: {err}", show_value=False) from None
    except RecursionError:
        raise where.fail("", "invalid JSON: nested too deeply", show_value=False) from None
    return parse_profile(obj, source, variant)


def load_profile(path: str | os.PathLike[str], variant: Variant | str | None = None) -> Profile:
    """Read and strictly validate a profile file; ``variant`` (if given) must match the file's."""
    source = repr(os.fspath(path))
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PROFILE_BYTES + 1)
    except (OSError, ValueError) as err:  # ValueError: a NUL byte in the path
        raise ProfileError(f"cannot read profile {source}: {getattr(err, 'strerror', None) or err}") from None
    if len(data) > MAX_PROFILE_BYTES:
        raise _Where(source).fail("", f"file larger than {MAX_PROFILE_BYTES} bytes", show_value=False)
    return parse_profile_text(data, source, variant)


# -- dumping ------------------------------------------------------------------------------------
def _provenance_json(provenance: Provenance) -> dict[str, Any]:
    return {
        "engine_version": provenance.engine_version,
        "bench_signature": provenance.bench_signature,
        "source_config_hash": provenance.source_config_hash,
        "tracking_run_id": provenance.tracking_run_id,
        "experiment": provenance.experiment,
        "levels": {
            name: {
                "elo": lp.elo,
                "elo_ci": None if lp.elo_ci is None else list(lp.elo_ci),
                "description": lp.description,
                **({} if lp.rated_against is None else {"rated_against": lp.rated_against}),
                **({} if lp.measures is None else {"measures": lp.measures.to_json()}),
            }
            for name, lp in provenance.levels.items()
        },
        "description": provenance.description,
    }


def profile_to_json(profile: Profile) -> dict[str, Any]:
    """The JSON document of ``profile`` (what :func:`dump_profile` serialises)."""
    return {
        "schema_version": profile.schema_version,
        "variant": profile.variant.name,
        "levels": {name: level.to_json() for name, level in profile.levels.items()},
        "provenance": _provenance_json(profile.provenance),
    }


def dump_profile(profile: Profile) -> str:
    """Profile file text: sorted keys, indent 2, trailing newline; loads back to an equal profile."""
    return json.dumps(profile_to_json(profile), sort_keys=True, indent=2, allow_nan=False) + "\n"


# -- shipped profiles ---------------------------------------------------------------------------
def profile_dir() -> Path:
    """Where shipped profiles live: ``$DRAUGHTS_PROFILE_DIR``, else the package data folder
    ``engine/profiles`` (found through :mod:`importlib.resources`, so it works wherever the
    engine is installed, with no checkout of the repository)."""
    override = os.environ.get(PROFILE_DIR_ENV)
    if override:
        return Path(override)
    folder = resources.files("engine").joinpath(PACKAGE_PROFILES)
    if not isinstance(folder, Path):  # e.g. imported from a zip file: no file system path
        raise ProfileError(f"the shipped profiles {str(folder)!r} are not on a file system; "
                           f"set ${PROFILE_DIR_ENV} to a folder holding them")
    return folder


def shipped_profile_path(variant: Variant | str) -> Path:
    """The file :func:`shipped_profile` reads: calibrated, else baseline, else starting point."""
    chosen = get_variant(variant)
    directory = profile_dir()
    candidates = [directory / f"{chosen.name}{suffix}.json" for suffix in SHIPPED_SUFFIXES]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    names = ", ".join(c.name for c in candidates)
    raise ProfileError(f"no shipped profile for {chosen.name} in {str(directory)!r} (looked for {names})")


def shipped_profile(variant: Variant | str) -> Profile:
    """The profile the engine plays ``variant`` with by default."""
    chosen = get_variant(variant)
    return load_profile(shipped_profile_path(chosen), chosen)


def load_level(
    variant: Variant | str, level: str, path: str | os.PathLike[str] | None = None
) -> LevelProfile:
    """One level of a profile file (or of the shipped profile when ``path`` is None)."""
    chosen = get_variant(variant)
    profile = shipped_profile(chosen) if path is None else load_profile(path, chosen)
    return profile.level(level)


# -- JSON Schema --------------------------------------------------------------------------------
def _number_schema(kind: str, low: float, high: float) -> dict[str, Any]:
    if kind == "int":
        return {"type": "integer", "minimum": int(low), "maximum": int(high)}
    return {"type": "number", "minimum": low, "maximum": high}


def _param_schema(p: Param) -> dict[str, Any]:
    schema = {"type": "boolean"} if p.kind == "bool" else _number_schema(p.kind, p.low, p.high)
    return {"description": f"{p.meaning}; {p.effect()}", "default": p.default, **schema}


def _closed(properties: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {} if description is None else {"description": description}
    out.update({"type": "object", "additionalProperties": False, "required": list(properties),
                "properties": properties})
    return out


def profile_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the profile file, generated from the declaration tables.

    The loader is slightly stricter than the schema can say: integers must be written
    without a fraction (``4``, not ``4.0``), keys may not repeat, ``elo`` lies inside
    ``elo_ci`` with ``low <= high``, and text may not hold unpaired surrogates.
    """
    short = {"type": "string", "maxLength": MAX_SHORT_TEXT}
    nullable_short = {"type": ["string", "null"], "maxLength": MAX_SHORT_TEXT}
    description = {"type": "string", "maxLength": MAX_DESCRIPTION}
    elo = {"type": "number", "minimum": -ELO_LIMIT, "maximum": ELO_LIMIT}
    level_ref = {"$ref": "#/$defs/level"}
    weights = _closed({f.name: {"description": f.meaning, **_number_schema("float", f.low, f.high)}
                       for f in FEATURES}, "evaluation weights, in engine.features.FEATURES")
    level_props: dict[str, Any] = {"weights": {"$ref": "#/$defs/weights"}}
    for group in GROUPS:
        level_props[group] = _closed({p.name: _param_schema(p) for p in params_of(group)})
    level_provenance = _closed({
        "elo": {"type": ["number", "null"], "minimum": -ELO_LIMIT, "maximum": ELO_LIMIT},
        "elo_ci": {"type": ["array", "null"], "prefixItems": [elo, elo], "items": False,
                   "minItems": 2, "maxItems": 2, "description": "[low, high] confidence interval"},
        "description": description,
    }, "measured strength; null for hand-written levels")
    share = {"type": "number", "minimum": 0.0, "maximum": 1.0}
    level_provenance["properties"]["measures"] = _closed({
        "nodes_per_move": {"type": "number", "minimum": 0.0, "maximum": MAX_MEASURE},
        "median_depth": {"type": ["number", "null"], "minimum": 0.0, "maximum": MAX_MEASURE,
                         "description": "median completed search depth in middlegame positions (plies)"},
        "blunder_rate": {**share, "type": ["number", "null"],
                         "description": "moves a 4-ply material-only search scores a man or more "
                                        "below its best"},
        "expected_score_next": {**share, "type": ["number", "null"],
                                "description": "predicted score against the next stronger level"},
        "expected_score_product": _closed({n: share for n in LEVEL_NAMES},
                                          "predicted score against each of the product's levels"),
    }, "what the calibration measured on its validation games (optional)")
    level_provenance["properties"]["rated_against"] = {
        "enum": list(LEVEL_NAMES),
        "description": "the level this one was measured head to head against (chained calibration); "
                       "elo_ci is then relative to it. Absent: rated on the ladder",
    }
    provenance = _closed({
        "engine_version": short,
        "bench_signature": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_BENCH_SIGNATURE,
                            "description": "engine.bench.bench_signature of the profile's variant in the "
                                           "engine that measured it; null for hand-written profiles"},
        "source_config_hash": nullable_short,
        "tracking_run_id": nullable_short,
        "experiment": nullable_short,
        "levels": _closed({name: {"$ref": "#/$defs/level_provenance"} for name in LEVEL_NAMES}),
        "description": description,
    })
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Draughts engine difficulty profile",
    }
    schema.update(_closed({
        "schema_version": {"const": SCHEMA_VERSION},
        "variant": {"enum": [v.name for v in VARIANTS]},
        "levels": _closed({name: level_ref for name in LEVEL_NAMES}),
        "provenance": provenance,
    }, "easy/medium/hard levels of one variant (engine/profile.py reads it strictly)"))
    schema["$defs"] = {
        "weights": weights,
        "level": _closed(level_props),
        "level_provenance": level_provenance,
    }
    return schema


def dump_json_schema() -> str:
    """The text of configs/profile.schema.json."""
    return json.dumps(profile_json_schema(), sort_keys=True, indent=2) + "\n"


def schema_path() -> Path:
    """configs/profile.schema.json of this checkout."""
    return Path(__file__).resolve().parents[1] / "configs" / "profile.schema.json"


def write_json_schema(path: str | os.PathLike[str] | None = None) -> Path:
    """Regenerate the shipped schema file after FEATURES or PARAMS changed."""
    target = schema_path() if path is None else Path(path)
    target.write_text(dump_json_schema(), encoding="utf-8")
    return target
