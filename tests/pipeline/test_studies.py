"""Optuna studies on real storages: journal file, sqlite URL and (when installed) PostgreSQL.

The resume tests run a real driver in a subprocess (this module run with ``python -m``): a small
ask/tell loop on a quadratic of engine-declared parameters. The first driver hangs inside a
chosen trial and is SIGKILLed there; a second driver resumes the study to its target.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import optuna
import pytest
from optuna.trial import TrialState

from pipeline.config.run_config import parse_config
from pipeline.config.tracking_sections import OptunaSection, optuna_section
from pipeline.games.stopping import stop_on_interrupt
from pipeline.tuning.studies import (
    ParamSpec,
    StorageUnavailable,
    StudyError,
    ask_trial,
    check_storage,
    count_complete,
    default_storage,
    describe_storage,
    make_storage,
    open_study,
    remaining_trials,
    report_pairs,
    sampler_seed,
    space_from_engine,
    split_params,
    tell_trial,
    wilcoxon_pruner,
)

from .pg_server import throwaway_postgres

REPO = Path(__file__).resolve().parents[2]
TARGET = 8
HANG_AT = 4  # trial number at which the first driver hangs and is killed


def driver_space() -> list[ParamSpec]:
    return space_from_engine(["max_depth", "node_budget", "quiescence"], ["man", "king"],
                             ranges={"weight.man": (50.0, 150.0), "weight.king": (100.0, 400.0)})


def quadratic(params: dict) -> float:
    """A dummy-but-real objective: minimum at depth 8, 10^4 nodes, man 100, king 250, quiescence on."""
    knobs, weights = split_params(params)
    return ((knobs["max_depth"] - 8) ** 2 / 64 + (math.log10(knobs["node_budget"]) - 4) ** 2
            + (weights["man"] - 100) ** 2 / 1e4 + (weights["king"] - 250) ** 2 / 1e4
            + (0.0 if knobs["quiescence"] else 1.0))


def driver_main(argv: list[str] | None = None) -> None:
    """The driver process: own the study, ask/tell until TARGET complete trials."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--storage", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hang-at", type=int, default=-1)
    args = ap.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = open_study("resume-test", args.storage, run_seed=7, direction="minimize", n_startup_trials=3)
    space = driver_space()
    while remaining_trials(study, TARGET) > 0:
        trial, params = ask_trial(study, space)
        if trial.number == args.hang_at:
            Path(args.out + ".hanging").write_text(str(trial.number))
            time.sleep(600)  # killed here by the test
        value = quadratic(params)
        tell_trial(study, trial, value)
        with open(args.out, "a") as out:
            out.write(json.dumps({"number": trial.number, "params": params, "value": value}) + "\n")


def _run_driver(storage: str, out: Path, hang_at: int = -1) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "tests.pipeline.test_studies", "--storage", storage, "--out", str(out),
           "--hang-at", str(hang_at)]
    return subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _kill_resume_and_check(storage: str, tmp_path: Path) -> None:
    out = tmp_path / "told.jsonl"
    first = _run_driver(storage, out, hang_at=HANG_AT)
    marker = Path(str(out) + ".hanging")
    try:
        deadline = time.monotonic() + 180
        while not marker.exists():
            if first.poll() is not None:
                pytest.fail(f"driver ended early: {first.stdout.read().decode() if first.stdout else ''}")
            if time.monotonic() > deadline:
                pytest.fail("driver never reached the trial to kill")
            time.sleep(0.1)
        first.send_signal(signal.SIGKILL)
    finally:
        with contextlib.suppress(ProcessLookupError):
            first.kill()
        first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL

    before = optuna.load_study(study_name="resume-test", storage=_storage_obj(storage, tmp_path))
    states = {t.number: t.state for t in before.get_trials()}
    assert states[HANG_AT] == TrialState.RUNNING and count_complete(before) == HANG_AT
    killed_params = before.trials[HANG_AT].params
    done_before = before.get_trials(states=(TrialState.COMPLETE,))
    completed_before = {t.number: (t.params, t.value) for t in done_before}

    second = _run_driver(storage, out)
    text, _ = second.communicate(timeout=300)
    assert second.returncode == 0, text.decode()

    after = optuna.load_study(study_name="resume-test", storage=_storage_obj(storage, tmp_path))
    trials = after.get_trials()
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(complete) == TARGET and count_complete(after) == TARGET
    assert after.trials[HANG_AT].state == TrialState.FAIL  # the killed trial: failed, never counted
    for number, (params, value) in completed_before.items():  # finished trials kept as they were
        assert (after.trials[number].params, after.trials[number].value) == (params, value)
    retries = [t for t in trials if t.user_attrs.get("retry_of") == HANG_AT]
    assert len(retries) == 1 and retries[0].state == TrialState.COMPLETE
    assert retries[0].params == killed_params and retries[0].user_attrs["retry_attempt"] == 1
    told = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["number"] for r in told) == sorted(t.number for t in complete)  # each told once
    assert all(t.state in (TrialState.COMPLETE, TrialState.FAIL) for t in trials)
    assert [t.number for t in trials if t.state == TrialState.FAIL] == [HANG_AT]
    # opening again: nothing to recover, nothing more to do
    again = open_study("resume-test", _storage_obj(storage, tmp_path), run_seed=7, direction="minimize")
    assert remaining_trials(again, TARGET) == 0 and len(again.trials) == len(trials)


