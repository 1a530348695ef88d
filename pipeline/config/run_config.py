"""Run configuration: a TOML file read into frozen dataclasses, validated strictly.

Each section is a frozen dataclass whose fields carry their own rules in ``field(metadata=...)``
(made by :func:`setting`): a range or a check, a one-line doc, and whether the value changes
what the run computes (``hashed``). That one declaration drives parsing, validation, defaults,
the config hash and the docs, so a later stage ([tune], [calibrate], [ladder], [mlflow],
[optuna]) adds itself by declaring one dataclass and calling :func:`register_section`.

Values are TOML's own types: scalars, arrays of scalars (a ``tuple[T, ...]`` field) and, through
:class:`Structured`, tables and arrays of tables that a section reads into frozen values.
Anything unknown, mistyped or out of range raises :class:`ConfigError` naming the file, the key
path (down to the table entry or array item) and the value; nothing is clamped or guessed. The
config hash (sha256 of the canonical JSON of the hashed fields) is the run id when ``[run].id``
is not given, so the same experiment gets the same id wherever and however it runs.

Files a config *reads* (a ``FILE.json`` player spec, ``[job].seed_profile``, ``[ladder].path``)
resolve against the config file's folder, so a config means the same thing from any working
directory. The sections keep the text as written (the config hash and the manifest see that);
the typed accessors (:meth:`RunConfig.section` and the ``*_section`` helpers) hand out the
resolved values. Outputs and stores (``[run].output_root``, ``[optuna].storage``, the tracking
URI) are as given: relative ones are relative to the working directory.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import tomllib
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.variants import get_variant
from pipeline.games.openings import DECK_PARTS
from pipeline.games.players import PlayerSpecError, parse_player_spec

CONFIG_SCHEMA_VERSION = 1

Check = Callable[[Any], str | None]  # returns an error message, or None when the value is fine


class ConfigError(ValueError):
    """A run config that fails validation; the message names file, key path and value."""


#: ``ValueProblem.value`` when the problem is something missing, with no value to quote
ABSENT: Any = object()


class ValueProblem(ValueError):
    """A key's value refused by its reader: the part at fault (``at``, such as ``.advance`` or
    ``[1].target``, appended to the key path), the value found there and what is wrong with it."""

    def __init__(self, message: str, at: str = "", value: Any = ABSENT) -> None:
        super().__init__(message)
        self.message = message
        self.at = at
        self.value = value

    def describe(self, source: str, path: str) -> str:
        """The one-line error: file, key path (and part), value, problem."""
        where = f"{source}: {path}{self.at}"
        if self.value is ABSENT:
            return f"{where}: {self.message}"
        return f"{where} = {self.value!r}: {self.message}"


@dataclass(frozen=True)
class Structured:
    """How a key holding a TOML table (or an array of tables) is read and written back.

    ``read`` turns the TOML value into the section's typed value (frozen: tuples and frozen
    dataclasses) or raises :class:`ValueProblem`; ``write`` gives the plain TOML value back, which
    the config hash, the run manifest and :meth:`RunConfig.replace` use, so ``read(write(x)) == x``.
    ``read`` puts a table's entries in a fixed order (not the file's), so the order of keys in a
    file changes neither the config hash nor what the run does. ``kind`` is the type column of
    the key table.
    """

    kind: str
    read: Callable[[Any], Any]
    write: Callable[[Any], Any]


def setting(
    default: Any = dataclasses.MISSING,
    *,
    doc: str,
    check: Check | None = None,
    hashed: bool = True,
    structured: Structured | None = None,
    resolve: Callable[[Any, Path], Any] | None = None,
) -> Any:
    """Declare one config key: its default (omit for required), doc, check and hash role.

    The field's type hint says what the TOML value must be: a scalar (``int``, ``float``, ``bool``,
    ``str``, optionally ``| None``), or ``tuple[T, ...]`` for an array of such scalars. A key holding
    a table says how to read it with ``structured``. ``check`` sees the typed value. ``resolve``
    turns a value naming a file the run reads into the file as seen from the config's folder.
    """
    meta: dict[str, Any] = {"doc": doc, "check": check, "hashed": hashed, "structured": structured,
                            "resolve": resolve}
    return field(default=default, metadata=meta)


# ---- reusable checks -------------------------------------------------------------------------


def one_of(*allowed: Any) -> Check:
    return lambda v: None if v in allowed else f"must be one of {', '.join(map(str, allowed))}"


def at_least(low: float) -> Check:
    return lambda v: None if v >= low else f"must be >= {low}"


def between(low: float, high: float) -> Check:
    return lambda v: None if low <= v <= high else f"must be in [{low}, {high}]"


MAX_GAMES = 100_000_000  # far beyond any run; keeps a typo from planning forever


def even_positive(v: int) -> str | None:
    if 0 < v <= MAX_GAMES and v % 2 == 0:
        return None
    return f"must be a positive even number <= {MAX_GAMES:,} (games come in colour-swapped pairs)"


_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def identifier(v: str) -> str | None:
    if _ID_RE.fullmatch(v):
        return None
    return "must be 1-64 characters of letters, digits, '.', '_', '-' (safe in a path)"


def non_empty(v: str) -> str | None:
    return None if v.strip() else "must not be empty"


def deck_part_problem(v: str) -> str | None:
    """None when ``v`` names a deck part, else what is wrong."""

    return None if v in DECK_PARTS else f"must be one of {', '.join(DECK_PARTS)}"


def known_variant(v: str) -> str | None:

    try:
        get_variant(v)
    except ValueError as err:
        return str(err)
    return None


def player_spec(v: str) -> str | None:

    try:
        parse_player_spec(v)
    except PlayerSpecError as err:
        return str(err)
    return None


# ---- reusable resolvers ----------------------------------------------------------------------


def input_file(value: str, base: Path) -> str:
    """A file path the run reads, against the config's folder (URIs and absolute paths as given)."""
    if "://" in value:
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def player_file(value: str, base: Path) -> str:
    """A ``FILE.json:LEVEL`` player spec with its file against the config's folder."""
    parsed = parse_player_spec(value)
    if parsed.kind != "file" or parsed.path is None:
        return value
    return f"{input_file(parsed.path, base)}:{parsed.level}"


