"""Client CPU per script call: redis-py's asyncio pipeline against ``server/redis_io/resp.py``.

``python -m bench.redis_client`` starts its own redis-server and sends batches of
``EVALSHA`` calls shaped like the move script (5 keys, 12 arguments) both ways,
timing the client's CPU only (``time.process_time``). redis-py is the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time

from redis.asyncio import Redis

from server.redis_io.connect import lean_client
from server.redis_io.resp import RespConnection
from server.redis_io.supervisor import RedisSupervisor

__all__ = ["main"]

SCRIPT = "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return {'ok', ARGV[2]}"
KEYS = ("{room:bench}:meta", "{room:bench}:moves:0", "{room:bench}:seq:0", "k4", "k5")
ARGS: tuple[int | str | bytes, ...] = (0, 17, 16, "1796043961150 t5 c1", 1796043961150, 1)
ARGS += (b"\x88" * 60, b'{"progress":3}', b"\x87" * 50, 512, "{room:bench}:events", 86400000)


async def run(calls: int, sizes: list[int]) -> list[tuple[int, float, float]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="solrace-bench-redis-") as data:
        async with RedisSupervisor(data) as url:
            redis = Redis.from_url(url)
            sha = await redis.script_load(SCRIPT)
            resp = lean_client(redis)
            assert isinstance(resp, RespConnection)
            command = ("EVALSHA", sha, len(KEYS), *KEYS, *ARGS)
            for size in sizes:
                rounds = max(1, calls // size)

                async def with_redis_py(size: int = size, rounds: int = rounds) -> None:
                    for _ in range(rounds):
                        async with redis.pipeline(transaction=False) as pipe:
                            for _ in range(size):
                                pipe.evalsha(sha, len(KEYS), *KEYS, *ARGS)
                            await pipe.execute(raise_on_error=False)

                async def with_resp(size: int = size, rounds: int = rounds) -> None:
                    for _ in range(rounds):
                        await resp.execute([command] * size)

                timings = []
                for runner in (with_redis_py, with_resp):
                    start = time.process_time()
                    await runner()
                    timings.append((time.process_time() - start) / (rounds * size) * 1e6)
                rows.append((size, timings[0], timings[1]))
            await resp.close()
            await redis.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=3000, help="calls per batch size")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 64])
    args = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        rows = asyncio.run(run(args.calls, args.sizes))
    else:
        rows = uvloop.run(run(args.calls, args.sizes))
    print("| batch size | redis-py pipeline µs/call | server/redis_io/resp.py µs/call | ratio |")
    print("|---:|---:|---:|---:|")
    for size, baseline, lean in rows:
        print(f"| {size} | {baseline:.1f} | {lean:.1f} | {baseline / lean:.1f}x |")


if __name__ == "__main__":
    main()
