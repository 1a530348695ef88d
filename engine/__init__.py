"""The shipping draughts engine: rules, notation, move generation, search, profiles.

Depends on numpy and numba only; never imports the pipeline.
"""

__version__ = "0.1.0"
