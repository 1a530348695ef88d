"""Error type raised at the ratings layer's edge.

A subclass of the project-wide ``DraughtsError`` (itself a ``ValueError``) so callers can catch
every bad-input error in one place; messages quote the offending input.
"""

from __future__ import annotations

from engine.errors import DraughtsError


class RatingsError(DraughtsError):
    """Game data or statistics arguments that cannot produce a meaningful rating."""
