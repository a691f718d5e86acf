"""What a race's end costs (keeping it for the archive, archiving it, rating it), and that
archiving leaves the move path no slower.

    python -m bench.records [--races 40] [--seats 4] [--moves 60] [--rounds 3]
                            [--database-url URL]

On a redis-server of its own and the records' database (a SQLite file of its own unless
`--database-url` names another, e.g. a PostgreSQL), with the server's own code
(server/storage/store.py, server/edge/archiving.py, records/):

1. `--races` rated races of `--seats` players, each seat playing `--moves` legal moves, are
   ended the way the server ends them (every seat resigns). The last resignation ends the
   race: its transition also keeps the race whole in Redis for the archive (the outbox);
   the one before it is the same transition without the keeping, the baseline of step 1.
   Then each race is drained as every process does: read back from Redis, its replay
   written (the engine replays every move to write its results line), archived and rated
   in one transaction, forgotten in Redis. Milliseconds per race for each step.
2. The move path: moves submitted to Redis as the server does (the move script through the
   batcher), timed with nothing else running (the baseline) and while this same process
   archives as many races as those moves would end (one per `--seats` x `--moves` moves),
   rounds alternated; the ratio is what archiving costs the moves around it.

It prints one table per part and the ratios against the baselines measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from redis.asyncio import Redis

import protocol as p
from bench.racers import move_sequences
from core import new_game
from records.archive import RaceArchive
from records.engine import open_engine
from records.migrate import upgrade_to_head
from records.schema import players
from server.redis_io.batcher import ScriptBatcher
from server.redis_io.supervisor import RedisSupervisor
from server.room.archived import archived_race
from server.room.race import Outcome, Race, RoomConfig
from server.storage.codec import MoveWrite
from server.storage.store import RedisRoomStore
from server.tournament.rooms import record_of

__all__ = ["STEPS", "main"]

STEPS = (
    "transition without keeping (baseline)",
    "transition that keeps the race",
    "read the kept race",
    "write its replay",
    "archive and rate (one transaction)",
    "forget it in Redis",
)


@dataclass
class Timings:
    per_step: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STEPS})

    def add(self, step: str, seconds: float) -> None:
        self.per_step[step].append(seconds)

    def ms(self, step: str) -> float:
        return statistics.median(self.per_step[step]) * 1000


async def _players(engine: Any, count: int) -> list[str]:
    ids = [uuid.uuid4().hex[:16] for _ in range(count)]
    async with engine.begin() as conn:
        await conn.execute(
            sa.insert(players),
            [
                {
                    "id": pid,
                    "name": f"bench-{pid}",
                    "name_key": f"bench-{pid}",
                    "is_bot": False,
                    "created_at": 0.0,
                    "last_seen_at": 0.0,
                }
                for pid in ids
            ],
        )
    return ids


def _progress(board: Any, seat: int, move: str, now: float) -> p.Progress:
    return p.Progress(
        version=0,
        at=now,
        seat=seat,
        progress=board.progress,
        moves=board.moves,
        won=board.won,
        stuck=False,
        move=move,
    )


def _join(
    name: str, token: str, now: float, player: str | None = None
) -> Callable[[Race], Outcome]:
    return lambda race: race.join(name, token, now, player=player)[1]


def _resign(seat: int, now: float) -> Callable[[Race], Outcome]:
    return lambda race: race.resign(seat, now)


async def _start(store: RedisRoomStore, room: str, now: float) -> None:
    await store.transact(room, lambda race: race.start(0, now), now)
    await store.transact(room, lambda race: race.tick(now), now)


async def _race_to_its_end(
    store: RedisRoomStore, seats: list[str], seed: int, walk: list[str], timings: Timings | None
) -> str:
    """A rated race of `seats` (player ids) on deal `seed`, every seat playing `walk`; every
    seat resigns, the last resignation ending it. Returns the room."""
    room = uuid.uuid4().hex[:8]
    now = time.time()
    config = RoomConfig(game="shaula", seats=len(seats), countdown=0.0, rated=True)
    await store.create(Race(room=room, config=config, seed=seed, created_at=now))
    for index, pid in enumerate(seats):
        await store.transact(room, _join(pid, f"token-{room}-{index}", now, pid), now)
    await _start(store, room, now)
    for index in range(len(seats)):
        board = new_game("shaula", seed)
        for seq, move in enumerate(walk, 1):
            board.apply(move)
            event = _progress(board, index, move, time.time())
            write = MoveWrite(
                room,
                1,
                index,
                seq,
                seq - 1,
                move,
                time.time(),
                event,
                None,
                f"token-{room}-{index}",
            )
            await store.submit_move(write)
    end = time.time()
    for index in range(len(seats)):
        t0 = time.perf_counter()
        await store.transact(room, _resign(index, end), end)
        spent = time.perf_counter() - t0
        if timings is not None and index == len(seats) - 2:
            timings.add(STEPS[0], spent)
        elif timings is not None and index == len(seats) - 1:
            timings.add(STEPS[1], spent)
    return room


async def _archive(
    store: RedisRoomStore, archive: RaceArchive, room: str, timings: Timings | None
) -> None:
    """One room's kept races into the archive, as server/edge/archiving.py does it."""
    clock = time.perf_counter
    t0 = clock()
    kept = await store.ended(room)
    t1 = clock()
    for ended in kept:
        record = record_of(ended.race, ended.moves)
        assert record is not None
        replay = record.replay()
        t2 = clock()
        written = await archive.archive(archived_race(ended.race, ended.moves, replay))
        assert written
        t3 = clock()
        await store.forget_ended(room, ended)
        await store.outbox_done(room, time.time())
        t4 = clock()
        if timings is not None:
            timings.add(STEPS[2], t1 - t0)
            timings.add(STEPS[3], t2 - t1)
            timings.add(STEPS[4], t3 - t2)
            timings.add(STEPS[5], t4 - t3)


