"""Play a main-job config on a two-node Ray cluster on loopback, 8 CPU slots a node, then stop it.

    PYTHONPATH=. python experiments/2026-12-04-loopback-cluster/loopback.py CONFIG --output runs

The nodes are real ``ray start`` processes on 127.0.0.2 (head) and 127.0.0.3 with token
authentication (``tests/pipeline/ray_helpers.py``). Both run under ``nice -n 10``, and so do
their workers: the 16 slots share this machine's cores, and the driver, at normal priority,
gets a core when it needs one, as a cluster's driver on its own machine would. The job's exit
code is this script's; every process the cluster started is stopped by id, and a leftover is
an error.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from tests.pipeline.ray_helpers import LoopbackCluster, free_port

SLOTS_PER_NODE = 8
NICE = "10"


class NicedCluster(LoopbackCluster):
    """:class:`LoopbackCluster` whose ``ray start`` (and so every node process) runs niced."""

    def _ray_start(self, *args: str, log: str) -> None:
        ray_cli = str(Path(sys.executable).parent / "ray")
        with open(self.root / log, "w") as out:
            subprocess.run(["nice", "-n", NICE, ray_cli, "start", *args, "--disable-usage-stats"],
                           env=self.env, stdout=out, stderr=subprocess.STDOUT, timeout=180, check=True)

    def start_nodes(self) -> None:
        self.start_head(cpus=SLOTS_PER_NODE)
        self._ray_start(
            f"--address={self.address}", "--node-ip-address=127.0.0.3", f"--num-cpus={SLOTS_PER_NODE}",
            f"--dashboard-agent-listen-port={free_port('127.0.0.3')}", f"--temp-dir={self.root}/node",
            log="node.log")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    cluster = NicedCluster()
    try:
        cluster.start_nodes()
        print(f"cluster {cluster.address}: 2 nodes x {SLOTS_PER_NODE} slots", flush=True)
        job = subprocess.run(
            ["/usr/bin/time", "-v", sys.executable, "-m", "pipeline", "run", args.config,
             "--output", args.output, "--address", cluster.address],
            env={**cluster.env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}, check=False)
    finally:
        cluster.stop()
    left = cluster.pids()
    if left:
        print(f"processes of the cluster left running: {sorted(left)}", file=sys.stderr)
        return 1
    return job.returncode


if __name__ == "__main__":
    raise SystemExit(main())
