"""What a server process asks of the kernel per move, over a measured interval: its read
and write system calls (`/proc/PID/io`: `syscr`, `syscw`; the read(2) and write(2) family,
which is what uvloop's sockets use: `send`/`recv` would not be counted), how often its
event loop went to sleep waiting for one (voluntary context switches of its main thread,
`/proc/PID/status`), and its CPU time split into user space and the kernel.

Counts are the same however busy the machine is: they tell the server's own work (the
interpreter, in user space) from the work any server of this shape does per message (the
socket calls, in the kernel), which the CPU per move alone cannot. `bench.server` prints
them for the relay, the floor and solrace.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["difference", "line", "snapshot"]

FIELDS = ("reads", "writes", "sleeps", "user_s", "kernel_s")


def snapshot(pid: int) -> dict[str, float]:
    """The counters of process `pid` now ({} where /proc cannot be read)."""
    try:
        with open(f"/proc/{pid}/io") as f:
            io = dict(line.split(": ") for line in f.read().splitlines())
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read().rsplit(")", 1)[1].split()
    except (OSError, ValueError):
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    return {
        "reads": float(io["syscr"]),
        "writes": float(io["syscw"]),
        "sleeps": float(status["voluntary_ctxt_switches"]),
        "user_s": int(stat[11]) / tick,
        "kernel_s": int(stat[12]) / tick,
    }


def difference(before: dict[str, float], after: dict[str, float], moves: float) -> dict[str, Any]:
    """Per answered move: read and write calls, sleeps, and user and kernel µs."""
    if not before or not after or not moves:
        return {}
    per = {name: (after[name] - before[name]) / moves for name in FIELDS}
    return {
        "reads": per["reads"],
        "writes": per["writes"],
        "sleeps": per["sleeps"],
        "user_us": per["user_s"] * 1e6,
        "kernel_us": per["kernel_s"] * 1e6,
    }


def line(stats: dict[str, Any]) -> str:
    return (
        f"per move {stats['reads']:.2f} read and {stats['writes']:.2f} write calls, "
        f"{stats['sleeps']:.2f} sleeps of the event loop; CPU {stats['user_us']:.0f} µs in "
        f"user space and {stats['kernel_us']:.0f} µs in the kernel (the process alone, "
        "clock ticks: +-10 ms over the interval)"
    )
