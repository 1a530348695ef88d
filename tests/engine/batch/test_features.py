"""Batch feature extraction equals the kernel's scalar features on random reachable positions."""

from __future__ import annotations

import numpy as np
import pytest

from engine.batch.features import extract_features
from engine.batch.playout import random_positions
from engine.features import N_FEATURES
from engine.kernel.evaluate import features_into
from engine.kernel.tables import kernel_tables
from engine.variants import VARIANTS, Variant


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_batch_features_equal_kernel_features(variant: Variant) -> None:
    batch = random_positions(variant, 3000, seed=17)
    got = extract_features(variant, batch)
    tab = kernel_tables(variant).packed
    row = np.zeros(N_FEATURES)
    for i in range(len(batch)):
        features_into(batch.white[i], batch.black[i], batch.kings[i], tab, row)
        assert np.array_equal(got[i], row), (i, got[i], row)
    assert (got[:, 1] != 0).any()  # kings occur, so king terms are exercised
