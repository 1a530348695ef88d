"""Fuzzing run-config TOML: ``pipeline.config.run_config.load_config`` with every registered section.

Configs are loaded the way the pipeline command line loads them (``load_config`` on a file,
with every section module imported: [run], [selfplay], [ray], [mlflow], [optuna], [job],
[ladder], [tune], [calibrate], [export]); configs with a [job] also go through ``validate_job``.
The oracle reads the section registry itself (declared type, required or default, declared
check), so sections added later are fuzzed too; the table [tune.weights] and the checked arrays
(ladder.depths, ladder.bridges, calibrate.hard_budgets, calibrate.medium_noise) have an oracle of
their own, written from their documented rules rather than calling the declared check. Properties:

- only :class:`~pipeline.config.run_config.ConfigError` escapes, naming the file; no hang;
- a file is accepted exactly when every section and key is known, every value has its declared
  type (an array: every item), is finite and passes its declared check, every table follows its
  rules, and required keys and sections are present;
- no silent repair: an accepted config holds exactly the values written (an integer written for
  a float is that float, a table's entries come in declaration order, defaults fill the rest),
  and re-rendering it gives the same config and the same config hash;
- a key or section typo is never ignored: the error names it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import tempfile
import tomllib
import types
import typing
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.features import FEATURES
from pipeline.config.run_config import (
    MAX_CONFIG_BYTES,
    REQUIRED_SECTIONS,
    SECTIONS,
    ConfigError,
    identifier,
    load_config,
    plain_value,
)
from pipeline.job.validate import validate_job
from tests.fuzz.conftest import (
    REPO,
    fuzz_case,
    fuzz_settings,
    known,
    mutate_tokens,
    outcome,
    tolerate,
    undocumented,
    weird_token,
)

PARSER = "config"
SHIPPED = sorted((REPO / "configs" / "runs").glob("*.toml"))
SHIPPED_TEXT = [path.read_text(encoding="utf-8") for path in SHIPPED]
ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # the documented identifier, matched in full
BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


# ---- TOML writing ------------------------------------------------------------------------------


def toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_key(key: str) -> str:
    return key if BARE_KEY.fullmatch(key) else toml_string(key)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def render(doc: dict[str, dict[str, Any]], style: str = "tables") -> str:
    """TOML text of a two-level document: [tables], dotted keys or inline tables."""
    lines = []
    for name, section in doc.items():
        items = [(toml_key(key), toml_value(value)) for key, value in section.items() if value is not None]
        if style == "dotted":
            lines += [f"{name}.{key} = {value}" for key, value in items]
        elif style == "inline":
            lines.append(f"{name} = {{ {', '.join(f'{k} = {v}' for k, v in items)} }}")
        else:
            lines.append(f"[{name}]")
            lines += [f"{key} = {value}  # comment" for key, value in items]
            lines.append("")
    return "\n".join(lines) + "\n"


# ---- the oracle --------------------------------------------------------------------------------


def _array_item(tp: Any) -> Any:
    args = typing.get_args(tp)
    return args[0] if typing.get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis else None


def has_type(value: Any, tp: Any) -> bool:
    item = _array_item(tp)
    if item is not None:
        return type(value) is list and all(has_type(v, item) for v in value)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return any(has_type(value, arg) for arg in typing.get_args(tp))
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return type(value) is int
    if tp is float:
        return type(value) in (int, float)
    if tp is str:
        return isinstance(value, str)
    raise TypeError(tp)


def _floats(tp: Any) -> bool:
    """A float where the type says float and not int (an integer written there reads as a float)."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    return float in args and int not in args


def _finite(value: Any) -> bool:
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is int:
        try:
            return math.isfinite(float(value))
        except OverflowError:
            return False
    return True


def typed(value: Any, tp: Any) -> Any:
    """What the section holds for a written ``value`` of type ``tp`` (which ``has_type`` accepted)."""
    item = _array_item(tp)
    if item is not None:
        return tuple(typed(v, item) for v in value)
    if type(value) is int and _floats(tp):
        return float(value)
    return value


