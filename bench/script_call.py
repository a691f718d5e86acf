"""The move script inside Redis: this tree's against another version of it, call by call.

``python -m bench.script_call --baseline FILE`` starts its own redis-server (append-only
file on, as in production), loads ``server/storage/lua/move.lua`` and the baseline FILE (a
move.lua of another tree, e.g. ``git show main~1:server/storage/lua/move.lua >
/tmp/move.lua``) as Redis Functions, as the server does, and plays the same moves into two
rooms of 8 seats, one call at a time (as at an everyday rate: each call alone, Redis idle
between), alternating the two call by call so that both meet the same machine. Per round
it prints the microseconds per call as Redis clocks them (``INFO commandstats``: inside
its one thread, the commands the function calls included), their ratio, and the commands
and append-only bytes each spends per call. Without ``--baseline`` the tree's script is
compared with itself (the noise of the measurement).

Wall-clock figures on a shared machine vary by a third from one round to the next for
the same script. ``--callgrind`` counts instructions instead, which other work on the
machine does not change: each script gets a redis-server of its own run under valgrind's
callgrind, both are played the same moves, and the instructions of FCALL (the
function, its commands and their append-only file included) per call are printed for
each. A change to the move script is judged by that count.

Both scripts get the same keys and arguments (server/storage/codec.py's ``move_call``): a
baseline must take the calls of this tree.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

import protocol as p
from server.redis_io.batcher import LuaScript
from server.redis_io.supervisor import RedisSupervisor
from server.room.checklist import lua_prelude
from server.storage.codec import MoveWrite, move_call
from server.storage.store import MOVE

__all__ = ["main", "run"]

SEATS = 8
TOKEN = "t" * 64
ROOMS = {"baseline": "bench-baseline", "tree": "bench-tree"}


def write_of(room: str, seat: int, n: int) -> MoveWrite:
    """The `n`th move (from 0) of `seat`, shaped as a real one (a progress event, splits)."""
    now = time.time()
    event = p.Progress(
        version=0, at=now, seat=seat, progress=n % 52, moves=n + 1, won=False, stuck=False,
        move="t5 t2 3",
    )  # fmt: skip
    return MoveWrite(room, 1, seat, n + 1, n, "t5 t2 3", now, event, None, TOKEN)


def aof_size(data: str) -> int:
    """Bytes of every append-only file in the directory (Redis 7 keeps a folder of them)."""
    return sum(path.stat().st_size for path in Path(data).rglob("*.aof*") if path.is_file())


async def aof_written(data: str, before: int, patience: float = 5.0) -> None:
    """Wait until the calls just made are in the append-only file. With `appendfsync
    everysec` Redis postpones writing its buffer while a background fsync is still running
    (a busy disk), for up to 2 s: read at once, the file had not grown at all."""
    deadline = time.monotonic() + patience
    while aof_size(data) <= before and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


def both_scripts(baseline: str | None) -> dict[str, LuaScript]:
    """This tree's move script and the baseline's (this tree's again, under another name,
    when there is none)."""
    body = MOVE.body if baseline is None else Path(baseline).read_text()
    return {"baseline": LuaScript("move_baseline", body, prelude=lua_prelude()), "tree": MOVE}


def room_meta(listpack: bool) -> dict[Any, Any]:
    """A running room's meta hash of 8 seats, as move.lua reads it."""
    meta: dict[Any, Any] = {"status": "running", "round": "1", "start_at": "0", "ends_at": ""}
    if not listpack:  # as transition.lua makes a room's meta: a hash table
        meta["table"] = "-" * 65
    return meta | {f"tok:{seat}": TOKEN for seat in range(SEATS)}


async def play(redis: Redis, script: LuaScript, room: str, moves: int, n: int) -> int:
    """`moves` moves of every seat of `room`, from each seat's move `n`; the next `n`."""
    for _ in range(moves):
        for seat in range(SEATS):
            keys, args, fixed = move_call(write_of(room, seat, n), 512, 3600.0)
            reply: Any = await redis.fcall(script.function, len(keys), *keys, *fixed, *args)
            assert reply[0] == b"ok", reply
        n += 1
    return n


