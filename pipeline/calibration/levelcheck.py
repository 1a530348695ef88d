"""Independent check of a calibrated profile: ``python -m pipeline levelcheck PROFILE.json``.

On openings its calibration never used (by default the odd half of the deck; the run configs
calibrate on the even half) and with seeds of its own, each level of the profile plays the
product's level of the same name, Medium plays Easy and Hard plays Medium. From these games
alone, on the calibration's scale (score-based Elo, the product's Medium at 1500, CIs by a
bootstrap over openings):

- every match's measured score with its CI beside the score the profile predicts (its Elo gap
  for adjacent levels, its ``expected_score_product`` against the product's levels);
  ``reproduced`` = the prediction lies inside the measured CI (about one miss in twenty is
  expected from chance alone);
- every level's Elo from one fit of the check's games beside the profile's claim;
- every level's blunder rate and nodes per move.

Games go to ``DIR/levelcheck/matches/games/``; a rerun with the same settings skips finished
batches, and ``DIR/levelcheck-plan.json`` refuses a folder holding games of other settings.
Results: ``DIR/levelcheck.json`` and ``DIR/levelcheck.md``.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa

from engine.profile import LEVEL_NAMES, Profile, load_profile
from pipeline.calibration.product import ANCHOR_ELO, product_levels
from pipeline.games.executor import RayOptions, make_executor
from pipeline.games.openings import DECK_PARTS, load_deck
from pipeline.games.pairings import Pairing, ProgressFn, play_pairings
from pipeline.games.players import inline_spec
from pipeline.games.stage import player_nodes_per_move, read_result, write_result
from pipeline.games.storage_fs import StorePath, store_path
from pipeline.ratings.blunders import blunder_rate
from pipeline.ratings.logistic import elo_to_score
from pipeline.ratings.scale import match_score, match_score_json, measured_groups, scale_from_games

RUN_ID = "levelcheck"
STAGE = "matches"
PLAN_FILE = "levelcheck-plan.json"
RESULT_VERSION = 2


class LevelCheckError(ValueError):
    """A check that cannot run as asked (bad settings, a folder of another check)."""


@dataclass(frozen=True)
class LevelCheckSettings:
    """Everything the command line sets (recorded in levelcheck.json)."""

    profile: str
    output: str
    openings: int = 60
    seed: int = 0
    deck: str | None = None
    deck_part: str = "odd"
    ply_cap: int = 200
    batch_size: int = 10
    bootstrap: int = 400
    in_process: bool = False
    address: str | None = None

    def check(self) -> None:
        """Raise LevelCheckError on a value no check can run with."""
        for name, low in (
            ("openings", 2),
            ("ply_cap", 10),
            ("batch_size", 2),
            ("bootstrap", 50),
            ("seed", 0),
        ):
            value = getattr(self, name)
            if value < low:
                raise LevelCheckError(f"--{name.replace('_', '-')} must be >= {low}, got {value}")
        if self.seed > MAX_SEED:
            raise LevelCheckError(f"--seed must be <= {MAX_SEED} (seeds are stored as int64), "
                                  f"got {self.seed}")
        if self.batch_size % 2:
            raise LevelCheckError(f"--batch-size must be even (whole pairs), got {self.batch_size}")
        if self.deck_part not in DECK_PARTS:
            raise LevelCheckError(
                f"--deck-part must be one of {', '.join(DECK_PARTS)}, got {self.deck_part!r}"
            )


MAX_SEED = 2**63 - 1  # the game records' seed columns are int64


@dataclass(frozen=True)
class Match:
    """One match of the check and the score the profile predicts for its first player."""

    a: str
    b: str
    predicted: float | None


def _players(profile: Profile) -> dict[str, str]:
    """Player name -> inline spec: the profile's levels and the product's."""
    variant = profile.variant.name
    product = product_levels(variant)
    out = {f"profile-{n}": inline_spec(f"profile-{n}", profile.level(n)) for n in LEVEL_NAMES}
    out.update({product.player(n): product.spec(n) for n in LEVEL_NAMES})
    return out


def matches(profile: Profile) -> list[Match]:
    """Each level against the product's level of its name, then Medium-Easy and Hard-Medium."""
    levels = profile.provenance.levels
    out = []
    for n in LEVEL_NAMES:
        m = levels[n].measures
        out.append(Match(f"profile-{n}", f"product-{n}", None if m is None else m.expected_score_product[n]))
    for weaker, stronger in itertools.pairwise(LEVEL_NAMES):
        a, b = levels[stronger].elo, levels[weaker].elo
        predicted = None if a is None or b is None else float(elo_to_score(a - b))
        out.append(Match(f"profile-{stronger}", f"profile-{weaker}", predicted))
    return out


def _check_folder(output: StorePath, plan: dict[str, Any]) -> None:
    path = output / PLAN_FILE
    old = read_result(path)
    if old is not None:
        if old != plan:
            changed = sorted(k for k in plan if old.get(k) != plan[k])
            raise LevelCheckError(
                f"{str(output)!r} holds a level check of other settings ({', '.join(changed)} "
                "differ): use another --output"
            )
    else:
        write_result(path, plan)


