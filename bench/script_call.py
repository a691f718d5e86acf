"""The move script inside Redis: called as a Redis Function (``FCALL``, what the server
does) against the same script through the script cache (``EVALSHA``), call by call.

``python -m bench.script_call`` starts its own redis-server (append-only file on, as
in production), loads ``server/storage/lua/move.lua`` both ways and plays the same
moves into two rooms of 8 seats, one call at a time (as at an everyday rate: each call
alone, Redis idle between), alternating the two ways call by call so that both meet
the same machine. Per round it prints the microseconds per call as Redis clocks them
(``INFO commandstats``: inside its one thread, the commands the script calls included)
and their ratio; EVALSHA is the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from typing import Any

from redis.asyncio import Redis

import protocol as p
from server.redis_io.supervisor import RedisSupervisor
from server.storage.codec import MoveWrite, move_call
from server.storage.store import MOVE

__all__ = ["main", "run"]

SEATS = 8
TOKEN = "t" * 64
ROOMS = {"evalsha": "bench-evalsha", "fcall": "bench-fcall"}


def write_of(room: str, seat: int, n: int) -> MoveWrite:
    """The `n`th move (from 0) of `seat`, shaped as a real one (a progress event, splits)."""
    now = time.time()
    event = p.Progress(
        version=0, at=now, seat=seat, progress=n % 52, moves=n + 1, won=False, stuck=False,
        move="t5 t2 3",
    )  # fmt: skip
    return MoveWrite(room, 1, seat, n + 1, n, "t5 t2 3", now, event, None, TOKEN)


async def run(rounds: int, moves: int) -> list[dict[str, float]]:
    """Per round: µs per call of each way, as Redis clocks them."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="solrace-bench-script-") as data:
        async with RedisSupervisor(data) as url:
            redis = Redis.from_url(url)
            sha = await redis.script_load(MOVE.prelude + MOVE.body)
            await redis.function_load(MOVE.library, replace=True)
            for room in ROOMS.values():
                meta: dict[Any, Any] = {"status": "running", "round": "1", "start_at": "0"}
                meta["ends_at"] = ""
                meta |= {f"tok:{seat}": TOKEN for seat in range(SEATS)}
                await redis.hset(f"{{room:{room}}}:meta", mapping=meta)
            n = 0
            for _ in range(rounds):
                await redis.config_resetstat()
                for _ in range(moves):
                    for seat in range(SEATS):
                        for way, room in ROOMS.items():
                            keys, args, fixed = move_call(write_of(room, seat, n), 512, 3600.0)
                            call = redis.evalsha if way == "evalsha" else redis.fcall
                            name = sha if way == "evalsha" else MOVE.function
                            reply: Any = await call(name, len(keys), *keys, *fixed, *args)
                            assert reply[0] == b"ok", reply
                    n += 1
                stats = await redis.info("commandstats")
                rows.append({way: float(stats[f"cmdstat_{way}"]["usec_per_call"]) for way in ROOMS})
            await redis.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--moves", type=int, default=250, help="moves per seat per round")
    args = parser.parse_args()
    rows = asyncio.run(run(args.rounds, args.moves))
    print("| round | EVALSHA µs/call | FCALL µs/call | FCALL / EVALSHA |")
    print("|---:|---:|---:|---:|")
    for i, row in enumerate(rows, 1):
        evalsha, fcall = row["evalsha"], row["fcall"]
        print(f"| {i} | {evalsha:.2f} | {fcall:.2f} | {fcall / evalsha:.3f} |")
    ratios = [row["fcall"] / row["evalsha"] for row in rows]
    print(
        f"\nFCALL / EVALSHA, median of {len(rows)} rounds: {statistics.median(ratios):.3f} "
        f"(FCALL cheaper in {sum(r < 1 for r in ratios)} of {len(rows)})"
    )


if __name__ == "__main__":
    main()