def _storage_obj(storage: str, tmp_path: Path) -> optuna.storages.BaseStorage:
    return check_storage(storage, tmp_path)


# ---- fast: space, seeds, storage checks, pruning --------------------------------------------


def test_space_from_engine_declarations() -> None:
    space = {p.name: p for p in space_from_engine()}
    assert space["node_budget"].kind == "int" and space["node_budget"].log  # 100..2e7: log scale
    assert not space["max_depth"].log and space["quiescence"].kind == "bool"
    assert space["weight.man"].kind == "float" and (space["weight.man"].low, space["weight.man"].high) == (
        -300.0, 300.0)
    narrowed = space_from_engine(["node_budget"], [], ranges={"node_budget": (1000, 5000)}, log=[])
    assert narrowed == [ParamSpec("node_budget", "int", 1000.0, 5000.0, log=False)]
    with pytest.raises(StudyError, match="unknown engine knob 'depth'"):
        space_from_engine(["depth"])
    with pytest.raises(StudyError, match="outside its declared range"):
        space_from_engine(["max_depth"], [], ranges={"max_depth": (0, 10)})
    with pytest.raises(StudyError, match="log scale needs low > 0"):
        ParamSpec("x", "float", 0.0, 1.0, log=True)
    assert split_params({"max_depth": 3, "weight.man": 90}) == ({"max_depth": 3}, {"man": 90.0})


def test_sampler_seed_depends_on_history() -> None:
    assert sampler_seed(1, "s", 5) == sampler_seed(1, "s", 5)
    assert len({sampler_seed(1, "s", n) for n in range(50)}) == 50
    assert sampler_seed(1, "s", 0) != sampler_seed(2, "s", 0) != sampler_seed(1, "t", 0)


def test_optuna_section_defaults() -> None:
    base = {"run": {"name": "t"}, "selfplay": {"variant": "english", "player_a": "random",
                                              "player_b": "random", "games": 8}}
    assert optuna_section(parse_config(base)) == OptunaSection()
    other_storage = parse_config({**base, "optuna": {"storage": "sqlite:///x.db"}})
    assert other_storage.config_hash() == parse_config({**base, "optuna": {}}).config_hash()
    assert parse_config({**base, "optuna": {"n_trials": 9}}).config_hash() != other_storage.config_hash()
    with pytest.raises(ValueError, match=r"optuna\.pruner = 'sha'"):
        parse_config({**base, "optuna": {"pruner": "sha"}})


def test_check_storage_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(StorageUnavailable, match=r"nosuchdb://\S* is unusable"):
        check_storage("nosuchdb://host/db")
    with pytest.raises(StorageUnavailable, match="does not exist"):
        check_storage(f"sqlite:///{tmp_path}/missing/dir/optuna.db")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StorageUnavailable, match="journal file"):
        check_storage(str(blocker / "journal.log"))
    dead = f"postgresql://user:s3cret@127.0.0.1:{_free_port()}/db"
    start = time.monotonic()
    with pytest.raises(StorageUnavailable) as err:
        check_storage(dead)
    assert time.monotonic() - start < 15
    assert "s3cret" not in str(err.value) and "127.0.0.1" in str(err.value)
    assert describe_storage(dead) == dead.replace("s3cret", "***")
    assert check_storage(None, tmp_path) is not None
    assert Path(default_storage(tmp_path)).parent.is_dir()


def test_journal_study_resumes_by_name(tmp_path: Path) -> None:
    storage = default_storage(tmp_path)
    space = [ParamSpec("x", "float", -2.0, 2.0), ParamSpec("c", "categorical", choices=("a", "b"))]
    study = open_study("s", storage, run_seed=3, direction="minimize")
    for _ in range(3):
        trial, params = ask_trial(study, space)
        tell_trial(study, trial, params["x"] ** 2)
    again = open_study("s", storage, run_seed=3, direction="minimize")
    assert count_complete(again) == 3 and remaining_trials(again, 5) == 2
    with pytest.raises(StudyError, match="directions"):
        open_study("s", storage, run_seed=3, direction="maximize")


