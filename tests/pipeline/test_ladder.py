"""The reference ladder: anchors, pairings, the fit on a synthetic game table, storage and reuse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.config.job_sections import LadderSection
from pipeline.ladder.reference import (
    ANCHOR,
    Anchor,
    LadderError,
    anchors,
    ensure_ladder,
    fit_ladder,
    ladder_hash,
    load_ladder,
    pairings,
    save_ladder,
)
from pipeline.ratings import fit_elo, simulate_pairs

TRUE = {"random": 0.0, "d1r50": 300.0, "d1": 700.0, "d2": 900.0}


def synthetic_table(seed: int = 1, pairs: int = 60) -> pa.Table:
    """English games (Black moves first) drawn from known ratings, in the self-play schema's columns."""
    games = simulate_pairs(TRUE, pairs, nu=0.6, advantage=30.0, rng=np.random.default_rng(seed))
    return pa.table({
        "white_player": games.second.tolist(), "black_player": games.first.tolist(),
        "result_white": (1.0 - games.result).tolist(), "variant": ["english"] * len(games),
        "run_id": ["run/ladder"] * len(games), "pair_id": games.pair_id.tolist(),
    })


def test_anchors_and_pairings() -> None:
    section = LadderSection(depths=(1, 2, 4), bridges=(0.5, 0.25))
    found = anchors("english", section)
    assert [a.name for a in found] == ["random", "d1r50", "d1r25", "d1", "d2", "d4"]
    assert found[0].spec == "random" and all(a.spec.startswith(f"inline:{a.name}:") for a in found[1:])
    plan = pairings(found, pairs=3, reach=2)
    assert len(plan) == 5 + 4 and all(p.pairs == 3 for p in plan)
    assert (plan[0].a_spec, plan[0].b_spec) == (found[0].spec, found[1].spec)
    assert (plan[1].a_spec, plan[1].b_spec) == (found[0].spec, found[2].spec)
    assert len(pairings(found, 3, 1)) == 5


def test_fit_on_synthetic_games_recovers_the_ladder(tmp_path: Path) -> None:
    names = [Anchor(n, n if n == ANCHOR else f"inline:{n}:{{}}") for n in TRUE]
    ladder = fit_ladder("english", names, synthetic_table(), "h1")
    by_name = {a.name: a for a in ladder.anchors}
    random = by_name["random"].rating
    assert random.elo == 0.0 and random.ci_low == random.ci_high == 0.0
    for name, elo in TRUE.items():
        a = by_name[name]
        assert a.rating.holds(elo), (name, a)
    assert [a.name for a in ladder.anchors] == list(TRUE)  # ladder order kept
    assert ladder.n_games == 6 * 60 * 2

    # The stored counts rebuild games that give the same fit (no Parquet needed later).
    refit = fit_elo(ladder.game_results(), ANCHOR)
    for a in ladder.anchors:
        assert refit[a.name].elo == pytest.approx(a.elo, abs=1e-6)

    path = tmp_path / "ladder.json"
    save_ladder(ladder, path)
    assert load_ladder(path, "h1") == ladder
    with pytest.raises(LadderError, match="other settings"):
        load_ladder(path, "h2")

    low, high = ladder.bracket(500.0)
    assert (low.name, high.name) == ("d1r50", "d1")
    assert [a.name for a in ladder.bracket(5000.0)] == ["d1", "d2"]
    assert [a.name for a in ladder.bracket(-50.0)] == ["random", "d1r50"]


def test_ladder_hash_ignores_where_it_is_stored() -> None:
    a = LadderSection(depths=(1, 2))
    stored_elsewhere = LadderSection(depths=(1, 2), path="x.json")
    assert ladder_hash("english", 200, a) == ladder_hash("english", 200, stored_elsewhere)
    assert ladder_hash("english", 200, a) != ladder_hash("english", 150, a)
    assert ladder_hash("english", 200, a) != ladder_hash("english", 200, LadderSection(depths=(1, 3)))


def test_a_stored_ladder_is_reused_and_a_foreign_one_refused(tmp_path: Path) -> None:
    section = LadderSection(depths=(1,), bridges=(), pairs=1, path=str(tmp_path / "store" / "ladder.json"))
    names = [Anchor(n, n if n == ANCHOR else f"inline:{n}:{{}}") for n in TRUE]
    stored = fit_ladder("english", names, synthetic_table(pairs=5), ladder_hash("english", 100, section))
    save_ladder(stored, section.path)  # type: ignore[arg-type]
    kwargs = dict(executor=None, output_root=tmp_path / "out", run_id="r", variant="english", section=section,
                  run_seed=1, batch_size=2, deck=())
    ladder, source = ensure_ladder(ply_cap=100, **kwargs)  # type: ignore[arg-type]
    assert source == "stored" and ladder == stored
    assert (tmp_path / "out" / "r" / "ladder.json").is_file()
    ladder, source = ensure_ladder(ply_cap=100, **kwargs)  # type: ignore[arg-type]
    assert source == "run"
    with pytest.raises(LadderError, match="other settings"):
        ensure_ladder(ply_cap=120, **{**kwargs, "run_id": "r2"})  # type: ignore[arg-type]
