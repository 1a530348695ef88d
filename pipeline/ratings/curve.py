"""Strength curves: a level's Elo along its one-dimensional knob path, fitted monotone and inverted.

Points along the knob path (e.g. log2 of a node budget, a noise level) are rated on the
score-based scale (:mod:`pipeline.ratings.scale`). The curve is a weighted isotonic regression of
their Elos over the knob (weights: inverse bootstrap variances, floored so that the anchor, known
exactly, stays finite) followed by a monotone piecewise-cubic interpolant (PCHIP) through the
fitted values, so it is smooth, monotone in the stated direction, and passes through the data
wherever the data are monotone. The same fit is repeated on every bootstrap sample of the ratings
(one row of the scale fit's samples matrix per curve), which gives CIs for the curve's Elo at a
knob value and for the knob value that reaches a target Elo.

The curve covers the measured knob range only: ``at`` refuses knob values outside it, and
``invert`` of a target beyond the curve's Elo range returns the range's end and says so
(``clamped``); bootstrap curves that miss the target are counted in ``clamped_share``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.interpolate
from numpy.typing import NDArray

from engine.errors import quote
from pipeline.ratings.errors import RatingsError
from pipeline.ratings.fit import Estimate
from pipeline.ratings.jsonio import (
    check_keys,
    floats_from_json,
    get_float,
    get_list,
    matrix_from_json,
    matrix_to_json,
    readonly,
)
from pipeline.ratings.scale import ScaleFit

FloatArray = NDArray[np.float64]

CURVE_SCHEMA = "draughts.strength_curve"
CURVE_VERSION = 1
#: Smallest variance (Elo^2) a point's weight is computed from (the anchor's is exactly 0).
VARIANCE_FLOOR = 1e-6
_BISECTIONS = 64


@dataclass(frozen=True)
class KnobEstimate:
    """The knob value at which the curve reaches ``target_elo``, with a percentile CI.

    ``clamped``: the target lies outside the curve's Elo range, so ``value`` is the end of the knob
    range nearest to it (not a solution). ``clamped_share``: the share of bootstrap curves whose
    own range misses the target; above about ``(1 - level) / 2`` the CI's end at that side is the
    knob range's end, a bound rather than an interval end."""

    target_elo: float
    value: float
    ci_low: float
    ci_high: float
    clamped: bool
    clamped_share: float


def _isotonic(y: FloatArray, w: FloatArray) -> FloatArray:
    """Weighted least-squares non-decreasing fit (pool adjacent violators)."""
    vals: list[float] = []
    wts: list[float] = []
    sizes: list[int] = []
    for yi, wi in zip(y.tolist(), w.tolist(), strict=True):
        vals.append(yi)
        wts.append(wi)
        sizes.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            wsum = wts[-2] + wts[-1]
            merged = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / wsum
            size = sizes[-2] + sizes[-1]
            del vals[-1], wts[-1], sizes[-1]
            vals[-1], wts[-1], sizes[-1] = merged, wsum, size
    return np.repeat(np.array(vals), sizes)


def _monotone(y: FloatArray, w: FloatArray, increasing: bool) -> FloatArray:
    return _isotonic(y, w) if increasing else -_isotonic(-y, w)


