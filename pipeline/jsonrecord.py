"""Strict JSON records: how the frozen result types of every stage read themselves back.

A result type writes itself as a plain JSON object (``to_json``) and reads one back
(``from_json``) through :class:`Fields`, which insists on exactly the expected keys and on each
value's JSON type. A stale, truncated or hand-edited file therefore fails with one line naming
the key, instead of being half-read. Loaders only decode JSON: nothing is executed, no pickle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from engine.errors import DraughtsError

T = TypeVar("T")
#: A knob or search-parameter value.
Scalar = bool | int | float
#: ``from_json`` of a record type: ``(data, where) -> record``.
Parser = Callable[[object, str], T]


class JsonRecord(Protocol):
    """A result type that writes itself as a JSON object."""

    def to_json(self) -> dict[str, Any]: ...


class RecordError(DraughtsError):
    """A JSON record with a missing, unknown or mistyped key; the message names it."""


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RecordError(f"{where}: expected a finite number, got {_show(value)}")
    return float(value)


def _integer(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{where}: expected an integer, got {_show(value)}")
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise RecordError(f"{where}: expected a string, got {_show(value)}")
    return value


def _scalar(value: object, where: str) -> Scalar:
    if isinstance(value, bool) or (isinstance(value, int | float) and math.isfinite(value)):
        return value
    raise RecordError(f"{where}: expected a number, true or false, got {_show(value)}")


class Fields:
    """The keys of one JSON object, checked to be exactly ``keys``, read with their types.

    ``where`` names the object in messages (a file, or a path in one:
    ``"calibrate/result.json: levels.easy"``); every getter raises :class:`RecordError` naming
    the key's path.
    """

    def __init__(self, data: object, where: str, keys: Iterable[str]) -> None:
        wanted = tuple(keys)
        if not isinstance(data, dict):
            raise RecordError(f"{where}: expected a JSON object, got {_kind(data)}")
        unknown = [k for k in data if k not in wanted]
        if unknown:
            raise RecordError(f"{where}: unknown key {unknown[0]!r}; expected {', '.join(wanted)}")
        missing = [k for k in wanted if k not in data]
        if missing:
            raise RecordError(f"{where}: missing key {missing[0]!r}")
        self.data: dict[str, Any] = data
        self.where = where

    def path(self, key: str) -> str:
        """Where ``key``'s value is: ``"file: a.b.key"`` (the first step after the colon)."""
        return f"{self.where}{'.' if ': ' in self.where else ': '}{key}"

    # ---- scalars ---------------------------------------------------------------------------

    def number(self, key: str) -> float:
        return _number(self.data[key], self.path(key))

    def opt_number(self, key: str) -> float | None:
        return None if self.data[key] is None else self.number(key)

    def integer(self, key: str) -> int:
        return _integer(self.data[key], self.path(key))

    def opt_integer(self, key: str) -> int | None:
        return None if self.data[key] is None else self.integer(key)

    def flag(self, key: str) -> bool:
        value = self.data[key]
        if not isinstance(value, bool):
            raise RecordError(f"{self.path(key)}: expected true or false, got {_show(value)}")
        return value

    def opt_flag(self, key: str) -> bool | None:
        return None if self.data[key] is None else self.flag(key)

    def text(self, key: str) -> str:
        return _text(self.data[key], self.path(key))

    def opt_text(self, key: str) -> str | None:
        return None if self.data[key] is None else self.text(key)

    def constant(self, key: str, expected: object) -> None:
        """Require ``key`` to hold exactly ``expected`` (a schema name or version)."""
        value = self.data[key]
        if type(value) is not type(expected) or value != expected:
            raise RecordError(f"{self.path(key)}: expected {expected!r}, got {_show(value)}")

    # ---- lists and objects of scalars ------------------------------------------------------

    def _list(self, key: str, length: int | None = None) -> list[tuple[str, Any]]:
        """``key``'s list as (path of the item, item) pairs."""
        value, where = self.data[key], self.path(key)
        if not isinstance(value, list) or (length is not None and len(value) != length):
            expected = "a list" if length is None else f"a list of {length}"
            raise RecordError(f"{where}: expected {expected}, got {_show(value)}")
        return [(f"{where}[{i}]", v) for i, v in enumerate(value)]

    def texts(self, key: str) -> tuple[str, ...]:
        return tuple(_text(v, where) for where, v in self._list(key))

    def integers(self, key: str) -> tuple[int, ...]:
        return tuple(_integer(v, where) for where, v in self._list(key))

    def interval(self, key: str) -> tuple[float, float]:
        """A ``[low, high]`` pair of finite numbers."""
        (w_low, low), (w_high, high) = self._list(key, 2)
        return _number(low, w_low), _number(high, w_high)

    def opt_interval(self, key: str) -> tuple[float, float] | None:
        return None if self.data[key] is None else self.interval(key)

    def open_interval(self, key: str) -> tuple[float | None, float | None]:
        """A ``[low, high]`` pair whose ends may be null (infinite)."""
        low, high = (None if v is None else _number(v, where) for where, v in self._list(key, 2))
        return low, high

    def _object(self, key: str) -> list[tuple[str, str, Any]]:
        """``key``'s object as (name, path of the value, value) triples."""
        value, where = self.data[key], self.path(key)
        if not isinstance(value, dict):
            raise RecordError(f"{where}: expected a JSON object, got {_show(value)}")
        return [(k, f"{where}.{k}", v) for k, v in value.items()]

    def numbers(self, key: str) -> dict[str, float]:
        """An object of finite numbers (weights)."""
        return {k: _number(v, where) for k, where, v in self._object(key)}

    def scalars(self, key: str) -> dict[str, Scalar]:
        """An object of numbers and flags (knobs, search parameters), types kept."""
        return {k: _scalar(v, where) for k, where, v in self._object(key)}

    def document(self, key: str) -> dict[str, Any]:
        """A JSON object kept as it is (a document that another strict loader validates)."""
        self._object(key)
        return dict(self.data[key])

    # ---- nested records --------------------------------------------------------------------

    def record(self, key: str, parse: Parser[T]) -> T:
        return parse(self.data[key], self.path(key))

    def opt_record(self, key: str, parse: Parser[T]) -> T | None:
        return None if self.data[key] is None else self.record(key, parse)

    def records(self, key: str, parse: Parser[T]) -> tuple[T, ...]:
        return read_list(self.data[key], self.path(key), parse)

    def table(self, key: str, parse: Parser[T], names: Iterable[str] | None = None) -> dict[str, T]:
        """An object of records by name; with ``names``, exactly those names."""
        if names is not None:
            Fields(self.data[key], self.path(key), names)
        return {k: parse(v, where) for k, where, v in self._object(key)}

    def opt_table(self, key: str, parse: Parser[T],
                  names: Iterable[str] | None = None) -> dict[str, T] | None:
        return None if self.data[key] is None else self.table(key, parse, names)


def read_list(data: object, where: str, parse: Parser[T]) -> tuple[T, ...]:
    """A JSON list of records."""
    if not isinstance(data, list):
        raise RecordError(f"{where}: expected a list, got {_show(data)}")
    return tuple(parse(v, f"{where}[{i}]") for i, v in enumerate(data))


def list_of(parse: Parser[T]) -> Parser[tuple[T, ...]]:
    """The parser of a JSON list of the records ``parse`` reads."""
    return lambda data, where: read_list(data, where, parse)


def json_table(items: Mapping[str, JsonRecord]) -> dict[str, dict[str, Any]]:
    """``{name: record.to_json()}`` of a mapping of records."""
    return {k: v.to_json() for k, v in items.items()}