# ---- sections --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSection:
    """[run]: identity, master seed and where results go."""

    name: str = setting("run", doc="human name of the run; prefix of the generated run id", check=identifier)
    id: str | None = setting(
        None, doc="explicit run id (default: <name>-<first 12 hex of the config hash>)", check=identifier,
        hashed=False,
    )
    seed: int = setting(0, doc="master seed; every batch and game seed derives from it",
                        check=between(0, 2**63 - 1))
    output_root: str = setting("runs", doc="folder holding <run_id>/ result folders", check=non_empty,
                               hashed=False)


@dataclass(frozen=True)
class SelfplaySection:
    """[selfplay]: who plays whom, how many games, in what chunks."""

    variant: str = setting(doc="variant name (english, suicide, brazilian, russian, international)",
                           check=known_variant)
    player_a: str = setting(doc="player spec of side A: 'random', LEVEL or FILE.json:LEVEL (FILE against "
                                "the config's folder)", check=player_spec, resolve=player_file)
    player_b: str = setting(doc="player spec of side B", check=player_spec, resolve=player_file)
    games: int = setting(doc="total games (even: colour-swapped pairs)", check=even_positive)
    batch_size: int = setting(20, doc="games per Parquet file (even); Ray tasks are sized by work",
                              check=even_positive)
    ply_cap: int = setting(400, doc="adjudicate a draw after this many plies", check=between(1, 100_000))
    include_lost_openings: bool = setting(
        False, doc="also play openings flagged as lost for one side (english deck)")
    deck_part: str = setting("all", doc="openings used: 'all', or the 'even' / 'odd' positions of the deck "
                                        "(disjoint halves, e.g. calibrate on one and check on the other)",
                             check=lambda v: deck_part_problem(v))
    max_in_flight: int = setting(
        0, doc="tasks submitted at once (0: twice the cluster's CPUs)", check=at_least(0), hashed=False)


