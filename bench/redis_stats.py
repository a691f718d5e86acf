"""What a server asks of Redis per move, over a measured interval: the commands Redis ran
(``INFO commandstats``, which counts the commands a script calls under their own names
too) and the bytes added to its append-only file, each divided by the moves answered.

Counts and bytes are the same however busy the machine is, so this is how the move
script is compared with the floor's (``bench.server`` prints both).
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

__all__ = ["difference", "line", "snapshot"]

# The instrument's own commands, left out of the counts.
OWN = frozenset({"info"})


async def snapshot(url: str) -> dict[str, Any]:
    """Calls per command and the append-only file's size now ({} if Redis cannot be read)."""
    try:
        async with Redis.from_url(url) as redis:
            stats = await redis.info("commandstats")
            persistence = await redis.info("persistence")
    except (OSError, ConnectionError):
        return {}
    calls = {
        name.removeprefix("cmdstat_"): int(value["calls"])
        for name, value in stats.items()
        if name.removeprefix("cmdstat_") not in OWN
    }
    return {"calls": calls, "aof_bytes": int(persistence.get("aof_current_size", 0))}


def difference(before: dict[str, Any], after: dict[str, Any], moves: float) -> dict[str, Any]:
    """Per answered move: calls of each command that ran, all commands, AOF bytes."""
    if not before or not after or not moves:
        return {}
    calls = {
        name: (count - before["calls"].get(name, 0)) / moves
        for name, count in after["calls"].items()
        if count > before["calls"].get(name, 0)
    }
    return {
        "calls": dict(sorted(calls.items(), key=lambda item: -item[1])),
        "commands": sum(calls.values()),
        "aof_bytes": (after["aof_bytes"] - before["aof_bytes"]) / moves,
    }


def line(stats: dict[str, Any]) -> str:
    each = ", ".join(f"{name} {count:.2f}" for name, count in stats["calls"].items())
    return (
        f"{stats['commands']:.2f} Redis commands per move ({each}); "
        f"{stats['aof_bytes']:.0f} bytes of append-only file per move"
    )
