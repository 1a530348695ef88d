"""Are two runs of one config the same run: games, Optuna trials, profile?

    PYTHONPATH=. python experiments/2026-12-04-loopback-cluster/compare.py RUN_A RUN_B

RUN_A and RUN_B are run folders (``<output>/<run id>``). Games: every batch file of every
stage, row by row, without the timing columns. Trials: every study of the Optuna journal,
trial by trial (number, state, parameters, value, intermediate values, user attributes). The
profile: every JSON path of ``profiles/<variant>.json``; paths that differ are listed, so a
reader sees which ones only record where or when the run happened. Exit 0 when games and trials
are identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import optuna
import pyarrow.parquet as pq
from optuna.storages.journal import JournalFileBackend, JournalStorage

from pipeline.games.records import TIMING_COLUMNS


def game_files(run: Path) -> dict[str, list[dict[str, Any]]]:
    """Every batch file's rows without timing columns, by path inside the run folder."""
    out = {}
    for path in sorted(run.rglob("batch-*.parquet")):
        table = pq.read_table(path)
        table = table.drop_columns([c for c in TIMING_COLUMNS if c in table.column_names])
        out[str(path.relative_to(run))] = table.to_pylist()
    return out


def trials(run: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every study's trials, in number order, as comparable tuples."""
    storage = JournalStorage(JournalFileBackend(str(run / "optuna" / "journal.log")))
    out = {}
    for summary in optuna.get_all_study_summaries(storage):
        study = optuna.load_study(study_name=summary.study_name, storage=storage)
        out[summary.study_name] = [
            (t.number, t.state.name, sorted(t.params.items()), t.values,
             sorted(t.intermediate_values.items()),
             sorted((k, json.dumps(v, sort_keys=True)) for k, v in t.user_attrs.items()))
            for t in study.get_trials(deepcopy=False)]
    return out


def json_paths(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of a JSON value by path."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in json_paths(item, f"{prefix}.{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in json_paths(item, f"{prefix}[{i}]").items()}
    return {prefix: value}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    args = parser.parse_args()
    same = True
    games_a, games_b = game_files(args.run_a), game_files(args.run_b)
    rows = sum(len(v) for v in games_a.values())
    differ = sorted(k for k in games_a.keys() | games_b.keys() if games_a.get(k) != games_b.get(k))
    print(f"games: {len(games_a)} vs {len(games_b)} batch files, {rows:,} games in the first; "
          f"{len(differ)} files differ{': ' + ', '.join(differ[:5]) if differ else ''}")
    same &= not differ and len(games_a) == len(games_b) > 0
    trials_a, trials_b = trials(args.run_a), trials(args.run_b)
    for name in sorted(trials_a.keys() | trials_b.keys()):
        a, b = trials_a.get(name, []), trials_b.get(name, [])
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        ok = a == b
        print(f"study {name}: {len(a)} vs {len(b)} trials, "
              f"{'identical' if ok else f'differ (first at trial {first})'}")
        same &= ok
    for profile_a in sorted((args.run_a / "profiles").glob("*.json")):
        profile_b = args.run_b / "profiles" / profile_a.name
        pa_, pb_ = (json_paths(json.loads(p.read_text())) for p in (profile_a, profile_b))
        paths = sorted(k for k in pa_.keys() | pb_.keys() if pa_.get(k) != pb_.get(k))
        print(f"profile {profile_a.name}: {len(pa_)} values, {len(paths)} differ")
        for k in paths:
            print(f"  {k}: {pa_.get(k)!r} vs {pb_.get(k)!r}")
    print("SAME games and trials" if same else "NOT the same")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
