"""Independent check of a calibrated profile: ``python -m pipeline levelcheck PROFILE.json``.

After the main job exported a profile, this plays fresh colour-swapped pairs (own seed, own deck
part) and reports, from its own games only:

- the adjacent gaps: medium against easy and hard against medium, as a Davidson-model gap with a
  bootstrap 95 % CI over openings (the scale the calibration's claims are on, see :func:`davidson_gap`)
  and as the score-based pentanomial Elo, next to the gap the profile claims
  (``provenance.levels.*.elo`` of the profile, or of ``--claimed-from``); ``reproduced`` = the
  claimed gap lies in the Davidson CI (the claim taken as exact); ``agrees`` = claimed and
  measured gap differ by less than 1.96 standard errors of the difference (both uncertainties;
  see :func:`difference_test`);
- with ``--baseline``: every level against every level of another profile of the same variant;
- each level's blunder rate (``pipeline.ratings.blunders``: material-only search, depth
  ``--blunder-depth``) and mean search nodes per move.

Games are Parquet under ``DIR/levelcheck/<stage>/games/variant=<v>/`` (stages ``adjacent`` and
``baseline``), written batch by batch through ``pipeline.games.pairings.play_pairings``; a rerun with
the same settings skips finished batches (more ``--pairs`` extends the matches).
``DIR/levelcheck-plan.json`` pins what the games depend on, so a folder is never mixed up with
another check. Results: ``DIR/levelcheck.json``, ``levelcheck.md`` and ``levelcheck.png``.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import engine
from engine.profile import LEVEL_NAMES, Profile, load_profile
from pipeline.games.executor import Executor, RayOptions, make_executor
from pipeline.games.match import BatchSpec
from pipeline.games.openings import DECK_PARTS, load_deck
from pipeline.games.pairings import Pairing, Progress, pair_index, play_pairings
from pipeline.games.players import make_player
from pipeline.games.stage import player_nodes_per_move, read_result, write_result
from pipeline.ratings import (
    BOOTSTRAP_UNITS,
    Z95,
    GameResults,
    ScoreStats,
    elo_to_score,
    fit_elo,
    pentanomial_counts,
    pentanomial_stats,
    score_to_elo,
)
from pipeline.ratings.blunders import blunder_rate, wilson_interval
from pipeline.tracking.plots import _save

RUN_ID = "levelcheck"
PLAN_FILE = "levelcheck-plan.json"
RESULT_FILES = ("levelcheck.json", "levelcheck.md", "levelcheck.png")
ADJACENT = (("medium", "easy"), ("hard", "medium"))  # (stronger, weaker): gap = stronger - weaker
RESULT_VERSION = 1


class LevelCheckError(ValueError):
    """Bad input to a level check (the CLI exits with status 2)."""


@dataclass(frozen=True)
class LevelCheckSettings:
    """Everything the command line sets (recorded in levelcheck.json)."""

    profile: str
    output: str
    baseline: str | None = None
    pairs: int = 20
    baseline_pairs: int = 10
    seed: int = 0
    deck_part: str = "all"
    ply_cap: int = 200
    batch_size: int = 10
    blunder_depth: int = 4
    blunder_positions: int = 2000
    bootstrap_unit: str = "opening"
    in_process: bool = False
    address: str | None = None
    claimed_from: str | None = None

    def check(self) -> None:
        """Raise LevelCheckError on a value no check can run with."""
        for name, low in (("pairs", 1), ("baseline_pairs", 1), ("ply_cap", 1), ("batch_size", 2),
                          ("blunder_depth", 1), ("blunder_positions", 1), ("seed", 0)):
            value = getattr(self, name)
            if value < low:
                raise LevelCheckError(f"--{name.replace('_', '-')} must be >= {low}, got {value}")
        if self.batch_size % 2:
            raise LevelCheckError(f"--batch-size must be even (whole pairs), got {self.batch_size}")
        if self.blunder_depth > 32:
            raise LevelCheckError(f"--blunder-depth must be <= 32, got {self.blunder_depth}")
        if self.bootstrap_unit not in BOOTSTRAP_UNITS:
            raise LevelCheckError(f"--bootstrap-unit must be one of {', '.join(BOOTSTRAP_UNITS)}, "
                                  f"got {self.bootstrap_unit!r}")
        if self.deck_part not in DECK_PARTS:
            raise LevelCheckError(f"--deck-part must be one of {', '.join(DECK_PARTS)}, "
                                  f"got {self.deck_part!r}")


@dataclass(frozen=True)
class _Profiles:
    """The checked profile, the optional baseline and where the claimed Elo values come from."""

    profile: Profile
    path: Path
    baseline: Profile | None
    baseline_path: Path | None
    claims: Profile
    claims_path: Path


def _load(path: str, what: str, variant: str | None) -> tuple[Profile, Path]:
    """A profile file, resolved; a different variant than ``variant`` is a clear error."""
    resolved = Path(path).resolve()
    if resolved.suffix != ".json":
        raise LevelCheckError(f"{what} {path!r}: a profile file name must end in .json")
    profile = load_profile(resolved)
    if variant is not None and profile.variant.name != variant:
        raise LevelCheckError(f"{what} {path!r} is a {profile.variant.name} profile, but the checked profile "
                              f"is {variant}: a level check compares profiles of one variant")
    return profile, resolved


def load_profiles(settings: LevelCheckSettings) -> _Profiles:
    """Load and cross-check the profile, the baseline and the claims file."""
    profile, path = _load(settings.profile, "profile", None)
    variant = profile.variant.name
    baseline, baseline_path = (None, None)
    if settings.baseline is not None:
        baseline, baseline_path = _load(settings.baseline, "baseline", variant)
    claims, claims_path = profile, path
    if settings.claimed_from is not None:
        claims, claims_path = _load(settings.claimed_from, "--claimed-from profile", variant)
    return _Profiles(profile, path, baseline, baseline_path, claims, claims_path)


def level_spec(path: Path, level: str) -> str:
    """The player spec of one level of a profile file (``FILE.json:LEVEL``, absolute path)."""
    return f"{path}:{level}"


def _plan_fingerprint(settings: LevelCheckSettings, profiles: _Profiles) -> dict[str, Any]:
    """What the games of a check folder depend on (the pair counts may grow between runs)."""
    def levels(profile: Profile | None, path: Path | None) -> dict[str, Any] | None:
        if profile is None or path is None:
            return None
        return {name: {"spec": level_spec(path, name), "hash": profile.levels[name].profile_hash()}
                for name in LEVEL_NAMES}

    return {"variant": profiles.profile.variant.name, "profile": levels(profiles.profile, profiles.path),
            "baseline": levels(profiles.baseline, profiles.baseline_path), "seed": settings.seed,
            "deck_part": settings.deck_part, "ply_cap": settings.ply_cap, "batch_size": settings.batch_size}


def _check_folder(output: Path, fingerprint: dict[str, Any]) -> None:
    """Pin the folder to this check; refuse one holding games of different settings."""
    plan = output / PLAN_FILE
    old = read_result(plan)
    if old is None:
        write_result(plan, fingerprint)
        return
    # a baseline may be added later; a rerun without --baseline leaves the stored baseline games alone
    changed = sorted(k for k in fingerprint if old.get(k) != fingerprint[k]
                     and not (k == "baseline" and None in (old.get(k), fingerprint[k])))
    if changed:
        raise LevelCheckError(f"{str(output)!r} holds the games of another level check (settings that "
                              f"differ: {', '.join(changed)}; see {PLAN_FILE}); use another --output")
    if old.get("baseline") is None and fingerprint["baseline"] is not None:
        write_result(plan, {**old, "baseline": fingerprint["baseline"]})


class _CountingExecutor:
    """Wraps an executor and counts the batches and games it actually played (not resumed)."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.batches = 0
        self.games = 0

    def run(self, specs: Iterable[BatchSpec]) -> Iterator[tuple[BatchSpec, pa.Table]]:
        for spec, table in self.inner.run(specs):
            self.batches += 1
            self.games += table.num_rows
            yield spec, table

    def close(self) -> None:
        self.inner.close()

    @property
    def description(self) -> str:
        return self.inner.description

    @property
    def batches_by_node(self) -> dict[str, int]:
        return self.inner.batches_by_node