def _invert_rows(xs: FloatArray, values: FloatArray, target: float,
                 increasing: bool) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Knob value where each row's PCHIP curve reaches ``target`` (rows: curves), and which rows
    were clamped to an end of the knob range because their Elo range misses the target."""
    u, t = (values, target) if increasing else (-values, -target)  # u is non-decreasing along x
    n_rows, n = u.shape
    below, above = t < u[:, 0], t > u[:, -1]
    count = (u < t).sum(axis=1)
    k = np.clip(count - 1, 0, n - 2)
    pp = scipy.interpolate.PchipInterpolator(xs, u.T, axis=0)
    rows = np.arange(n_rows)
    c = pp.c[:, k, rows]  # (4, rows): cubic of each row's segment in (x - xs[k])
    lo, hi = xs[k].copy(), xs[k + 1].copy()
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        d = mid - xs[k]
        val = ((c[0] * d + c[1]) * d + c[2]) * d + c[3]
        go_right = val < t
        lo, hi = np.where(go_right, mid, lo), np.where(go_right, hi, mid)
    x = 0.5 * (lo + hi)
    x = np.where(count == 0, xs[0], x)  # t equals the first value (or lies below it)
    x = np.where(above, xs[-1], x)
    return x, below | above


@dataclass(frozen=True, eq=False)
class StrengthCurve:
    """Monotone Elo-over-knob curve with bootstrap curves (see the module docstring).

    ``xs`` are the knob values (increasing), ``elo`` the measured Elos there, ``fitted`` the
    monotone fit at ``xs``, ``sample_fitted`` (resamples x points) the same fit of every bootstrap
    sample; ``names`` the rated players behind the points, when known."""

    xs: FloatArray
    names: tuple[str, ...] | None
    elo: FloatArray
    weights: FloatArray
    fitted: FloatArray
    sample_fitted: FloatArray
    increasing: bool
    level: float
    notes: tuple[str, ...]

    @property
    def elo_range(self) -> tuple[float, float]:
        """Lowest and highest Elo of the fitted curve."""
        return float(self.fitted.min()), float(self.fitted.max())

    def _ci(self, point: float, values: FloatArray) -> tuple[float, float]:
        lo, hi = np.quantile(values, [0.5 - 0.5 * self.level, 0.5 + 0.5 * self.level])
        return float(min(lo, point)), float(max(hi, point))

    def at(self, x: float) -> Estimate:
        """The curve's Elo at knob value ``x`` (inside the measured range) with its CI."""
        if not (math.isfinite(x) and self.xs[0] <= x <= self.xs[-1]):
            raise RatingsError(f"knob value {quote(x)} lies outside the curve's measured range "
                               f"[{self.xs[0]:g}, {self.xs[-1]:g}]")
        point = float(scipy.interpolate.PchipInterpolator(self.xs, self.fitted)(x))
        values = np.asarray(scipy.interpolate.PchipInterpolator(self.xs, self.sample_fitted.T, axis=0)(x))
        return Estimate(point, *self._ci(point, values))

    def invert(self, target_elo: float) -> KnobEstimate:
        """The knob value at which the curve reaches ``target_elo``, with CI and clamping flags."""
        if not math.isfinite(target_elo):
            raise RatingsError(f"target Elo must be finite, got {quote(target_elo)}")
        x, clamped = _invert_rows(self.xs, self.fitted[None, :], target_elo, self.increasing)
        xb, clamped_b = _invert_rows(self.xs, self.sample_fitted, target_elo, self.increasing)
        point = float(x[0])
        return KnobEstimate(float(target_elo), point, *self._ci(point, xb), clamped=bool(clamped[0]),
                            clamped_share=float(clamped_b.mean()))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the bootstrap curves travel as a compact matrix)."""
        return {
            "schema": CURVE_SCHEMA, "schema_version": CURVE_VERSION, "xs": self.xs.tolist(),
            "names": None if self.names is None else list(self.names), "elo": self.elo.tolist(),
            "weights": self.weights.tolist(), "fitted": self.fitted.tolist(),
            "samples": matrix_to_json(self.sample_fitted), "increasing": self.increasing,
            "level": self.level, "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "strength curve") -> StrengthCurve:
        """Read what :meth:`to_json` wrote; unknown, missing or ill-typed keys are a one-line error."""
        obj = check_keys(data, ("schema", "schema_version", "xs", "names", "elo", "weights", "fitted",
                                "samples", "increasing", "level", "notes"), source)
        if obj["schema"] != CURVE_SCHEMA or obj["schema_version"] != CURVE_VERSION:
            raise RatingsError(f"{source}: not a {CURVE_SCHEMA} version {CURVE_VERSION} file "
                               f"(schema {quote(obj['schema'])}, version {quote(obj['schema_version'])})")
        n = len(get_list(obj, "xs", source))
        xs = floats_from_json(obj, "xs", source, n)
        names = obj["names"]
        if names is not None and (not isinstance(names, list) or len(names) != n
                                  or not all(isinstance(v, str) and v for v in names)):
            raise RatingsError(f"{source}.names must be null or {n} player names")
        if not isinstance(obj["increasing"], bool):
            raise RatingsError(f"{source}.increasing must be true or false, got {quote(obj['increasing'])}")
        notes = get_list(obj, "notes", source)
        if not all(isinstance(v, str) for v in notes):
            raise RatingsError(f"{source}.notes must be a list of strings")
        curve = cls(
            xs=readonly(xs), names=None if names is None else tuple(names),
            elo=readonly(floats_from_json(obj, "elo", source, n)),
            weights=readonly(floats_from_json(obj, "weights", source, n)),
            fitted=readonly(floats_from_json(obj, "fitted", source, n)),
            sample_fitted=readonly(matrix_from_json(obj["samples"], f"{source}.samples", columns=n)),
            increasing=obj["increasing"], level=get_float(obj, "level", source), notes=tuple(notes),
        )
        _check_curve(curve, source)
        return curve


def _check_curve(curve: StrengthCurve, source: str) -> None:
    if len(curve.xs) < 2 or not np.all(np.diff(curve.xs) > 0):
        raise RatingsError(f"{source}: xs must hold at least 2 strictly increasing knob values")
    if not 0.0 < curve.level < 1.0:
        raise RatingsError(f"{source}: level must lie strictly between 0 and 1, got {curve.level!r}")
    if len(curve.sample_fitted) < 1:
        raise RatingsError(f"{source}: no bootstrap curves")
    steps = np.diff(np.concatenate([curve.fitted[None], curve.sample_fitted]), axis=1)
    if np.any(steps < 0 if curve.increasing else steps > 0):
        raise RatingsError(f"{source}: fitted values are not monotone in the stated direction")


def curve_from_samples(
    xs: Sequence[float] | FloatArray,
    elo: Sequence[float] | FloatArray,
    samples: FloatArray,
    *,
    increasing: bool,
    level: float = 0.95,
    names: Sequence[str] | None = None,
) -> StrengthCurve:
    """Fit a strength curve to Elos ``elo`` measured at knob values ``xs`` with bootstrap samples
    ``samples`` (resamples x points, e.g. columns of a scale fit's samples). Points are sorted by
    knob value; repeated knob values are an error."""
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(elo, dtype=np.float64)
    s = np.asarray(samples, dtype=np.float64)
    if x.ndim != 1 or len(x) < 2 or y.shape != x.shape:
        raise RatingsError(f"need at least 2 knob values and one Elo each, got {x.shape} and {y.shape}")
    if s.ndim != 2 or s.shape[1] != len(x) or len(s) < 1:
        raise RatingsError(f"samples must be (resamples x {len(x)} points), got shape {s.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)) and np.all(np.isfinite(s))):
        raise RatingsError("knob values, Elos and samples must be finite")
    if names is not None and len(names) != len(x):
        raise RatingsError(f"names must name each of the {len(x)} points, got {len(names)}")
    if not 0.0 < level < 1.0:
        raise RatingsError(f"level must lie strictly between 0 and 1, got {level!r}")
    order = np.argsort(x, kind="stable")
    x, y, s = x[order], y[order], s[:, order]
    if np.any(np.diff(x) == 0):
        dup = float(x[np.flatnonzero(np.diff(x) == 0)[0]])
        raise RatingsError(f"knob value {dup:g} appears more than once; give each point its own value")
    label = None if names is None else tuple(str(names[i]) for i in order)
    weights = 1.0 / np.maximum(s.var(axis=0, ddof=1) if len(s) > 1 else np.ones(len(x)), VARIANCE_FLOOR)
    fitted = _monotone(y, weights, increasing)
    sample_fitted = np.stack([_monotone(row, weights, increasing) for row in s])
    notes = _pooling_notes(x, y, fitted, label, increasing)
    return StrengthCurve(
        xs=readonly(x), names=label, elo=readonly(y), weights=readonly(weights), fitted=readonly(fitted),
        sample_fitted=readonly(sample_fitted), increasing=increasing, level=level, notes=notes,
    )


def _pooling_notes(x: FloatArray, y: FloatArray, fitted: FloatArray, names: tuple[str, ...] | None,
                   increasing: bool) -> tuple[str, ...]:
    """Say where the measured Elos ran against the stated direction and were pooled."""
    moved = np.flatnonzero(np.abs(fitted - y) > 1e-9 * np.maximum(1.0, np.abs(y)))
    if not moved.size:
        return ()
    shown = [names[i] if names else f"x={x[i]:g}" for i in moved.tolist()]
    direction = "rise" if increasing else "fall"
    return (f"measured Elos do not {direction} monotonically with the knob at {shown}: the fit pools them",)


def fit_curve(xs: Sequence[float] | FloatArray, fit: ScaleFit, points: Sequence[str], *,
              increasing: bool) -> StrengthCurve:
    """A strength curve through the rated ``points`` (player names of ``fit``) at knob values ``xs``,
    refitted on every bootstrap sample of ``fit`` (at the fit's CI level)."""
    if len(points) != len(xs):
        raise RatingsError(f"need one knob value per point: {len(xs)} values for {len(points)} points")
    idx = [fit.index(p) for p in points]
    return curve_from_samples(xs, fit.elo[idx], fit.require_samples()[:, idx], increasing=increasing,
                              level=fit.level, names=points)
