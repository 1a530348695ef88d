"""Fuzzing both command lines in-process: ``engine.cli.main(argv)`` and ``pipeline.cli.main.main(argv)``.

Every argv (random token lists, mutations of valid command lines, valid ones) must end with an
exit status (0, or 2 with exactly one ``error: ...`` line on stderr; the engine may also say 1,
"unavailable") and never with an exception or a traceback. ``-h``/``--help`` may exit 0 through
argparse. ``play`` gets random lines on stdin. Valid engine commands are also checked for their
output (``moves``, ``perft``, ``bestmove`` agree with the board).

Work that only starts after all input is validated is stubbed to keep cases fast: perft deeper
than 3 plies and full benches are replaced by :class:`Accepted`, and so are the pipeline's
executor, MLflow reachability and Optuna storage (Ray, games, tracking). Reaching a stub counts
as "input accepted". ``levelcheck`` command lines built from known settings are also checked
against the settings' rules: accepted exactly when every value is allowed and the deck part holds
the openings asked for. Shipped profiles are replaced (``$DRAUGHTS_PROFILE_DIR``) by copies with
small node budgets, so searches stay cheap. Cases run in a private working directory.

Three subprocess checks confirm that no traceback reaches stderr for real.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import engine.batch.perft
import engine.bench
import engine.cli
import engine.kernel.perft
import pipeline.calibration.levelcheck
import pipeline.cli.main
import pipeline.config.job_sections
import pipeline.games.executor
import pipeline.job.main_job
import pipeline.tracking.mlflow_log
import pipeline.tuning.studies
from engine.board import Board
from engine.profile import PROFILE_DIR_ENV
from engine.variants import VARIANTS
from pipeline.calibration.levelcheck import LevelCheckSettings
from tests.fuzz.conftest import (
    REPO,
    fuzz_case,
    fuzz_settings,
    known,
    mutate_list,
    outcome,
    reachable_boards,
    tolerate,
    undocumented,
    weird_token,
)
from tests.fuzz.test_fuzz_config import mutated_configs
from tests.fuzz.test_fuzz_fen import mutated_fen

CASE_SECONDS = 20.0  # a case may run a few small searches or load a config and the opening deck
HUGE_GAMES = 20_000  # plan_batches is O(games) before validation ends (known bug "huge-games")


class Accepted(BaseException):
    """Raised by a stub: the command got past validation to the expensive part. Not an Exception,
    so that no handler of the code under test (a job verb's "the run stopped") takes it for a failure."""


# ---- the private working directory ---------------------------------------------------------------

WORK: list[Path] = []
FAST_BUDGET = 3000


def _fast_profiles(target: Path) -> None:
    """Shipped profiles with node budgets capped, so a bestmove or a computer move is quick."""
    target.mkdir()
    for source in (REPO / "engine" / "profiles").glob("*.json"):
        doc = json.loads(source.read_text(encoding="utf-8"))
        for level in doc["levels"].values():
            level["search"]["node_budget"] = min(level["search"]["node_budget"], FAST_BUDGET)
            level["search"]["max_depth"] = min(level["search"]["max_depth"], 6)
            level["search"]["tt_log2"] = 10
        (target / source.name).write_text(json.dumps(doc, indent=2), encoding="utf-8")


def _prepare(work: Path) -> None:
    _fast_profiles(work / "profiles")
    good = (work / "profiles" / "english-baseline.json").read_text(encoding="utf-8")
    (work / "good.json").write_text(good, encoding="utf-8")
    (work / "bad.json").write_text(good.replace('"max_depth": 6', '"max_depth": 65', 1), encoding="utf-8")
    (work / "junk.json").write_bytes(b"\xff{not json")
    (work / "deep.json").write_text("[" * 100_000, encoding="utf-8")
    (work / "dir.json").mkdir()
    for name in ("smoke", "tiny"):
        text = (REPO / "configs" / "runs" / f"{name}.toml").read_text(encoding="utf-8")
        (work / f"{name}.toml").write_text(text, encoding="utf-8")
    (work / "deep.toml").write_text("[run]\nname = " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    (work / "notutf8.toml").write_bytes(b'[run]\nname = "\xff"\n')
    (work / "bad.toml").write_text("[run\nname = ", encoding="utf-8")
    for run, content in (("junk-run", "not json"), ("empty-run", "{}")):
        (work / "runs" / run).mkdir(parents=True)
        (work / "runs" / run / "run.json").write_text(content, encoding="utf-8")


def _perft_stub(real: Callable[..., int]) -> Callable[..., int]:
    def perft(variant: Any, position: Any, depth: int, *args: Any, **kwargs: Any) -> int:
        if depth > 3:
            raise Accepted(f"perft depth {depth}")
        return real(variant, position, depth, *args, **kwargs)

    return perft


def _bench_stub(real: Callable[..., Any]) -> Callable[..., Any]:
    def run_bench(depth: int | None = None, variants: Any = None) -> Any:
        if depth is None or (isinstance(depth, int) and 2 < depth <= engine.bench.MAX_BENCH_DEPTH):
            raise Accepted(f"bench depth {depth}")
        return real(depth, variants)

    return run_bench


def _accepted(name: str) -> Callable[..., Any]:
    def stub(*args: Any, **kwargs: Any) -> Any:
        raise Accepted(name)

    return stub


def _patch_everywhere(patch: pytest.MonkeyPatch, real: Callable[..., Any], stub: Callable[..., Any]) -> None:
    """Replace ``real`` in its own module and in every project module that imported it by name."""
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("pipeline", "engine") and module is not None:
            for attr, value in list(vars(module).items()):
                if value is real:
                    patch.setattr(module, attr, stub)


@pytest.fixture(scope="module", autouse=True)
def _workdir() -> Iterator[None]:
    patch = pytest.MonkeyPatch()
    with tempfile.TemporaryDirectory(prefix="fuzz-cli-") as name:
        work = Path(name)
        _prepare(work)
        WORK[:] = [work]
        patch.chdir(work)
        patch.setenv(PROFILE_DIR_ENV, str(work / "profiles"))
        patch.delenv("RAY_ADDRESS", raising=False)
        patch.setattr(engine.kernel.perft, "perft", _perft_stub(engine.kernel.perft.perft))
        patch.setattr(engine.batch.perft, "perft", _perft_stub(engine.batch.perft.perft))
        _patch_everywhere(patch, engine.bench.run_bench, _bench_stub(engine.bench.run_bench))
        _patch_everywhere(patch, pipeline.games.executor.make_executor, _accepted("executor"))
        _patch_everywhere(patch, pipeline.tracking.mlflow_log.check_reachable, _accepted("tracking"))
        _patch_everywhere(patch, pipeline.tuning.studies.check_storage, _accepted("storage"))
        try:
            yield
        finally:
            patch.undo()


# ---- running one command line --------------------------------------------------------------------


def run_cli(main: Callable[[list[str]], int], argv: list[str], stdin: str = "") -> tuple[Any, str, str]:
    """(status, stdout, stderr) of ``main(argv)``: an int, ('exit', code) or 'accepted'."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status: Any = main(argv)
            except SystemExit as stop:
                status = ("exit", stop.code)
            except Accepted:
                status = "accepted"
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def check_cli(
    parser: str,
    main: Callable[[list[str]], int],
    argv: list[str],
    stdin: str = "",
    known_bugs: tuple[str, ...] = (),
) -> tuple[Any, str, str]:
    """One command line: an exit status, never an exception; a usage error is one stderr line."""
    show = (argv, stdin)
    with fuzz_case(parser, show=show, seconds=CASE_SECONDS):
        try:
            status, out, err = run_cli(main, argv, stdin)
        except Exception as exc:
            if tolerate(exc, *known_bugs):
                return None, "", ""
            undocumented(parser, exc, show)
    assert "Traceback" not in err, f"traceback on stderr for {show!r}: {err[-500:]}"
    if isinstance(status, tuple):
        assert status == ("exit", 0) and (
            {"-h", "--help"} & set(argv) or any(a.startswith("--h") for a in argv)
        ), f"{argv!r}: SystemExit {status[1]!r} (only -h/--help may exit through argparse)"
        assert "usage:" in out
        outcome("help")
    elif status == "accepted":
        outcome("accepted (stubbed back end)")
    else:
        assert status in (0, 1, 2), f"{argv!r}: exit status {status!r}"
        if status != 0:
            lines = err.rstrip("\n").split("\n")
            assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) > 7, (
                f"{argv!r}: exit {status} must print one 'error: ...' line, got {err!r:.500}"
            )
        outcome(f"exit {status}")
    return status, out, err


# ---- engine argv -----------------------------------------------------------------------------------

VARIANT_NAMES = [v.name for v in VARIANTS] + ["checkers", "FMJD", " english ", "giveaway", "chess", ""]
PROFILES = ["good.json", "bad.json", "junk.json", "deep.json", "dir.json", "missing.json", "", "-"]


@st.composite
def fens(draw: st.DrawFn, variant: str) -> str:
    known_variant = next((v for v in VARIANTS if v.name == variant.strip().lower()), None)
    if known_variant is None:
        return draw(st.sampled_from(["W:W1:B2", "", "x"]))
    if draw(st.integers(0, 3)) == 0:
        return draw(mutated_fen(known_variant))
    board: Board = draw(st.sampled_from(reachable_boards(known_variant.name)))
    return board.fen(
        algebraic=known_variant.algebraic_notation and draw(st.booleans())
    )


@st.composite
def engine_argv(draw: st.DrawFn) -> tuple[list[str], str]:
    """A valid engine command line (and stdin for play)."""
    verb = draw(st.sampled_from(["perft", "moves", "bestmove", "play", "bench"]))
    variant = draw(st.sampled_from([v.name for v in VARIANTS]))
    argv = [verb]
    if verb != "bench":
        argv += ["--variant", variant]
        if draw(st.booleans()):
            argv += ["--fen", draw(fens(variant))]
    if verb == "perft":
        argv += ["--depth", str(draw(st.integers(0, 5)))]
        argv += draw(st.sampled_from([[], ["--mode", "batch"], ["--mode", "kernel"]]))
        argv += draw(st.sampled_from([[], ["--full"]]))
    if verb in ("bestmove", "play"):
        argv += ["--level", draw(st.sampled_from(["easy", "medium", "hard"]))]
        argv += draw(st.sampled_from([[], ["--seed", str(draw(st.integers(0, 10**6)))]]))
        if variant == "english":
            argv += draw(st.sampled_from([[], ["--profile", "good.json"]]))
    if verb == "play":
        argv += draw(st.sampled_from([[], ["--color", "white"], ["--color", "black"]]))
    if verb == "bench":
        argv += draw(st.sampled_from([[], ["--depth", "1"], ["--depth", "2"], ["--depth", "9"]]))
        argv += draw(st.sampled_from([[], ["--variant", variant]]))
    if verb in ("perft", "moves", "bestmove", "bench"):
        argv += draw(st.sampled_from([[], ["--json"]]))
    if verb == "moves" and variant in ("brazilian", "russian"):  # the variants with algebraic squares
        argv += draw(st.sampled_from([[], ["--algebraic"]]))
    return _shuffle_options(draw, argv), draw(stdin_lines(variant))


def _shuffle_options(draw: st.DrawFn, argv: list[str]) -> list[str]:
    """The verb first, then its options as (flag, value) groups in a random order."""
    verb, rest = argv[0], argv[1:]
    groups: list[list[str]] = []
    for token in rest:
        if token.startswith("--") or not groups:
            groups.append([token])
        else:
            groups[-1].append(token)
    return [verb, *[t for group in draw(st.permutations(groups)) for t in group]]


@st.composite
def stdin_lines(draw: st.DrawFn, variant: str) -> str:
    board = draw(st.sampled_from(reachable_boards(variant)))
    legal = [m.pdn for m in board.legal_moves] or ["11-15"]
    line = st.one_of(
        st.sampled_from(legal),
        st.sampled_from(
            ["undo", "hint", "moves", "resign", "quit", "", "UNDO", "11-15", "9-13", "1-" + "1" * 4301]
        ),
        weird_token,
    )
    return "".join(f"{draw(line)}\n" for _ in range(draw(st.integers(0, 4))))


ENGINE_WORDS = [
    "perft", "moves", "bestmove", "play", "bench", "--variant", "--depth", "--fen", "--mode", "--full",
    "--json", "--algebraic", "--level", "--profile", "--seed", "--color", "-h", "--help", "--var", "--", "-",
    "easy", "hard", "white", "batch", "kernel", *VARIANT_NAMES, *PROFILES,
]
engine_soup = st.lists(
    st.one_of(st.sampled_from(ENGINE_WORDS), st.integers(-3, 6).map(str), weird_token), max_size=10
)


def _argv_token(draw_from: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        draw_from,
        weird_token,
        st.sampled_from(
            ["--json", "--depth", "--fen", "-h", "--", "-1", "99999999999999999999", "1e3", "nan"]
        ),
    )


def engine_check(argv: list[str], stdin: str = "") -> tuple[Any, str, str]:
    return check_cli("engine-cli", engine.cli.main, argv, stdin, known_bugs=("int-digits",))


@fuzz_settings(150)
@given(argv=engine_soup)
def test_engine_random_argv(argv: list[str]) -> None:
    engine_check(argv)


@fuzz_settings(150)
@given(data=st.data())
def test_engine_mutated_argv(data: st.DataObject) -> None:
    argv, stdin = data.draw(engine_argv(), label="valid argv")
    mutated = data.draw(mutate_list(argv, _argv_token(st.sampled_from(ENGINE_WORDS))), label="argv")
    engine_check(mutated, stdin)


@fuzz_settings(80)
@given(data=st.data())
def test_engine_valid_argv(data: st.DataObject) -> None:
    argv, stdin = data.draw(engine_argv(), label="argv")
    status, out, _ = engine_check(argv, stdin)
    if status is None:  # a known bug (e.g. a 4301-digit move typed into play)
        return
    fen = argv[argv.index("--fen") + 1] if "--fen" in argv else None
    variant = argv[argv.index("--variant") + 1] if "--variant" in argv else None
    if status == 2 or status == "accepted":
        assert status == "accepted" or fen is not None or argv[0] == "play", (argv, out)
        return
    assert status == 0, (argv, status)
    if "--json" not in argv or variant is None:
        return
    board = Board(variant, fen)
    report = json.loads(out)
    if argv[0] == "moves":
        assert sorted(m["pdn"] for m in report["moves"]) == sorted(m.pdn for m in board.legal_moves)
    elif argv[0] == "perft":
        depth = int(argv[argv.index("--depth") + 1])
        assert report["nodes"] == count_paths(board, depth) and report["fen"] == board.fen()
    elif argv[0] == "bestmove":
        assert report["move"] in {m.pdn for m in board.legal_moves} and report["fen"] == board.fen()


def count_paths(board: Board, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += count_paths(board, depth - 1)
        board.pop()
    return total


# ---- pipeline argv ---------------------------------------------------------------------------------

SPECS = [
    "random", "easy", "medium", "hard", "good.json:easy", "bad.json:hard", "missing.json:easy",
    "junk.json:easy", "dir.json:easy", "inline:x:{}", 'inline:x:{"weights":{},"search":{},"weakening":{}}',
    "inline:x:" + "[" * 3000,
    "x y",
    "",
    "RANDOM",
]
CONFIGS = ["smoke.toml", "tiny.toml", "deep.toml", "notutf8.toml", "bad.toml", "missing.toml", "profiles", ""]
#: profiles levelcheck loads, with their variant (fast copies of shipped ones; PROFILES holds bad ones)
LEVELCHECK_PROFILES = {"good.json": "english", "profiles/english.json": "english",
                       "profiles/russian.json": "russian", "profiles/suicide-start.json": "suicide"}
#: levelcheck's options with a value: (values mostly allowed, values mostly not); the deck is drawn apart
LEVELCHECK_VALUES: dict[str, tuple[list[Any], list[Any]]] = {
    "--openings": ([2, 4, 60, 75, 78, 79, 300], [1, 0, -1, 10**6]),
    "--seed": ([0, 7, 2**63], [-1]),
    "--deck-part": (["all", "even", "odd"], []),
    "--ply-cap": ([10, 200], [9, 0]),
    "--batch-size": ([2, 10], [3, 0, -2]),
    "--bootstrap": ([50, 400], [49, 0]),
}
DECK_FOLDER = REPO / "pipeline" / "data" / "openings"
OTHER_DECKS = ["nope", "English", "../english", "russian", "english-extended", "x" * 300]
PIPELINE_VERBS = ["selfplay", "match", "run", "ladder", "tune", "calibrate", "export", "report", "levelcheck",
                  "keys"]
PIPELINE_WORDS = [
    *PIPELINE_VERBS, "--output", "--resume", "--address", "--in-process", "--no-progress", "--variant",
    "--a", "--b", "--games", "--seed", "--ply-cap", "--json", "--ray", "--storage", "--tracking-uri",
    "--profiles-dir", "--openings", "--deck", "--deck-part", "--batch-size", "--bootstrap", "-h", "junk-run",
    "empty-run", "runs", "x" * 300, "knobs", *SPECS, *CONFIGS, *VARIANT_NAMES, *LEVELCHECK_PROFILES,
]
_FOLDER_NUMBERS = itertools.count()


@st.composite
def levelcheck_settings(draw: st.DrawFn) -> tuple[str, dict[str, Any], list[str]]:
    """(profile, the value options set, the flags set) of a levelcheck command line; about half of
    them are allowed."""
    profile = draw(st.sampled_from(list(LEVELCHECK_PROFILES)) if draw(st.integers(0, 5)) else
                   st.sampled_from(PROFILES))
    options: dict[str, Any] = {}
    for flag, (mostly, rarely) in LEVELCHECK_VALUES.items():
        if draw(st.booleans()):
            bad = rarely and draw(st.integers(0, 9)) == 0
            options[flag] = draw(st.sampled_from(rarely if bad else mostly))
    if draw(st.booleans()):
        variant = LEVELCHECK_PROFILES.get(profile, "english")
        own = [v for v in (variant, f"{variant}-extended") if (DECK_FOLDER / f"{v}.json").is_file()]
        options["--deck"] = draw(st.sampled_from(own if draw(st.integers(0, 3)) else OTHER_DECKS))
    flags = [flag for flag in ("--in-process", "--address") if draw(st.integers(0, 3)) == 0]
    return profile, options, flags


def levelcheck_argv(profile: str, options: dict[str, Any], flags: list[str], output: str) -> list[str]:
    argv = ["levelcheck", profile, "--output", output]
    for flag, value in options.items():
        argv += [flag, str(value)]
    for flag in flags:
        argv += [flag, "127.0.0.1:1"] if flag == "--address" else [flag]
    return argv


def _deck_size(variant: str, name: str | None, part: str) -> int | None:
    """Openings of deck ``name`` (None: the variant's own) in ``part``, counted from the deck files;
    None when no deck of the variant has that name."""
    file = name or variant
    if file not in {path.stem for path in DECK_FOLDER.glob("*.json")}:
        return None
    doc = json.loads((DECK_FOLDER / f"{file}.json").read_text(encoding="utf-8"))
    if doc["variant"] != variant:
        return None
    kept = [o for o in doc["openings"] if not o.get("lost")]
    return len(kept if part == "all" else kept[0 if part == "even" else 1 :: 2])


def levelcheck_allowed(profile: str, options: dict[str, Any]) -> bool:
    """Whether levelcheck must get to its games: a profile that loads, openings at least 2 (each is
    played twice), ply cap at least 10, an even batch size of at least 2, at least 50 bootstrap
    resamples, a seed in [0, 2**63 - 1] (stored as int64), and a deck of the profile's variant
    whose part holds the openings."""
    if profile not in LEVELCHECK_PROFILES:
        return False
    defaults = {f.name: f.default for f in dataclasses.fields(LevelCheckSettings)}
    value = {flag: options.get(flag, defaults[flag[2:].replace("-", "_")])
             for flag in (*LEVELCHECK_VALUES, "--deck")}
    if (value["--openings"] < 2 or value["--ply-cap"] < 10 or value["--batch-size"] < 2
            or value["--batch-size"] % 2 or value["--bootstrap"] < 50
            or not 0 <= value["--seed"] <= 2**63 - 1):
        return False
    size = _deck_size(LEVELCHECK_PROFILES[profile], value["--deck"], value["--deck-part"])
    return size is not None and size >= value["--openings"]


@st.composite
def pipeline_argv(draw: st.DrawFn) -> list[str]:
    """A plausible pipeline command line (config files may be freshly mutated ones)."""
    verb = draw(st.sampled_from(PIPELINE_VERBS))
    if verb == "levelcheck":
        output = draw(st.sampled_from(["lc-shared", "lc-other", "", "good.json", "dir.json", "x" * 300]))
        return levelcheck_argv(*draw(levelcheck_settings()), output)
    if verb == "keys":
        return ["keys", *draw(st.sampled_from([[], ["config"], ["knobs"], ["features"], ["all"]]))]
    if verb == "match":
        argv = [
            "match",
            "--variant",
            draw(st.sampled_from(VARIANT_NAMES)),
            "--a",
            draw(st.sampled_from(SPECS)),
            "--b",
            draw(st.sampled_from(SPECS)),
            "--games",
            str(draw(st.sampled_from([2, 4, 20, 3, 0, -2]))),
        ]
        argv += draw(st.sampled_from([[], ["--seed", "7"], ["--ply-cap", "50"], ["--json"], ["--ray"]]))
        return argv
    if verb in ("export", "report"):
        argv = [verb, draw(st.sampled_from(["junk-run", "empty-run", "nope", "runs/junk-run", ""]))]
        return argv + draw(st.sampled_from([[], ["--output", "runs"], ["--output", "elsewhere"]]))
    config = draw(st.sampled_from(CONFIGS + ["fresh.toml"] * 4))
    if config == "fresh.toml":
        (WORK[0] / "fresh.toml").write_bytes(draw(mutated_configs()).encode("utf-8", "surrogatepass"))
    argv = [verb, config]
    argv += draw(
        st.sampled_from(
            [
                [],
                ["--output", "out"],
                ["--resume"],
                ["--in-process"],
                ["--no-progress"],
                ["--address", "127.0.0.1:1"],
                ["--output", ""],
            ]
        )
    )
    if verb != "selfplay":
        argv += draw(
            st.sampled_from([[], ["--storage", "journal.log"], ["--tracking-uri", "sqlite:///m.db"]])
        )
    return argv


def huge_games(argv: list[str]) -> bool:
    """Whether a command asks for so many games that planning alone is slow (known bug)."""
    try:
        if "match" in argv and "--games" in argv:
            return abs(int(argv[argv.index("--games") + 1])) > HUGE_GAMES
        for token in argv:
            if token.endswith(".toml") and (WORK[0] / token).is_file():
                games = tomllib.loads((WORK[0] / token).read_text(encoding="utf-8")).get("selfplay", {})
                if (
                    isinstance(games, dict)
                    and isinstance(games.get("games"), int)
                    and games["games"] > HUGE_GAMES
                ):
                    return True
    except (ValueError, IndexError, RecursionError, OSError, AttributeError):
        return False
    return False


def pipeline_check(argv: list[str]) -> tuple[Any, str, str]:
    if huge_games(argv):
        known("huge-games")
        return None, "", ""
    bugs = ("recursion", "name-too-long")
    return check_cli("pipeline-cli", pipeline.cli.main.main, argv, known_bugs=bugs)


pipeline_soup = st.lists(
    st.one_of(st.sampled_from(PIPELINE_WORDS), st.integers(-3, 40).map(str), weird_token), max_size=10
)


@fuzz_settings(150)
@given(argv=pipeline_soup)
def test_pipeline_random_argv(argv: list[str]) -> None:
    pipeline_check(argv)


@fuzz_settings(150)
@given(data=st.data())
def test_pipeline_mutated_argv(data: st.DataObject) -> None:
    argv = data.draw(pipeline_argv(), label="valid-ish argv")
    pipeline_check(data.draw(mutate_list(argv, _argv_token(st.sampled_from(PIPELINE_WORDS))), label="argv"))


@fuzz_settings(100)
@given(argv=pipeline_argv())
def test_pipeline_plausible_argv(argv: list[str]) -> None:
    status, _, _ = pipeline_check(argv)
    if argv[:1] == ["match"] and status == "accepted":
        games = int(argv[argv.index("--games") + 1])
        assert games > 0 and games % 2 == 0, f"{argv!r} got past validation"


FRESH = "<fresh folder>"


@st.composite
def levelcheck_cases(draw: st.DrawFn) -> tuple[str, dict[str, Any], list[str]]:
    """(profile, value options, argv) of a levelcheck with its options in a random order; the
    output folder is :data:`FRESH`, for the test to fill in."""
    profile, options, flags = draw(levelcheck_settings())
    return profile, options, _shuffle_options(draw, levelcheck_argv(profile, options, flags, FRESH))


@fuzz_settings(100)
@given(case=levelcheck_cases())
def test_levelcheck_argv(case: tuple[str, dict[str, Any], list[str]]) -> None:
    """A levelcheck in a fresh folder gets to its games exactly when its settings are allowed;
    otherwise one error line, exit 2."""
    profile, options, argv = case
    argv = [f"lc/{next(_FOLDER_NUMBERS)}" if token == FRESH else token for token in argv]
    status, _, err = pipeline_check(argv)
    if status is None:  # a known bug
        return
    allowed = levelcheck_allowed(profile, options)
    assert status == ("accepted" if allowed else 2), f"{argv!r}: {status!r} {err!r:.300}"


# ---- known bugs, in-process -------------------------------------------------------------------------


def test_regression_engine_cli_fen_with_huge_square_number() -> None:
    status, _, err = run_cli(
        engine.cli.main, ["moves", "--variant", "english", "--fen", "W:W" + "1" * 4301 + ":B1"]
    )
    assert status == 2 and err.startswith("error: ")


def test_regression_pipeline_cli_inline_spec_deep_json() -> None:
    argv = ["match", "--variant", "english", "--a", "inline:x:" + "[" * 3000, "--b", "random", "--games", "2"]
    status, _, _ = run_cli(pipeline.cli.main.main, argv)
    assert status == 2


def test_regression_pipeline_cli_deeply_nested_config() -> None:
    status, _, _ = run_cli(pipeline.cli.main.main, ["selfplay", "deep.toml"])
    assert status == 2


def test_regression_huge_game_count_hangs_before_validation() -> None:
    # beyond the bound: refused at once; at the bound: the bad player is reported before planning
    for games, needle in ((10**12, "games"), (10**8, "missing.json")):
        argv = ["match", "--variant", "english", "--a", "random", "--b", "missing.json:easy",
                "--games", str(games)]
        with fuzz_case("pipeline-cli", show=argv, seconds=1.0):
            status, _, err = run_cli(pipeline.cli.main.main, argv)
        assert status == 2 and needle in err


def test_regression_pipeline_cli_name_too_long() -> None:
    status, _, _ = run_cli(pipeline.cli.main.main, ["export", "x" * 300])
    assert status == 2


# ---- subprocess checks: nothing reaches stderr as a traceback -------------------------------------------


def _subprocess(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=WORK[0],
        env=env,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("engine", "perft", "--variant", "chess", "--depth", "1"),
        ("engine", "bestmove", "--variant", "english", "--level", "hard", "--profile", "deep.json"),
        ("pipeline", "match", "--variant", "english", "--a", "x y", "--b", "random", "--games", "2"),
    ],
    ids=["engine-variant", "engine-deep-profile", "pipeline-spec"],
)
def test_subprocess_bad_input_has_no_traceback(args: tuple[str, ...]) -> None:
    done = _subprocess(*args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error: ")


def test_regression_subprocess_engine_traceback() -> None:
    done = _subprocess("engine", "moves", "--variant", "english", "--fen", "W:W" + "1" * 4301 + ":B1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
