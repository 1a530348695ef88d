"""A local S3-compatible server for the storage tests: moto in server mode on 127.0.0.1.

The server runs in a thread of the test process (``ThreadedMotoServer``) on a free loopback port
and is stopped by the fixture; no traffic leaves loopback. Credentials are dummies in the
environment, as pyarrow reads them; the endpoint travels in the URI's query, so subprocesses
reach the same server with the same URI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from .ray_helpers import free_port

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


@dataclass(frozen=True)
class S3Server:
    endpoint: str  # HOST:PORT
    bucket: str

    def uri(self, path: str) -> str:
        """``s3://<bucket>/<path>`` with the endpoint options pyarrow needs."""
        return f"s3://{self.bucket}/{path}?endpoint_override={self.endpoint}&scheme=http"


@pytest.fixture
def s3_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Server]:
    moto_server = pytest.importorskip("moto.server")
    import pyarrow.fs as pafs

    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    port = free_port("127.0.0.1")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"127.0.0.1:{port}"
        fs = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", allow_bucket_creation=True)
        fs.create_dir("draughts-runs")
        yield S3Server(endpoint, "draughts-runs")
    finally:
        server.stop()


def subprocess_env() -> dict[str, str]:
    """The environment a subprocess needs to reach the test server."""
    return {**os.environ, **CREDENTIALS}
