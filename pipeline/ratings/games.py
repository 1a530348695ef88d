"""Game results as the ratings layer sees them: who moved first, who moved second, the score.

Colour does not matter to the rating model, only *who moved first* (which colour moves first
differs between variants), so every input is first normalised to :class:`GameResults`.
:func:`games_from_color_table` converts the colour-based rows the self-play stage writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from engine.variants import get_variant
from pipeline.ratings.errors import RatingsError

#: The only legal per-game scores, from the first mover's point of view.
VALID_SCORES = (0.0, 0.5, 1.0)


def _as_numpy(values: Any, what: str) -> NDArray[Any]:
    """A 1-D numpy array from a sequence, numpy array or Arrow (chunked) array."""
    if isinstance(values, pa.ChunkedArray | pa.Array):
        if values.null_count:
            first_null = values.to_pylist().index(None)
            raise RatingsError(f"{what}[{first_null}] is missing (null)")
        values = values.to_numpy(zero_copy_only=False)
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise RatingsError(f"{what} must be a 1-D column, got shape {arr.shape}")
    if arr.dtype.kind == "O" and arr.size and all(isinstance(v, str) for v in arr.tolist()):
        arr = arr.astype(np.str_)
    return arr


def _show(value: Any) -> Any:
    """A numpy scalar as its plain Python value, for readable error messages."""
    return value.item() if isinstance(value, np.generic) else value


def _names(values: Any, what: str) -> NDArray[np.str_]:
    """Player names as a 1-D unicode array; rejects None, non-strings and empty names."""
    arr = _as_numpy(values, what)
    if arr.size == 0:
        return np.zeros(0, dtype="<U1")
    if arr.dtype.kind != "U":
        for i, name in enumerate(arr.tolist()):
            if not isinstance(name, str):
                raise RatingsError(f"{what}[{i}] must be a player name (str), got {name!r}")
        arr = arr.astype(np.str_)
    empty = np.flatnonzero(np.char.str_len(arr) == 0)
    if empty.size:
        raise RatingsError(f"{what}[{int(empty[0])}] is an empty player name")
    return arr


def _scores(values: Any, what: str) -> NDArray[np.float64]:
    """Scores as float64, each exactly one of 0, 0.5, 1 (quotes the first offender)."""
    raw = _as_numpy(values, what)
    if raw.dtype.kind not in "fiu" and raw.size:  # e.g. strings, None, bools: name the offender
        for i, v in enumerate(raw.tolist()):
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise RatingsError(f"{what}[{i}] must be a score in {{0, 0.5, 1}}, got {v!r}")
    arr = raw.astype(np.float64)
    bad = np.flatnonzero(~np.isin(arr, VALID_SCORES))
    if bad.size:
        i = int(bad[0])
        raise RatingsError(f"{what}[{i}] must be a score in {{0, 0.5, 1}}, got {_show(raw[i])!r}")
    return arr


def _pair_ids(values: Any) -> NDArray[Any]:
    """Pair ids as a 1-D array of integers or strings (anything np.unique can sort)."""
    arr = _as_numpy(values, "pair_id")
    if arr.size and arr.dtype.kind not in "iuU":
        raise RatingsError(f"pair ids must be integers or strings, got {arr[:3].tolist()!r}...")
    return arr


@dataclass(frozen=True, eq=False)
class GameResults:
    """One row per game: ``first`` moved first, ``second`` moved second, ``result`` is the score
    of ``first`` (1 win, 0.5 draw, 0 loss, after any variant-specific outcome inversion).

    ``pair_id`` (optional) groups the two games of one ballot opening played with colours
    swapped; it is needed for pentanomial statistics and for the pair bootstrap.
    Build it with :meth:`from_arrays`, :meth:`from_arrow` or :func:`games_from_color_table`;
    construction validates everything and raises :class:`RatingsError` quoting bad input.
    """

    first: NDArray[np.str_]
    second: NDArray[np.str_]
    result: NDArray[np.float64]
    pair_id: NDArray[Any] | None = None

    def __post_init__(self) -> None:
        # Normalise and validate here so that direct construction is as strict as from_arrays.
        object.__setattr__(self, "first", _names(self.first, "first"))
        object.__setattr__(self, "second", _names(self.second, "second"))
        object.__setattr__(self, "result", _scores(self.result, "result"))
        if self.pair_id is not None:
            object.__setattr__(self, "pair_id", _pair_ids(self.pair_id))
        n = len(self.first)
        lengths = {"first": n, "second": len(self.second), "result": len(self.result)}
        if self.pair_id is not None:
            lengths["pair_id"] = len(self.pair_id)
        if len(set(lengths.values())) != 1:
            raise RatingsError(f"columns must have equal lengths, got {lengths}")
        same = np.flatnonzero(self.first == self.second)
        if same.size:
            i = int(same[0])
            raise RatingsError(f"game {i}: player {str(self.first[i])!r} cannot play against itself")

    @classmethod
    def from_arrays(
        cls,
        first: Sequence[str] | NDArray[Any],
        second: Sequence[str] | NDArray[Any],
        result: Sequence[float] | NDArray[Any],
        pair_id: Sequence[int | str] | NDArray[Any] | None = None,
    ) -> GameResults:
        """Validate and wrap plain sequences (see the class docstring for their meaning)."""
        return cls(
            first=_names(first, "first"),
            second=_names(second, "second"),
            result=_scores(result, "result"),
            pair_id=None if pair_id is None else _pair_ids(pair_id),
        )

    @classmethod
    def from_arrow(
        cls,
        table: pa.Table,
        *,
        first: str = "player_first",
        second: str = "player_second",
        result: str = "result_first",
        pair_id: str | Sequence[str] | None = "pair_id",
    ) -> GameResults:
        """Read a table already in first-mover form (the layout :meth:`to_arrow` writes);
        ``pair_id`` is used when its column(s) exist (see :func:`games_from_color_table`)."""
        _require_columns(table, [first, second, result])
        pairs = _pair_keys(table, pair_id)
        return cls.from_arrays(table.column(first), table.column(second), table.column(result), pairs)

    def __len__(self) -> int:
        return len(self.first)

    @property
    def players(self) -> tuple[str, ...]:
        """Every player that appears, sorted."""
        return tuple(str(p) for p in np.unique(np.concatenate([self.first, self.second])))

    def select(self, mask: NDArray[np.bool_]) -> GameResults:
        """The games where ``mask`` is true (already-validated data, so no re-checks needed)."""
        return GameResults(
            self.first[mask],
            self.second[mask],
            self.result[mask],
            None if self.pair_id is None else self.pair_id[mask],
        )

    def to_arrow(self) -> pa.Table:
        """The first-mover form as an Arrow table (the column names :meth:`from_arrow` expects)."""
        cols: dict[str, Any] = {
            "player_first": pa.array(self.first.tolist(), pa.string()),
            "player_second": pa.array(self.second.tolist(), pa.string()),
            "result_first": pa.array(self.result, pa.float64()),
        }
        if self.pair_id is not None:
            cols["pair_id"] = pa.array(self.pair_id.tolist())
        return pa.table(cols)


def _require_columns(table: pa.Table, names: Sequence[str]) -> None:
    missing = [c for c in names if c not in table.column_names]
    if missing:
        raise RatingsError(f"game table lacks column(s) {missing}; it has {table.column_names}")


def _first_is_white(values: Any, what: str) -> NDArray[np.bool_]:
    """Map colour labels to 'white moved first'. Accepts 'white'/'black'/'w'/'b' (any case)
    or the engine's ``Color`` integers (WHITE == 0, BLACK == 1)."""
    arr = _as_numpy(values, what)
    if arr.dtype.kind == "U":
        low = np.char.lower(arr)
        white, black = np.isin(low, ["white", "w"]), np.isin(low, ["black", "b"])
    elif arr.dtype.kind in "iu":
        white, black = arr == 0, arr == 1
    else:
        white = black = np.zeros(arr.shape, dtype=bool)
    bad = np.flatnonzero(~(white | black))
    if bad.size:
        i = int(bad[0])
        raise RatingsError(f"{what}[{i}] must be 'white'/'black' or Color 0/1, got {_show(arr[i])!r}")
    return white