# The table's own rules, from its documentation (pipeline.config.job_sections): a table of
# NAME = [low, high] (searched) or NAME = value (fixed), inside the name's declared range.
Declared = dict[str, tuple[str, float, float, bool]]  # name -> (kind, low, high, may be searched)
FEATURE_DECL: Declared = {f.name: ("float", f.low, f.high, True) for f in FEATURES}


def _one(value: Any, kind: str, low: float, high: float) -> Any:
    """The value as the declared kind when it is one inside [low, high], else None."""
    if kind == "bool":
        return value if type(value) is bool else None
    if type(value) is not int and (kind == "int" or type(value) is not float):
        return None
    if type(value) is float and not math.isfinite(value):
        return None
    if not low <= value <= high:
        return None
    return int(value) if kind == "int" else float(value)


def ranges_plain(value: Any, declared: Declared) -> dict[str, Any] | None:
    if type(value) is not dict or not value or set(value) - set(declared):
        return None
    out: dict[str, Any] = {}
    for name, (kind, low, high, searchable) in declared.items():
        if name not in value:
            continue
        v = value[name]
        if type(v) is list:
            ends = [_one(x, kind, low, high) for x in v]
            if not searchable or len(v) != 2 or None in ends or not ends[0] < ends[1]:
                return None
            out[name] = ends
        else:
            one = _one(v, kind, low, high)
            if one is None:
                return None
            out[name] = one
    return out


#: (section, key) -> the plain form an accepted table holds, None when the table is refused
TABLES: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("tune", "weights"): lambda v: ranges_plain(v, FEATURE_DECL),
}


def _increasing(items: tuple[float, ...]) -> bool:
    return all(a < b for a, b in itertools.pairwise(items))


# The checked arrays' rules, from their documentation (the keys' doc strings and docs/mainjob.md),
# applied to the typed items (ints, or floats where the type says float): whether the array is allowed.
ARRAY_RULES: dict[tuple[str, str], Callable[[tuple[Any, ...]], bool]] = {
    # at least one depth, strictly increasing within 1..64
    ("ladder", "depths"): lambda d: len(d) >= 1 and _increasing(d) and 1 <= d[0] and d[-1] <= 64,
    # strictly decreasing within the open interval (0, 1); [] is no bridge
    ("ladder", "bridges"): lambda b: _increasing(b[::-1]) and all(0 < x < 1 for x in b),
    # at least two node budgets, strictly increasing within 100..20000000
    ("calibrate", "hard_budgets"): lambda h: (len(h) >= 2 and _increasing(h) and 100 <= h[0]
                                              and h[-1] <= 20_000_000),
    # at least two noise values, strictly increasing from 0, at most 2000
    ("calibrate", "medium_noise"): lambda m: len(m) >= 2 and _increasing(m) and m[0] == 0 and m[-1] <= 2000,
}


def fields_of(name: str) -> dict[str, tuple[dataclasses.Field[Any], Any]]:
    cls = SECTIONS[name]
    hints = typing.get_type_hints(cls)
    return {f.name: (f, hints[f.name]) for f in dataclasses.fields(cls)}


def expected_plain(name: str, key: str, value: Any) -> Any:
    """What ``to_dict`` holds for a written ``value`` when the section accepts it, else ``REFUSED``."""
    field, tp = fields_of(name)[key]
    if field.metadata.get("structured") is not None:
        plain = TABLES[(name, key)](value)  # a new table key needs its oracle here
        return REFUSED if plain is None else plain
    if not has_type(value, tp) or not all(_finite(v) for v in (value if type(value) is list else [value])):
        return REFUSED
    check = field.metadata.get("check")
    if (name, key) in ARRAY_RULES:
        if not ARRAY_RULES[(name, key)](typed(value, tp)):
            return REFUSED
    elif value is not None and check is not None:
        try:
            if check(typed(value, tp)):
                return REFUSED
        except (ValueError, RecursionError):  # a check that crashes (known bugs): must refuse
            return REFUSED
    return plain_value(field, typed(value, tp))


