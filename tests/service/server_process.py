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

    def __init__(
        self, data: Path, *options: str, token: str | None = None, env: dict[str, str] | None = None
    ) -> None:
        self.data, self.options, self.token, self.env = data, options, token, env or {}
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.port = 0
        self.log_path: Path | None = None

    def start(self, timeout: float = 120) -> Server:
        """Start the process and wait for /healthz (it listens once its kernels are loaded)."""
        import httpx

        port = self.port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = dict(os.environ)
        env.pop("NEARDUP_TOKEN", None)
        env.update(self.env)
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
        # Its logs (stderr) and access log (stdout) go to a file: a pipe nobody reads would fill
        # and block the server.
        self.log_path = self.data.parent / f"serve-{port}.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"neardup serve exited: {self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.1)
        self.kill()  # not left running, to be found by Popen.__del__ in some later test
        raise TimeoutError(f"neardup serve did not answer /healthz in {timeout:.0f} s: {self.log()}")

    def kill(self) -> None:
        """SIGKILL: no chance to flush or close anything."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM, as a service manager stops it; SIGKILL if it has not stopped in 30 s."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        """What the process has logged so far (stderr and stdout)."""
        return self.log_path.read_text(errors="replace") if self.log_path is not None else ""

    def client(self) -> httpx.Client:
        import httpx

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)