async def run(
    rounds: int, moves: int, baseline: str | None = None, listpack: bool = False
) -> list[dict[str, float]]:
    """Per round: µs per call of each script as Redis clocks them (`baseline`, `tree`),
    and per call of each: the commands Redis ran (`baseline_commands`, `tree_commands`)
    and the bytes it appended to its append-only file (`*_aof`). `listpack`: the
    baseline's room keeps its meta hash as a listpack, as rooms did before transition.lua
    made them hash tables."""
    scripts = both_scripts(baseline)
    rows = []
    with tempfile.TemporaryDirectory(prefix="solrace-bench-script-") as data:
        async with RedisSupervisor(data) as url:
            redis = Redis.from_url(url)
            for script in scripts.values():
                await redis.function_load(script.library, replace=True)
            for way, room in ROOMS.items():
                meta = room_meta(listpack and way == "baseline")
                await redis.hset(f"{{room:{room}}}:meta", mapping=meta)
            n = dict.fromkeys(ROOMS, 0)
            for i in range(rounds):
                row: dict[str, float] = {}
                # Blocks of calls, each script's in turn (ABBA over the rounds): Redis's
                # statistics count every FCALL together, so each block is read alone.
                for way in ROOMS if i % 2 == 0 else reversed(ROOMS):
                    calls = moves * SEATS
                    await redis.config_resetstat()
                    before = aof_size(data)
                    n[way] = await play(redis, scripts[way], ROOMS[way], moves, n[way])
                    await redis.ping()
                    await aof_written(data, before)
                    stats = await redis.info("commandstats")
                    inner = sum(
                        int(v["calls"])
                        for k, v in stats.items()
                        if k not in ("cmdstat_fcall", "cmdstat_config", "cmdstat_ping")
                    )
                    row[way] = float(stats["cmdstat_fcall"]["usec_per_call"])
                    row[f"{way}_commands"] = 1 + inner / calls
                    row[f"{way}_aof"] = (aof_size(data) - before) / calls
                rows.append(row)
            await redis.aclose()
    return rows


async def instructions(script: LuaScript, moves: int, listpack: bool, data: Path) -> float:
    """Instructions per FCALL of `script` (callgrind's count, the function's commands and
    their append-only file included), over `moves` moves of each of 8 seats."""
    out = data / "callgrind.out"
    wrapper = data / "redis-server"
    valgrind = shutil.which("valgrind")
    redis = shutil.which("redis-server")
    wrapper.write_text(
        f'#!/bin/sh\nexec {valgrind} --tool=callgrind --callgrind-out-file={out} {redis} "$@"\n'
    )
    wrapper.chmod(0o755)
    async with RedisSupervisor(data, binary=str(wrapper), ready_timeout=60.0) as url:
        client = Redis.from_url(url)
        await client.function_load(script.library, replace=True)
        await client.hset(f"{{room:{ROOMS['tree']}}}:meta", mapping=room_meta(listpack))
        await play(client, script, ROOMS["tree"], moves, 0)
        await client.aclose()
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", str(out)],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    return fcall_instructions(annotated) / (moves * SEATS)


def fcall_instructions(annotated: str) -> int:
    """FCALL's inclusive instructions in `callgrind_annotate --inclusive=yes` output."""
    for line in annotated.splitlines():
        if ":fcallCommand " in line:
            return int(line.split()[0].replace(",", ""))
    raise RuntimeError("callgrind counted no FCALL")


async def counted(moves: int, baseline: str | None, listpack: bool) -> dict[str, float]:
    """Instructions per call of the baseline's script and this tree's (`--callgrind`)."""
    scripts = both_scripts(baseline)
    result = {}
    for way, script in scripts.items():
        with tempfile.TemporaryDirectory(prefix="solrace-bench-callgrind-") as data:
            result[way] = await instructions(
                script, moves, listpack and way == "baseline", Path(data)
            )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--moves", type=int, default=250, help="moves per seat per round")
    parser.add_argument("--baseline", help="a move.lua to compare this tree's with")
    parser.add_argument(
        "--listpack", action="store_true",
        help="leave the baseline's room meta hash a listpack (as rooms were before "
        "transition.lua made them hash tables)",
    )  # fmt: skip
    parser.add_argument(
        "--callgrind", action="store_true",
        help="count the instructions per call (valgrind) instead of timing them",
    )  # fmt: skip
    args = parser.parse_args()
    if args.baseline is not None and not os.path.exists(args.baseline):
        parser.error(f"no such file: {args.baseline}")
    if args.callgrind:
        if shutil.which("valgrind") is None:
            parser.error("--callgrind needs valgrind (apt-get install valgrind)")
        counts = asyncio.run(counted(args.moves, args.baseline, args.listpack))
        print("| script | instructions per call |\n|---|---:|")
        print(f"| baseline | {counts['baseline']:,.0f} |\n| this tree | {counts['tree']:,.0f} |")
        print(f"\nthis tree / baseline: {counts['tree'] / counts['baseline']:.3f}")
        return
    rows = asyncio.run(run(args.rounds, args.moves, args.baseline, args.listpack))
    print(
        "| round | baseline µs/call | this tree µs/call | tree / baseline "
        "| commands per call, baseline / tree | AOF bytes per call, baseline / tree |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for i, row in enumerate(rows, 1):
        ratio = row["tree"] / row["baseline"]
        print(
            f"| {i} | {row['baseline']:.2f} | {row['tree']:.2f} | {ratio:.3f} "
            f"| {row['baseline_commands']:.2f} / {row['tree_commands']:.2f} "
            f"| {row['baseline_aof']:.0f} / {row['tree_aof']:.0f} |"
        )
    ratios = [row["tree"] / row["baseline"] for row in rows]
    print(
        f"\nthis tree / baseline, median of {len(rows)} rounds: {statistics.median(ratios):.3f} "
        f"(this tree cheaper in {sum(r < 1 for r in ratios)} of {len(rows)})"
    )


if __name__ == "__main__":
    main()
