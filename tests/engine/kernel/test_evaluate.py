"""Kernel evaluation: the score is exactly the weighted feature sum, signed for the side to move."""

from __future__ import annotations

import numpy as np
import pytest

from engine.features import FEATURES, N_FEATURES, default_weights, weight_vector
from engine.kernel.evaluate import evaluate, features_into
from engine.kernel.tables import kernel_tables
from engine.position import initial_position
from engine.variants import VARIANTS, Variant
from tests.engine.kernel.test_search import _random_positions


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_evaluate_is_weighted_feature_sum(variant: Variant) -> None:
    tab = kernel_tables(variant).packed
    rng = np.random.default_rng(7)
    feats = np.zeros(N_FEATURES)
    for position in _random_positions(variant, 40, seed=3):
        w, b, k = np.uint64(position.white), np.uint64(position.black), np.uint64(position.kings)
        features_into(w, b, k, tab, feats)
        for weights in (weight_vector(default_weights(variant)), rng.uniform(-50, 50, N_FEATURES)):
            expected = int(np.round(float(np.dot(weights, feats))))
            assert evaluate(w, b, k, 0, tab, weights) == expected
            assert evaluate(w, b, k, 1, tab, weights) == -expected


def test_start_position_is_balanced() -> None:
    for variant in VARIANTS:
        p = initial_position(variant)
        feats = np.zeros(N_FEATURES)
        features_into(np.uint64(p.white), np.uint64(p.black), np.uint64(p.kings),
                      kernel_tables(variant).packed, feats)
        assert not feats.any(), dict(zip([f.name for f in FEATURES], feats, strict=True))
