"""Verb ``keys``: every run-config key, level knob and evaluation feature, from their declarations.

Nothing here restates a key: the tables come from the config sections
(:func:`pipeline.config.run_config.describe_sections`), ``engine.params.PARAMS`` and
``engine.features.FEATURES``, so a new key, knob or feature shows up without an edit here.
"""

from __future__ import annotations

import argparse

from pipeline.cli.common import EXIT_OK, command

PARTS = ("config", "knobs", "features")


def knob_table() -> str:
    """Markdown table of the level knobs: type, default, range, direction, log scale, tunable."""
    from engine.params import PARAMS  # kept off the --help path with the rest of the engine

    columns = ("knob", "group", "type", "default", "range", "raising it", "log scale", "tuner may search",
               "meaning")
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for p in PARAMS:
        span = "-" if p.kind == "bool" else f"{_num(p.low)} to {_num(p.high)}"
        default = str(p.default).lower() if p.kind == "bool" else _num(p.default)
        lines.append(f"| `{p.name}` | {p.group} | {p.kind} | {default} | {span} | {p.direction} | "
                     f"{_yes(p.log_scale)} | {_yes(p.tunable)} | {p.meaning} |")
    return "\n".join(lines)


def feature_table() -> str:
    """Markdown table of the evaluation features and the weight range a tuner may use."""
    from engine.features import FEATURES

    lines = ["| feature | weight range | counts |", "| --- | --- | --- |"]
    lines += [f"| `{f.name}` | {_num(f.low)} to {_num(f.high)} | {f.meaning} |" for f in FEATURES]
    return "\n".join(lines)


def config_table() -> str:
    """Markdown table of every run-config key of every registered section."""
    import pipeline.config.job_sections  # noqa: F401 - registers the main job's sections
    from pipeline.config.run_config import describe_sections

    return describe_sections()


def _num(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{float(value):g}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _keys_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("part", nargs="?", choices=PARTS, help="print only this table (default: all three)")


@command("keys", "list every run-config key, level knob and evaluation feature (markdown tables)", _keys_args)
def _keys(args: argparse.Namespace) -> int:
    tables = {"config": ("Run-config keys", config_table), "knobs": ("Level knobs", knob_table),
              "features": ("Evaluation features", feature_table)}
    chosen = [args.part] if args.part else list(PARTS)
    print("\n\n".join(f"## {tables[part][0]}\n\n{tables[part][1]()}" for part in chosen))
    return EXIT_OK