REFUSED = object()


def value_ok(name: str, key: str, value: Any) -> bool:
    return expected_plain(name, key, value) is not REFUSED


def expected_valid(doc: Any) -> bool:
    """Whether the decoded TOML ``doc`` is a valid config by the section registry."""
    if set(doc) - set(SECTIONS) or REQUIRED_SECTIONS - set(doc):
        return False
    for name, raw in doc.items():
        if not isinstance(raw, dict):
            return False
        fields = fields_of(name)
        if set(raw) - set(fields):
            return False
        for key, (field, _) in fields.items():
            if key not in raw:
                if field.default is dataclasses.MISSING:
                    return False
            elif not value_ok(name, key, raw[key]):
                return False
    return True


def strict_identifier_violation(doc: dict[str, Any]) -> bool:
    """An accepted identifier-checked value that is not a documented identifier (e.g. 'abc\\n')."""
    for name, raw in doc.items():
        for key, (field, _) in fields_of(name).items():
            value = raw.get(key)
            if (
                field.metadata.get("check") is identifier
                and isinstance(value, str)
                and not ID_RE.fullmatch(value)
            ):
                return True
    return False


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types, all the way down (1 is not 1.0, True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_values(doc: dict[str, Any], config: Any) -> None:
    """The config holds exactly what was written, defaults elsewhere; re-rendering changes nothing."""
    plain = config.to_dict()
    for name, raw in doc.items():
        for key, (field, _) in fields_of(name).items():
            value = plain[name][key]
            if key in raw:
                wanted = expected_plain(name, key, raw[key])
                assert _same(value, wanted), f"{name}.{key}: {raw[key]!r} -> {value!r}, not {wanted!r}"
            else:
                assert _same(value, plain_value(field, field.default)), f"{name}.{key} is not its default"
    path = scratch("again.toml")
    path.write_text(render(plain), encoding="utf-8")
    reloaded = load_config(path)
    assert _same(reloaded.to_dict(), plain)
    assert reloaded.config_hash() == config.config_hash() and reloaded.run_id == config.run_id


def decode_toml(raw: bytes) -> tuple[Any, bool]:
    """The TOML document in ``raw`` (UTF-8, as the TOML spec says) and whether it is a valid config
    (which includes the loader's size limit)."""
    if len(raw) > MAX_CONFIG_BYTES:
        return None, False
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # TOMLDecodeError, UnicodeDecodeError, int digit limit
        return None, False
    return doc, expected_valid(doc)


def kind_of(message: str) -> str:
    for kind in ("invalid TOML", "unknown section", "unknown key", "missing required", "expected", "must",
                 "at most"):
        if kind in message:
            return kind
    return "other"


def check_config(data: str | bytes, name: str = "c.toml") -> Any:
    """One config file: ConfigError only; accepted exactly when the registry says so; exact values."""
    path = scratch(name)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    path.write_bytes(raw)
    doc, valid = decode_toml(raw)
    with fuzz_case(PARSER, show=data):
        try:
            config = load_config(path)
        except ConfigError as err:
            assert str(path) in str(err), f"ConfigError does not name the file: {err}"
            outcome("rejected", kind_of(str(err)))
            assert not valid, f"a valid config was refused: {err}"
            return None
        except Exception as err:
            if tolerate(err, "recursion", "int-digits", "config-bytes"):
                return None
            undocumented(PARSER, err, data)
        if "job" in config.sections:
            try:
                validate_job(config)
            except ConfigError:
                pass
            except Exception as err:
                undocumented(PARSER, err, data)
    outcome("accepted")
    if not valid and b"\r" in raw:  # invalid TOML (bare CR) that reads fine after newline translation
        _, translated_valid = decode_toml(raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
        if translated_valid:
            known("config-newlines")
            return config
    assert doc is not None and valid, f"load_config accepted a config the registry refuses: {data!r:.300}"
    if strict_identifier_violation(doc):
        known("dollar-newline")
    check_values(doc, config)
    return config


# ---- strategies --------------------------------------------------------------------------------

INT_POOL = [
    0, 1, 2, 3, 4, 6, 10, 20, 40, 50, 100, 120, 200, 400, 1000, 5000, 100_000, 20_000_000, -1, -5, 2**31,
    2**63, 10**30,
]
FLOAT_POOL = [
    0.0, 0.001, 0.05, 0.1, 0.5, 0.99, 1.0, 10.0, 20.0, 200.0, 500.0, 900.0, 1300.0, 600.0, -500.0, 5000.0,
    1e6, -0.0, 1e-300, 1e300,
]
STR_POOL = [
    "run", "smoke", "x", "tiny-1.a_b", "a" * 64, "a" * 65, "english", "russian", "international", "checkers",
    "Brazil", " suicide ", "chess", "random", "easy", "medium", "hard", "p.json:easy", "auto", "127.0.0.2",
    "sqlite:///m.db", "runs", "tpe", "none", "wilcoxon", "1,2,3", "", " ", "advance", "d1", "d3",
    'inline:x:{"weights":{},"search":{},"weakening":{}}', "-x", "a/b",
]
ARRAY_POOL: dict[Any, list[list[Any]]] = {
    int: [[1, 2, 3, 4, 6], [1], [1, 2, 4], [2, 4, 8, 16, 32, 64], [2, 1], [], [0, 1], [1, 65], [1, 1],
          [1, 2.0], [True]],
    float: [[0.75, 0.5, 0.25, 0.1], [0.5], [], [0.2, 0.5], [1.0], [0.5, 0.5], [0, 0.5], [0.9, 0.1], ["0.5"]],
}
#: (section, key) -> values of one array key, valid and not, added to its item type's pool
KEY_POOL: dict[tuple[str, str], list[list[Any]]] = {
    ("calibrate", "hard_budgets"): [
        [25_000, 50_000, 100_000, 200_000], [1000, 4000], [100, 20_000_000], [99, 200], [100, 20_000_001],
        [4000, 1000], [1000], [1000, 1000], [1000, 4000.0], [True, 1000], [1000, "4000"], [1000, 2**63],
    ],
    ("calibrate", "medium_noise"): [
        [0.0, 40.0, 80.0, 160.0], [0, 100], [0, 2000], [-0.0, 0.5], [0, 2000.5], [10, 20], [0], [0, 0],
        [40, 0], [0, 40, 40], [-1, 0, 1], [0, "1"], [0, True], [0, math.inf], [0, math.nan],
    ],
}
#: (section, key) -> values of a table key, valid and not
TABLE_POOL: dict[tuple[str, str], list[Any]] = {
    ("tune", "weights"): [
        {"advance": [0, 12], "back_rank": [0, 30]},
        {"back_rank": 4, "advance": [0.0, 10.0], "center_king": [-50, 50]},
        {"king": [120, 260], "tempo": [0, 10]}, {"man": 100}, {}, {"bogus": [0, 1]}, {"advance": [0, 100]},
        {"advance": [5, 5]}, {"advance": "0:10"}, [0, 1],
    ],
}


def pool_for(name: str, key: str, tp: Any) -> list[Any]:
    if (name, key) in TABLE_POOL:
        return TABLE_POOL[(name, key)]
    item = _array_item(tp)
    if item is not None:
        return ARRAY_POOL[item] + KEY_POOL.get((name, key), [])
    args = typing.get_args(tp) or (tp,)
    out: list[Any] = []
    pools: dict[Any, list[Any]] = {int: INT_POOL, float: FLOAT_POOL + INT_POOL[:6], str: STR_POOL,
                                   bool: [True, False]}
    for arg in args:
        out += pools.get(arg, [])
    return out


@cache
def _good_indices(name: str, key: str) -> tuple[int, ...]:
    _, tp = fields_of(name)[key]
    return tuple(i for i, v in enumerate(pool_for(name, key, tp)) if value_ok(name, key, v))


def good_values(name: str, key: str) -> list[Any]:
    """The pool values that section ``name`` accepts for ``key``."""
    _, tp = fields_of(name)[key]
    pool = pool_for(name, key, tp)
    return [pool[i] for i in _good_indices(name, key)]


@st.composite
def valid_configs(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    """A random config the registry accepts (values drawn from pools, kept if they pass the check)."""
    doc: dict[str, dict[str, Any]] = {}
    for name in draw(st.permutations(sorted(SECTIONS))):
        if name not in REQUIRED_SECTIONS and not draw(st.booleans()):
            continue
        section: dict[str, Any] = {}
        complete = True
        for key, (field, _) in fields_of(name).items():
            required = field.default is dataclasses.MISSING
            if not required and draw(st.integers(0, 2)) == 0:
                continue
            good = good_values(name, key)
            if not good:
                complete = complete and not required
                continue
            section[key] = draw(st.sampled_from(good))
        if complete:
            doc[name] = section
    return doc


toml_values = st.one_of(
    st.sampled_from(
        [
            "nan", "inf", "-inf", "+inf", "1e400", "0x10", "0o7", "0b1", "1_000", "-0", "-0.0", "1.5", "2.0",
            "99999999999999999999", "1" * 4301, "true", "false", '""', '"x"', "'lit'", '"""a\nb"""', "[]",
            "[1, 2]", "{}", "{a = 1}", "1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", '"english"',
            '"random"', '"abc\\n"', '"\\u0000"',
            "[" * 2000 + "]" * 2000,
            "{a=" * 2000 + "1" + "}" * 2000,
            '"' + "a" * 5000 + '"',
        ]
    ),
    st.sampled_from(INT_POOL).map(str),
    st.sampled_from(FLOAT_POOL).map(repr),
    st.sampled_from(STR_POOL).map(toml_string),
)
_TOML_SPLIT = re.compile(r'("(?:[^"\\\n]|\\.)*"|\s+|[\[\]{}=,.#])')


@st.composite
def source_texts(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.sampled_from(SHIPPED_TEXT))
    return render(draw(valid_configs()), draw(st.sampled_from(["tables", "tables", "dotted", "inline"])))


@st.composite
def mutated_configs(draw: st.DrawFn) -> str:
    text = draw(source_texts())
    if draw(st.booleans()):  # whole lines: drop, duplicate, swap, replace
        lines = text.splitlines(keepends=True)
        line_tokens = st.one_of(
            toml_values, st.sampled_from(["[run]\n", "[nope]\n", "[[run]]\n", "x = 1\n", "\n"])
        )
        return draw(mutate_tokens(lines, line_tokens))
    tokens = [t for t in _TOML_SPLIT.split(text) if t]
    return draw(mutate_tokens(tokens, st.one_of(toml_values, weird_token)))


@st.composite
def one_value_changed(draw: st.DrawFn) -> str:
    doc = draw(valid_configs())
    lines = render(doc).splitlines()
    keyed = [i for i, line in enumerate(lines) if " = " in line]
    if not keyed:
        return "\n".join(lines)
    i = draw(st.sampled_from(keyed))
    key = lines[i].split(" = ", 1)[0]
    lines[i] = f"{key} = {draw(toml_values)}"
    return "\n".join(lines) + "\n"


def typo(name: str) -> st.SearchStrategy[str]:
    """Near misses of ``name``: a character dropped, doubled, replaced or swapped; case; separators."""

    @st.composite
    def build(draw: st.DrawFn) -> str:
        i = draw(st.integers(0, len(name) - 1))
        op = draw(st.sampled_from(["drop", "double", "replace", "swap", "upper", "dash", "suffix"]))
        if op == "drop":
            return name[:i] + name[i + 1 :]
        if op == "double":
            return name[:i] + name[i] + name[i:]
        if op == "replace":
            return name[:i] + draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz_0")) + name[i + 1 :]
        if op == "swap" and i + 1 < len(name):
            return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
        if op == "upper":
            return name.upper()
        if op == "dash":
            return name.replace("_", "-") if "_" in name else name + "-"
        return name + draw(st.sampled_from(["s", "_", "2"]))

    return build().filter(lambda t: t and t != name and re.fullmatch(r"[A-Za-z0-9_-]+", t) is not None)


_SCRATCH: list[Path] = []


def scratch(name: str) -> Path:
    return _SCRATCH[0] / name


@pytest.fixture(scope="module", autouse=True)
def _scratch_dir() -> Iterator[None]:
    with tempfile.TemporaryDirectory(prefix="fuzz-config-") as name:
        _SCRATCH[:] = [Path(name)]
        yield


# ---- properties --------------------------------------------------------------------------------


@fuzz_settings(200)
@given(
    text=st.lists(
        st.one_of(
            toml_values,
            weird_token,
            st.sampled_from(
                [
                    "[run]", "[selfplay]", "[job]", "[x]", "\n", " = ", "name", "seed", "variant", "games",
                    ".", "#",
                ]
            ),
        ),
        max_size=30,
    ).map("".join)
)
def test_toml_token_soup(text: str) -> None:
    check_config(text)


@fuzz_settings(200)
@given(text=mutated_configs())
def test_mutated_configs(text: str) -> None:
    check_config(text)


@fuzz_settings(200)
@given(text=one_value_changed())
def test_every_value_is_checked(text: str) -> None:
    check_config(text)


@fuzz_settings(100)
@given(doc=valid_configs(), style=st.sampled_from(["tables", "dotted", "inline"]))
def test_valid_configs_round_trip(doc: dict[str, dict[str, Any]], style: str) -> None:
    assert expected_valid(doc)
    check_config(render(doc, style))


@fuzz_settings(100)
@given(data=st.data())
def test_key_and_section_typos_are_never_ignored(data: st.DataObject) -> None:
    doc = data.draw(valid_configs().filter(lambda d: any(d.values())), label="config")
    name = data.draw(st.sampled_from([n for n, s in doc.items() if s]), label="section")
    if data.draw(st.booleans(), label="typo in the section name"):
        wrong = data.draw(typo(name).filter(lambda t: t not in SECTIONS), label="typo")
        doc = {(wrong if n == name else n): s for n, s in doc.items()}
    else:
        key = data.draw(st.sampled_from(sorted(doc[name])), label="key")
        wrong = data.draw(typo(key).filter(lambda t: t not in fields_of(name)), label="typo")
        doc[name] = {(wrong if k == key else k): v for k, v in doc[name].items()}
    path = scratch("typo.toml")
    path.write_text(render(doc), encoding="utf-8")
    with fuzz_case(PARSER, show=doc), pytest.raises(ConfigError) as caught:
        load_config(path)
    assert wrong in str(caught.value) or f"[{name}]" in str(caught.value), str(caught.value)


@fuzz_settings(50)
@given(
    depth=st.integers(1, 3000),
    kind=st.sampled_from(["array", "table"]),
    key=st.sampled_from(["run.name", "selfplay.games", "nope"]),
)
def test_deep_nesting(depth: int, kind: str, key: str) -> None:
    value = "[" * depth + "]" * depth if kind == "array" else "{a=" * depth + "1" + "}" * depth
    check_config(f"{key} = {value}\n")


@fuzz_settings(100)
@given(
    data=st.one_of(
        st.binary(max_size=100),
        st.sampled_from(SHIPPED_TEXT).map(lambda t: b"\xef\xbb\xbf" + t.encode()),
        st.sampled_from(SHIPPED_TEXT).map(lambda t: t.encode("utf-16")),
        st.sampled_from(SHIPPED_TEXT).map(lambda t: t.encode()[:-5] + b"\xff\xfe" + t.encode()[-5:]),
    )
)
def test_config_bytes(data: bytes) -> None:
    check_config(data)


# ---- arrays and tables of [ladder], [tune] and [calibrate] ----------------------------------------

#: (section, key) of every array or table key, with values to start from
STRUCTURED_KEYS = [("ladder", "depths"), ("ladder", "bridges"), ("tune", "weights"),
                   ("calibrate", "hard_budgets"), ("calibrate", "medium_noise")]
#: leaves swapped in: wrong types, out of range, huge, non-finite, empty containers
LEAVES = [0, 1, -1, 2, 64, 65, 1.5, 0.5, -0.0, 99, 100, 2000, 2000.5, 20_000_000, 20_000_001, 1e300, 10**30,
          10**400, math.inf, math.nan, True, False, "1", "easy", "", [], {}, [1], [0, 1], [1, 0], [0, 1, 2],
          [0.0, 0.5], {"advance": 2}]
NAMES = ["advance", "king", "tempo", "bogus", "back_rank", "center_king", "max_depth", "node_budget",
         "Advance", "a b"]


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a nested list/dict value (the root included)."""
    out = [here]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*here, i))
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


@st.composite
def structured_mutation(draw: st.DrawFn, value: Any) -> Any:
    """``value`` after 1-3 edits at random places: replace, drop, duplicate, add or rename an entry,
    swap two items."""
    value = _copy(value)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(value)))
        op = draw(st.sampled_from(["replace", "drop", "duplicate", "add", "rename", "swap"]))
        if not path:
            if op == "replace":
                value = _copy(draw(st.sampled_from(LEAVES)))
            continue
        parent = value
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if op == "replace":
            parent[last] = _copy(draw(st.sampled_from(LEAVES)))
        elif op == "drop":
            del parent[last]
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(last, _copy(parent[last]))
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(NAMES))] = _copy(draw(st.sampled_from(LEAVES)))
        elif op == "rename" and isinstance(parent, dict):
            new = draw(st.sampled_from(NAMES))
            parent[new] = parent.pop(last)
        elif op == "swap" and isinstance(parent, list):
            j = draw(st.integers(0, len(parent) - 1))
            parent[last], parent[j] = parent[j], parent[last]
    return value


@fuzz_settings(300)
@given(data=st.data())
def test_structured_keys(data: st.DataObject) -> None:
    """Arrays and tables: accepted exactly when the documented rules say, holding what was written."""
    section, key = data.draw(st.sampled_from(STRUCTURED_KEYS), label="key")
    _, tp = fields_of(section)[key]
    start = data.draw(st.sampled_from(pool_for(section, key, tp)), label="start")
    value = data.draw(structured_mutation(start), label="value")
    doc: dict[str, dict[str, Any]] = {"job": {"variant": "english"}, section: {key: value}}
    check_config(render(doc, data.draw(st.sampled_from(["tables", "dotted", "inline"]), label="style")))


@pytest.mark.parametrize(("section", "key"), STRUCTURED_KEYS, ids=lambda v: str(v))
@settings(max_examples=1, deadline=None, database=None)
@given(nothing=st.none())  # fuzz_case records hypothesis events, so the loop runs inside one example
def test_structured_pools(section: str, key: str, nothing: None) -> None:
    """Every pool value of an array or table, as written: accepted exactly when the rules say."""
    _, tp = fields_of(section)[key]
    for value in pool_for(section, key, tp):
        check_config(render({"job": {"variant": "english"}, section: {key: value}}))


def test_every_array_and_table_has_its_oracle() -> None:
    """A new array or table key is fuzzed by test_structured_keys, and a checked one has its rule here."""
    arrays = {(n, k) for n in SECTIONS for k, (_, tp) in fields_of(n).items() if _array_item(tp) is not None}
    tables = {(n, k) for n in SECTIONS for k, (f, _) in fields_of(n).items()
              if f.metadata.get("structured") is not None}
    checked = {(n, k) for n, k in arrays if fields_of(n)[k][0].metadata.get("check") is not None}
    assert set(STRUCTURED_KEYS) == arrays | tables
    assert set(TABLES) == tables and set(ARRAY_RULES) == checked


def test_table_entries_come_in_declaration_order() -> None:
    """The file's order of a table's entries changes neither the config nor its hash."""
    a: dict[str, dict[str, Any]] = {"job": {"variant": "english"},
                                    "tune": {"weights": {"tempo": [0, 10], "advance": [0, 12]}}}
    b: dict[str, dict[str, Any]] = {"job": {"variant": "english"},
                                    "tune": {"weights": {"advance": [0, 12], "tempo": [0, 10]}}}
    (scratch("a.toml")).write_text(render(a), encoding="utf-8")
    (scratch("b.toml")).write_text(render(b), encoding="utf-8")
    first, second = load_config(scratch("a.toml")), load_config(scratch("b.toml"))
    assert first.config_hash() == second.config_hash() and first.to_dict() == second.to_dict()
    assert list(first.to_dict()["tune"]["weights"]) == ["advance", "tempo"]


# ---- known bugs ---------------------------------------------------------------------------------


def _write(text: str | bytes) -> Path:
    path = scratch("bug.toml")
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_regression_config_bare_carriage_return_is_translated() -> None:
    with pytest.raises(ConfigError):
        load_config(_write(b'[export]\ndescription = """x\ry"""\n'))


def test_regression_integer_too_large_for_float() -> None:
    huge = "1" + "0" * 400
    with pytest.raises(ConfigError, match=r"tune\.weights\.advance = 1000.*: must be a finite number"):
        load_config(_write(f'[job]\nvariant = "english"\n[tune.weights]\nadvance = {huge}\n'))
    with pytest.raises(ConfigError, match=r"calibrate\.medium_noise\[1\] = 1000.*: must be a finite number"):
        load_config(_write(f'[job]\nvariant = "english"\n[calibrate]\nmedium_noise = [0, {huge}]\n'))
    with pytest.raises(ConfigError, match=r"mlflow\.check_timeout = 1000.*: must be a finite number"):
        load_config(_write(f'[mlflow]\ncheck_timeout = 1{"0" * 400}\n'))


def test_regression_deeply_nested_toml_value() -> None:
    with pytest.raises(ConfigError):
        load_config(_write("[run]\nname = " + "[" * 5000 + "]" * 5000 + "\n"))


def test_regression_toml_integer_beyond_int_digit_limit() -> None:
    with pytest.raises(ConfigError):
        load_config(_write("[run]\nseed = 1" + "0" * 4300 + "\n"))


def test_regression_config_file_not_utf8() -> None:
    with pytest.raises(ConfigError):
        load_config(_write(b'[run]\nname = "\xff"\n'))


def test_regression_identifier_accepts_trailing_newline() -> None:
    with pytest.raises(ConfigError):
        load_config(_write('[run]\nid = "abc\\n"\n'))


def test_regression_array_items_are_checked_one_by_one() -> None:
    for depths in ('["1"]', "[1.0]", "[true]", "[1, [2]]", '"1,2"'):
        with pytest.raises(ConfigError, match=r"ladder\.depths"):
            load_config(_write(f'[job]\nvariant = "english"\n[ladder]\ndepths = {depths}\n'))


def test_regression_config_path_with_nul_byte() -> None:
    with pytest.raises(ConfigError):
        load_config("configs/runs/smoke\x00.toml")