class ProgressLines:
    """Progress on stderr: a line every few seconds, and always the last one of a stage."""

    def __init__(self, every: float = 5.0) -> None:
        self.every = every
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if p.games_done < p.games_total and now - self._last < self.every:
            return
        self._last = now
        eta = "-" if p.eta_seconds is None else f"{p.eta_seconds:.0f}s"
        log(f"[levelcheck {p.stage}] {p.games_done}/{p.games_total} games, "
            f"{p.games_per_second:.1f} games/s, ETA {eta}")


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---- rating -------------------------------------------------------------------------------------


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def elo_interval(stats: ScoreStats) -> tuple[float, float, str]:
    """The 95 % Elo interval of a match and how it was made.

    The pentanomial interval, except when every pair was won (or every pair lost): its variance
    is then 0 and the interval collapses to +-infinity, which no finite claim could ever fall in.
    There the Wilson interval of the share of won (lost) pairs bounds the score instead, since a
    won pair scores 1 per game and any other pair at least 0.
    """

    if stats.variance > 0:
        return stats.elo_ci_low, stats.elo_ci_high, "pentanomial"
    if stats.score not in (0.0, 1.0):
        return stats.elo_ci_low, stats.elo_ci_high, "pentanomial (zero variance: every pair scored the same)"
    bound = wilson_interval(stats.n, stats.n)[0]
    if stats.score == 1.0:
        return score_to_elo(bound), math.inf, "wilson (every pair won)"
    return -math.inf, score_to_elo(1.0 - bound), "wilson (every pair lost)"


