"""A real ``neardup serve`` process on 127.0.0.1, started by the tests and stopped by them."""

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
