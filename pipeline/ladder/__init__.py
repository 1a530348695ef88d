"""The reference ladder: fixed anchor players of a variant, rated once, stored and reused.

May import ``pipeline.config``, ``pipeline.games`` and ``pipeline.ratings``.
"""
