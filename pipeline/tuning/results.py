"""The weight-tuning stage's records: each trial, the best one, its SPRT, the Texel seed and the
stage result (``tune/result.json``), written by ``to_json`` and read back strictly by
``from_json`` (:mod:`pipeline.jsonrecord`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.games.stage import read_result
from pipeline.games.storage import Root
from pipeline.jsonrecord import Fields, Scalar
from pipeline.tuning.texel import TexelSeed

RESULT_FILE = "tune/result.json"


@dataclass(frozen=True)
class TuneTrial:
    """One trial of the weight study as Optuna recorded it.

    ``state``: Optuna's trial state; ``value``: mean per-game score against the seed weights
    (None when the trial has none, or it is not finite); ``pairs``: pairs it played (None: no
    games recorded); ``slot``: where its games are (a retry keeps the killed trial's slot).
    """

    number: int
    state: str
    value: float | None
    params: dict[str, Scalar]
    pruned: bool
    pairs: int | None
    slot: int

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "state": self.state, "value": self.value, "params": dict(self.params),
                "pruned": self.pruned, "pairs": self.pairs, "slot": self.slot}

    @classmethod
    def from_json(cls, data: object, where: str = "tune trial") -> TuneTrial:
        f = Fields(data, where, ("number", "state", "value", "params", "pruned", "pairs", "slot"))
        return cls(f.integer("number"), f.text("state"), f.opt_number("value"), f.scalars("params"),
                   f.flag("pruned"), f.opt_integer("pairs"), f.integer("slot"))


@dataclass(frozen=True)
class TuneBest:
    """The best finished trial: its number, slot, score and the full weights it played."""

    number: int
    slot: int
    value: float
    weights: dict[str, float]
    params: dict[str, Scalar]

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "slot": self.slot, "value": self.value, "weights": dict(self.weights),
                "params": dict(self.params)}

    @classmethod
    def from_json(cls, data: object, where: str = "best trial") -> TuneBest:
        f = Fields(data, where, ("number", "slot", "value", "weights", "params"))
        return cls(f.integer("number"), f.integer("slot"), f.number("value"), f.numbers("weights"),
                   f.scalars("params"))


_SPRT_KEYS = ("decision", "llr", "lower", "upper", "pairs", "elo0", "elo1", "alpha", "beta", "pentanomial",
              "score", "elo", "elo_ci")


@dataclass(frozen=True)
class SprtSummary:
    """The SPRT that confirmed (or not) the best candidate against the seed on fresh openings.

    ``decision``: accepted (H1), rejected (H0) or inconclusive; ``llr`` with Wald's bounds
    ``lower`` / ``upper``; ``elo`` and ``elo_ci``: the pentanomial Elo, clipped to +-2000.
    """

    decision: str
    llr: float
    lower: float
    upper: float
    pairs: int
    elo0: float
    elo1: float
    alpha: float
    beta: float
    pentanomial: tuple[int, ...]
    score: float
    elo: float
    elo_ci: tuple[float, float]

    def describe(self) -> str:
        """``SPRT [elo0, elo1] LLR x in [lower, upper] after n pairs, Elo e [low, high]``."""
        return (f"SPRT [{self.elo0:g}, {self.elo1:g}] LLR {self.llr:.2f} in [{self.lower:.2f}, "
                f"{self.upper:.2f}] after {self.pairs} pairs, Elo {self.elo:+.0f} "
                f"[{self.elo_ci[0]:+.0f}, {self.elo_ci[1]:+.0f}]")

    def metrics(self) -> dict[str, float]:
        """The test as MLflow metrics on its stage run."""
        return {"sprt_llr": self.llr, "sprt_pairs": float(self.pairs), "sprt_elo": self.elo,
                "sprt_elo_ci_low": self.elo_ci[0], "sprt_elo_ci_high": self.elo_ci[1]}

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision, "llr": self.llr, "lower": self.lower, "upper": self.upper,
                "pairs": self.pairs, "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha,
                "beta": self.beta, "pentanomial": list(self.pentanomial), "score": self.score,
                "elo": self.elo, "elo_ci": list(self.elo_ci)}

    @classmethod
    def from_json(cls, data: object, where: str = "sprt") -> SprtSummary:
        f = Fields(data, where, _SPRT_KEYS)
        return cls(f.text("decision"), f.number("llr"), f.number("lower"), f.number("upper"),
                   f.integer("pairs"), f.number("elo0"), f.number("elo1"), f.number("alpha"),
                   f.number("beta"), f.integers("pentanomial"), f.number("score"), f.number("elo"),
                   f.interval("elo_ci"))


_RESULT_KEYS = ("variant", "study", "seed_weights", "weights", "accepted", "decision", "trials", "best",
                "sprt", "texel")


@dataclass(frozen=True)
class TuneResult:
    """The weight-tuning stage's result: the weights later stages play and how they were decided.

    ``weights`` are the best candidate's when the SPRT ``accepted`` it, else ``seed_weights``;
    ``decision`` says which (and why); ``texel``: the Texel seed (None: Texel seeding is off).
    """

    variant: str
    study: str
    seed_weights: dict[str, float]
    weights: dict[str, float]
    accepted: bool
    decision: str
    trials: tuple[TuneTrial, ...]
    best: TuneBest | None
    sprt: SprtSummary | None
    texel: TexelSeed | None

    def history(self) -> list[float | None]:
        """The trials' values in trial order (the optimisation history)."""
        return [t.value for t in sorted(self.trials, key=lambda t: t.number)]

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "study": self.study, "seed_weights": dict(self.seed_weights),
                "weights": dict(self.weights), "accepted": self.accepted, "decision": self.decision,
                "trials": [t.to_json() for t in self.trials],
                "best": None if self.best is None else self.best.to_json(),
                "sprt": None if self.sprt is None else self.sprt.to_json(),
                "texel": None if self.texel is None else self.texel.to_json()}

    @classmethod
    def from_json(cls, data: object, where: str = "tune result") -> TuneResult:
        f = Fields(data, where, _RESULT_KEYS)
        return cls(f.text("variant"), f.text("study"), f.numbers("seed_weights"), f.numbers("weights"),
                   f.flag("accepted"), f.text("decision"), f.records("trials", TuneTrial.from_json),
                   f.opt_record("best", TuneBest.from_json), f.opt_record("sprt", SprtSummary.from_json),
                   f.opt_record("texel", TexelSeed.from_json))


def read_tune(path: Root) -> TuneResult | None:
    """The tuning stage's result file, or None when the stage has not finished."""
    data = read_result(path)
    return None if data is None else TuneResult.from_json(data, str(path))
