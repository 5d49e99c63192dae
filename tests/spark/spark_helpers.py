"""Spark programs in JVMs of their own for the tests: a Spark Connect server, a standalone
cluster's master and workers, each started by pyspark's own launcher and stopped at the end."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def spark_process(log: Path, port: int, *command: str) -> Iterator[None]:
    """A Spark program run by pyspark's own launcher (``bin/spark-class``, or
    ``bin/spark-submit`` when ``command`` starts with ``--``) in a JVM of its own, its output
    to ``log``: up once it listens on ``port`` of 127.0.0.1, stopped at the end."""
    import pyspark

    home = Path(pyspark.__file__).parent
    launcher = home / "bin" / ("spark-submit" if command[0].startswith("--") else "spark-class")
    env = dict(os.environ, SPARK_HOME=str(home), PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    with open(log, "wb") as out:
        process = subprocess.Popen([str(launcher), *command], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, f"{command[1]} stopped:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"{command[1]} is not listening:\n{log.read_text()[-3000:]}"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.5)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
