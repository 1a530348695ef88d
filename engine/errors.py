"""Error types raised at the engine's edge.

Every parse or validation failure is a ``ValueError`` subclass whose message
quotes the offending input, so callers (and the CLI) can report it in one line.
"""

from __future__ import annotations


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


class PdnError(DraughtsError):
    """A malformed PDN game text."""


class ProfileError(DraughtsError):
    """A difficulty profile file that fails strict validation."""


class DeclarationError(DraughtsError):
    """A knob or feature declaration that contradicts itself or leaves a variant out."""
