"""Texel tuning: a logistic fit of evaluation weights to game results, as a fast first stage.

Quiet positions (the side to move has no capture) are taken from the run's ladder games; each
gets its feature vector (``engine.kernel.evaluate.features_into``, White minus Black, the same
numbers the search evaluates) and its game's result for White. With ``e = weights . features``
the model is ``P(White scores) = 1 / (1 + exp(-K e))``: first K is fitted with the seed weights
(it only sets the scale), then the tuned subset of weights by bounded L-BFGS-B on the mean
squared error (scipy), every other weight held at the seed. The fitted point is *enqueued* as
the study's first trial: a guess for the match-based search to test, never accepted unmatched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import scipy.optimize

from engine.board import Board
from engine.features import FEATURE_INDEX, N_FEATURES, weight_vector
from engine.kernel.evaluate import features_into
from engine.kernel.tables import kernel_tables
from engine.variants import get_variant
from pipeline.config.job_sections import Range
from pipeline.games.storage import read_games
from pipeline.games.storage_fs import StorePath
from pipeline.jsonrecord import Fields

MIN_PLY = 4  # skip the opening plies: the ballot decides them, not the evaluation


@dataclass(frozen=True)
class TexelFit:
    """The fitted weights, the scale K and the loss before and after."""

    weights: dict[str, float]
    scale: float
    loss_seed: float
    loss_fit: float
    positions: int

    def to_json(self) -> dict[str, Any]:
        return {"weights": dict(self.weights), "scale": self.scale, "loss_seed": self.loss_seed,
                "loss_fit": self.loss_fit, "positions": self.positions}

    @classmethod
    def from_json(cls, data: object, where: str = "texel fit") -> TexelFit:
        f = Fields(data, where, ("weights", "scale", "loss_seed", "loss_fit", "positions"))
        return cls(f.numbers("weights"), f.number("scale"), f.number("loss_seed"), f.number("loss_fit"),
                   f.integer("positions"))


@dataclass(frozen=True)
class TexelSeed:
    """The Texel fit on a run's ladder games (``games`` of them) that seeds the weight study, or
    why there is none (``skipped``, e.g. a run that reused a stored ladder has no ladder games)."""

    fit: TexelFit | None
    games: int
    skipped: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"fit": None if self.fit is None else self.fit.to_json(), "games": self.games,
                "skipped": self.skipped}

    @classmethod
    def from_json(cls, data: object, where: str = "texel") -> TexelSeed:
        f = Fields(data, where, ("fit", "games", "skipped"))
        return cls(f.opt_record("fit", TexelFit.from_json), f.integer("games"), f.opt_text("skipped"))


def _tokens(moves: str) -> list[str]:
    return [t for t in moves.split() if not t.endswith(".")]


def positions_from_games(table: pa.Table, variant: str, max_positions: int,
                         seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features (n, F) and White's result (n,) of quiet positions of the games in ``table``."""

    tab = kernel_tables(get_variant(variant)).packed
    rows = table.select(["opening_fen", "moves", "result_white"]).to_pylist()
    feats: list[np.ndarray] = []
    results: list[float] = []
    out = np.zeros(N_FEATURES, dtype=np.float64)
    for row in rows:
        board = Board(variant, row["opening_fen"])
        for ply, token in enumerate(_tokens(row["moves"])):
            board.push_text(token)
            if ply + 1 < MIN_PLY:
                continue
            moves = board.legal_moves
            if not moves or any(m.captured for m in moves):
                continue
            p = board.position
            features_into(np.uint64(p.white), np.uint64(p.black), np.uint64(p.kings), tab, out)
            feats.append(out.copy())
            results.append(float(row["result_white"]))
    x = np.array(feats, dtype=np.float64).reshape(-1, N_FEATURES)
    y = np.array(results, dtype=np.float64)
    if len(y) > max_positions:
        keep = np.sort(np.random.default_rng(seed).choice(len(y), max_positions, replace=False))
        x, y = x[keep], y[keep]
    return x, y


def _loss(e: np.ndarray, y: np.ndarray, k: float) -> float:
    p = 1.0 / (1.0 + np.exp(-k * e))
    return float(np.mean((y - p) ** 2))


def fit_texel(x: np.ndarray, y: np.ndarray, base: Mapping[str, float], ranges: Sequence[Range]) -> TexelFit:
    """Fit K with ``base``, then the ``ranges`` weights (within their bounds) with K fixed."""

    if len(y) == 0:
        raise ValueError("texel: no quiet positions to fit")
    w0 = weight_vector(dict(base))
    e0 = x @ w0
    found = scipy.optimize.minimize_scalar(lambda lk: _loss(e0, y, 10.0**lk), bounds=(-6.0, 0.0),
                                           method="bounded")
    k = float(10.0 ** found.x)
    searched = [r for r in ranges if not r.fixed]
    idx = np.array([FEATURE_INDEX[r.name] for r in searched], dtype=np.int64)
    start = np.clip(w0[idx], [r.low for r in searched], [r.high for r in searched])

    def objective(sub: np.ndarray) -> tuple[float, np.ndarray]:
        w = w0.copy()
        w[idx] = sub
        e = x @ w
        p = 1.0 / (1.0 + np.exp(-k * e))
        grad_e = 2.0 * (p - y) * p * (1.0 - p) * k / len(y)
        return float(np.mean((y - p) ** 2)), x[:, idx].T @ grad_e

    fitted = start
    if len(idx):
        # The loss is a mean of squares near 0.1-0.2 with tiny gradients per weight unit: tight
        # tolerances, or L-BFGS-B stops at the start.
        res = scipy.optimize.minimize(objective, start, jac=True, method="L-BFGS-B",
                                      bounds=[(r.low, r.high) for r in searched],
                                      options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 1000})
        fitted = np.asarray(res.x, dtype=np.float64)
    weights = dict(base)
    for r, value in zip(searched, fitted, strict=True):
        weights[r.name] = float(value)
    return TexelFit(weights, k, _loss(e0, y, k), _loss(x @ weight_vector(weights), y, k), len(y))


def run_texel(run_folder: StorePath, run_id: str, variant: str, base: Mapping[str, float],
              ranges: Sequence[Range], max_positions: int, seed: int) -> TexelSeed:
    """Fit on the run's ladder games (skipped when the run has none, e.g. a reused stored ladder)."""

    folder = run_folder / "ladder" / "games"
    if not any(folder.glob("variant=*/batch-*.parquet")):
        return TexelSeed(None, 0, "no ladder games in this run folder")
    columns = ["opening_fen", "moves", "result_white"]
    table = read_games(run_folder.parent, f"{run_id}/ladder", columns=columns)
    x, y = positions_from_games(table, variant, max_positions, seed)
    return TexelSeed(fit_texel(x, y, base, ranges), table.num_rows)
