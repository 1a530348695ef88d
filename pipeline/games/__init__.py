"""Games: who plays, from which openings, where the results go, and how batches are run.

Owns game records (Arrow schemas), Parquet storage, opening decks and their generator, player
specs, the pure match runner, pairing plans, the self-play stage, the per-stage context, and
the executor that fans batches out to Ray (``executor``: the only module that imports ray).
May import the engine and ``pipeline.config``.
"""
