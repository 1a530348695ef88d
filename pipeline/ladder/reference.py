"""The reference ladder of a variant: fixed anchors, rated once, stored, reused.

Anchors, weakest first: ``random`` (fixed at Elo 0), optional *bridges* (depth-1 engines that
play a random move with probability p; without them random and d1 never share a point, and the
gap between them would rest on the fit's prior alone) and noiseless fixed-depth engines
``d1, d2, ...`` (the variant's default weights, quiescence on, a bounded node budget). Every
anchor plays the next ``reach`` stronger ones (adjacent and skip-one by default) for N pairs;
:func:`pipeline.ratings.fit_elo` rates them all with random = 0.

``ladder.json`` keeps the anchors (name, spec, Elo, CI, games, score), the games as first-mover
W/D/L counts per pairing (all the Davidson fit needs, so later stages can refit the ladder
together with new games without its Parquet files), the fit's notes and a *ladder hash* of
everything that defines the ladder (variant, ply cap, anchors, pairs, reach, engine version:
not the run seed, so other runs can reuse it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

import engine
from engine.profile import LevelProfile
from engine.variants import get_variant
from pipeline.config.job_sections import LadderSection
from pipeline.games.executor import Executor
from pipeline.games.openings import Opening
from pipeline.games.pairings import Pairing, ProgressFn, play_pairings
from pipeline.games.players import inline_spec
from pipeline.games.storage import Root, write_json
from pipeline.games.storage_fs import joined, store_path
from pipeline.jsonrecord import Fields, RecordError
from pipeline.ratings import GameResults, Rating, RatingTable, fit_elo, games_from_color_table

LADDER_SCHEMA = 1
ANCHOR = "random"
LADDER_STAGE = "ladder"


class LadderError(ValueError):
    """A stored ladder that cannot be used here (other settings, other engine, bad file)."""


@dataclass(frozen=True)
class Anchor:
    """A ladder player: its name (player id) and its player spec."""

    name: str
    spec: str


#: An anchor's keys in ``ladder.json``: its name and spec beside its rating's numbers.
_ANCHOR_KEYS = ("name", "spec", "elo", "ci_low", "ci_high", "games", "score", "prior_driven")
_RESULT_KEYS = ("first", "second", "wins", "draws", "losses")
_LADDER_KEYS = ("schema_version", "variant", "ladder_hash", "engine_version", "anchor", "games", "anchors",
                "results", "draw_nu", "first_move_advantage", "notes")


@dataclass(frozen=True)
class RatedAnchor:
    """An anchor's player spec and its rating on the ladder (the rating names the player).

    ``ladder.json`` holds it flat: ``name`` (the rating's player), ``spec`` and the rating's
    numbers, so that stored ladders are read as they were written.
    """

    spec: str
    rating: Rating

    @property
    def name(self) -> str:
        return self.rating.player

    @property
    def elo(self) -> float:
        return self.rating.elo

    def to_json(self) -> dict[str, Any]:
        r = self.rating
        return {"name": r.player, "spec": self.spec, "elo": r.elo, "ci_low": r.ci_low, "ci_high": r.ci_high,
                "games": r.games, "score": r.score, "prior_driven": r.prior_driven}

    @classmethod
    def from_json(cls, data: object, where: str = "anchor") -> RatedAnchor:
        f = Fields(data, where, _ANCHOR_KEYS)
        rating = Rating(f.text("name"), f.number("elo"), f.number("ci_low"), f.number("ci_high"),
                        f.integer("games"), f.number("score"), f.flag("prior_driven"))
        return cls(f.text("spec"), rating)


def _result_row(data: object, where: str) -> tuple[str, str, int, int, int]:
    f = Fields(data, where, _RESULT_KEYS)
    return f.text("first"), f.text("second"), f.integer("wins"), f.integer("draws"), f.integer("losses")


@dataclass(frozen=True)
class Ladder:
    """A rated ladder (what ``ladder.json`` holds)."""

    variant: str
    ladder_hash: str
    anchors: tuple[RatedAnchor, ...]  # ladder order, weakest first
    results: tuple[tuple[str, str, int, int, int], ...]  # (first, second, wins, draws, losses of first)
    notes: tuple[str, ...]
    draw_nu: float
    first_move_advantage: float
    engine_version: str

    @property
    def n_games(self) -> int:
        return sum(w + d + n for _, _, w, d, n in self.results)

    def anchor(self, name: str) -> RatedAnchor:
        for a in self.anchors:
            if a.name == name:
                return a
        raise LadderError(f"no anchor {name!r} on the ladder; anchors: {[a.name for a in self.anchors]}")

    def game_results(self) -> GameResults:
        """The ladder's games, rebuilt from the stored counts (no pair ids)."""
        first: list[str] = []
        second: list[str] = []
        result: list[float] = []
        for a, b, wins, draws, losses in self.results:
            for score, count in ((1.0, wins), (0.5, draws), (0.0, losses)):
                first += [a] * count
                second += [b] * count
                result += [score] * count
        return GameResults.from_arrays(first, second, result)

    def bracket(self, target: float) -> tuple[RatedAnchor, RatedAnchor]:
        """The two anchors nearest ``target``: the closest below and above it when both exist."""
        ordered = sorted(self.anchors, key=lambda a: a.elo)
        below = [a for a in ordered if a.elo <= target]
        above = [a for a in ordered if a.elo > target]
        if below and above:
            return below[-1], above[0]
        nearest = sorted(ordered, key=lambda a: abs(a.elo - target))[:2]
        lo, hi = sorted(nearest, key=lambda a: a.elo)
        return lo, hi

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": LADDER_SCHEMA,
            "variant": self.variant,
            "ladder_hash": self.ladder_hash,
            "engine_version": self.engine_version,
            "anchor": ANCHOR,
            "games": self.n_games,
            "anchors": [a.to_json() for a in self.anchors],
            "results": [{"first": a, "second": b, "wins": w, "draws": d, "losses": n}
                        for a, b, w, d, n in self.results],
            "draw_nu": self.draw_nu,
            "first_move_advantage": self.first_move_advantage,
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: object, source: str) -> Ladder:
        """Read ``ladder.json`` strictly: a missing, unknown or mistyped key, another schema or a
        game count that disagrees with the results is a LadderError naming the file and key."""
        if isinstance(data, dict) and data.get("schema_version") != LADDER_SCHEMA:
            raise LadderError(f"{source}: ladder schema {data.get('schema_version')!r}, "
                              f"expected {LADDER_SCHEMA}")
        try:
            f = Fields(data, source, _LADDER_KEYS)
            f.constant("anchor", ANCHOR)
            ladder = cls(
                variant=f.text("variant"), ladder_hash=f.text("ladder_hash"),
                anchors=f.records("anchors", RatedAnchor.from_json),
                results=f.records("results", _result_row), notes=f.texts("notes"),
                draw_nu=f.number("draw_nu"), first_move_advantage=f.number("first_move_advantage"),
                engine_version=f.text("engine_version"),
            )
            if f.integer("games") != ladder.n_games:
                raise RecordError(f"{f.path('games')}: {f.integer('games')}, but the results hold "
                                  f"{ladder.n_games} games")
        except RecordError as err:
            raise LadderError(str(err)) from None
        return ladder


