"""Error types raised at the engine's edge.

Every parse or validation failure is a ``ValueError`` subclass whose message
quotes the offending input, so callers (and the CLI) can report it in one line.
"""

from __future__ import annotations

#: Quoted input longer than this is cut, so that one bad 10 kB line stays a short message.
QUOTE_LIMIT = 120


def quote(value: object) -> str:
    """``repr`` of ``value`` for an error message; past ``QUOTE_LIMIT`` characters, cut and sized.

    ``quote("x" * 500)`` is ``'xxx...x'... (500 characters)`` with the first 120 characters kept.
    """
    if isinstance(value, str) and len(value) > QUOTE_LIMIT:
        return f"{value[:QUOTE_LIMIT]!r}... ({len(value)} characters)"
    text = repr(value)
    if len(text) > QUOTE_LIMIT + 2:
        return f"{text[:QUOTE_LIMIT]}... ({len(text)} characters of repr)"
    return text


class DraughtsError(ValueError):
    """Base class of every input error the engine raises on purpose."""


class UnknownVariantError(DraughtsError):
    """A variant name that is not registered."""


class FenError(DraughtsError):
    """A malformed or impossible FEN string."""


class SquareError(DraughtsError):
    """A square name or number that does not exist on the board."""


class MoveError(DraughtsError):
    """Move text that is malformed, illegal or ambiguous in the position."""


class AmbiguousMoveError(MoveError):
    """Move text that names several legal moves (the message lists them)."""


class PdnError(DraughtsError):
    """A malformed PDN game text."""


class ProfileError(DraughtsError):
    """A difficulty profile file that fails strict validation."""


class DeclarationError(DraughtsError):
    """A knob or feature declaration that contradicts itself or leaves a variant out."""
