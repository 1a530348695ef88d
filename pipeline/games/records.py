"""Arrow schemas of the self-play datasets (games, and sampled positions), versioned.

One row per game. Colours are recorded as played (``white_*``/``black_*``) and the A/B view
of the match is kept too (``a_color``, ``result_a``) because pairs are what ratings use.
docs/game-records.md documents every column; bump :data:`GAMES_SCHEMA_VERSION` on any change
of meaning or layout, and readers check it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

GAMES_SCHEMA_VERSION = 3
POSITIONS_SCHEMA_VERSION = 1

#: termination reasons: the engine's (engine.board.Termination values) plus ply_cap
TERMINATIONS = ("no_pieces", "no_moves", "threefold_repetition", "quiet_ply_limit", "endgame_move_limit",
                "ply_cap")
RESULTS_PDN = ("1-0", "0-1", "1/2-1/2")

GAMES_SCHEMA = pa.schema(
    [
        pa.field("schema_version", pa.int16(), nullable=False),
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("batch_id", pa.int32(), nullable=False),
        pa.field("game_id", pa.int64(), nullable=False),
        pa.field("pair_id", pa.int64(), nullable=False),
        pa.field("game_in_pair", pa.int8(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("opening_id", pa.string(), nullable=False),
        pa.field("opening_fen", pa.string(), nullable=False),
        pa.field("player_a", pa.string(), nullable=False),
        pa.field("player_b", pa.string(), nullable=False),
        pa.field("a_color", pa.string(), nullable=False),
        pa.field("white_player", pa.string(), nullable=False),
        pa.field("black_player", pa.string(), nullable=False),
        pa.field("white_profile_hash", pa.string(), nullable=False),
        pa.field("black_profile_hash", pa.string(), nullable=False),
        pa.field("run_seed", pa.int64(), nullable=False),
        pa.field("game_seed", pa.int64(), nullable=False),
        pa.field("white_seed", pa.int64(), nullable=False),
        pa.field("black_seed", pa.int64(), nullable=False),
        pa.field("result_pdn", pa.string(), nullable=False),
        pa.field("winner", pa.string(), nullable=True),
        pa.field("result_white", pa.float32(), nullable=False),
        pa.field("result_black", pa.float32(), nullable=False),
        pa.field("result_a", pa.float32(), nullable=False),
        pa.field("termination", pa.string(), nullable=False),
        pa.field("plies", pa.int32(), nullable=False),
        pa.field("moves", pa.string(), nullable=False),
        pa.field("final_fen", pa.string(), nullable=False),
        pa.field("white_pieces", pa.int8(), nullable=False),
        pa.field("black_pieces", pa.int8(), nullable=False),
        pa.field("winner_score", pa.int32(), nullable=False),
        pa.field("white_nodes", pa.int64(), nullable=False),
        pa.field("black_nodes", pa.int64(), nullable=False),
        pa.field("white_max_depth", pa.int16(), nullable=False),
        pa.field("black_max_depth", pa.int16(), nullable=False),
        pa.field("white_decisions", pa.int32(), nullable=False),
        pa.field("black_decisions", pa.int32(), nullable=False),
        pa.field("white_seconds", pa.float64(), nullable=False),
        pa.field("black_seconds", pa.float64(), nullable=False),
        pa.field("engine_version", pa.string(), nullable=False),
    ],
    metadata={b"schema": b"draughts.games", b"schema_version": str(GAMES_SCHEMA_VERSION).encode()},
)

#: columns that depend on the machine, not on the seeds (left out of reproducibility checks)
TIMING_COLUMNS = ("white_seconds", "black_seconds")

POSITIONS_SCHEMA = pa.schema(
    [
        pa.field("schema_version", pa.int16(), nullable=False),
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("game_id", pa.int64(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("ply", pa.int32(), nullable=False),
        pa.field("fen", pa.string(), nullable=False),
        pa.field("side_to_move", pa.string(), nullable=False),
        pa.field("features", pa.list_(pa.float32()), nullable=False),
        pa.field("result_white", pa.float32(), nullable=False),
        pa.field("result_side_to_move", pa.float32(), nullable=False),
    ],
    metadata={b"schema": b"draughts.positions", b"schema_version": str(POSITIONS_SCHEMA_VERSION).encode()},
)

#: points per own piece left and per move under the par, as in the product (RULES.md)
SCORE_PER_PIECE = 100
SCORE_PER_MOVE_UNDER_PAR = 10
SCORE_MOVE_PAR = 60


def winner_score(winner_pieces: int, winner_moves: int) -> int:
    """The product's score for a win: 100 per own piece left + 10 per own move under 60."""
    return SCORE_PER_PIECE * winner_pieces + SCORE_PER_MOVE_UNDER_PAR * max(0, SCORE_MOVE_PAR - winner_moves)


def _table(rows: Iterable[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    rows = list(rows)
    names = schema.names
    for n, row in enumerate(rows):
        if set(row) != set(names):
            missing = sorted(set(names) - set(row))
            extra = sorted(set(row) - set(names))
            raise ValueError(f"record #{n} does not fit the schema: missing {missing}, unexpected {extra}")
    columns = {name: [row[name] for row in rows] for name in names}
    return pa.Table.from_pydict(columns, schema=schema)


def games_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """An Arrow table of game rows (dicts with exactly the :data:`GAMES_SCHEMA` columns)."""
    return _table(rows, GAMES_SCHEMA)


def positions_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """An Arrow table of sampled positions (dicts with exactly the :data:`POSITIONS_SCHEMA` columns)."""
    return _table(rows, POSITIONS_SCHEMA)


def check_games_table(table: pa.Table) -> None:
    """Raise ValueError unless ``table`` has the games schema (names and types, in order)."""
    if not table.schema.equals(GAMES_SCHEMA, check_metadata=False):
        raise ValueError(f"not a games table of schema version {GAMES_SCHEMA_VERSION}: {table.schema}")
