"""Machinery shared by the fuzz suite: example counts, per-case time limits, case counting.

Every property runs its body inside :func:`fuzz_case`, which

- counts the case under its parser's name (``COUNTS``; written to ``$FUZZ_COUNTS_FILE`` as JSON at
  the end of the session and printed in the terminal summary), so experiments/fuzz/run_long.py can
  report exactly how many inputs each parser saw;
- arms a SIGALRM timer (``$FUZZ_CASE_SECONDS``, default 2 s; more for the command lines) that turns
  a hang into a :class:`CaseTimeout` failure quoting the input; a per-test faulthandler watchdog
  (``$FUZZ_HARD_SECONDS``) kills the process with a traceback if native code (numba) never returns;
- honours a time budget (``$FUZZ_STOP_AT``, epoch seconds, set by run_long.py): each test gets an
  equal share of the remaining time and is skipped once its share is used up.

``FUZZ_EXAMPLES=N`` sets ``max_examples`` of every property (defaults keep the whole suite under a
minute). Hypothesis ``deadline`` is off on purpose: the alarm is the hang detector, and deadlines
are flaky on a shared 2-core machine.

Known bugs (reported to the lead, each pinned by a strict xfail test) are listed in
:data:`KNOWN_BUGS`. A property that hits one records it (``COUNTS['known bug: NAME']``) and moves on,
so the suite stays green while the bug is open; every other undocumented exception fails.
"""

from __future__ import annotations

import collections
import contextlib
import faulthandler
import json
import os
import random
import signal
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]

_ENV_CASE_SECONDS = float(os.environ.get("FUZZ_CASE_SECONDS", "0") or 0)
CASE_SECONDS = _ENV_CASE_SECONDS or 2.0
HARD_SECONDS = float(os.environ.get("FUZZ_HARD_SECONDS", "900"))
_STOP_AT = float(os.environ.get("FUZZ_STOP_AT", "0") or 0)

#: cases run per parser (and known-bug hits), for run_long.py and the terminal summary
COUNTS: collections.Counter[str] = collections.Counter()


def examples(default: int) -> int:
    """``max_examples`` of one property: ``$FUZZ_EXAMPLES`` when set, else ``default``."""
    raw = os.environ.get("FUZZ_EXAMPLES", "").strip()
    return max(1, int(raw)) if raw else default


