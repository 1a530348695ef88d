"""The product's own levels of a variant: the reference every calibrated level is measured against.

The product plays english with ``engine/profiles/english-baseline.json``; the other variants'
products (or, for russian and international, the product they would start from) are the
``<variant>-start.json`` profiles built from the same level definitions with the variant's own
starting weights (docs/calibration.md). The scale's fixed point is the product's Medium.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.profile import LEVEL_NAMES, LevelProfile, Profile, load_profile, profile_dir
from engine.variants import get_variant
from pipeline.games.players import inline_spec

#: the profile file suffix of the product's levels, first match wins
PRODUCT_SUFFIXES: tuple[str, ...] = ("-baseline", "-start")
#: player-name prefix of the product's levels in game records
PRODUCT_PREFIX = "product-"
#: the scale's fixed point: this product level is held at ANCHOR_ELO in every fit
ANCHOR_LEVEL = "medium"
ANCHOR_ELO = 1500.0


@dataclass(frozen=True)
class ProductLevels:
    """The product's three levels of one variant and the file they come from."""

    variant: str
    path: Path
    profile: Profile

    def level(self, name: str) -> LevelProfile:
        return self.profile.level(name)

    def player(self, name: str) -> str:
        """The player name of product level ``name`` in game records."""
        return f"{PRODUCT_PREFIX}{name}"

    def spec(self, name: str) -> str:
        """The inline player spec of product level ``name``."""
        return inline_spec(self.player(name), self.level(name))

    @property
    def anchor(self) -> str:
        """The scale's fixed point: the product's Medium."""
        return self.player(ANCHOR_LEVEL)

    def players(self) -> tuple[str, ...]:
        return tuple(self.player(n) for n in LEVEL_NAMES)


def product_profile_path(variant: str) -> Path:
    """``<variant>-baseline.json`` if the engine ships one, else ``<variant>-start.json``."""
    name = get_variant(variant).name
    folder = profile_dir()
    for suffix in PRODUCT_SUFFIXES:
        candidate = folder / f"{name}{suffix}.json"
        if candidate.is_file():
            return candidate
    looked = ", ".join(f"{name}{s}.json" for s in PRODUCT_SUFFIXES)
    raise FileNotFoundError(f"no product profile for {name} in {str(folder)!r} (looked for {looked})")


def product_levels(variant: str) -> ProductLevels:
    """The product's levels of ``variant`` (strictly loaded)."""
    name = get_variant(variant).name
    path = product_profile_path(name)
    return ProductLevels(name, path, load_profile(path, name))
