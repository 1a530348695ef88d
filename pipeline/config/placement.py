"""Where a run plays and whether its outputs outlive it: checks made before any game.

:func:`placement` decides in-process against Ray from the switches and the addresses, and refuses
a contradiction (``in_process`` with an address) instead of letting one side win silently.

:func:`driver_on_cluster` tells whether this driver runs *as a Ray job*: the Ray job supervisor
starts a job's entrypoint with ``RAY_JOB_CONFIG_JSON_ENV_VAR`` in its environment (the job's
runtime environment as JSON), which no other process has. Such a driver runs in an unpacked copy
of the job's working dir on a cluster node, so :func:`check_cluster_locations` refuses what would
vanish with it or be written by one node alone: a relative output root, and tracking or study
storage in local files (the default ``sqlite:///mlflow.db``, any ``sqlite:``/``file:`` URI or
plain path, and Optuna journal files, whose locking is unsafe on network filesystems).
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.config.run_config import ConfigError, RunConfig
from pipeline.config.tracking_sections import mlflow_section, optuna_section

#: set by Ray's job supervisor for the entrypoint of ``ray job submit`` (and only there)
RAY_JOB_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"
#: tracking URI schemes that name local files
LOCAL_TRACKING_SCHEMES = ("", "file", "sqlite")


@dataclass(frozen=True)
class Placement:
    """In-process, or Ray at ``address`` (None: a private local Ray)."""

    in_process: bool
    address: str | None


def placement(config: RunConfig, *, in_process_flag: bool = False, address_flag: str | None = None,
              environ: Mapping[str, str] | None = None) -> Placement:
    """Where batches run; ConfigError when in-process play meets an address.

    ``in_process_flag``/``address_flag``: ``--in-process``/``--address``; the address order is
    ``--address``, ``[ray].address``, ``RAY_ADDRESS``."""
    env = os.environ if environ is None else environ
    ray = config.ray
    address, where = None, ""
    for value, name in ((address_flag, "--address"), (ray.address, "[ray].address"),
                        (env.get("RAY_ADDRESS") or None, "RAY_ADDRESS")):
        if value:
            address, where = value, name
            break
    wants_local = in_process_flag or ray.in_process
    if wants_local and address is not None:
        switch = "--in-process" if in_process_flag else "[ray].in_process = true"
        raise ConfigError(
            f"{config.source}: {switch} plays without Ray, but {where} = {address!r} names a Ray cluster: "
            f"drop one of them (unset RAY_ADDRESS to play in-process)")
    return Placement(wants_local, address)


def driver_on_cluster(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process is the entrypoint of a Ray job (see the module docstring)."""
    return RAY_JOB_ENV in (os.environ if environ is None else environ)


def _local_tracking(uri: str) -> bool:
    return urllib.parse.urlsplit(uri).scheme.lower() in LOCAL_TRACKING_SCHEMES or "://" not in uri


def cluster_problems(config: RunConfig, environ: Mapping[str, str] | None = None, *, tracking: bool = True,
                     studies: bool = True) -> list[str]:
    """What would not outlive a driver running as a Ray job (empty when all is durable); ``tracking``
    / ``studies``: whether the verb logs to MLflow / keeps Optuna studies."""
    env = os.environ if environ is None else environ
    source = config.source
    problems = []
    root = config.run.output_root
    if "://" not in root and not os.path.isabs(os.path.expanduser(root)):
        problems.append(
            f"{source}: [run].output_root = {root!r} (or --output) is relative, and this driver runs as a "
            "Ray job in a copy of its working dir that vanishes with the job: give an absolute path on a "
            "shared disk or a store URI (--output s3://BUCKET/runs)")
    ml = mlflow_section(config)
    if tracking and ml.enabled:
        uri = ml.tracking_uri or env.get("MLFLOW_TRACKING_URI")
        if uri is None or _local_tracking(uri):
            shown = repr(uri) if uri else "unset (default sqlite:///mlflow.db in the working dir)"
            problems.append(
                f"{source}: [mlflow].tracking_uri (or MLFLOW_TRACKING_URI) is {shown}: a local file, and "
                "this driver runs as a Ray job on a cluster node: use an MLflow server (--tracking-uri "
                "http://HOST:5000) or set [mlflow].enabled = false")
    storage = optuna_section(config).storage
    if not studies:
        return problems
    if storage is None or "://" not in storage or storage.lower().startswith("sqlite:"):
        shown = repr(storage) if storage else "unset (default journal file in the run folder)"
        problems.append(
            f"{source}: [optuna].storage (or --storage) is {shown}: a local file, and this driver runs as a "
            "Ray job on a cluster node: use a database server (--storage "
            "postgresql+psycopg2://USER@HOST/DB)")
    return problems


def check_cluster_locations(config: RunConfig, environ: Mapping[str, str] | None = None, *,
                            tracking: bool = True, studies: bool = True) -> None:
    """ConfigError naming every problem of :func:`cluster_problems` when running as a Ray job."""
    if not driver_on_cluster(environ):
        return
    problems = cluster_problems(config, environ, tracking=tracking, studies=studies)
    if problems:
        raise ConfigError(" Also: ".join(problems))


# ---- Ray start-up failures --------------------------------------------------------------------


def _chain_text(err: BaseException) -> str:
    """The messages of an exception and of every cause or context behind it, on one line."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return " ".join(" ".join(parts).split())


def ray_start_problem(err: BaseException, address: str | None) -> str:
    """One line naming why Ray did not start or connect (auth, versions, timeout) and the fix."""
    text = _chain_text(err)
    where = f"the Ray cluster at {address}" if address else "a private local Ray"
    lowered = text.lower()
    if "invalidauthtoken" in lowered or "authenticationerror" in lowered or "unauthenticated" in lowered:
        return (f"{where} refused this driver's authentication (token missing or wrong): set "
                "RAY_AUTH_MODE=token and the cluster's token (RAY_AUTH_TOKEN, or ~/.ray/auth_token from "
                "`ray get-auth-token` on the head) on this machine")
    if "version mismatch" in lowered:
        start = lowered.index("version mismatch")
        detail = text[start:start + 240]
        return (f"{where} runs other versions than this driver ({detail}): install the same versions on "
                "every machine: python -m pip install -c constraints.txt -e .")
    if "timed out" in lowered or "deadline_exceeded" in lowered or "deadline exceeded" in lowered:
        return (f"{where} timed out while this driver started or joined a node: check that the head runs "
                "and its ports are open from here, and that the machine is not overloaded; then rerun")
    if "failed to connect to gcs" in lowered:
        return (f"no Ray head answered at {address}: check the address (HOST:PORT of `ray start --head`) and "
                "that the head runs; then rerun")
    first = text[:300]
    return f"Ray failed to start ({first}); fix the cause and rerun"