@dataclass(frozen=True)
class RaySection:
    """[ray]: where tasks run. Never affects results, so never hashed."""

    address: str | None = setting(
        None, doc="cluster address ('auto', 'HOST:PORT'); default RAY_ADDRESS or a private local Ray",
        check=non_empty, hashed=False)
    num_cpus: int | None = setting(None, doc="CPUs of the private local Ray (default: all cores)",
                                   check=at_least(1), hashed=False)
    node_ip_address: str | None = setting(
        None, doc="node address of the private local Ray (e.g. 127.0.0.2 to stay on loopback)",
        check=non_empty, hashed=False)
    in_process: bool = setting(False, doc="run batches in the driver process, without Ray", hashed=False)


#: name -> dataclass of every known section; later stages add theirs with register_section.
SECTIONS: dict[str, type] = {}
#: sections that must be present in every file
REQUIRED_SECTIONS: set[str] = set()


def register_section(name: str, cls: type, *, required: bool = False) -> None:
    """Make ``[name]`` a known section read into the frozen dataclass ``cls``."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"section {name!r}: {cls!r} is not a dataclass")
    SECTIONS[name] = cls
    if required:
        REQUIRED_SECTIONS.add(name)


register_section("run", RunSection)
register_section("selfplay", SelfplaySection)
register_section("ray", RaySection)


@dataclass(frozen=True)
class RunConfig:
    """A validated run config: one frozen dataclass per section present (or defaulted)."""

    sections: Mapping[str, Any]
    source: str = "<memory>"
    #: the config file's folder (absolute): where the files it reads are found; None: the cwd
    base_dir: str | None = None

    def section(self, name: str) -> Any:
        """The dataclass of section ``[name]``, input paths resolved; ConfigError if it is missing."""
        found = self.resolved(name)
        if found is None:
            raise ConfigError(f"{self.source}: missing section [{name}]")
        return found

    def resolved(self, name: str) -> Any | None:
        """Section ``[name]`` (None when absent) with every input path against :attr:`base_dir`."""
        obj = self.sections.get(name)
        if obj is None or self.base_dir is None:
            return obj
        base = Path(self.base_dir)
        changes = {f.name: f.metadata["resolve"](getattr(obj, f.name), base) for f in dataclasses.fields(obj)
                   if f.metadata.get("resolve") is not None and getattr(obj, f.name) is not None}
        return dataclasses.replace(obj, **changes) if changes else obj

    @property
    def run(self) -> RunSection:
        return typing.cast(RunSection, self.section("run"))

    @property
    def selfplay(self) -> SelfplaySection:
        return typing.cast(SelfplaySection, self.section("selfplay"))

    @property
    def ray(self) -> RaySection:
        return typing.cast(RaySection, self.section("ray"))

    def to_dict(self, *, hashed_only: bool = False) -> dict[str, dict[str, Any]]:
        """Plain nested dict of the config as TOML would hold it (only result-affecting keys when
        ``hashed_only``): arrays as lists, tables as dicts."""
        out: dict[str, dict[str, Any]] = {}
        for name in sorted(self.sections):
            obj = self.sections[name]
            values = {
                f.name: plain_value(f, getattr(obj, f.name))
                for f in dataclasses.fields(obj)
                if not hashed_only or f.metadata.get("hashed", True)
            }
            if values or not hashed_only:
                out[name] = values
        return out

    def config_hash(self) -> str:
        """sha256 hex of the canonical JSON of the result-affecting settings.

        Canonical: keys sorted, a float key's value always a float (``600`` and ``600.0`` are one
        setting) and tables read in a fixed order (:class:`Structured`), so the same settings give
        the same hash whatever the order of keys in the file.
        """
        payload = {"schema": CONFIG_SCHEMA_VERSION, "config": self.to_dict(hashed_only=True)}
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def run_id(self) -> str:
        run = self.sections["run"]
        return run.id if run.id else f"{run.name}-{self.config_hash()[:12]}"

    def replace(self, section: str, **changes: Any) -> RunConfig:
        """A copy with some keys of one section changed, validated like file input."""
        raw = self.to_dict()
        raw.setdefault(section, {}).update(changes)
        return parse_config(raw, source=self.source, base_dir=self.base_dir)


def plain_value(f: dataclasses.Field[Any], value: Any) -> Any:
    """A section field's value as TOML holds it: the structured key's written form, arrays as lists."""
    structured = f.metadata.get("structured")
    if structured is not None:
        return structured.write(value)
    return list(value) if isinstance(value, tuple) else value


# ---- parsing ---------------------------------------------------------------------------------


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def toml_type(value: Any) -> str:
    """What a TOML value is, in TOML's words (array, table) for the container types."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return type(value).__name__


