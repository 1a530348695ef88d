"""GameResults validation and the colour-table conversion."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from pipeline.ratings import GameResults, RatingsError, games_from_color_table


def test_from_arrays_normalises_types() -> None:
    g = GameResults.from_arrays(["a", "b"], ["b", "a"], [1, 0.5], pair_id=[7, 7])
    assert g.result.dtype == np.float64
    assert g.first.dtype.kind == "U"
    assert len(g) == 2
    assert g.players == ("a", "b")


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(RatingsError, match=r"result\[0\].*0.25"):
        GameResults(np.array(["a"]), np.array(["b"]), np.array([0.25]))


@pytest.mark.parametrize(
    ("first", "second", "result", "message"),
    [
        (["a", "b"], ["b", "a"], [1.0, 0.7], r"result\[1\] must be a score in \{0, 0.5, 1\}, got 0.7"),
        (["a", None], ["b", "a"], [1.0, 0.0], r"first\[1\] must be a player name \(str\), got None"),
        (["a", ""], ["b", "a"], [1.0, 0.0], r"first\[1\] is an empty player name"),
        (["a", "b"], ["b", "b"], [1.0, 0.0], r"game 1: player 'b' cannot play against itself"),
        (["a", "b"], ["b"], [1.0, 0.0], r"equal lengths"),
        (["a"], ["b"], ["1-0"], r"result\[0\] must be a score.*'1-0'"),
    ],
)
def test_bad_rows_raise_quoting_the_input(first: list, second: list, result: list, message: str) -> None:
    with pytest.raises(RatingsError, match=message):
        GameResults.from_arrays(first, second, result)


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        GameResults.from_arrays(["a"], ["b"], [2.0])


def test_arrow_round_trip() -> None:
    g = GameResults.from_arrays(["a", "b"], ["b", "a"], [1.0, 0.5], pair_id=["p0", "p0"])
    back = GameResults.from_arrow(g.to_arrow())
    assert back.first.tolist() == ["a", "b"]
    assert back.result.tolist() == [1.0, 0.5]
    assert back.pair_id is not None and back.pair_id.tolist() == ["p0", "p0"]


def test_arrow_nulls_are_rejected() -> None:
    t = pa.table({"player_first": ["a", None], "player_second": ["b", "a"], "result_first": [1.0, 0.0]})
    with pytest.raises(RatingsError, match=r"first\[1\] is missing"):
        GameResults.from_arrow(t, first="player_first")


def _color_table(**extra: list) -> pa.Table:
    cols = {
        "white_player": ["a", "a", "b"],
        "black_player": ["b", "b", "a"],
        "result_white": [1.0, 0.0, 0.5],
        "pair_id": [0, 0, 1],
    }
    cols.update(extra)
    return pa.table(cols)


def test_colour_table_with_first_player_column() -> None:
    g = games_from_color_table(_color_table(first_player=["white", "Black", "b"]))
    # row 0: white a moved first and won; row 1: black b moved first, white a lost -> b scored 1
    # row 2: black a moved first, draw
    assert g.first.tolist() == ["a", "b", "a"]
    assert g.second.tolist() == ["b", "a", "b"]
    assert g.result.tolist() == [1.0, 1.0, 0.5]
    assert g.pair_id is not None and g.pair_id.tolist() == [0, 0, 1]


def test_colour_table_with_color_ints_and_default() -> None:
    ints = games_from_color_table(_color_table(first_player=[0, 1, 1]))
    words = games_from_color_table(_color_table(first_player=["w", "b", "black"]))
    assert ints.first.tolist() == words.first.tolist()
    # English draughts: black always moves first
    eng = games_from_color_table(_color_table(), default_first_color="black")
    assert eng.first.tolist() == ["b", "b", "a"]
    assert eng.result.tolist() == [0.0, 1.0, 0.5]


def test_selfplay_schema_first_mover_from_variant_and_run_scoped_pairs() -> None:
    # the columns the self-play stage writes (docs/game-records.md); no first-mover column
    t = pa.table(
        {
            "run_id": ["r1", "r1", "r2", "r2"],
            "pair_id": pa.array([0, 0, 0, 0], pa.int64()),
            "variant": ["english", "english", "brazilian", "brazilian"],
            "white_player": ["a", "b", "a", "b"],
            "black_player": ["b", "a", "b", "a"],
            "result_white": pa.array([1.0, 0.5, 0.0, 1.0], pa.float32()),
        }
    )
    g = games_from_color_table(t, pair_id=("run_id", "pair_id"))
    # english: black moves first; brazilian: white moves first
    assert g.first.tolist() == ["b", "a", "a", "b"]
    assert g.result.tolist() == [0.0, 0.5, 0.0, 1.0]
    assert g.pair_id is not None and g.pair_id.tolist() == ["r1/0", "r1/0", "r2/0", "r2/0"]
    with pytest.raises(RatingsError, match=r"column 'variant'.*'klondike'"):
        games_from_color_table(t.set_column(2, "variant", pa.array(["klondike"] * 4)))


def test_defaults_match_the_selfplay_games_schema() -> None:
    from pipeline.games.records import GAMES_SCHEMA

    for column in ("white_player", "black_player", "result_white", "pair_id", "variant", "run_id"):
        assert column in GAMES_SCHEMA.names, column


def test_colour_table_errors() -> None:
    with pytest.raises(RatingsError, match="cannot tell who moved first"):
        games_from_color_table(_color_table())
    with pytest.raises(RatingsError, match=r"first_player\[2\] must be 'white'/'black'.*'red'"):
        games_from_color_table(_color_table(first_player=["white", "black", "red"]))
    with pytest.raises(RatingsError, match=r"lacks column\(s\) \['result_white'\]"):
        games_from_color_table(pa.table({"white_player": ["a"], "black_player": ["b"]}))