#: Bootstrap resamples (of whole openings, or pairs) behind the Davidson-scale gap's CI.
DAVIDSON_BOOTSTRAP = 400


def davidson_gap(rows: Sequence[Mapping[str, Any]], seed: int = 0, unit: str = "opening") -> dict[str, Any]:
    """A's Elo over B on the SAME scale as the calibration's claims, with a bootstrap CI that
    resamples ``unit`` (``opening``: every game of one opening together; ``pair``).

    The claims come from :func:`pipeline.ratings.fit_elo` (the Davidson model), where a gap is
    set by the win/loss ratio and draws only inform the draw parameter. The score-based
    (logistic) Elo of a pentanomial summary counts a draw as half a win, so with many draws it
    reads the same games as a smaller gap (english's ladder has nu ~ 1: a +500 Davidson gap
    scores like +400 logistic). Comparing a claim with the logistic number would be comparing
    two scales. Colour-swapped pairs make the first-move advantage cancel, so it is fixed at 0.
    """

    if unit not in BOOTSTRAP_UNITS:
        raise LevelCheckError(f"bootstrap unit must be one of {', '.join(BOOTSTRAP_UNITS)}, got {unit!r}")
    key = "opening_id" if unit == "opening" else "pair_id"
    games = GameResults.from_arrays(["A"] * len(rows), ["B"] * len(rows),
                                    [float(r["result_a"]) for r in rows], [int(r["pair_id"]) for r in rows])
    clusters = np.array([r[key] for r in rows])  # pair ids stay integers: the same resamples as before
    fit = fit_elo(games, "B", 0.0, advantage=0.0, ci_method="bootstrap", n_bootstrap=DAVIDSON_BOOTSTRAP,
                  seed=seed, clusters=clusters)
    a = fit["A"]
    return {"elo": a.elo, "ci": [a.ci_low, a.ci_high], "prior_driven": a.prior_driven,
            "draw_nu": fit.draw_nu.value, "ci_method": f"{unit} bootstrap ({DAVIDSON_BOOTSTRAP})"}


