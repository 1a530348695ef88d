"""Table cells shared by the report, the schedule report and ``pipeline compare``."""

from __future__ import annotations


def optional(value: float | None, fmt: str) -> str:
    """``value`` in format ``fmt``, or ``-`` where it is unknown."""
    return "-" if value is None else format(value, fmt)
