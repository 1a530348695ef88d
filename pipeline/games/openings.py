"""Ballot opening decks: the positions self-play games start from.

One JSON file per variant under ``pipeline/data/openings/`` (package data), each with a
schema version, its attribution and a list of entries ``{id, name, moves, fen, kind, lost}``:

- ``fen``: PDN FEN of the start position (numeric squares for english, algebraic a1..h8 for
  brazilian/russian), canonical as written by :func:`engine.fen.format_fen`;
- ``moves``: how the position arises, PDN move text from the initial position when
  ``kind == "play"``; when ``kind == "setup"`` the position is a set-up (pieces relocated,
  as in the Russian/Brazilian ballot tables) and ``moves`` keeps the source's relocation text;
- ``lost``: the opening is known to lose for one side (english ACF list); such openings are
  left out of the default deck because a paired game on them mostly measures the opening.

:func:`load_deck` validates the whole file (schema, keys, types, unique ids, every FEN parsed by
the engine) and raises :class:`OpeningsError` quoting what is wrong.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from engine.errors import DraughtsError
from engine.fen import parse_fen
from engine.variants import get_variant

OPENINGS_SCHEMA_VERSION = 1
KINDS = ("play", "setup")
_ENTRY_KEYS = {"id": str, "name": str, "moves": list, "fen": str, "kind": str, "lost": bool}
_TOP_KEYS = {"schema_version", "variant", "deck", "source", "notes", "openings"}


class OpeningsError(ValueError):
    """A missing or invalid opening deck."""


@dataclass(frozen=True)
class Opening:
    """One ballot: a named start position and how it arises."""

    id: str
    name: str
    moves: tuple[str, ...]
    fen: str
    kind: str = "play"
    lost: bool = False


def _deck_resource(name: str) -> Any:
    return resources.files("pipeline").joinpath("data", "openings", f"{name}.json")


def deck_variants() -> list[str]:
    """The decks that ship (a variant's own deck is named after it)."""
    folder = resources.files("pipeline").joinpath("data", "openings")
    return sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))


#: Deck parts: the whole deck, or the openings at even / odd positions of the file order. Two
#: disjoint halves let a check match use openings its calibration never saw.
DECK_PARTS = ("all", "even", "odd")


def deck_part(deck: list[Opening], part: str) -> list[Opening]:
    """The ``part`` ('all', 'even', 'odd' positions) of ``deck``."""
    if part not in DECK_PARTS:
        raise OpeningsError(f"unknown deck part {part!r}; expected one of {', '.join(DECK_PARTS)}")
    if part == "all":
        return list(deck)
    return list(deck[0 if part == "even" else 1 :: 2])


def load_deck(variant: str, *, include_lost: bool = False, part: str = "all",
              name: str | None = None) -> list[Opening]:
    """The validated deck of ``variant`` (by name or alias), in file order.

    ``name``: another deck file of the variant (``pipeline/data/openings/<name>.json``, e.g. a
    generated extension of the ballots); None: the variant's own deck. Openings flagged ``lost``
    are left out unless ``include_lost``; ``part`` then keeps the even or odd positions of what
    is left (see :data:`DECK_PARTS`).
    """
    deck = _load_all(_canonical_variant(variant), name)
    return deck_part([o for o in deck if include_lost or not o.lost], part)


def _canonical_variant(variant: str) -> str:

    try:
        return get_variant(variant).name
    except ValueError as err:
        raise OpeningsError(str(err)) from None


@cache
def _load_all(variant: str, name: str | None = None) -> tuple[Opening, ...]:
    file = variant if name is None else name
    if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", file):
        raise OpeningsError(f"deck name {file!r}: expected lower-case letters, digits, '.', '_' or '-'")
    resource = _deck_resource(file)
    if not resource.is_file():
        have = ", ".join(deck_variants()) or "none"
        raise OpeningsError(f"no opening deck {file!r} for variant {variant!r} (decks: {have})")
    try:
        data = json.loads(resource.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise OpeningsError(f"opening deck {file}.json is not valid JSON: {err}") from None
    return tuple(validate_deck(data, variant, file))


def validate_deck(data: Any, variant: str, file: str | None = None) -> list[Opening]:
    """Check a deck document strictly and return its openings."""
    where = f"opening deck {file or variant}.json"
    if not isinstance(data, dict):
        raise OpeningsError(f"{where}: top level must be an object")
    if set(data) != _TOP_KEYS:
        raise OpeningsError(f"{where}: keys must be {sorted(_TOP_KEYS)}, got {sorted(data)}")
    if data["schema_version"] != OPENINGS_SCHEMA_VERSION:
        raise OpeningsError(
            f"{where}: schema_version {data['schema_version']!r}, expected {OPENINGS_SCHEMA_VERSION}"
        )
    if data["variant"] != variant:
        raise OpeningsError(f"{where}: declares variant {data['variant']!r}")
    entries = data["openings"]
    if not isinstance(entries, list) or not entries:
        raise OpeningsError(f"{where}: 'openings' must be a non-empty list")

    rules = get_variant(variant)
    seen: set[str] = set()
    out = []
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != set(_ENTRY_KEYS):
            raise OpeningsError(
                f"{where}: entry #{n} must have exactly the keys {sorted(_ENTRY_KEYS)}: {entry!r}"
            )
        for key, tp in _ENTRY_KEYS.items():
            if not isinstance(entry[key], tp):
                raise OpeningsError(f"{where}: entry #{n} {key}={entry[key]!r} must be {tp.__name__}")
        if not all(isinstance(m, str) and m for m in entry["moves"]):
            raise OpeningsError(f"{where}: entry {entry['id']!r} moves must be non-empty strings")
        if entry["kind"] not in KINDS:
            raise OpeningsError(f"{where}: entry {entry['id']!r} kind {entry['kind']!r} not in {KINDS}")
        if entry["id"] in seen or not entry["id"]:
            raise OpeningsError(f"{where}: duplicate or empty id {entry['id']!r}")
        seen.add(entry["id"])
        try:
            parse_fen(rules, entry["fen"])
        except DraughtsError as err:
            raise OpeningsError(f"{where}: entry {entry['id']!r}: {err}") from None
        out.append(
            Opening(
                id=entry["id"], name=entry["name"], moves=tuple(entry["moves"]), fen=entry["fen"],
                kind=entry["kind"], lost=entry["lost"],
            )
        )
    return out
