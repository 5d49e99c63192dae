"""What every benchmark reports about the machine it ran on."""

from __future__ import annotations

import json
import os
import platform
import resource
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
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


def status_kb(field: str) -> int | None:
    """A /proc/self/status field in KiB (VmRSS, VmHWM, RssAnon; None off Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak() -> bool:
    """Reset this process's VmHWM (Linux: ``clear_refs`` 5), so the next peak is what runs
    after; False where that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def machine_info(packages: tuple[str, ...] = ()) -> dict[str, Any]:
    """Python, CPUs, memory, numba's threads and the versions of neardup and ``packages``:
    enough to tell two result lines apart."""
    import numba

    import neardup

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpus_available": len(os.sched_getaffinity(0)),
        "numba": numba.__version__,
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "numpy": np.__version__,
        "neardup": neardup.__version__,
        "mem_total_bytes": meminfo_bytes("MemTotal"),
        "mem_available_bytes": meminfo_bytes("MemAvailable"),
    }
    for package in packages:
        try:
            info[package] = version(package)
        except PackageNotFoundError:
            info[package] = None
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu_model"] = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None
            )
    except OSError:
        pass
    return info


def finish(
    results: dict[str, Any], started: float, json_path: str | None, footer: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Close a run: this process's peak RSS and wall time into ``results``, the footer
    printed, the results written to ``json_path`` (if any) and printed as one RESULT line."""
    results["parent_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    results["wall_s"] = time.perf_counter() - started
    footer(results)
    if json_path:
        Path(json_path).write_text(json.dumps(results, indent=1) + "\n")
    print("RESULT " + json.dumps(results, separators=(",", ":")))
    return results