def anchors(variant: str, section: LadderSection) -> list[Anchor]:
    """The ladder's anchors, weakest first: random, bridges (falling p), depths (rising)."""

    rules = get_variant(variant)

    def engine(name: str, depth: int, random_move_prob: float = 0.0) -> Anchor:
        knobs = {"max_depth": depth, "node_budget": section.node_budget, "quiescence": True,
                 "tt_log2": section.tt_log2, "random_move_prob": random_move_prob}
        return Anchor(name, inline_spec(name, LevelProfile.from_knobs(rules, name, knobs=knobs)))

    out = [Anchor(ANCHOR, ANCHOR)]
    out += [engine(f"d1r{round(p * 100):02d}", 1, p) for p in section.bridges]
    out += [engine(f"d{d}", d) for d in section.depths]
    return out


def pairings(ladder_anchors: Sequence[Anchor], pairs: int, reach: int) -> list[Pairing]:
    """Each anchor against the next ``reach`` stronger ones; the weaker one is side A."""
    out = []
    for i, low in enumerate(ladder_anchors):
        for high in ladder_anchors[i + 1 : i + 1 + reach]:
            out.append(Pairing(low.spec, high.spec, pairs))
    return out


def ladder_hash(variant: str, ply_cap: int, section: LadderSection, deck_part: str = "all") -> str:
    """What defines the ladder: rules, ply cap, anchor specs, pairs, reach, engine version and
    (when not the whole deck) the deck part."""

    payload = {
        "schema": LADDER_SCHEMA, "variant": variant, "ply_cap": ply_cap, "pairs": section.pairs,
        "reach": section.reach, "anchors": [a.spec for a in anchors(variant, section)],
        "engine_version": engine.__version__,
    }
    if deck_part != "all":
        payload["deck_part"] = deck_part
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def first_mover_counts(games: GameResults) -> tuple[tuple[str, str, int, int, int], ...]:
    """W/D/L of the first mover per (first, second), sorted."""
    counts: dict[tuple[str, str], list[int]] = {}
    for a, b, r in zip(games.first.tolist(), games.second.tolist(), games.result.tolist(), strict=True):
        cell = counts.setdefault((a, b), [0, 0, 0])
        cell[0 if r == 1.0 else 1 if r == 0.5 else 2] += 1
    return tuple((a, b, *cell) for (a, b), cell in sorted(counts.items()))  # type: ignore[misc]


