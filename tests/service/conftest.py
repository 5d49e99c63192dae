"""A real ``neardup serve`` process on 127.0.0.1, started by the tests and stopped by them.

A server takes seconds to start, so the tests that start their own are marked ``slow``, but for
two that keep the service in the quick loop: ``test_lookups_equal_the_library_and_writes_survive_sigkill``
and ``test_client_adds_in_batches_queries_gets_and_deletes``."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_process import Server


@pytest.fixture
def server_factory(tmp_path):
    started: list[Server] = []

    def make(
        *options: str,
        data: Path | None = None,
        token: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> Server:
        server = Server(data or tmp_path / "data", *options, token=token, env=env)
        started.append(server)
        return server.start(timeout)

    yield make
    for server in started:
        server.stop()