def rate_games(rows: Sequence[Mapping[str, Any]], unit: str = "opening") -> dict[str, Any]:
    """Pentanomial score, Elo of A over B with a 95 % CI, and W/D/L of A, from one pairing's games.

    JSON has no infinity: an infinite Elo or CI end is null; ``score_ci`` (finite) tells its sign.
    """

    pairs: dict[int, float] = {}
    for row in rows:
        pairs[row["pair_id"]] = pairs.get(row["pair_id"], 0.0) + float(row["result_a"])
    counts = [int(c) for c in pentanomial_counts(np.array([pairs[k] for k in sorted(pairs)]))]
    stats = pentanomial_stats(counts, level=0.95)
    low, high, method = elo_interval(stats)
    wins = sum(r["result_a"] == 1.0 for r in rows)
    draws = sum(r["result_a"] == 0.5 for r in rows)
    davidson = davidson_gap(rows, unit=unit)
    return {
        "games": len(rows), "distinct_games": distinct_games(rows), "pairs": len(pairs), "wins": wins,
        "draws": draws,
        "losses": len(rows) - wins - draws, "score": stats.score,
        "score_ci": [elo_to_score(low), elo_to_score(high)], "elo": _finite(stats.elo),
        "elo_ci": [_finite(low), _finite(high)], "ci_method": method, "los": stats.los,
        "pentanomial": dict(zip(["0", "0.5", "1", "1.5", "2"], counts, strict=True)),
        "davidson": davidson,
        "_ci": tuple(davidson["ci"]),  # the verdict compares claims on their own (Davidson) scale
    }


def _claim(profile: Profile, level: str) -> tuple[float | None, tuple[float, float] | None]:
    lp = profile.provenance.levels[level]
    return lp.elo, lp.elo_ci


def _link(profile: Profile, strong: str, weak: str) -> str | None:
    """Which level of an adjacent pair was rated head to head against the other (a chained
    calibration): "a" (the stronger), "b" (the weaker) or None (both rated on the ladder)."""
    levels = profile.provenance.levels
    if levels[strong].rated_against == weak:
        return "a"
    if levels[weak].rated_against == strong:
        return "b"
    return None


def claimed_gap(strong: tuple[float | None, tuple[float, float] | None],
                weak: tuple[float | None, tuple[float, float] | None],
                link: str | None = None) -> dict[str, Any]:
    """The claimed gap strong - weak and a 95 % interval of it.

    ``link`` "a" (or "b"): the stronger (weaker) level was measured head to head against the
    other, held at its Elo, so its own CI, shifted by that Elo, is the gap's CI. Otherwise the
    interval combines the two levels' CI half-widths in quadrature, as if independent (they come
    from one fit against the ladder, so this is only a guide). None when either Elo is missing.
    """
    (elo_s, ci_s), (elo_w, ci_w) = strong, weak
    levels = {"claimed_a": {"elo": elo_s, "elo_ci": None if ci_s is None else list(ci_s)},
              "claimed_b": {"elo": elo_w, "elo_ci": None if ci_w is None else list(ci_w)}}
    if elo_s is None or elo_w is None or ci_s is None or ci_w is None:
        return {"claimed_gap": None, "claimed_gap_ci": None, "claimed_gap_ci_method": None, **levels}
    gap = elo_s - elo_w
    if link == "a":
        ci, method = [ci_s[0] - elo_w, ci_s[1] - elo_w], "head to head (the stronger level's own CI)"
    elif link == "b":
        ci, method = [elo_s - ci_w[1], elo_s - ci_w[0]], "head to head (the weaker level's own CI)"
    else:
        half = math.hypot((ci_s[1] - ci_s[0]) / 2, (ci_w[1] - ci_w[0]) / 2)
        ci, method = [gap - half, gap + half], "approximate (both levels' CIs in quadrature)"
    return {"claimed_gap": gap, "claimed_gap_ci": ci, "claimed_gap_ci_method": method, **levels}


def difference_test(measured: float, measured_ci: Sequence[float], claimed: float,
                    claimed_ci: Sequence[float]) -> dict[str, Any]:
    """Is the measured gap consistent with the claimed one, given BOTH uncertainties?

    ``reproduced`` (claimed gap inside the measured CI) treats the claim as exact, so an
    unbiased claim with a CI as wide as the check's fails it about 1 time in 6. This tests the
    difference instead: each standard error is its 95 % CI half-width / 1.96, the difference's
    is their root sum of squares, and ``agrees`` is |z| <= 1.96 (normal approximation; the two
    measurements share no games).
    """
    se_m = (measured_ci[1] - measured_ci[0]) / 2 / Z95
    se_c = (claimed_ci[1] - claimed_ci[0]) / 2 / Z95
    diff = measured - claimed
    se = math.hypot(se_m, se_c)
    z = diff / se if se > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    return {"difference": diff, "difference_ci": [diff - Z95 * se, diff + Z95 * se], "z": _finite(z),
            "agrees": bool(abs(z) <= Z95)}


