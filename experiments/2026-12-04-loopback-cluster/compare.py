"""Are two runs of one config the same run: games, Optuna trials, profile?

    PYTHONPATH=. python experiments/2026-12-04-loopback-cluster/compare.py RUN_A RUN_B
    PYTHONPATH=. python experiments/2026-12-04-loopback-cluster/compare.py --digest OUT.json RUN

RUN_A and RUN_B are run folders (``<output>/<run id>``) or digests of one written with
``--digest``: a run folder can go with its machine, a digest of a few hundred kilobytes can be
kept beside the write-up and compared with a run played later. Games: every batch file of every
stage, row by row, without the timing columns (a digest keeps each file's row count and the
SHA-256 of its rows). Trials: every study of the Optuna journal, trial by trial (number, state,
parameters, value, intermediate values, user attributes). The profile: every JSON path of
``profiles/<variant>.json``; paths that differ are listed, so a reader sees which ones only
record where or when the run happened. Exit 0 when games and trials are identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
import pyarrow.parquet as pq
from optuna.storages.journal import JournalFileBackend, JournalStorage

from pipeline.games.records import TIMING_COLUMNS


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class Fingerprint:
    """What the comparison looks at, of one run."""

    games: dict[str, tuple[int, str]]  # batch file path -> (rows, SHA-256 of its rows)
    trials: dict[str, list[str]]  # study -> SHA-256 of each trial, in number order
    profiles: dict[str, dict[str, Any]]  # profile file name -> JSON path -> value


def game_files(run: Path) -> dict[str, tuple[int, str]]:
    """Every batch file's row count and rows' hash without timing columns, by path in the run."""
    out = {}
    for path in sorted(run.rglob("batch-*.parquet")):
        table = pq.read_table(path)
        table = table.drop_columns([c for c in TIMING_COLUMNS if c in table.column_names])
        out[str(path.relative_to(run))] = (table.num_rows, _sha(table.to_pylist()))
    return out


def trials(run: Path) -> dict[str, list[str]]:
    """Every study's trials, in number order, each hashed as a comparable tuple."""
    storage = JournalStorage(JournalFileBackend(str(run / "optuna" / "journal.log")))
    out = {}
    for summary in optuna.get_all_study_summaries(storage):
        study = optuna.load_study(study_name=summary.study_name, storage=storage)
        out[summary.study_name] = [
            _sha((t.number, t.state.name, sorted(t.params.items()), t.values,
                  sorted(t.intermediate_values.items()),
                  sorted((k, json.dumps(v, sort_keys=True)) for k, v in t.user_attrs.items())))
            for t in study.get_trials(deepcopy=False)]
    return out


def json_paths(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of a JSON value by path."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in json_paths(item, f"{prefix}.{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in json_paths(item, f"{prefix}[{i}]").items()}
    return {prefix: value}


def fingerprint(source: Path) -> Fingerprint:
    """A run folder's fingerprint, or one read back from a ``--digest`` file."""
    if source.is_file():
        data = json.loads(source.read_text())
        return Fingerprint({k: (int(n), str(h)) for k, (n, h) in data["games"].items()},
                           {k: list(v) for k, v in data["trials"].items()}, data["profiles"])
    profiles = {p.name: json_paths(json.loads(p.read_text()))
                for p in sorted((source / "profiles").glob("*.json"))}
    return Fingerprint(game_files(source), trials(source), profiles)


def compare(a: Fingerprint, b: Fingerprint) -> bool:
    """Print what differs; True when games and trials are identical."""
    rows = sum(n for n, _ in a.games.values())
    differ = sorted(k for k in a.games.keys() | b.games.keys() if a.games.get(k) != b.games.get(k))
    print(f"games: {len(a.games)} vs {len(b.games)} batch files, {rows:,} games in the first; "
          f"{len(differ)} files differ{': ' + ', '.join(differ[:5]) if differ else ''}")
    same = not differ and len(a.games) == len(b.games) > 0
    for name in sorted(a.trials.keys() | b.trials.keys()):
        ta, tb = a.trials.get(name, []), b.trials.get(name, [])
        first = next((i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y), None)
        ok = ta == tb
        print(f"study {name}: {len(ta)} vs {len(tb)} trials, "
              f"{'identical' if ok else f'differ (first at trial {first})'}")
        same &= ok
    for name, pa_ in sorted(a.profiles.items()):
        pb_ = b.profiles.get(name, {})
        paths = sorted(k for k in pa_.keys() | pb_.keys() if pa_.get(k) != pb_.get(k))
        print(f"profile {name}: {len(pa_)} values, {len(paths)} differ")
        for k in paths:
            print(f"  {k}: {pa_.get(k)!r} vs {pb_.get(k)!r}")
    print("SAME games and trials" if same else "NOT the same")
    return same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+",
                        help="two runs (folders or digests), or one with --digest")
    parser.add_argument("--digest", type=Path, help="write RUN's fingerprint to this JSON file instead")
    args = parser.parse_args()
    if args.digest is not None:
        if len(args.runs) != 1:
            parser.error("--digest takes one run folder")
        found = fingerprint(args.runs[0])
        args.digest.write_text(json.dumps({"games": found.games, "trials": found.trials,
                                           "profiles": found.profiles}, sort_keys=True) + "\n")
        print(f"digest of {args.runs[0]}: {len(found.games)} batch files, "
              f"{sum(len(v) for v in found.trials.values())} trials -> {args.digest}")
        return 0
    if len(args.runs) != 2:
        parser.error("give two runs to compare")
    return 0 if compare(fingerprint(args.runs[0]), fingerprint(args.runs[1])) else 1


if __name__ == "__main__":
    sys.exit(main())