def test_wilcoxon_pruner_stops_a_clearly_worse_trial(tmp_path: Path) -> None:
    study = open_study("prune", default_storage(tmp_path), run_seed=1, direction="maximize",
                       pruner=wilcoxon_pruner(p_threshold=0.05, n_startup_steps=5))
    rng = np.random.default_rng(0)
    pair_values = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    good = rng.choice(pair_values, size=60, p=[0.02, 0.08, 0.2, 0.4, 0.3])
    bad = rng.choice(pair_values, size=60, p=[0.3, 0.4, 0.2, 0.08, 0.02])
    space = [ParamSpec("x", "float", 0.0, 1.0)]
    trial, _ = ask_trial(study, space)
    assert report_pairs(trial, enumerate(good)) is None
    tell_trial(study, trial, float(good.mean()))
    trial, _ = ask_trial(study, space)
    steps = list(enumerate(bad))
    stopped = report_pairs(trial, steps)
    assert stopped is not None and 5 <= stopped < 59
    played = bad[: stopped + 1]
    done = tell_trial(study, trial, float(played.mean()), pruned_at_step=stopped)
    assert done.state == TrialState.COMPLETE
    assert done.user_attrs == {"pruned": True, "pruned_at_step": stopped}
    assert study.best_trial.number == 0 and count_complete(study) == 2


# ---- kill the driver, resume ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_killed_driver_resumes_to_target(kind: str, tmp_path: Path) -> None:
    storage = str(tmp_path / "journal.log") if kind == "journal" else f"sqlite:///{tmp_path / 'optuna.db'}"
    _kill_resume_and_check(storage, tmp_path)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_killed_driver_resumes_on_postgresql(tmp_path: Path) -> None:
    # not under tmp_path: pytest makes that 0700 for root, and the server runs as user postgres
    root = Path(tempfile.mkdtemp(prefix="pg", dir="/tmp"))
    try:
        with throwaway_postgres(root) as url:
            _kill_resume_and_check(url, tmp_path)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    driver_main()


# ---- ownership: a study belongs to one output folder ------------------------------------------


def test_a_study_of_another_output_folder_is_refused_naming_both(tmp_path: Path) -> None:
    from pipeline.tuning.studies import StudyOwnerError, check_owners

    url = f"sqlite:///{tmp_path}/shared.db"
    first = open_study("cfg-tune", url, run_seed=1, owner="/runs/a/cfg")
    assert first.user_attrs["output_folder"] == "/runs/a/cfg"
    trial = first.ask()
    first.tell(trial, 0.5)
    storage = make_storage(url)
    check_owners(storage, ["cfg-tune", "cfg-calibrate-easy"], "/runs/a/cfg", "db")  # its own: fine
    with pytest.raises(StudyOwnerError) as caught:
        check_owners(storage, ["cfg-tune"], "/runs/b/cfg", "db")
    text = str(caught.value)
    assert "belongs to output folder /runs/a/cfg, not /runs/b/cfg" in text
    assert "--resume --output /runs/a" in text
    with pytest.raises(StudyOwnerError, match="belongs to output folder /runs/a/cfg"):
        open_study("cfg-tune", url, run_seed=1, owner="/runs/b/cfg")
    again = open_study("cfg-tune", url, run_seed=1, owner="/runs/a/cfg")  # resuming its own folder
    assert len(again.get_trials()) == 1
    # a study with trials and no owner on record cannot be told apart from another run's
    optuna.create_study(storage=url, study_name="orphan").tell(optuna.load_study(
        study_name="orphan", storage=url).ask(), 1.0)
    with pytest.raises(StudyOwnerError, match="no recorded output folder"):
        check_owners(make_storage(url), ["orphan"], "/runs/b/cfg", "db")


def test_ctrl_c_while_the_journal_releases_its_lock_is_an_interrupt(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Optuna releases the journal's lock by renaming the lock file then unlinking it; a Ctrl-C
    just after the unlink made the release unlink again and raise FileNotFoundError, which
    hid the interrupt (the job said "the run stopped" instead of "interrupted")."""
    journal = tmp_path / "journal.log"
    storage = make_storage(str(journal))
    unlink = os.unlink

    def unlink_then_interrupt(path: str) -> None:
        unlink(path)
        if str(path).endswith(".rename"):
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs as this call returns

    monkeypatch.setattr(os, "unlink", unlink_then_interrupt)
    with pytest.raises(KeyboardInterrupt) as caught, stop_on_interrupt():
        storage.create_new_study([optuna.study.StudyDirection.MAXIMIZE], "held")
    assert type(caught.value) is KeyboardInterrupt and caught.value.__context__ is None
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["journal.log"]  # no lock or rename file left
    assert [s.study_name for s in make_storage(str(journal)).get_all_studies()] == ["held"]
