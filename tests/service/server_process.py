"""``neardup serve`` as a real process on a free loopback port, for the service tests.

httpx is imported where it is used: without the serve extra this module still loads, and the
root conftest skips the folder's tests with the reason."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m neardup serve`` on a free loopback port."""

    def __init__(self, data: Path, *options: str, token: str | None = None) -> None:
        self.data, self.options, self.token = data, options, token
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self, timeout: float = 60) -> Server:
        import httpx

        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = dict(os.environ)
        env.pop("NEARDUP_TOKEN", None)
        argv = [
            sys.executable,
            "-m",
            "neardup",
            "serve",
            "--data",
            str(self.data),
            "--port",
            str(port),
            *self.options,
        ]
        if self.token:
            argv += ["--token", self.token]
        self.process = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"neardup serve exited: {self.process.stderr.read() if self.process.stderr else ''}"
                )
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.1)
        raise TimeoutError("neardup serve did not answer /healthz")

    def kill(self) -> None:
        """SIGKILL: no chance to flush or close anything."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()

    def client(self) -> httpx.Client:
        import httpx

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)