def _check_type(value: Any, tp: Any) -> bool:
    """Whether a TOML value has the declared scalar type (bool is not an int; an int is a float)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_check_type(value, arg) for arg in typing.get_args(tp))
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is str:
        return isinstance(value, str)
    raise TypeError(f"unsupported config field type {tp!r}")


def _wants_float(tp: Any) -> bool:
    """Whether an int read for ``tp`` becomes a float (``float`` declared, ``int`` not)."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    return float in args and int not in args


def _array_item(tp: Any) -> Any:
    """The item type of ``tuple[T, ...]``, else None."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


def _describe(tp: Any) -> str:
    item = _array_item(tp)
    if item is not None:
        return f"array of {_describe(item)}"
    args = typing.get_args(tp)
    if args:
        return " or ".join("none" if a is type(None) else _type_name(a) for a in args if a is not type(None))
    return _type_name(tp)


def read_scalar(value: Any, tp: Any, at: str = "") -> Any:
    """``value`` as the declared scalar type ``tp``: finite, and a float where a float is declared."""
    if not _check_type(value, tp):
        raise ValueProblem(f"expected {_describe(tp)}, got {toml_type(value)}", at, value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueProblem("must be a finite number", at, value)
    if isinstance(value, int) and not isinstance(value, bool) and _wants_float(tp):
        try:
            return float(value)
        except OverflowError:
            raise ValueProblem("must be a finite number", at, value) from None
    return value


def _read_typed(value: Any, tp: Any) -> Any:
    """A scalar, or a TOML array of scalars read as a tuple, as the field's type hint says."""
    item = _array_item(tp)
    if item is None:
        return read_scalar(value, tp)
    if not isinstance(value, list):
        raise ValueProblem(f"expected an array of {_describe(item)}, got {toml_type(value)}", "", value)
    return tuple(read_scalar(v, item, f"[{i}]") for i, v in enumerate(value))


def _read_value(f: dataclasses.Field[Any], tp: Any, value: Any, path: str, source: str) -> Any:
    """One key's typed value, read and checked; ConfigError naming file, key path and value."""
    structured: Structured | None = f.metadata.get("structured")
    check = f.metadata.get("check")
    try:
        typed = structured.read(value) if structured is not None else _read_typed(value, tp)
    except ValueProblem as err:
        raise ConfigError(err.describe(source, path)) from None
    if check is not None and typed is not None:
        problem = check(typed)
        if problem:
            raise ConfigError(f"{source}: {path} = {value!r}: {problem}")
    return typed


