"""Tuning: Optuna studies of evaluation weights, scored by paired games, confirmed by SPRT.

Owns study storage and ask/tell (``studies``: the only module that imports optuna), the weight
study, the Texel fit and the stage's result records (``results``). May import ``config``,
``games``, ``ratings`` and ``tracking``.
"""
