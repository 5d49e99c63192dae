"""What every benchmark reports about the machine it ran on."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np


def meminfo_bytes(field: str) -> int | None:
    """A /proc/meminfo field in bytes (None off Linux)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def machine_info(packages: tuple[str, ...] = ()) -> dict[str, Any]:
    """Python, CPUs, memory, numba's threads and the versions of neardup and ``packages``:
    enough to tell two result lines apart."""
    import numba

    import neardup

    info: dict[str, Any] = {
        "python": platform.python_version(), "platform": platform.platform(),
        "cpu_count": os.cpu_count(), "cpus_available": len(os.sched_getaffinity(0)),
        "numba": numba.__version__, "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "numpy": np.__version__, "neardup": neardup.__version__,
        "mem_total_bytes": meminfo_bytes("MemTotal"), "mem_available_bytes": meminfo_bytes("MemAvailable")}
    for package in packages:
        try:
            info[package] = version(package)
        except PackageNotFoundError:
            info[package] = None
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu_model"] = next((line.split(":", 1)[1].strip() for line in f
                                      if line.startswith("model name")), None)
    except OSError:
        pass
    return info