def _pair_keys(table: pa.Table, spec: str | Sequence[str] | None) -> NDArray[Any] | None:
    """Pair ids from one column, or string keys joining several (e.g. run_id + pair_id, so that
    pairs from different runs never merge). ``None`` or absent columns: no pair ids."""
    if spec is None:
        return None
    names = [spec] if isinstance(spec, str) else list(spec)
    if not all(n in table.column_names for n in names):
        return None
    if len(names) == 1:
        return _pair_ids(table.column(names[0]))
    parts = [_as_numpy(table.column(n), n).astype(np.str_) for n in names]
    keys = parts[0]
    for part in parts[1:]:
        keys = np.char.add(np.char.add(keys, "/"), part)
    return keys


def _first_colour_from_variant(table: pa.Table, column: str) -> NDArray[np.int64]:
    """Per-row first-moving colour (Color ints) looked up from the variant name column: the
    rules (``engine.variants``) own who moves first."""
    names = _names(table.column(column), column)
    uniq, inverse = np.unique(names, return_inverse=True)
    try:
        first = np.array([int(get_variant(str(v)).first_player) for v in uniq], dtype=np.int64)
    except ValueError as err:  # UnknownVariantError quotes the name
        raise RatingsError(f"column {column!r}: {err}") from err
    return first[inverse]