def fuzz_settings(default_examples: int = 100) -> settings:
    """Settings of a fuzz property: example count from the environment, no deadline, no health
    checks that complain about slow or filtered data (the inputs are big on purpose)."""
    return settings(
        max_examples=examples(default_examples),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


# ---- per-case limits ----------------------------------------------------------------------------


class CaseTimeout(Exception):
    """A single fuzz case ran past its time limit (a hang, or quadratic blow-up)."""


_item_deadline = 0.0  # epoch seconds after which the current test stops (0: no budget)


def _short(value: object, limit: int = 300) -> str:
    try:
        text = repr(value)
    except ValueError:  # ints too long for repr
        text = f"<{type(value).__name__} too long to print>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


@contextlib.contextmanager
def fuzz_case(parser: str, show: object = None, seconds: float | None = None) -> Iterator[None]:
    """Run one case of ``parser``: count it, and fail with CaseTimeout if it runs too long."""
    if _item_deadline and time.time() > _item_deadline:
        pytest.skip("fuzz time budget of this test used up (FUZZ_STOP_AT)")
    COUNTS[parser] += 1
    limit = CASE_SECONDS if seconds is None else max(seconds, _ENV_CASE_SECONDS)

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise CaseTimeout(f"{parser}: one case took more than {limit:g} s; input {_short(show)}")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def outcome(kind: str, detail: str = "") -> None:
    """Label the case for ``--hypothesis-show-statistics`` (accepted / rejected: ErrorType)."""
    event(f"{kind}{': ' + detail if detail else ''}")


# ---- known bugs ---------------------------------------------------------------------------------


def _int_digits(err: BaseException) -> bool:
    return type(err) is ValueError and "integer string conversion" in str(err)


#: name -> (matches the exception, what it is). Each has a strict xfail test naming it.
KNOWN_BUGS: dict[str, tuple[Callable[[BaseException], bool], str]] = {
    "int-digits": (
        _int_digits,
        "a number of more than 4300 digits raises a bare ValueError (int() digit limit), "
        "not the parser's documented error",
    ),
    "recursion": (
        lambda err: isinstance(err, RecursionError),
        "deeply nested TOML (or inline player-spec JSON) raises RecursionError",
    ),
    "config-bytes": (
        lambda err: isinstance(err, UnicodeDecodeError),
        "a config file that is not UTF-8 raises UnicodeDecodeError, not ConfigError",
    ),
    "dollar-newline": (
        lambda err: False,
        "a '$' regex anchor accepts a trailing newline: move token '11\\n' in '11\\n-15', "
        "config identifiers 'abc\\n'",
    ),
    "pdn-result": (
        lambda err: False,
        "a Result tag value is taken as the result of an unfinished game without validation",
    ),
    "huge-games": (
        lambda err: False,
        "match/selfplay plan all batches (O(games)) before validating players: a huge game count "
        "hangs (such cases are skipped, not run)",
    ),
    "name-too-long": (
        lambda err: isinstance(err, OSError) and err.errno == 36,
        "a path component over 255 bytes (export/report RUN, --output) raises OSError "
        "ENAMETOOLONG out of pipeline.cli.main.main",
    ),
    "config-newlines": (
        lambda err: False,
        "load_config reads with universal newlines: a bare CR (invalid TOML) is accepted, and a CR in a "
        "multi-line string becomes LF",
    ),
    "nul-path": (
        lambda err: type(err) is ValueError and "null byte" in str(err),
        "a path with a NUL byte raises a bare ValueError from open()",
    ),
}


def known(name: str) -> None:
    """Record a hit of known bug ``name`` found by a property check rather than an exception."""
    assert name in KNOWN_BUGS
    COUNTS[f"known bug: {name}"] += 1
    event(f"known bug: {name}")


def tolerate(err: BaseException, *names: str) -> bool:
    """Whether ``err`` is one of the known bugs ``names`` (then it is counted, not failed)."""
    for name in names:
        matches, _ = KNOWN_BUGS[name]
        if matches(err):
            COUNTS[f"known bug: {name}"] += 1
            event(f"known bug: {name}")
            return True
    return False


def undocumented(parser: str, err: BaseException, show: object) -> NoReturn:
    """Fail because an exception outside the documented types escaped (a timeout stays itself)."""
    if isinstance(err, CaseTimeout):
        raise err
    raise AssertionError(
        f"{parser}: undocumented exception {type(err).__name__}: {_short(str(err), 200)} "
        f"for input {_short(show)}"
    ) from err


# ---- pytest hooks -------------------------------------------------------------------------------

def _is_fuzz(item: pytest.Item) -> bool:
    return Path(item.path).parent == Path(__file__).parent


@pytest.fixture(autouse=True)
def _fuzz_budget_and_watchdog(request: pytest.FixtureRequest) -> Iterator[None]:
    """Give the test its share of ``$FUZZ_STOP_AT`` and a native-hang watchdog."""
    global _item_deadline
    item = request.node
    if _STOP_AT:
        selected = [i for i in request.session.items if _is_fuzz(i)]  # after -k / -m deselection
        remaining = len(selected) - selected.index(item) if item in selected else 1
        _item_deadline = time.time() + max(0.0, _STOP_AT - time.time()) / max(1, remaining)
    faulthandler.dump_traceback_later(HARD_SECONDS, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        _item_deadline = 0.0


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if COUNTS:
        parts = ", ".join(f"{name}={count}" for name, count in sorted(COUNTS.items()))
        terminalreporter.write_line(f"fuzz cases: {parts}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get("FUZZ_COUNTS_FILE")
    if target:
        Path(target).write_text(json.dumps(dict(COUNTS), sort_keys=True, indent=2) + "\n", encoding="utf-8")


# ---- shared strategies --------------------------------------------------------------------------

#: number-ish replacements: huge, negative, float, NaN, bool, other scripts' digits
WEIRD_NUMBERS: tuple[str, ...] = (
    "0", "-1", "-0", "00", "007", "+5", "1.5", "1e3", "1E-3", "-2.5e10", ".5", "5.", "NaN", "nan", "inf",
    "-inf", "Infinity", "-Infinity", "true", "false", "null", "None", "0x1F", "0o17", "0b101", "1_000",
    "9" * 19, str(2**63), str(2**64), str(10**30), "9" * 400, "1" * 4301, "\uff15", "\u0661\u0662", "\u00b2",
    "\u2167", "\u09e7", "\U0001d7d9", "1\u200b2", "1\u00a02", "\u221e", "-\u221e", "1/2",
)
#: text replacements: empty, whitespace, controls, bidi, surrogates, quotes, separators
WEIRD_TEXT: tuple[str, ...] = (
    "", " ", "  ", "\t", "\n", "\r", "\r\n", "\x00", "\x0b", "\x1c", "\x85", "\u2028", "\u3000", "\ufeff",
    "\u202e", "\ud800", "\udfff", "\U0001f600", "e\u0301", "\u0130", "K", "k", "W", "B", "x", "X", "-", ":",
    ",", ".", ";", '"', "'", "\\", "[", "]", "{", "}", "(", ")", "=", "#", "$", "*", "!", "?", "--",
)

weird_token = st.one_of(
    st.sampled_from(WEIRD_NUMBERS),
    st.sampled_from(WEIRD_TEXT),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6),
    st.text(alphabet=st.characters(codec=None), max_size=3),  # lone surrogates included
)

MAX_TEXT = 100_000  # longest mutated text (a long input, not a memory test)
MUTATIONS = ("drop", "duplicate", "swap", "replace", "insert", "swapcase", "repeat", "char", "strip")


@st.composite
def mutate_list(
    draw: st.DrawFn, tokens: list[str], replacement: st.SearchStrategy[str] = weird_token, max_ops: int = 3
) -> list[str]:
    """``tokens`` after 1..max_ops mutations: drop, duplicate, swap, replace, insert, change case,
    repeat (very long strings), insert a character, strip whitespace."""
    toks = list(tokens)
    for _ in range(draw(st.integers(1, max_ops))):
        if not toks:
            toks.append(draw(replacement))
            continue
        op = draw(st.sampled_from(MUTATIONS))
        i = draw(st.integers(0, len(toks) - 1))
        if op == "drop":
            del toks[i]
        elif op == "duplicate":
            toks.insert(i, toks[i])
        elif op == "swap":
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
        elif op == "replace":
            toks[i] = draw(replacement)
        elif op == "insert":
            toks.insert(i, draw(replacement))
        elif op == "swapcase":
            toks[i] = toks[i].swapcase()
        elif op == "repeat":  # long input, capped so that the whole text stays under MAX_TEXT
            times = draw(st.sampled_from([2, 3, 10, 1000, 20000]))
            room = MAX_TEXT - sum(map(len, toks))
            toks[i] = toks[i] * max(1, min(times, room // max(1, len(toks[i]))))
        elif op == "char":
            at = draw(st.integers(0, len(toks[i])))
            toks[i] = toks[i][:at] + draw(st.characters(codec=None)) + toks[i][at:]
        else:
            toks[i] = toks[i].strip()
    return toks


def mutate_tokens(
    tokens: list[str], replacement: st.SearchStrategy[str] = weird_token, max_ops: int = 3
) -> st.SearchStrategy[str]:
    """Text made of ``tokens`` after :func:`mutate_list`."""
    return mutate_list(tokens, replacement, max_ops).map("".join)


# ---- reachable positions ------------------------------------------------------------------------


@cache
def reachable_boards(
    variant_name: str, games: int = 8, max_plies: int = 90, every: int = 3
) -> tuple[Any, ...]:
    """Boards met in seeded random games of ``variant_name`` (each with its move history)."""
    from engine.board import Board

    rng = random.Random(f"fuzz-{variant_name}")
    found = []
    for _ in range(games):
        board = Board(variant_name)
        for ply in range(max_plies):
            moves = board.legal_moves
            if not moves or board.is_game_over():
                break
            if ply % every == 0 or any(len(m.path) > 2 for m in moves):
                found.append(board.copy())
            board.push(rng.choice(moves))  # captures are forced, so they come up often
        found.append(board.copy())
    return tuple(found)
