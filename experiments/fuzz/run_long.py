"""Long fuzz run: the tests/fuzz properties of every parser with enough examples for N cases each.

    python experiments/fuzz/run_long.py [--cases 100000] [--budget-minutes 20] [--jobs 1]
                                        [--parsers fen,move,...] [--log-dir DIR]

For each parser (FEN, move text, PDN, profile JSON, run-config TOML, engine CLI argv, pipeline
CLI argv) it counts the parser's properties (pytest --collect-only), sets ``FUZZ_EXAMPLES`` so
that properties x examples >= ``--cases`` (plus 10 % for inputs Hypothesis discards), and runs
pytest on them in a subprocess. Cases are counted by the suite itself (conftest.fuzz_case, one per
input actually run, written to ``$FUZZ_COUNTS_FILE``), so the numbers printed are cases executed,
not examples requested.

The total time is bounded: each parser gets an equal share of the time left
(``$FUZZ_STOP_AT``; inside a parser every property gets an equal share again, and stops when it
is used up), so a slow parser runs fewer cases instead of overrunning. The table at the end says
how many cases each parser really ran and whether the budget cut it short. ``--jobs 2`` runs two
parsers at a time (the machine has 2 shared cores: the default is 1).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock

REPO = Path(__file__).resolve().parents[2]
FUZZ = "tests/fuzz"
NOT_PROPERTIES = "not bug and not subprocess"  # pinned known bugs and subprocess checks run once

#: parser -> (test file, pytest -k expression selecting its properties)
PARSERS: dict[str, tuple[str, str]] = {
    "fen": ("test_fuzz_fen.py", NOT_PROPERTIES),
    "move": ("test_fuzz_move.py", NOT_PROPERTIES),
    "profile": ("test_fuzz_profile.py", NOT_PROPERTIES),
    "config": ("test_fuzz_config.py", NOT_PROPERTIES),
    "pdn": ("test_fuzz_pdn.py", NOT_PROPERTIES),
    "engine-cli": ("test_fuzz_cli.py", f"engine and {NOT_PROPERTIES}"),
    "pipeline-cli": ("test_fuzz_cli.py", f"pipeline and {NOT_PROPERTIES}"),
}


@dataclass
class Result:
    parser: str
    properties: int = 0
    examples: int = 0
    cases: int = 0
    seconds: float = 0.0
    budget: float = 0.0
    outcome: str = ""
    known: dict[str, int] = field(default_factory=dict)
    log: str = ""


def count_properties(test_file: str, expression: str) -> int:
    """How many test items (properties, parametrised per variant) the parser has."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
               f"{FUZZ}/{test_file}", "-k", expression]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    items = [line for line in done.stdout.splitlines() if "::" in line]
    if not items:
        raise SystemExit(f"no fuzz properties collected from {test_file} -k {expression!r}:\n{done.stdout}")
    return len(items)


def run_parser(parser: str, cases: int, stop_at: float, log_dir: Path) -> Result:
    test_file, expression = PARSERS[parser]
    result = Result(parser, properties=count_properties(test_file, expression))
    result.examples = math.ceil(cases * 1.1 / result.properties)
    counts_file = log_dir / f"{parser}.counts.json"
    log_file = log_dir / f"{parser}.log"
    result.log = str(log_file)
    result.budget = max(0.0, stop_at - time.time())
    env = {
        **os.environ,
        "FUZZ_EXAMPLES": str(result.examples),
        "FUZZ_COUNTS_FILE": str(counts_file),
        "FUZZ_STOP_AT": f"{stop_at:.3f}",
        "FUZZ_HARD_SECONDS": str(int(result.budget) + 300),  # native-hang watchdog per property
    }
    started = time.time()
    with open(log_file, "w", encoding="utf-8") as log:
        try:
            command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEs",
                       "-W", "ignore::DeprecationWarning", f"{FUZZ}/{test_file}", "-k", expression]
            done = subprocess.run(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
                                  check=False, timeout=result.budget + 900)
            code = done.returncode
        except subprocess.TimeoutExpired:
            code = -1
    result.seconds = time.time() - started
    counts = json.loads(counts_file.read_text(encoding="utf-8")) if counts_file.is_file() else {}
    result.cases = int(counts.get(parser, 0))
    result.known = {k.removeprefix("known bug: "): v for k, v in counts.items() if k.startswith("known bug")}
    summary = _summary_line(log_file.read_text(encoding="utf-8", errors="replace"))
    if code == -1:
        result.outcome = "TIMED OUT (killed)"
    elif code == 0:
        result.outcome = "ok" + (" (cut short by the time budget)" if "skipped" in summary else "")
    else:
        result.outcome = f"FAILED (exit {code}): {summary}"
    return result


def _summary_line(log: str) -> str:
    lines = [line for line in log.splitlines() if re.search(r"\d+ (passed|failed|error|skipped)", line)]
    return lines[-1].strip("= ") if lines else "no pytest summary"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases wanted per parser (default 100000)")
    parser.add_argument("--budget-minutes", type=float, default=20.0, help="total wall time (default 20)")
    parser.add_argument("--jobs", type=int, default=1, help="parsers run at once (default 1)")
    parser.add_argument(
        "--parsers", default=",".join(PARSERS), help=f"comma-separated subset of {', '.join(PARSERS)}"
    )
    parser.add_argument("--log-dir", default=None, help="pytest logs and counts (default: a new temp folder)")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.parsers.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in PARSERS]
    if unknown or args.cases < 1 or args.jobs < 1 or args.budget_minutes <= 0:
        parser.error(f"bad arguments (unknown parsers: {unknown})" if unknown else "bad arguments")
    log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix="fuzz-long-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    deadline = started + args.budget_minutes * 60
    print(
        f"fuzz long run: {args.cases} cases per parser, budget {args.budget_minutes:g} min, "
        f"{args.jobs} job(s), logs in {log_dir}",
        flush=True,
    )

    lock = Lock()
    pending = list(chosen)
    results: list[Result] = []

    def next_share() -> tuple[str, float] | None:
        with lock:
            if not pending:
                return None
            name = pending.pop(0)
            left = max(0.0, deadline - time.time())
            # an equal share of what is left, for this and the parsers not started yet
            share = left * args.jobs / (len(pending) + 1)
            return name, time.time() + min(left, share)

    def worker() -> None:
        while (job := next_share()) is not None:
            name, stop_at = job
            result = run_parser(name, args.cases, stop_at, log_dir)
            with lock:
                results.append(result)
            print(
                f"  {name:<13} {result.cases:>8} cases in {result.seconds:7.1f} s "
                f"({result.properties} properties x {result.examples} examples) {result.outcome}",
                flush=True,
            )

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in [pool.submit(worker) for _ in range(args.jobs)]:
            future.result()  # re-raise a worker's error here
    wall = time.time() - started

    results.sort(key=lambda r: chosen.index(r.parser))
    print()
    print("| parser | cases run | target | properties x examples | seconds | known-bug hits | result |")
    print("| --- | ---: | ---: | --- | ---: | --- | --- |")
    for r in results:
        known = ", ".join(f"{k} {v}" for k, v in sorted(r.known.items())) or "-"
        print(
            f"| {r.parser} | {r.cases} | {args.cases} | {r.properties} x {r.examples} | {r.seconds:.0f} | "
            f"{known} | {r.outcome} |"
        )
    total = sum(r.cases for r in results)
    print(
        f"\ntotal {total} cases in {wall:.0f} s wall time; "
        f"{sum(r.cases >= args.cases for r in results)}/{len(results)} parsers reached {args.cases} cases"
    )
    return 0 if all(r.outcome.startswith("ok") for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