def games_from_color_table(
    table: pa.Table,
    *,
    white: str = "white_player",
    black: str = "black_player",
    result_white: str = "result_white",
    first_color: str = "first_player",
    default_first_color: str | int | None = None,
    variant: str = "variant",
    pair_id: str | Sequence[str] | None = "pair_id",
) -> GameResults:
    """Convert colour-based game rows (e.g. the self-play ``games`` Parquet schema, see
    docs/game-records.md) into first-mover :class:`GameResults`.

    Expected columns (names configurable):
      - ``white_player``, ``black_player``: player names (non-null strings);
      - ``result_white``: White's points, 1 / 0.5 / 0 (the final result, after any variant
        outcome inversion such as suicide's);
      - who moved first, the first of these that applies:
        a ``first_player`` column ('white'/'black', 'w'/'b' in any case, or Color ints
        0 = white, 1 = black); else ``default_first_color`` for every row; else the rules'
        first player of each row's ``variant`` column (``engine.variants``);
      - ``pair_id`` (used when present): the ballot-opening pair of the game. Give several
        column names, e.g. ``("run_id", "pair_id")``, to key pairs by all of them.
    """
    _require_columns(table, [white, black, result_white])
    colours: Any
    colour_source = first_color
    if first_color in table.column_names:
        colours = table.column(first_color)
    elif default_first_color is not None:
        colours = np.full(table.num_rows, default_first_color)
        colour_source = "default_first_color"
    elif variant in table.column_names:
        colours = _first_colour_from_variant(table, variant)
    else:
        raise RatingsError(
            f"cannot tell who moved first: the game table has neither a {first_color!r} nor a "
            f"{variant!r} column and no default_first_color was given; it has {table.column_names}"
        )
    w_first = _first_is_white(colours, colour_source)
    whites = _names(table.column(white), white)
    blacks = _names(table.column(black), black)
    score_w = _scores(table.column(result_white), result_white)
    return GameResults(
        first=np.where(w_first, whites, blacks),
        second=np.where(w_first, blacks, whites),
        result=np.where(w_first, score_w, 1.0 - score_w),
        pair_id=_pair_keys(table, pair_id),
    )


#: Resampling units of a bootstrap over stored games: every game of one ballot opening
#: (``opening``), or the two colour-swapped games of one pair (``pair``). Two players without
#: noise replay the same game for every repeat of an opening, so only the opening is a safe unit;
#: when no game repeats the two give about the same CI.
BOOTSTRAP_UNITS = ("opening", "pair")


def bootstrap_clusters(table: pa.Table, unit: str) -> NDArray[np.str_]:
    """One resampling key per row of a game table (see :data:`BOOTSTRAP_UNITS`): the opening id
    (``opening``), or run id and pair id joined (``pair``, so pairs of different runs never merge)."""
    if unit not in BOOTSTRAP_UNITS:
        raise RatingsError(f"bootstrap unit must be one of {', '.join(BOOTSTRAP_UNITS)}, got {unit!r}")
    columns = ["opening_id"] if unit == "opening" else ["run_id", "pair_id"]
    _require_columns(table, columns)
    keys = _pair_keys(table, columns)
    assert keys is not None  # the columns exist
    return keys.astype(np.str_)
