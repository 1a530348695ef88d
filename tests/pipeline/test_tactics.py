"""Tactical test sets: reproducible builds, positions that meet their definition, a strict loader
and solve rates that tell a deep level from a shallow one."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from engine.board import Board
from engine.features import default_weights
from engine.kernel.search import MATE_BOUND
from engine.profile import LevelProfile
from engine.search import Searcher
from engine.variants import get_variant
from pipeline.calibration.tactics import DATA_DIR, build_tactics, main, recipe_command, write_tactics
from pipeline.calibration.tactics_score import TacticsScore, score, solve_rate, solved
from pipeline.calibration.tactics_set import (
    TacticalPosition,
    TacticsError,
    TacticsRecipe,
    TacticsSet,
    dump_tactics,
    load_tactics,
    tactics_document,
    tactics_variants,
)
from pipeline.ratings.blunders import material_weights, wilson_interval

TINY = TacticsRecipe("english", seed=5, count=3, deep_depth=5, max_plies=30, max_playouts=200)
SHIPPED = ("english", "suicide", "brazilian", "russian", "international")


@pytest.fixture(scope="module")
def tiny() -> TacticsSet:
    return build_tactics(TINY)


# -- the definition, checked with searches made here ----------------------------------------------
def _scores(recipe: TacticsRecipe, board: Board, depth: int, quiescence: bool,
            tt_log2: int) -> dict[tuple[int, int, int], int]:
    variant = board.variant
    result = Searcher(variant, material_weights(variant), depth, recipe.node_budget, quiescence,
                      tt_log2).search(board.position, exact_root=True)
    assert result.root_scores is not None
    return {(int(m.from_bit), int(m.to_bit), int(m.captured)): s
            for m, s in zip(result.root_moves, result.root_scores, strict=True)}


def _check_definition(recipe: TacticsRecipe, position: TacticalPosition) -> None:
    """Deep search wins >= threshold over the position's material and over every shallow-best move; the
    winning and shallow lists are exactly what the two searches say."""
    variant = get_variant(recipe.variant)
    board = Board(variant, position.fen)
    weights = default_weights(variant)
    man = abs(weights["man"])
    deep = _scores(recipe, board, recipe.deep_depth, True, 18)
    shallow = _scores(recipe, board, recipe.shallow_depth, recipe.shallow_quiescence, 16)
    best = max(deep.values())
    side = board.position.side_to_move
    own, opp, kings = board.position.pieces(side), board.position.pieces(side.opponent), board.position.kings
    static = (weights["man"] * ((own & ~kings).bit_count() - (opp & ~kings).bit_count())
              + weights["king"] * ((own & kings).bit_count() - (opp & kings).bit_count()))
    assert best >= MATE_BOUND or best - static >= recipe.threshold_men * man
    top = max(shallow.values())
    shallow_best = {k for k, s in shallow.items() if s == top}
    winning = {k for k, s in deep.items() if s >= best - recipe.margin_men * man}

    def keys(texts: tuple[str, ...]) -> set[tuple[int, int, int]]:
        moves = [board.parse_move(t) for t in texts]
        return {(m.from_bit, m.to_bit, m.captured) for m in moves}

    assert keys(position.winning) == winning
    assert keys(position.shallow) == shallow_best
    assert not winning & shallow_best
    missed = best - max(deep[k] for k in shallow_best)
    assert missed >= recipe.threshold_men * man
    if position.gain_men is not None:
        assert position.gain_men == pytest.approx(missed / man)
        assert position.gain_men >= recipe.threshold_men
    # found_at_depth: every search from that depth to the deep one rates only winning moves best,
    # the one just below it does not
    for depth in range(position.found_at_depth, recipe.deep_depth + 1):
        at = _scores(recipe, board, depth, True, 18)
        assert {k for k, s in at.items() if s == max(at.values())} <= winning, depth
    if position.found_at_depth > 1:
        below = _scores(recipe, board, position.found_at_depth - 1, True, 18)
        assert not {k for k, s in below.items() if s == max(below.values())} <= winning


def test_tiny_build_is_reproducible_and_meets_its_definition(tiny: TacticsSet, tmp_path: Path) -> None:
    assert build_tactics(TINY) == tiny
    assert len(tiny.positions) == 3 and len({p.fen for p in tiny.positions}) == 3
    for position in tiny.positions:
        _check_definition(TINY, position)
    # written, read back strictly, equal; the CLI rebuilds the file byte for byte
    path = write_tactics(tiny, tmp_path / "a")
    assert load_tactics("english", path) == tiny
    argv = recipe_command(TINY).split()[3:]
    assert main([*argv, "--output", str(tmp_path / "b")]) == 0
    assert main([*argv, "--output", str(tmp_path / "c")]) == 0
    text = path.read_text(encoding="utf-8")
    assert (tmp_path / "b" / "english.json").read_text(encoding="utf-8") == text
    assert (tmp_path / "c" / "english.json").read_text(encoding="utf-8") == text
    assert main(["english", "--check", "--output", str(tmp_path / "a")]) == 0


def test_check_reports_a_file_that_its_recipe_does_not_rebuild(tiny: TacticsSet, tmp_path: Path) -> None:
    first, second = tiny.positions[0], tiny.positions[1]
    swapped = dataclasses.replace(tiny, positions=(second, first, *tiny.positions[2:]))
    write_tactics(swapped, tmp_path)
    assert main(["english", "--check", "--output", str(tmp_path)]) == 1


def test_other_seed_gives_other_positions(tiny: TacticsSet) -> None:
    other = build_tactics(dataclasses.replace(TINY, seed=6))
    assert {p.fen for p in other.positions} != {p.fen for p in tiny.positions}


def test_suicide_positions_shed_material() -> None:
    """In suicide the material weights are negative: the deep line loses pieces, which wins."""
    recipe = TacticsRecipe("suicide", seed=2, count=2, deep_depth=5, max_plies=30, max_playouts=200)
    tactics = build_tactics(recipe)
    for position in tactics.positions:
        _check_definition(recipe, position)


def test_recipe_rejects_inconsistent_fields() -> None:
    with pytest.raises(TacticsError, match=r"recipe.margin_men: must be below threshold_men"):
        TacticsRecipe("english", 1, 10, margin_men=1.0)
    with pytest.raises(TacticsError, match=r"recipe.shallow_depth: must be below deep_depth"):
        TacticsRecipe("english", 1, 10, deep_depth=4, shallow_depth=4)
    with pytest.raises(TacticsError, match=r"recipe.count: expected int"):
        TacticsRecipe("english", 1, True)
    with pytest.raises(TacticsError, match=r"recipe.variant"):
        TacticsRecipe("checkers", 1, 10)
    with pytest.raises(TacticsError, match=r"recipe.deck_part"):
        TacticsRecipe("english", 1, 10, deck_part="half")


def test_too_few_playouts_is_an_error() -> None:
    with pytest.raises(TacticsError, match=r"only .* positions after 1 playouts; raise max_playouts"):
        build_tactics(dataclasses.replace(TINY, count=5, max_playouts=1))


def test_cli_reports_bad_input_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["chess", "--seed", "1", "--count", "3", "--output", str(tmp_path)]) == 2
    assert main(["english", "--count", "3", "--output", str(tmp_path)]) == 2
    bad_margin = ["english", "--seed", "1", "--count", "3", "--margin-men", "2"]
    assert main([*bad_margin, "--output", str(tmp_path)]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 3 and all(e.startswith("error: ") for e in errors)
    assert "--seed" in errors[1] and "margin_men" in errors[2]
    assert list(tmp_path.iterdir()) == []


# -- the loader ---------------------------------------------------------------------------------
def _mutations(doc: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(name, mutated document or raw text, what the error names)."""
    out: list[tuple[str, Any, str]] = []

    def change(name: str, where: str, edit: Any) -> None:
        bad = copy.deepcopy(doc)
        edit(bad)
        out.append((name, bad, where))

    change("version", "schema_version", lambda d: d.update(schema_version=2))
    change("extra key", "extra: unknown key", lambda d: d.update(extra=1))
    change("missing key", "missing key 'build'", lambda d: d.pop("build"))
    change("variant", "variant: expected 'english'", lambda d: d.update(variant="suicide"))
    change("recipe margin", "recipe.margin_men", lambda d: d["recipe"].update(margin_men=1.5))
    change("recipe bool", "recipe.count: expected int", lambda d: d["recipe"].update(count=True))
    change("recipe key", "recipe.depth: unknown key", lambda d: d["recipe"].update(depth=3))
    change("count", "positions: expected the recipe's count", lambda d: d["recipe"].update(count=4))
    change("source", "source.command", lambda d: d["source"].update(command=""))
    change("build", "build.playouts: expected an integer", lambda d: d["build"].update(playouts=1.5))
    change("fen", "positions[0].fen", lambda d: d["positions"][0].update(fen="W:W99:B1"))
    change("order", "positions[0].fen: not canonical",
           lambda d: d["positions"][0].update(fen=_reorder(d["positions"][0]["fen"])))
    change("illegal", "positions[1].winning[0]: not a legal move",
           lambda d: d["positions"][1].update(winning=["1-2"]))
    change("twice", "positions[1].winning[1]: listed twice",
           lambda d: d["positions"][1].update(winning=d["positions"][1]["winning"] * 2))
    change("empty", "positions[1].shallow: expected a non-empty list",
           lambda d: d["positions"][1].update(shallow=[]))
    change("overlap", "positions[0].shallow: a move the shallow search rates best is also winning",
           lambda d: d["positions"][0]["shallow"].append(d["positions"][0]["winning"][0]))
    change("gain", "positions[2].gain_men: below the recipe's threshold_men",
           lambda d: d["positions"][2].update(gain_men=0.5))
    change("depth", "positions[2].found_at_depth: outside",
           lambda d: d["positions"][2].update(found_at_depth=0))
    change("position key", "positions[2].note: unknown key", lambda d: d["positions"][2].update(note="x"))
    change("duplicate", "positions[2].fen: the position is already in the set",
           lambda d: d["positions"].__setitem__(2, {**d["positions"][0], "id": "009"}))
    change("id", "positions[2].id: used twice",
           lambda d: d["positions"][2].update(id=d["positions"][0]["id"]))
    text = json.dumps(doc)
    out.append(("not json", text[:-3], "invalid JSON"))
    out.append(("nan", text.replace('"threshold_men": 1.0', '"threshold_men": NaN'), "invalid JSON: NaN"))
    out.append(("dup key", text.replace('"schema_version": 1', '"schema_version": 1, "schema_version": 1'),
                "duplicate key 'schema_version'"))
    out.append(("bytes", b"\xff\xfe", "not UTF-8"))
    return out