def _verdict(match: dict[str, Any]) -> dict[str, Any]:
    """``reproduced``: claimed gap inside the measured CI; ``consistent``: the two intervals
    overlap; ``agrees``: :func:`difference_test`."""
    low, high = match.pop("_ci")
    gap, gap_ci = match["claimed_gap"], match["claimed_gap_ci"]
    match["reproduced"] = None if gap is None else bool(low <= gap <= high)
    match["consistent"] = None if gap_ci is None else bool(low <= gap_ci[1] and gap_ci[0] <= high)
    finite = gap_ci is not None and all(math.isfinite(v) for v in (low, high))
    test = difference_test(match["davidson"]["elo"], (low, high), gap, gap_ci) if finite else None
    match["difference_test"] = test
    match["agrees"] = None if test is None else test["agrees"]
    return match


def _pairing_rows(table: pa.Table, batch_size: int, count: int) -> list[list[dict[str, Any]]]:
    """The games of each pairing of a stage (pairing index from the game id)."""
    out: list[list[dict[str, Any]]] = [[] for _ in range(count)]
    for row in table.select(["game_id", "pair_id", "result_a", "opening_id", "a_color", "moves"]).to_pylist():
        out[pair_index(row["game_id"], batch_size)[0]].append(row)
    return out


def distinct_games(rows: Sequence[Mapping[str, Any]]) -> int | None:
    """How many of a match's games differ (opening, colours or moves); None when the rows do not
    carry moves. Two levels without noise, random moves or temperature replay the same game for
    each repeat of an opening, and every bootstrap over pairs then counts the repeats as new
    evidence: its CI is about sqrt(games / distinct) too narrow."""
    if not rows or any("moves" not in r or "opening_id" not in r for r in rows):
        return None
    return len({(r["opening_id"], r.get("a_color"), r["moves"]) for r in rows})


# ---- the check ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Match:
    """One pairing of the check: who plays (A first) and the claims that go with it."""

    label: str
    a: str
    b: str
    a_claim: tuple[float | None, tuple[float, float] | None]
    b_claim: tuple[float | None, tuple[float, float] | None]
    link: str | None = None  # see _link; only within one profile


def adjacent_matches(profiles: _Profiles) -> list[_Match]:
    """medium vs easy and hard vs medium, the stronger level as A (Elo = the gap)."""
    return [_Match(f"{s} - {w}", level_spec(profiles.path, s), level_spec(profiles.path, w),
                   _claim(profiles.claims, s), _claim(profiles.claims, w), _link(profiles.claims, s, w))
            for s, w in ADJACENT]


def baseline_matches(profiles: _Profiles) -> list[_Match]:
    """Every level of the profile (A) against every level of the baseline (B)."""
    if profiles.baseline is None or profiles.baseline_path is None:
        return []
    return [_Match(f"{p} - baseline {b}", level_spec(profiles.path, p), level_spec(profiles.baseline_path, b),
                   _claim(profiles.claims, p), _claim(profiles.baseline, b))
            for p in LEVEL_NAMES for b in LEVEL_NAMES]


def _play_stage(executor: Executor, settings: LevelCheckSettings, variant: str, stage: str,
                matches: Sequence[_Match], pairs: int,
                deck: Sequence[Any]) -> tuple[pa.Table, list[dict[str, Any]]]:
    """Play (or read back) one stage and rate each of its matches."""
    pairings = [Pairing(m.a, m.b, pairs) for m in matches]
    table = play_pairings(executor, settings.output, RUN_ID, stage, variant, pairings, settings.seed,
                          settings.batch_size, settings.ply_cap, deck, ProgressLines())
    results = []
    for match, rows in zip(matches, _pairing_rows(table, settings.batch_size, len(matches)), strict=True):
        rated = {"match": match.label, "a": match.a, "b": match.b,
                 **rate_games(rows, settings.bootstrap_unit),
                 **claimed_gap(match.a_claim, match.b_claim, match.link)}
        results.append(_verdict(rated))
    return table, results


