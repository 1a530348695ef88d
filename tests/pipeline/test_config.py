"""Strict run-config validation and the config hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config.run_config import (
    MAX_CONFIG_BYTES,
    ConfigError,
    describe_sections,
    load_config,
    parse_config,
)

from .conftest import SMOKE

BASE = {
    "run": {"name": "t", "seed": 3},
    "selfplay": {"variant": "english", "player_a": "random", "player_b": "random", "games": 8},
}


def _with(section: str, **values: object) -> dict:
    raw = {k: dict(v) for k, v in BASE.items()}
    raw.setdefault(section, {}).update(values)
    return raw


def test_smoke_config_loads() -> None:
    config = load_config(SMOKE)
    assert config.selfplay.games == 40 and config.selfplay.batch_size == 10
    assert config.run_id.startswith("smoke-") and len(config.run_id) == len("smoke-") + 12


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({**BASE, "tuning": {}}, "unknown section [tuning]"),
        (_with("selfplay", gmaes=4), "selfplay.gmaes"),
        (_with("selfplay", games="40"), "selfplay.games = '40': expected int"),
        (_with("selfplay", games=True), "selfplay.games = True: expected int"),
        (_with("selfplay", games=7), "selfplay.games = 7: must be a positive even number"),
        (_with("selfplay", batch_size=0), "selfplay.batch_size = 0"),
        (_with("selfplay", ply_cap=-5), "selfplay.ply_cap = -5: must be in"),
        (_with("selfplay", variant="chess"), "selfplay.variant = 'chess'"),
        (_with("selfplay", player_a="bogus spec"), "selfplay.player_a = 'bogus spec'"),
        (_with("run", seed=-1), "run.seed = -1: must be in [0, 9223372036854775807]"),
        (_with("run", name="a/b"), "run.name = 'a/b'"),
        (_with("ray", num_cpus=0), "ray.num_cpus = 0: must be >= 1"),
        (_with("ray", address=3), "ray.address = 3: expected str"),
        ({"run": {"name": "t"}, "selfplay": {"variant": "english"}},
         "missing required key selfplay.player_a"),
        ({"run": [1, 2]}, "[run] must be a table"),
    ],
)
def test_invalid_configs_name_key_and_value(raw: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(raw, source="x.toml")
    assert needle in str(err.value)
    assert str(err.value).startswith("x.toml: ")
    assert isinstance(err.value, ValueError)


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[run\nname = 1\n")
    with pytest.raises(ConfigError, match=r"bad\.toml: invalid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match=r"missing\.toml: cannot read config"):
        load_config(tmp_path / "missing.toml")
    typo = tmp_path / "typo.toml"
    typo.write_text(
        '[selfplay]\nvariant = "english"\nplayer_a = "random"\nplayer_b = "random"\ngames = 4\nseeed = 1\n'
    )
    with pytest.raises(ConfigError, match=r"typo\.toml: unknown key selfplay\.seeed = 1"):
        load_config(typo)


def test_an_oversized_config_is_refused_before_parsing(tmp_path: Path) -> None:
    huge = tmp_path / "huge.toml"
    huge.write_text("0.001" * 20_000 + " = 1\n")  # one 40,000-part dotted key: seconds of TOML parsing
    with pytest.raises(ConfigError, match=r"huge\.toml: 100,005 bytes: a run config may be at most 32,768"):
        load_config(huge)
    commented = tmp_path / "commented.toml"
    commented.write_text(SMOKE.read_text() + "#" * (MAX_CONFIG_BYTES - len(SMOKE.read_bytes()) - 1) + "\n")
    assert len(commented.read_bytes()) == MAX_CONFIG_BYTES
    load_config(commented)  # at the limit: still read


def test_hash_is_stable_and_ignores_where_and_how() -> None:
    a = parse_config(BASE)
    assert a.config_hash() == parse_config(BASE).config_hash()
    moved = parse_config(_with("run", output_root="/elsewhere"))
    on_cluster = parse_config(_with("ray", address="127.0.0.2:6379", num_cpus=4))
    more_in_flight = parse_config(_with("selfplay", max_in_flight=9))
    assert a.run_id == moved.run_id == on_cluster.run_id == more_in_flight.run_id
    assert a.run_id != parse_config(_with("run", seed=4)).run_id
    assert a.run_id != parse_config(_with("selfplay", batch_size=4)).run_id
    named = parse_config(_with("run", id="my-run"))
    assert named.run_id == "my-run" and named.config_hash() == a.config_hash()


def test_config_is_frozen_and_replace_validates() -> None:
    config = parse_config(BASE)
    with pytest.raises(AttributeError):
        config.selfplay.games = 10  # type: ignore[misc]
    with pytest.raises(ConfigError, match=r"selfplay\.games = 3"):
        config.replace("selfplay", games=3)
    with pytest.raises(ConfigError, match=r"missing section \[tune\]"):
        config.section("tune")


def test_describe_sections_lists_every_key() -> None:
    table = describe_sections()
    for key in ("run.seed", "selfplay.batch_size", "ray.address", "selfplay.max_in_flight"):
        assert f"| {key} |" in table


def test_describe_sections_rows_have_four_cells() -> None:
    """Every row has its four cells (a pipe inside a doc is escaped)."""
    import pipeline.config.job_sections  # noqa: F401 - registers the main job's sections (their docs hold pipes)

    rows = describe_sections().split("\n")
    for row in rows:
        cells = row.replace("\\|", "").strip("|").split("|")
        assert len(cells) == 4, row


def test_describe_sections_shows_arrays_and_tables_in_toml_syntax() -> None:
    import pipeline.config.job_sections  # noqa: F401 - registers the main job's sections

    table = describe_sections()
    assert "| ladder.depths | array of int | [1, 2, 3, 4, 6] |" in table
    assert "| ladder.bridges | array of float | [0.75, 0.5, 0.25, 0.1] |" in table
    assert "| tune.weights | table: feature = [low, high] or value | { advance = [-30.0, 30.0], " in table
    assert "| calibrate.hard_budgets | array of int | [25000, 50000, 100000, 200000] |" in table


def test_a_float_key_reads_an_integer_as_that_float() -> None:
    """600 and 600.0 are one setting: the same value, type and hash."""
    import pipeline.config.tracking_sections  # noqa: F401 - registers [mlflow]

    as_int, as_float = (parse_config({**BASE, "mlflow": {"check_timeout": v}}) for v in (5, 5.0))
    assert type(as_int.sections["mlflow"].check_timeout) is float
    assert as_int.to_dict() == as_float.to_dict() and as_int.config_hash() == as_float.config_hash()
    with pytest.raises(ConfigError, match=r"x\.toml: mlflow\.check_timeout = 1000.*: must be a finite"):
        parse_config({**BASE, "mlflow": {"check_timeout": 10**400}}, source="x.toml")


# ---- input paths, placement, a driver running as a Ray job -----------------------------------


def test_input_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    import tomllib

    from pipeline.config.job_sections import job, ladder_section

    from .conftest import REPO

    text = (REPO / "configs" / "runs" / "tiny.toml").read_text()
    seed = 'variant = "english"\nseed_profile = "profiles/seed.json"\n'
    text = text.replace('variant = "english"\n', seed, 1)
    ladder = '[ladder]\npath = "../ladders/english.json"\n'
    text = text.replace("[ladder]\n", ladder, 1) if "[ladder]\n" in text else f"{text}\n{ladder}"
    configs = []
    for where in ("one", "two/deeper"):
        folder = tmp_path / where
        folder.mkdir(parents=True)
        (folder / "job.toml").write_text(text)
        configs.append(load_config(folder / "job.toml"))
    one, two = configs
    assert job(one).seed_profile == str(tmp_path / "one" / "profiles" / "seed.json")
    assert ladder_section(two).path == str(tmp_path / "two" / "deeper" / ".." / "ladders" / "english.json")
    assert one.config_hash() == two.config_hash()  # the text as written is what is hashed
    assert one.to_dict()["job"]["seed_profile"] == "profiles/seed.json"
    assert tomllib.loads(text)["job"]["seed_profile"] == "profiles/seed.json"
    moved = one.replace("run", output_root="/elsewhere")  # replace keeps the config's folder
    assert job(moved).seed_profile == job(one).seed_profile and moved.run.output_root == "/elsewhere"
    selfplay = tmp_path / "sp" / "sp.toml"
    selfplay.parent.mkdir()
    selfplay.write_text('[selfplay]\nvariant = "english"\nplayer_a = "mine/p.json:hard"\n'
                        'player_b = "random"\ngames = 2\n')
    config = load_config(selfplay)
    assert config.selfplay.player_a == f"{tmp_path / 'sp' / 'mine' / 'p.json'}:hard"
    assert config.selfplay.player_b == "random"
    assert parse_config(_with("selfplay", player_a="p.json:hard")).selfplay.player_a == "p.json:hard"


def test_in_process_with_an_address_is_an_error() -> None:
    from pipeline.config.placement import placement

    config = parse_config(_with("ray", in_process=True), source="x.toml")
    assert placement(config, environ={}).in_process
    with pytest.raises(ConfigError, match=r"x.toml: \[ray\].in_process = true plays without Ray, but "
                                          r"RAY_ADDRESS = '10.0.0.1:6379' names a Ray cluster"):
        placement(config, environ={"RAY_ADDRESS": "10.0.0.1:6379"})
    with pytest.raises(ConfigError, match=r"--in-process plays without Ray, but --address = 'h:1'"):
        placement(parse_config(BASE), in_process_flag=True, address_flag="h:1", environ={})
    on_ray = placement(parse_config(_with("ray", address="h:2")), environ={"RAY_ADDRESS": "h:3"})
    assert on_ray == type(on_ray)(False, "h:2")


def test_a_driver_running_as_a_ray_job_refuses_local_files() -> None:
    from pipeline.config.placement import RAY_JOB_ENV, check_cluster_locations, cluster_problems

    job_env = {RAY_JOB_ENV: "{}"}
    config = parse_config(BASE, source="x.toml")
    check_cluster_locations(config, environ={})  # not a Ray job: anything goes
    problems = cluster_problems(config, job_env)
    assert [p.split(" is ")[0].split(": ", 1)[1] for p in problems] == [
        "[run].output_root = 'runs' (or --output)", "[mlflow].tracking_uri (or MLFLOW_TRACKING_URI)",
        "[optuna].storage (or --storage)"]
    assert "--output s3://BUCKET/runs" in problems[0] and "http://HOST:5000" in problems[1]
    assert "postgresql+psycopg2://" in problems[2]
    with pytest.raises(ConfigError, match=r"\[run\].output_root = 'runs'.* Also: .*tracking_uri"):
        check_cluster_locations(config, environ=job_env)
    for uri in ("sqlite:////shared/mlflow.db", "file:///shared/mlruns", "mlruns"):
        ok = parse_config({**_with("run", output_root="s3://b/runs"), "mlflow": {"tracking_uri": uri},
                           "optuna": {"storage": "postgresql+psycopg2://u@db/optuna"}})
        assert [p for p in cluster_problems(ok, job_env) if "tracking_uri" in p], uri
    durable = parse_config({**_with("run", output_root="/shared/runs"),
                            "mlflow": {"tracking_uri": "http://mlflow:5000"},
                            "optuna": {"storage": "postgresql+psycopg2://u@db/optuna"}})
    assert cluster_problems(durable, job_env) == []
    assert cluster_problems(parse_config(BASE), job_env, tracking=False, studies=False)[0].startswith(
        "<memory>: [run].output_root")


@pytest.mark.parametrize(("message", "needle"), [
    ("RuntimeError: Failed to connect to GCS. ray.exceptions.AuthenticationError: RPC error: "
     "InvalidAuthToken: Authentication token is missing or incorrect",
     "refused this driver's authentication"),
    ("Version mismatch: The cluster was started with: Ray: 2.59.0 Python: 3.11.7 This process on node "
     "1.2.3.4 was started with: Ray: 2.60.0 Python: 3.11.7", "pip install -c constraints.txt"),
    ("The current node timed out during startup.", "timed out while this driver started or joined"),
    ("Failed to connect to GCS within 60 seconds", "no Ray head answered at h:1"),
    ("something odd", "Ray failed to start (ConnectionError: Failed to connect to Ray cluster at h:1 "
                      "RuntimeError: something odd)"),
])
def test_ray_start_failures_are_one_line_with_the_fix(message: str, needle: str) -> None:
    from pipeline.config.placement import ray_start_problem

    try:
        try:
            raise RuntimeError(message)
        except RuntimeError as inner:
            raise ConnectionError("Failed to connect to Ray cluster at h:1") from inner
    except ConnectionError as err:
        text = ray_start_problem(err, "h:1")
    assert needle in text and "\n" not in text
