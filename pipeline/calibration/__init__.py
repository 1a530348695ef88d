"""Calibration: the knobs of each difficulty level, chosen to hit its target strength.

Owns the per-level studies, head-to-head chaining, confirmation on fresh games, the
independent level check, and their result records (``results``, ``levelcheck_results``). May
import ``config``, ``games``, ``ratings``, ``ladder``, ``tuning`` and ``tracking``.
"""
