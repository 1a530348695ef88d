"""The sentence an exported profile states its Elo scale in, and reading that sentence back.

A profile file has no field for its scale, so :mod:`pipeline.job.export` writes it into the
provenance description; :mod:`pipeline.job.compare` reads it back to tell whether two profiles'
Elo share a fixed point. Both use this module, so the text and its reader cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.calibration.product import ANCHOR_LEVEL, PRODUCT_PREFIX


@dataclass(frozen=True)
class Scale:
    """A score-based Elo scale: ``anchor`` (a player) of ``product_file`` held at ``anchor_elo``."""

    anchor: str
    product_file: str  # file name of the product's profile, without its folder
    anchor_elo: float

    def describe(self) -> str:
        return f"score-based Elo, {self.anchor} ({self.product_file}) held at {self.anchor_elo:g}"


def scale_sentence(product_file: str, anchor_elo: float) -> str:
    """What an exported profile's provenance says about its scale (``product_file``: any path)."""
    name = product_file.rsplit("/", 1)[-1]
    return (f"Elo is score-based (a gap of D means the stronger side scores 1/(1 + 10^(-D/400)), draws as "
            f"half points) with the product's {ANCHOR_LEVEL.capitalize()} ({name}) held at {anchor_elo:g}; "
            f"CIs are bootstrap intervals over openings.")


_SENTENCE = re.compile(
    r"Elo is score-based \(.*?\) with the product's " + re.escape(ANCHOR_LEVEL.capitalize())
    + r" \((?P<file>[^()/]+)\) held at (?P<elo>[-+]?[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?);")


def read_scale(description: str) -> Scale | None:
    """The scale a profile description states in :func:`scale_sentence`'s words (None: it states none)."""
    found = _SENTENCE.search(description)
    if found is None:
        return None
    return Scale(f"{PRODUCT_PREFIX}{ANCHOR_LEVEL}", found["file"], float(found["elo"]))