def _parse_section(name: str, cls: type, raw: Any, source: str) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: [{name}] must be a table, got {raw!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ConfigError(
            f"{source}: unknown key {name}.{unknown[0]} = {raw[unknown[0]]!r}; "
            f"known keys of [{name}]: {', '.join(fields)}"
        )
    values: dict[str, Any] = {}
    for key, f in fields.items():
        path = f"{name}.{key}"
        if key in raw:
            values[key] = _read_value(f, hints[key], raw[key], path, source)
        elif f.default is dataclasses.MISSING:
            raise ConfigError(f"{source}: missing required key {path} ({f.metadata.get('doc', '')})")
        else:
            values[key] = f.default
    return cls(**values)


def parse_config(raw: Mapping[str, Any], *, source: str = "<memory>",
                 base_dir: str | None = None) -> RunConfig:
    """Validate a nested mapping (as read from TOML) into a :class:`RunConfig` (``base_dir``: where
    the files it reads are; None: the working directory)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: config must be a table, got {raw!r}")
    unknown = sorted(set(raw) - set(SECTIONS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown section [{unknown[0]}]; known sections: {', '.join(sorted(SECTIONS))}"
        )
    missing = sorted(REQUIRED_SECTIONS - set(raw))
    if missing:
        raise ConfigError(f"{source}: missing required section [{missing[0]}]")
    sections: dict[str, Any] = {}
    for name, cls in SECTIONS.items():
        if name in raw:
            sections[name] = _parse_section(name, cls, raw[name], source)
        elif name in ("run", "ray"):
            sections[name] = _parse_section(name, cls, {}, source)  # all keys have defaults
    return RunConfig(sections=sections, source=source, base_dir=base_dir)


#: Run configs are a few KB. Larger files are refused before parsing: Python's TOML parser takes
#: time quadratic in a dotted key's length (4 s for one 100 KB key here).
MAX_CONFIG_BYTES = 32 * 1024


def load_config(path: str | Path) -> RunConfig:
    """Read and validate a TOML run config file."""
    p = Path(path)
    try:
        data = p.read_bytes()  # bytes: read_text would turn a bare CR into a newline
    except (OSError, ValueError) as err:  # ValueError: a NUL byte in the path
        name = str(p) if str(p).isprintable() else repr(str(p))
        raise ConfigError(f"{name[:300]}: cannot read config: {getattr(err, 'strerror', None) or err}"
                          ) from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{p}: {len(data):,} bytes: a run config may be at most {MAX_CONFIG_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{p}: not UTF-8 text (byte {err.start}): TOML files are UTF-8") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{p}: invalid TOML: {err}") from None
    except RecursionError:
        raise ConfigError(f"{p}: invalid TOML: values nested too deeply") from None
    except ValueError as err:  # e.g. an integer beyond Python's digit limit
        raise ConfigError(f"{p}: invalid TOML value: {err}") from None
    return parse_config(raw, source=str(p), base_dir=str(p.resolve().parent))


def toml_text(value: Any) -> str:
    """A plain value (as :meth:`RunConfig.to_dict` gives) in TOML syntax, inline tables for tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string for the printable text of defaults
    if isinstance(value, list):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_text(v)}" for k, v in value.items()) + " }"
    return repr(value)


def key_rows() -> list[tuple[str, str, str, str]]:
    """(key, type, default, doc) of every registered key; the default in TOML syntax for arrays and
    tables, ``required`` when there is none."""
    rows = []
    for name, cls in SECTIONS.items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            structured: Structured | None = f.metadata.get("structured")
            kind = structured.kind if structured is not None else _describe(hints[f.name])
            if f.default is dataclasses.MISSING:
                default = "required"
            elif structured is not None or isinstance(f.default, tuple):
                default = toml_text(plain_value(f, f.default))
            else:
                default = repr(f.default)
            rows.append((f"{name}.{f.name}", kind, default, f.metadata.get("doc", "")))
    return rows


def describe_sections() -> str:
    """Markdown table of every registered key: section, key, type, default, doc (for docs/--help)."""
    lines = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for row in key_rows():
        escaped = (cell.replace("|", "\\|") for cell in row)  # a bare | would end the cell
        lines.append("| " + " | ".join(escaped) + " |")
    return "\n".join(lines)