def fit_ladder(variant: str, ladder_anchors: Sequence[Anchor], table: pa.Table, hash_: str) -> Ladder:
    """Rate the anchors from the ladder's games (random = 0)."""

    games = games_from_color_table(table, pair_id=("run_id", "pair_id"))
    fit: RatingTable = fit_elo(games, ANCHOR, 0.0)
    rated = []
    for a in ladder_anchors:
        rated.append(RatedAnchor(a.spec, fit[a.name]))
    return Ladder(
        variant=variant, ladder_hash=hash_, anchors=tuple(rated), results=first_mover_counts(games),
        notes=fit.notes, draw_nu=fit.draw_nu.value, first_move_advantage=fit.first_move_advantage.value,
        engine_version=engine.__version__,
    )


def load_ladder(path: Root, expected_hash: str | None = None) -> Ladder:
    """Read a ladder.json; with ``expected_hash``, refuse one rated with other settings."""
    p = store_path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise LadderError(f"cannot read ladder {str(p)!r}: {err}") from None
    ladder = Ladder.from_json(data, repr(str(p)))
    if expected_hash is not None and ladder.ladder_hash != expected_hash:
        raise LadderError(
            f"stored ladder {str(p)!r} was rated with other settings or another engine "
            f"(ladder hash {ladder.ladder_hash}, this config needs {expected_hash}); "
            "remove ladder.path or point it at a new file"
        )
    return ladder


def save_ladder(ladder: Ladder, path: Root) -> None:
    write_json(path, ladder.to_json())


def ensure_ladder(
    *,
    executor: Executor | None,
    output_root: Root,
    run_id: str,
    variant: str,
    section: LadderSection,
    run_seed: int,
    batch_size: int,
    ply_cap: int,
    deck: Sequence[Opening],
    progress: ProgressFn | None = None,
    deck_part: str = "all",
) -> tuple[Ladder, str]:
    """The run's ladder and where it came from ('run', 'stored' or 'rated').

    Order: the run folder's ladder.json (a resumed run), else the stored ``ladder.path``,
    else rate it now (resuming finished ladder batches) and store it in both places.
    """
    hash_ = ladder_hash(variant, ply_cap, section, deck_part)
    here = joined(output_root, run_id, "ladder.json")
    if here.is_file():
        return load_ladder(here, hash_), "run"
    if section.path is not None and store_path(section.path).is_file():
        ladder = load_ladder(section.path, hash_)
        save_ladder(ladder, here)
        return ladder, "stored"
    if executor is None:
        raise LadderError(f"no ladder at {str(here)!r} or ladder.path; run the ladder stage first")
    ladder_anchors = anchors(variant, section)
    table = play_pairings(executor, output_root, run_id, LADDER_STAGE, variant,
                          pairings(ladder_anchors, section.pairs, section.reach), run_seed, batch_size,
                          ply_cap, deck, progress, stage_seeds=True)
    ladder = fit_ladder(variant, ladder_anchors, table, hash_)
    save_ladder(ladder, here)
    if section.path is not None:
        save_ladder(ladder, section.path)
    return ladder, "rated"


def ladder_summary(ladder: Ladder) -> str:
    """One line: each anchor's Elo and CI."""
    parts = [f"{a.name} {a.elo:+.0f} [{a.rating.ci_low:+.0f}, {a.rating.ci_high:+.0f}]"
             for a in ladder.anchors]
    return f"ladder ({ladder.n_games} games): " + ", ".join(parts)


def counts_array(ladder: Ladder) -> np.ndarray:
    """The stored counts as an (n, 3) int array (tests, reports)."""
    return np.array([[w, d, n] for _, _, w, d, n in ladder.results], dtype=np.int64)