def run_levelcheck(settings: LevelCheckSettings, progress: ProgressFn | None = None) -> dict[str, Any]:
    """Play the check's games (or read them back), judge the profile's claims, write the results."""
    started = time.perf_counter()
    settings.check()
    profile = load_profile(settings.profile)
    variant = profile.variant.name
    deck = load_deck(variant, part=settings.deck_part, name=settings.deck)
    if len(deck) < settings.openings:
        raise LevelCheckError(
            f"--openings {settings.openings}: the deck {settings.deck or variant!r} "
            f"(part {settings.deck_part}) has {len(deck)} openings"
        )
    specs = _players(profile)
    plan = {k: v for k, v in asdict(settings).items() if k not in ("output", "in_process", "address")}
    plan["profile_hash"] = profile.profile_hash()
    output = store_path(settings.output)
    _check_folder(output, plan)
    todo = matches(profile)
    pairings = [Pairing(specs[m.a], specs[m.b], settings.openings, stream=0) for m in todo]
    executor = make_executor(in_process=settings.in_process, options=RayOptions(address=settings.address))
    try:
        games = play_pairings(
            executor,
            output,
            RUN_ID,
            STAGE,
            variant,
            pairings,
            settings.seed,
            settings.batch_size,
            settings.ply_cap,
            deck,
            progress,
            stage_seeds=True,
        )
    finally:
        executor.close()
    result = _judge(settings, profile, todo, games)
    result["wall_seconds"] = time.perf_counter() - started
    write_result(output / "levelcheck.json", result)
    (output / "levelcheck.md").write_text(markdown(result))
    return result


def _judge(
    settings: LevelCheckSettings, profile: Profile, todo: list[Match], games: pa.Table
) -> dict[str, Any]:
    variant = profile.variant.name
    rows = []
    for m in todo:
        measured = match_score(games, m.a, m.b, bootstrap=settings.bootstrap, seed=settings.seed)
        low, high = measured.score.ci_low, measured.score.ci_high
        rows.append(
            {
                "a": m.a,
                "b": m.b,
                "games": measured.games,
                "predicted_score": m.predicted,
                **match_score_json(measured),
                "reproduced": None if m.predicted is None else bool(low <= m.predicted <= high),
            }
        )
    fit = scale_from_games(
        games,
        anchor="product-medium",
        anchor_elo=ANCHOR_ELO,
        bootstrap=settings.bootstrap,
        seed=settings.seed,
    )
    # a level that never dropped (or never took) a point across some pairing on its way to the
    # anchor has an Elo the fit's prior chose, not the games: it is reported, not judged
    anchored = next(g for g in measured_groups(games) if "product-medium" in g)
    levels = {}
    for n in LEVEL_NAMES:
        name = f"profile-{n}"
        rating = fit.rating(name)
        claim = profile.provenance.levels[n]
        blunders = blunder_rate(variant, games, name)
        on_scale = name in anchored
        levels[n] = {
            "elo": rating.value,
            "elo_ci": [rating.ci_low, rating.ci_high],
            "elo_measured": on_scale,
            "claimed_elo": claim.elo,
            "claimed_ci": None if claim.elo_ci is None else list(claim.elo_ci),
            "claim_inside_ci": (None if claim.elo is None or not on_scale
                                else rating.ci_low <= claim.elo <= rating.ci_high),
            "blunder_rate": blunders.rate,
            "blunder_ci": [blunders.ci_low, blunders.ci_high],
            "nodes_per_move": player_nodes_per_move(games, name),
        }
    judged = [r for r in rows if r["reproduced"] is not None]
    return {
        "schema": "draughts.levelcheck",
        "version": RESULT_VERSION,
        "variant": variant,
        "profile": settings.profile,
        "profile_hash": profile.profile_hash(),
        "settings": asdict(settings),
        "scale": f"score-based Elo, product-medium = {ANCHOR_ELO:g}, bootstrap over openings",
        "games": games.num_rows,
        "matches": rows,
        "levels": levels,
        "reproduced": sum(bool(r["reproduced"]) for r in judged),
        "judged": len(judged),
    }


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def markdown(result: dict[str, Any]) -> str:
    """The check as markdown: matches (predicted vs measured score) and levels."""
    lines = [
        f"# Level check of {result['profile']} ({result['variant']})",
        "",
        f"{result['games']} games; {result['scale']}. Reproduced: {result['reproduced']} of "
        f"{result['judged']} predictions inside the measured 95 % CI.",
        "",
        "| match | games | distinct | measured score [95 % CI] | Elo [95 % CI] | predicted score "
        "| reproduced |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["matches"]:
        ci = r["score_ci"]
        elo = r["elo"]
        elo_ci = r["elo_ci"]
        elo_text = (
            "-" if elo is None else (f"{elo:+.0f} [{_fmt(elo_ci[0], '+.0f')}, {_fmt(elo_ci[1], '+.0f')}]")
        )
        verdict = {True: "yes", False: "NO", None: "-"}[r["reproduced"]]
        lines.append(
            f"| {r['a']} - {r['b']} | {r['games']} | {_fmt(r['distinct_games'], 'd')} | "
            f"{r['score']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] | {elo_text} | "
            f"{_fmt(r['predicted_score'], '.3f')} | {verdict} |"
        )
    lines += [
        "",
        "| level | Elo [95 % CI] | claimed Elo | claim inside CI | blunder rate | nodes/move |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for n, lv in result["levels"].items():
        inside = {True: "yes", False: "NO", None: "-"}[lv["claim_inside_ci"]]
        if not lv.get("elo_measured", True):
            inside = "not measured (perfect scores separate it from product-medium)"
        lines.append(
            f"| {n} | {lv['elo']:.0f} [{lv['elo_ci'][0]:.0f}, {lv['elo_ci'][1]:.0f}] | "
            f"{_fmt(lv['claimed_elo'], '.0f')} | {inside} | {_fmt(lv['blunder_rate'], '.3f')} | "
            f"{lv['nodes_per_move']:.0f} |"
        )
    return "\n".join(lines) + "\n"
