"""Run configuration: TOML files read into frozen, validated dataclasses.

Owns the config layer (``run_config``: sections, settings, hashing, strict loading) and the
sections every stage reads (``job_sections``, ``tracking_sections``). Imports the engine's
declarations (variants, knobs, features) and nothing else of the pipeline.
"""
