"""The tuned weights at Hard's depth: a second SPRT before the levels take them.

The weight tuning scores its trials and its SPRT at the tuning's shallow search (a few plies).
A gain there need not hold where Hard plays: in russian a tuning the shallow SPRT accepted
(+18 Elo) scored -23 against the product's Hard at 200,000 nodes. With ``[tune] depth_nodes``
set, the accepted weights play a second SPRT against the seed weights, both on Hard's knob path
(:func:`~pipeline.calibration.paths.hard_player`: the variant's proven search, no weakening) at
that node budget, on an opening stream of its own. The levels play the tuned weights only if it
accepts too; else the seed weights, as when the first SPRT does not accept.

The result is ``tune/depth-check.json``; a finished check is read back, not replayed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.calibration.paths import hard_player
from pipeline.config.job_sections import TuneSection
from pipeline.games.players import inline_spec
from pipeline.games.stage import StageContext, read_result, write_result
from pipeline.games.storage import Root
from pipeline.games.storage_fs import joined
from pipeline.jsonrecord import Fields
from pipeline.tuning.results import RESULT_FILE, SprtSummary, TuneResult, read_tune
from pipeline.tuning.weights import DEPTH_STREAM, TUNE_DIR, confirm, tuned_weights

DEPTH_FILE = f"{TUNE_DIR}/depth-check.json"
DEPTH_STAGE = f"{TUNE_DIR}/depth"
TUNED_NAME, SEED_NAME = "tuned-deep", "seed-deep"


@dataclass(frozen=True)
class DepthCheck:
    """The depth SPRT: its node budget per move and the test (``sprt.decision``)."""

    nodes: int
    sprt: SprtSummary

    @property
    def accepted(self) -> bool:
        return self.sprt.decision == "accepted"

    def to_json(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "sprt": self.sprt.to_json()}

    @classmethod
    def from_json(cls, data: object, where: str = "depth check") -> DepthCheck:
        f = Fields(data, where, ("nodes", "sprt"))
        return cls(f.integer("nodes"), f.record("sprt", SprtSummary.from_json))


def depth_specs(variant: str, tuned: Mapping[str, float], seed: Mapping[str, float],
                nodes: int) -> tuple[str, str]:
    """The two players of the depth SPRT: Hard's path at ``nodes`` with each set of weights."""
    return (inline_spec(TUNED_NAME, hard_player(variant, tuned, nodes).level),
            inline_spec(SEED_NAME, hard_player(variant, seed, nodes).level))


def read_depth_check(run_folder: Root) -> DepthCheck | None:
    """The finished depth check of a run, or None (not run, or not finished)."""
    path = joined(run_folder, DEPTH_FILE)
    data = read_result(path)
    return None if data is None else DepthCheck.from_json(data, str(path))


def run_depth_check(ctx: StageContext, section: TuneSection, tune: TuneResult) -> DepthCheck | None:
    """Play (or read back) the depth SPRT of an accepted tuning; None when there is none to play
    (``depth_nodes`` 0, or the tuning kept the seed weights)."""
    if section.depth_nodes == 0 or not tune.accepted:
        return None
    path = ctx.run_folder / DEPTH_FILE
    done = read_depth_check(ctx.run_folder)
    if done is not None:
        return done
    tuned, seed = depth_specs(ctx.variant, tune.weights, tune.seed_weights, section.depth_nodes)
    test = confirm(ctx, TUNED_NAME, tuned, seed, section, stage=DEPTH_STAGE, stream=DEPTH_STREAM,
                   max_pairs=section.depth_max_pairs)
    check = DepthCheck(section.depth_nodes, test)
    write_result(path, check.to_json())
    return check


def level_weights(run_folder: Root, variant: str, seed_profile: str | None) -> dict[str, float]:
    """The weights the levels play: the tuning's when its SPRT accepted them and the depth check,
    if one was played, accepted them too; else the seed weights."""
    check = read_depth_check(run_folder)
    if check is None or check.accepted:
        return tuned_weights(run_folder, variant, seed_profile)
    tune = read_tune(joined(run_folder, RESULT_FILE))
    assert tune is not None  # a check is played only after the tuning's result is written
    return dict(tune.seed_weights)


def depth_line(check: DepthCheck) -> str:
    """The check in words, for the job's summary, its log and the report."""
    kept = "the levels play the tuned weights" if check.accepted else "the levels play the seed weights"
    return f"{check.sprt.decision} at {check.nodes} nodes a move ({check.sprt.describe()}); {kept}"
