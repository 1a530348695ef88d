"""``python -m engine``: perft and moves verbs, JSON output, one-line errors with exit 2."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys

import pytest

from engine import cli


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_perft_json_subprocess() -> None:
    done = run("perft", "--variant", "english", "--depth", "3", "--json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert report["variant"] == "english" and report["depth"] == 3 and report["nodes"] == 302
    assert isinstance(report["seconds"], float) and report["seconds"] >= 0
    assert report["mode"] == "kernel" and report["bulk"] is True
    assert "nps" in report and report["fen"].startswith("B:W21,")


def test_moves_json_subprocess() -> None:
    done = run("moves", "--variant", "english", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    pdns = [m["pdn"] for m in payload["moves"]]
    assert pdns == sorted(pdns) == ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"]
    assert payload["moves"][0] == {"pdn": "10-14", "path": [10, 14], "captures": []}


@pytest.mark.parametrize(
    "args",
    [
        ("perft", "--variant", "nope", "--depth", "3"),
        ("perft", "--variant", "english", "--depth", "-1"),
        ("perft", "--variant", "english", "--depth", "three"),
        ("perft", "--variant", "english", "--depth", "2", "--fen", "B:W33:B1"),
        ("moves", "--variant", "english", "--fen", "W:W1:B5"),
        ("moves", "--variant", "english", "--fen", "garbage"),
        ("moves", "--fen", "B:W21:B1"),
        ("frobnicate",),
        (),
    ],
)
def test_bad_input_subprocess(args: tuple[str, ...]) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


# -- in-process (fast) ---------------------------------------------------------------------------
def main_output(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("variant", "depth", "nodes"),
    [("english", 4, 1469), ("suicide", 4, 1469), ("brazilian", 5, 7473), ("russian", 5, 7482),
     ("international", 3, 658), ("english", 0, 1)],
)
def test_perft_counts(capsys: pytest.CaptureFixture[str], variant: str, depth: int, nodes: int) -> None:
    for extra in ((), ("--full",)):
        args = ("perft", "--variant", variant, "--depth", str(depth), "--json", *extra)
        code, out, _ = main_output(capsys, *args)
        assert code == 0
        report = json.loads(out)
        assert report["nodes"] == nodes
        assert report["bulk"] is (not extra)


@pytest.mark.skipif(importlib.util.find_spec("engine.batch.perft") is None, reason="no batch perft yet")
def test_perft_batch_mode(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("perft", "--variant", "english", "--depth", "4", "--mode", "batch", "--json")
    code, out, _ = main_output(capsys, *args)
    assert code == 0
    report = json.loads(out)
    assert (report["mode"], report["nodes"]) == ("batch", 1469)


def test_perft_from_fen_and_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("perft", "--variant", "russian", "--depth", "1", "--fen", "W:WK31:B7,18,9,22")
    code, out, _ = main_output(capsys, *args)
    assert code == 0 and "4 nodes" in out
    code, out, _ = main_output(
        capsys, "perft", "--variant", "brazilian", "--depth", "1", "--fen", "W:WKe1:Be7,b6,d4,c3", "--json"
    )
    assert json.loads(out)["nodes"] == 3
    assert json.loads(out)["fen"] == "W:WK31:B7,9,18,22"


def test_moves_json_capture_paths(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("moves", "--variant", "english", "--fen", "W:WK26:B14,15,22,23", "--json")
    code, out, _ = main_output(capsys, *args)
    assert code == 0
    assert json.loads(out) == {
        "moves": [
            {"pdn": "26x17x10x19x26", "path": [26, 17, 10, 19, 26], "captures": [14, 15, 22, 23]},
            {"pdn": "26x19x10x17x26", "path": [26, 19, 10, 17, 26], "captures": [14, 15, 22, 23]},
        ]
    }


def test_moves_sorted_as_plain_strings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = main_output(capsys, "moves", "--variant", "russian", "--fen", "W:WK29:B15", "--json")
    assert code == 0
    assert [m["pdn"] for m in json.loads(out)["moves"]] == ["29x11", "29x4", "29x8"]


def test_moves_text_numeric_and_algebraic(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = main_output(capsys, "moves", "--variant", "brazilian")
    assert out.split() == sorted(out.split()) and "22-18" in out.split()
    args = ("moves", "--variant", "brazilian", "--fen", "W:W22:BK17,18,11", "--algebraic")
    code, out, _ = main_output(capsys, *args)
    assert out.split() == ["c3xe5xg7"]
    code, out, err = main_output(capsys, "moves", "--variant", "english", "--algebraic")
    assert code == 2 and "algebraic" in err


def test_moves_no_legal_moves(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = main_output(capsys, "moves", "--variant", "english", "--fen", "B:W29,30:B25", "--json")
    assert (code, json.loads(out)) == (0, {"moves": []})


@pytest.mark.parametrize(
    ("args", "quoted"),
    [
        (("perft", "--variant", "nope", "--depth", "3"), "'nope'"),
        (("perft", "--variant", "english", "--depth", "-4"), "-4"),
        (("perft", "--variant", "english", "--depth", "1.5"), "'1.5'"),
        (("perft", "--variant", "english", "--depth", "2", "--mode", "gpu"), "'gpu'"),
        (("perft", "--variant", "english", "--depth", "2", "--fen", "B:W21:B21"), "'B:W21:B21'"),
        (("moves", "--variant", "english", "--fen", "Q:W21:B1"), "'Q:W21:B1'"),
        (("moves", "--variant", "international", "--fen", "W:W50,51:B1"), "'W:W50,51:B1'"),
        (("moves", "--variant", "brazilian", "--fen", "W:Wa2:B1"), "'a2'"),
        (("moves",), "--variant"),
        (("perft", "--variant", "english"), "--depth"),
    ],
)
def test_bad_input_one_line(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], quoted: str) -> None:
    code, out, err = main_output(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert quoted in err


def test_registry_accepts_new_verbs(capsys: pytest.CaptureFixture[str]) -> None:
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--name", required=True)

    def run_hello(args: argparse.Namespace) -> int:
        print(f"hello {args.name}")
        return 0

    saved = list(cli.COMMANDS)
    try:
        cli.register(cli.Command("hello", "say hello", add_arguments, run_hello))
        assert main_output(capsys, "hello", "--name", "x")[:2] == (0, "hello x\n")
        code, _, err = main_output(capsys, "hello")
        assert code == 2 and "--name" in err
    finally:
        cli.COMMANDS[:] = saved