def level_stats(variant: str, table: pa.Table, spec: str, claim: tuple[float | None, Any],
                settings: LevelCheckSettings) -> dict[str, Any]:
    """Blunder rate, nodes per move and games of one level, from this check's games."""

    stats = blunder_rate(variant, table, spec, depth=settings.blunder_depth,
                         max_positions=settings.blunder_positions, seed=settings.seed)
    blunders = {k: v for k, v in asdict(stats).items() if k != "player"}
    own = player_games(table, spec)  # its games: counted, and where its nodes per move come from
    elo, ci = claim
    return {"spec": spec, "games": own.num_rows, "nodes_per_move": player_nodes_per_move(own, spec),
            "blunders": blunders, "claimed_elo": elo, "claimed_elo_ci": None if ci is None else list(ci)}


def player_games(table: pa.Table, spec: str) -> pa.Table:
    """The rows of ``table`` where ``spec`` played either colour."""

    mask = pc.or_(pc.equal(table.column("white_player"), spec), pc.equal(table.column("black_player"), spec))
    return table.filter(mask)


def run_levelcheck(settings: LevelCheckSettings,
                   executor_factory: Callable[[], Executor] | None = None) -> dict[str, Any]:
    """Run the whole check and write its three result files; returns the JSON document."""
    started = time.perf_counter()
    settings.check()
    profiles = load_profiles(settings)
    variant = profiles.profile.variant.name
    deck = load_deck(variant, part=settings.deck_part)
    output = Path(settings.output)
    _check_folder(output, _plan_fingerprint(settings, profiles))
    _preflight(profiles, variant)
    factory = executor_factory or (lambda: make_executor(in_process=settings.in_process,
                                                         options=RayOptions(address=settings.address)))
    executor = _CountingExecutor(factory())
    try:
        log(f"levelcheck {variant}: executor {executor.description}, output {output}")
        adjacent_table, adjacent = _play_stage(executor, settings, variant, "adjacent",
                                               adjacent_matches(profiles), settings.pairs, deck)
        tables, baseline = [adjacent_table], list[dict[str, Any]]()
        if profiles.baseline is not None:
            base_table, baseline = _play_stage(executor, settings, variant, "baseline",
                                               baseline_matches(profiles), settings.baseline_pairs, deck)
            tables.append(base_table)
        description = executor.description
    finally:
        executor.close()
    games = pa.concat_tables(tables)
    log(f"levelcheck {variant}: scoring blunders (depth {settings.blunder_depth})")
    result = _result(settings, profiles, deck, games, adjacent, baseline)
    result.update({"games_total": games.num_rows, "games_played_now": executor.games,
                   "batches_played_now": executor.batches, "executor": description,
                   "cpu_count": os.cpu_count(), "wall_seconds": time.perf_counter() - started})
    write_outputs(output, result)
    return result


def _preflight(profiles: _Profiles, variant: str) -> None:
    """Build every player once so that a bad spec fails before Ray starts."""

    specs = [level_spec(profiles.path, n) for n in LEVEL_NAMES]
    if profiles.baseline_path is not None:
        specs += [level_spec(profiles.baseline_path, n) for n in LEVEL_NAMES]
    for spec in specs:
        make_player(spec, variant, 0)


def _result(settings: LevelCheckSettings, profiles: _Profiles, deck: Sequence[Any], games: pa.Table,
            adjacent: list[dict[str, Any]], baseline: list[dict[str, Any]]) -> dict[str, Any]:
    variant = profiles.profile.variant.name
    levels = {n: level_stats(variant, games, level_spec(profiles.path, n), _claim(profiles.claims, n),
                             settings) for n in LEVEL_NAMES}
    baseline_levels = None
    if profiles.baseline is not None and profiles.baseline_path is not None:
        baseline_levels = {n: level_stats(variant, games, level_spec(profiles.baseline_path, n),
                                          _claim(profiles.baseline, n), settings) for n in LEVEL_NAMES}
    return {
        "schema": "draughts.levelcheck", "version": RESULT_VERSION, "variant": variant,
        "profile": str(profiles.path), "profile_hash": profiles.profile.profile_hash(),
        "baseline": None if profiles.baseline_path is None else str(profiles.baseline_path),
        "claimed_from": str(profiles.claims_path),
        "settings": asdict(settings), "seed": settings.seed, "deck_part": settings.deck_part,
        "deck_openings": len(deck), "adjacent": adjacent, "baseline_matches": baseline,
        "levels": levels, "baseline_levels": baseline_levels,
        "engine_version": _engine_version(),
    }


