"""Calibration: the three levels of a variant, measured against the product's own levels.

Owns the knob paths of the levels (``paths``), the product's reference levels (``product``), the
method that plays the strength curves, chooses and validates the levels (``method``), the rules a
run is judged by (``claims``), its result records (``outcome``) and the independent level check
(``levelcheck``). May import ``config``, ``games``, ``ratings``, ``tuning`` and ``tracking``.
"""
