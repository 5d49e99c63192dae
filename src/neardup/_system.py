"""What the machine has to spare, read once per question."""

from __future__ import annotations

import os


def available_memory() -> int:
    """Bytes of memory available now: Linux's MemAvailable, else all physical memory, else
    (neither known) a number too large to limit anything."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2**62
