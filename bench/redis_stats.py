"""What a server asks of Redis per move, over a measured interval: the commands Redis ran
(``INFO commandstats``, which counts the commands a script calls under their own names
too), the bytes added to its append-only file, each divided by the moves answered, and
the microseconds Redis itself measured per script call.

Counts and bytes are the same however busy the machine is, so this is how the move
script is compared with the floor's (``bench.server`` prints both). The script's own
time, as Redis clocks it inside its one thread, leaves out the socket reads and writes
and the wait for a core that make the process's CPU per move so noisy; it is the
steadiest measure of what a script change saves.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

__all__ = ["difference", "line", "snapshot"]

# The instrument's own commands, left out of the counts.
OWN = frozenset({"info"})
# A script's call: its time, as Redis measures it, includes the commands it calls.
SCRIPT_CALLS = frozenset({"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro"})


async def snapshot(url: str) -> dict[str, Any]:
    """Calls and microseconds per command and the append-only file's size now ({} if
    Redis cannot be read)."""
    try:
        async with Redis.from_url(url) as redis:
            stats = await redis.info("commandstats")
            persistence = await redis.info("persistence")
    except (OSError, ConnectionError):
        return {}
    counted = {
        name.removeprefix("cmdstat_"): value
        for name, value in stats.items()
        if name.removeprefix("cmdstat_") not in OWN
    }
    return {
        "calls": {name: int(value["calls"]) for name, value in counted.items()},
        "usec": {name: int(value["usec"]) for name, value in counted.items()},
        "aof_bytes": int(persistence.get("aof_current_size", 0)),
    }


def difference(before: dict[str, Any], after: dict[str, Any], moves: float) -> dict[str, Any]:
    """Per answered move: calls of each command that ran, all commands, AOF bytes; and
    the microseconds per script call (None when no script ran)."""
    if not before or not after or not moves:
        return {}
    calls = {
        name: (count - before["calls"].get(name, 0)) / moves
        for name, count in after["calls"].items()
        if count > before["calls"].get(name, 0)
    }
    scripts = sorted(SCRIPT_CALLS & set(calls))
    script_calls = sum(calls[name] for name in scripts) * moves
    script_usec = sum(after["usec"][name] - before.get("usec", {}).get(name, 0) for name in scripts)
    return {
        "calls": dict(sorted(calls.items(), key=lambda item: -item[1])),
        "commands": sum(calls.values()),
        # Redis rewrote its append-only file in the interval: the growth cannot be read.
        "aof_bytes": aof / moves
        if (aof := after["aof_bytes"] - before["aof_bytes"]) >= 0
        else None,
        "usec_per_script_call": script_usec / script_calls if script_calls else None,
    }


def line(stats: dict[str, Any]) -> str:
    each = ", ".join(f"{name} {count:.2f}" for name, count in stats["calls"].items())
    script = stats.get("usec_per_script_call")
    timed = "" if script is None else f"; {script:.1f} µs per script call as Redis clocks it"
    aof = stats["aof_bytes"]
    written = (
        "the append-only file rewritten in the interval"
        if aof is None
        else f"{aof:.0f} bytes of append-only file per move"
    )
    return f"{stats['commands']:.2f} Redis commands per move ({each}); {written}{timed}"