def _engine_version() -> str:

    return str(engine.__version__)


# ---- outputs ------------------------------------------------------------------------------------


def _elo(value: float | None, score: float) -> str:
    """An Elo for the table; None is infinite (every pair won or lost)."""
    if value is None:
        return "+inf" if score >= 0.5 else "-inf"
    return f"{value:+.0f}"


def _ci(ci: Sequence[float | None] | None, score_ci: Sequence[float] = (0.0, 1.0)) -> str:
    """``[low, high]``; a null end is infinite, its sign from the score interval."""
    if ci is None:
        return "-"
    low, high = (_elo(v, s) for v, s in zip(ci, score_ci, strict=True))
    return f"[{low}, {high}]"


def _with_ci(value: float | None, ci: Sequence[float | None] | None) -> str:
    return "none" if value is None else f"{value:+.0f} {_ci(ci)}"


def _yes_no(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "NO")


def _match_table(matches: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = ["| match (A - B) | games | W/D/L (A) | score | measured gap, Davidson [95 % CI] | "
             "claimed gap [95 %] | reproduced | intervals overlap | measured - claimed [95 %] | agrees | "
             "score-based (logistic) Elo [CI] |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for m in matches:
        measured = _elo(m["elo"], m["score"])
        claimed = _with_ci(m["claimed_gap"], m["claimed_gap_ci"])
        if (m.get("claimed_gap_ci_method") or "").startswith("approximate"):
            claimed += " approx."
        test = m.get("difference_test")
        diff = "n/a" if test is None else _with_ci(test["difference"], test["difference_ci"])
        d = m["davidson"]
        flag = " (prior-driven)" if d["prior_driven"] else ""
        lines.append(f"| {m['match']} | {m['games']} | {m['wins']}/{m['draws']}/{m['losses']} | "
                     f"{m['score']:.3f} | {d['elo']:+.0f} [{d['ci'][0]:+.0f}, {d['ci'][1]:+.0f}]{flag} | "
                     f"{claimed} | {_yes_no(m['reproduced'])} | {_yes_no(m['consistent'])} | "
                     f"{diff} | {_yes_no(m.get('agrees'))} | "
                     f"{measured} {_ci(m['elo_ci'], m['score_ci'])} |")
    return lines


def _repeat_notes(matches: Sequence[Mapping[str, Any]], unit: str) -> list[str]:
    """A warning per match whose games repeat (see :func:`distinct_games`); ``unit`` is what the
    gap's bootstrap resampled."""
    lines = []
    for m in matches:
        distinct = m.get("distinct_games")
        if distinct is not None and distinct < m["games"]:
            head = (f"**Repeated games in {m['match']}:** only {distinct} of its {m['games']} games "
                    f"differ (both levels play without noise, so each repeat of an opening replays its "
                    f"game).")
            if unit == "opening":
                lines.append(f"{head} The gap's CI resamples whole openings, so it counts each game "
                             f"once; the pentanomial CI counts the repeats and is about "
                             f"{math.sqrt(m['games'] / distinct):.1f}x too narrow.")
            else:
                lines.append(f"{head} Its CIs count the repeats as independent and are about "
                             f"{math.sqrt(m['games'] / distinct):.1f}x too narrow.")
    return [*lines, ""] if lines else []


def _level_table(levels: Mapping[str, Mapping[str, Any]], prefix: str = "") -> list[str]:
    lines = ["| level | games | blunder rate [95 % CI] | blunders / moves scored | nodes per move | "
             "claimed Elo [CI] |", "| --- | --- | --- | --- | --- | --- |"]
    for name, lv in levels.items():
        b = lv["blunders"]
        rate = "-" if b["rate"] is None else f"{b['rate']:.1%} [{b['ci_low']:.1%}, {b['ci_high']:.1%}]"
        claimed = _with_ci(lv["claimed_elo"], lv["claimed_elo_ci"])
        lines.append(f"| {prefix}{name} | {lv['games']} | {rate} | {b['blunders']} / {b['moves']} | "
                     f"{lv['nodes_per_move']:.0f} | {claimed} |")
    return lines


def markdown(result: Mapping[str, Any]) -> str:
    """levelcheck.md: settings line, the adjacent gaps, the baseline matches and the levels."""
    s = result["settings"]
    b = next(iter(result["levels"].values()))["blunders"]
    lines = [f"# Level check: {result['variant']}", "",
             f"Profile `{result['profile']}` (claims from `{result['claimed_from']}`); "
             f"seed {result['seed']}, "
             f"deck part {result['deck_part']} ({result['deck_openings']} openings), {s['pairs']} pairs per "
             f"adjacent match, ply cap {s['ply_cap']}; {result['games_total']} games "
             f"({result['games_played_now']} played now) in {result['wall_seconds']:.0f} s on "
             f"{result['cpu_count']} CPUs ({result['executor']}).", "",
             "## Adjacent levels", "", *_match_table(result["adjacent"]), "",
             *_repeat_notes(result["adjacent"], result["settings"].get("bootstrap_unit", "pair"))]
    if result["baseline_matches"]:
        lines += [f"## Against the baseline `{result['baseline']}` ({s['baseline_pairs']} pairs each)", "",
                  *_match_table(result["baseline_matches"]), ""]
    lines += [f"## Levels (blunder: a move at least {b['threshold']:g} below the best in a material-only "
              f"search of {b['depth']} plies)", "", *_level_table(result["levels"])]
    if result["baseline_levels"]:
        lines += _level_table(result["baseline_levels"], "baseline ")[2:]
    return "\n".join(lines) + "\n"


def write_outputs(output: Path, result: dict[str, Any]) -> None:
    """levelcheck.json, levelcheck.md and levelcheck.png under ``output``."""
    result["files"] = [str(output / name) for name in RESULT_FILES]
    write_result(output / RESULT_FILES[0], result)
    text = markdown(result)
    (output / RESULT_FILES[1]).write_text(text, encoding="utf-8")
    gap_plot([*result["adjacent"], *result["baseline_matches"]], output / RESULT_FILES[2],
             title=f"Level check ({result['variant']}): measured vs claimed gaps")


def _clip(value: float | None, score: float, limit: float) -> float:
    """An Elo within [-limit, limit]; null (infinite) goes to the edge its score points to."""
    if value is None:
        return -limit if score < 0.5 else limit
    return max(-limit, min(limit, value))


def gap_plot(matches: Sequence[Mapping[str, Any]], path: Path, title: str) -> Path:
    """Measured gaps (95 % CI bars) and claimed gaps (approximate bars), one row per match.

    Infinite values (a match won or lost in every pair) are drawn at the plot's edge (an arrow).
    """
    import matplotlib.pyplot as plt

    finite = [abs(v) for m in matches
              for v in (m["davidson"]["elo"], *(m["davidson"]["ci"]), m["claimed_gap"]) if v is not None]
    limit = max([400.0, *finite]) * 1.15
    y = np.arange(len(matches))[::-1]
    fig, ax = plt.subplots(figsize=(7.5, 1.4 + 0.5 * len(matches)))
    labels = {"measured": "measured (Davidson scale), 95 % CI", "claimed": "claimed (approx. 95 %)"}
    for i, m in zip(y, matches, strict=True):
        d = m["davidson"]
        elo = _clip(d["elo"], m["score"], limit)
        low, high = (_clip(v, m["score"], limit) for v in d["ci"])
        marker = ">" if d["prior_driven"] and m["score"] >= 0.5 else "<" if d["prior_driven"] else "o"
        ax.errorbar([elo], [i], xerr=[[max(0.0, elo - low)], [max(0.0, high - elo)]], fmt=marker,
                    color="tab:blue", capsize=4, label=labels.pop("measured", None))
        if m["claimed_gap"] is not None:
            gap, (c_low, c_high) = m["claimed_gap"], m["claimed_gap_ci"]
            ax.errorbar([gap], [i - 0.15], xerr=[[gap - c_low], [c_high - gap]], fmt="D", color="tab:red",
                        capsize=3, label=labels.pop("claimed", None))
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_yticks(y, [m["match"] for m in matches])
    ax.set_xlim(-limit, limit)
    ax.set_xlabel("Elo gap (A - B)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return _save(fig, path).local_path()