def _reorder(fen: str) -> str:
    side, white, black = fen.split(":")
    squares = white[1:].split(",")
    return ":".join([side, "W" + ",".join(reversed(squares)), black])


def test_loader_rejects_bad_files_in_one_line(tiny: TacticsSet, tmp_path: Path) -> None:
    doc = tactics_document(tiny)
    for name, bad, where in _mutations(doc):
        path = tmp_path / f"{name.replace(' ', '-')}.json"
        if isinstance(bad, bytes):
            path.write_bytes(bad)
        else:
            path.write_text(bad if isinstance(bad, str) else json.dumps(bad), encoding="utf-8")
        with pytest.raises(TacticsError) as err:
            load_tactics("english", path)
        message = str(err.value)
        assert "\n" not in message, name
        assert str(path) in message and where in message, (name, message)
    with pytest.raises(TacticsError, match=r"cannot read tactics set"):
        load_tactics("english", tmp_path / "missing.json")


# -- the shipped sets ---------------------------------------------------------------------------
def test_every_variant_ships_a_set() -> None:
    assert tactics_variants() == sorted(SHIPPED)


@pytest.mark.parametrize("variant", SHIPPED)
def test_shipped_set_loads_and_a_sample_meets_its_definition(variant: str) -> None:
    tactics = load_tactics(variant)
    minimum = 60 if get_variant(variant).board_size == 10 else 100
    assert len(tactics.positions) >= minimum
    assert (DATA_DIR / f"{variant}.json").read_text(encoding="utf-8") == dump_tactics(tactics)
    assert tactics.source["command"] == recipe_command(tactics.recipe)
    for position in tactics.positions[:: max(1, len(tactics.positions) // 4)][:4]:
        _check_definition(tactics.recipe, position)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["english", "international"])
def test_shipped_set_rebuilds_exactly(variant: str) -> None:
    tactics = load_tactics(variant)
    assert build_tactics(tactics.recipe) == tactics


# -- solve rates --------------------------------------------------------------------------------
def test_score_is_the_share_with_its_wilson_interval() -> None:
    assert score([True, False, True, True]) == TacticsScore(3, 4, 0.75, *wilson_interval(3, 4))
    assert score([]) == TacticsScore(0, 0, None, 0.0, 1.0)


def test_a_deep_level_solves_more_than_a_two_ply_one() -> None:
    variant = get_variant("english")
    positions = load_tactics(variant).positions[:40]
    deep = LevelProfile.from_knobs(variant, "deep", knobs={"max_depth": 10, "node_budget": 2_000_000})
    shallow = LevelProfile.from_knobs(variant, "shallow", knobs={"max_depth": 2, "quiescence": False})
    deep_score, shallow_score = solve_rate(deep, positions), solve_rate(shallow, positions)
    assert deep_score.total == shallow_score.total == 40
    assert deep_score.rate is not None and shallow_score.rate is not None
    assert deep_score.rate >= 0.8 and deep_score.rate > shallow_score.rate
    assert deep_score.ci_low > shallow_score.ci_high


def test_a_level_of_another_variant_is_refused(tiny: TacticsSet) -> None:
    level = LevelProfile.from_knobs(get_variant("suicide"), "x", knobs={"max_depth": 2})
    with pytest.raises(TacticsError, match=r"is english, the level 'x' plays suicide"):
        solved(level, tiny.positions)
