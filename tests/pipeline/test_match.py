"""The pure match runner: pairs, seeds, records."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.games.match import GameSeeds, format_movetext, game_seeds, make_batch_spec, play_batch
from pipeline.games.openings import load_deck
from pipeline.games.records import GAMES_SCHEMA, TERMINATIONS, TIMING_COLUMNS, winner_score


def _spec(batch_id: int = 3, seed: int = 11, variant: str = "english", pairs: int = 3, ply_cap: int = 150):
    deck = load_deck(variant)
    return make_batch_spec(
        run_id="r", batch_id=batch_id, variant=variant, player_a="random", player_b="random", run_seed=seed,
        first_game_id=batch_id * 2 * pairs, openings=[(o.id, o.fen) for o in deck[:pairs]], ply_cap=ply_cap,
    )


def test_seeds_are_deterministic_and_distinct() -> None:
    assert game_seeds(1, 2, 3) == game_seeds(1, 2, 3)
    seeds = {game_seeds(s, b, g) for s in range(3) for b in range(3) for g in range(4)}
    assert len(seeds) == 36
    assert all(0 <= x < 2**63 for s in seeds for x in (s.game, s.a, s.b))


def test_unsalted_seeds_never_change() -> None:
    # stored games (levelcheck folders) replay and resume only while this derivation stays fixed
    assert game_seeds(71013, 3, 5) == GameSeeds(game=6223982603190714623, a=7358388930426517246,
                                                 b=2299543610346721703)
    assert game_seeds(71013, 3, 5, salt=None) == game_seeds(71013, 3, 5)


def test_a_salt_gives_unrelated_seeds() -> None:
    plain = {game_seeds(1, b, g) for b in range(3) for g in range(4)}
    salted = {game_seeds(1, b, g, salt=s) for s in (5, 6) for b in range(3) for g in range(4)}
    assert len(salted) == 24 and not plain & salted
    seeds = {x for s in salted for x in (s.game, s.a, s.b)}
    assert len(seeds) == 72 and all(0 <= x < 2**63 for x in seeds)


@pytest.mark.parametrize("variant", ["english", "brazilian", "russian"])
def test_batch_records(variant: str) -> None:
    spec = _spec(variant=variant)
    table = play_batch(spec)
    assert table.schema.equals(GAMES_SCHEMA, check_metadata=False)
    rows = table.to_pylist()
    assert [r["game_id"] for r in rows] == list(range(18, 24))
    assert [r["pair_id"] for r in rows] == [9, 9, 10, 10, 11, 11]
    for first, second in zip(rows[::2], rows[1::2], strict=True):
        assert first["opening_id"] == second["opening_id"]
        assert (first["a_color"], second["a_color"]) == ("white", "black")
    for r in rows:
        assert r["termination"] in TERMINATIONS and r["plies"] <= 150
        assert r["result_white"] + r["result_black"] == 1.0
        assert r["result_a"] == (r["result_white"] if r["a_color"] == "white" else r["result_black"])
        expected_pdn = {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[r["result_white"]]
        assert r["result_pdn"] == expected_pdn
        assert (r["winner"] is None) == (r["result_white"] == 0.5)
        if r["winner"] is None:
            assert r["winner_score"] == 0
        else:
            assert r["winner_score"] >= 100 * r[f"{r['winner']}_pieces"]
        assert len(r["moves"].split()) >= r["plies"]
        if r["termination"] == "ply_cap":
            assert r["plies"] == 150 and r["winner"] is None


def test_same_spec_same_games_except_timing() -> None:
    a, b = play_batch(_spec()), play_batch(_spec())
    keep = [c for c in a.column_names if c not in TIMING_COLUMNS]
    assert a.select(keep).equals(b.select(keep))
    other = play_batch(_spec(seed=12))
    assert other.column("moves").to_pylist() != a.column("moves").to_pylist()


def test_moves_replay_to_the_final_position() -> None:
    from engine.board import Board

    for row in play_batch(_spec(variant="brazilian", pairs=2)).to_pylist():
        board = Board("brazilian", fen=row["opening_fen"])
        for token in row["moves"].split():
            if not token.endswith("."):
                board.push_text(token)
        assert board.fen(True) == row["final_fen"]
        assert board.ply == row["plies"]


def test_ply_cap_is_its_own_termination() -> None:
    rows = play_batch(_spec(ply_cap=4)).to_pylist()
    assert {r["termination"] for r in rows} == {"ply_cap"}
    assert all(r["plies"] == 4 and r["result_pdn"] == "1/2-1/2" for r in rows)


def test_first_game_id_must_be_even() -> None:
    with pytest.raises(ValueError, match="even"):
        make_batch_spec(run_id="r", batch_id=0, variant="english", player_a="random", player_b="random",
                        run_seed=0, first_game_id=3, openings=[], ply_cap=10)


def test_winner_score_and_movetext() -> None:
    assert winner_score(5, 30) == 800
    assert winner_score(2, 75) == 200
    assert format_movetext([(True, "11-15"), (False, "23-19"), (True, "8-11")]) == "1. 11-15 23-19 2. 8-11"
    assert format_movetext([(False, "23-19"), (True, "8-11")]) == "1... 23-19 2. 8-11"
    assert isinstance(play_batch(_spec(pairs=1)), pa.Table)


@pytest.mark.slow  # the first search compiles the numba kernel (about a minute on a fresh clone)
def test_engine_level_player_records_its_search() -> None:
    pytest.importorskip("engine.player")
    from engine.profile import load_level

    deck = load_deck("english")
    spec = make_batch_spec(run_id="r", batch_id=0, variant="english", player_a="easy", player_b="random",
                           run_seed=4, first_game_id=0, openings=[(deck[0].id, deck[0].fen)], ply_cap=60)
    first, second = play_batch(spec).to_pylist()
    easy_hash = load_level("english", "easy").profile_hash()
    assert first["white_player"] == "easy" and first["white_profile_hash"] == easy_hash
    assert second["black_player"] == "easy" and second["black_profile_hash"] == easy_hash
    assert first["white_nodes"] > 0 and first["white_max_depth"] >= 1
    again = play_batch(spec).to_pylist()
    assert [r["moves"] for r in again] == [first["moves"], second["moves"]]