async def _moves(store: RedisRoomStore, count: int, seed: int, walk: list[str]) -> float:
    """Seconds per move for `count` moves of fresh seats, as concurrent racers send them."""
    racers = max(1, count // len(walk))
    room = uuid.uuid4().hex[:8]
    now = time.time()
    config = RoomConfig(game="shaula", seats=racers, countdown=0.0)
    await store.create(Race(room=room, config=config, seed=seed, created_at=now))
    for index in range(racers):
        await store.transact(room, _join(f"m{index}", f"m{index}", now), now)
    await _start(store, room, now)

    async def racer(index: int) -> None:
        board = new_game("shaula", seed)
        for seq, move in enumerate(walk, 1):
            board.apply(move)
            event = _progress(board, index, move, time.time())
            write = MoveWrite(
                room, 1, index, seq, seq - 1, move, time.time(), event, None, f"m{index}"
            )
            await store.submit_move(write)

    t0 = time.perf_counter()
    await asyncio.gather(*(racer(i) for i in range(racers)))
    return (time.perf_counter() - t0) / (racers * len(walk))


def _ends_per_round(args: argparse.Namespace) -> int:
    """The races whose end comes with `path_moves` moves: one per `seats` x `moves`."""
    return max(1, round(int(args.path_moves) / (int(args.seats) * int(args.moves))))


async def run(args: argparse.Namespace) -> tuple[Timings, list[float], list[float]]:
    with tempfile.TemporaryDirectory(prefix="solrace-bench-records-") as tmp:
        async with RedisSupervisor(tmp) as redis_url:
            redis = Redis.from_url(redis_url)
            batcher = ScriptBatcher(redis)
            store = RedisRoomStore(redis, batcher)
            await store.load_scripts()
            engine = open_engine(args.database_url or f"sqlite+aiosqlite:///{tmp}/records.sqlite3")
            try:
                await upgrade_to_head(engine)
                archive = RaceArchive(engine)
                seed, walk = next(iter(move_sequences("shaula", 1, args.moves).items()))
                ids = await _players(engine, args.seats * 4)
                timings = Timings()
                for n in range(args.races):
                    seats = ids[(n % 4) * args.seats : (n % 4 + 1) * args.seats]
                    room = await _race_to_its_end(store, seats, seed, walk, timings)
                    await _archive(store, archive, room, timings)
                alone: list[float] = []
                archiving: list[float] = []
                for _ in range(args.rounds):
                    alone.append(await _moves(store, args.path_moves, seed, walk))
                    rooms = [
                        await _race_to_its_end(store, ids[: args.seats], seed, walk, None)
                        for _ in range(_ends_per_round(args))
                    ]

                    async def drain(rooms: list[str] = rooms) -> None:
                        for room in rooms:
                            await _archive(store, archive, room, None)

                    moves, _ = await asyncio.gather(
                        _moves(store, args.path_moves, seed, walk), drain()
                    )
                    archiving.append(moves)
                return timings, alone, archiving
            finally:
                await engine.dispose()
                await batcher.close()
                await redis.aclose()


def report(
    args: argparse.Namespace, timings: Timings, alone: list[float], archiving: list[float]
) -> None:
    database = "PostgreSQL" if args.database_url and "postgresql" in args.database_url else "SQLite"
    print(
        f"A race's end: {args.races} rated races of {args.seats} players, {args.moves} moves "
        f"each seat, records on {database} (median per race)"
    )
    print("| step | ms per race |")
    print("|---|---:|")
    for step in STEPS:
        print(f"| {step} | {timings.ms(step):.2f} |")
    keep = timings.ms(STEPS[1]) - timings.ms(STEPS[0])
    drain = sum(timings.ms(step) for step in STEPS[2:])
    total = keep + drain
    print(f"| **added by the end: keeping + archiving + rating** | **{total:.2f}** |")
    base, busy = min(alone) * 1e6, min(archiving) * 1e6
    print()
    print(
        f"The move path: {args.path_moves} moves per round, "
        f"{args.rounds} rounds alternated (fastest)"
    )
    print("| moves submitted | µs per move |")
    print("|---|---:|")
    print(f"| alone (baseline) | {base:.1f} |")
    print(f"| while {_ends_per_round(args)} races are archived | {busy:.1f} |")
    print(
        f"\nperf_verdict records: a race's end adds {total:.2f} ms (keeping it "
        f"{keep:.2f} ms over a plain transition, "
        f"{timings.ms(STEPS[1]) / timings.ms(STEPS[0]):.2f}x; "
        f"archiving and rating {drain:.2f} ms); moves while archiving "
        f"{busy / base:.2f}x the moves alone"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.records", description=__doc__)
    parser.add_argument("--races", type=int, default=40)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--moves", type=int, default=60, help="moves of each seat")
    parser.add_argument("--path-moves", type=int, default=2000, help="moves timed per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args(argv)
    timings, alone, archiving = asyncio.run(run(args))
    report(args, timings, alone, archiving)


if __name__ == "__main__":
    main()
