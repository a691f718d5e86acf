"""Whether this process can serve rooms now: the Redis check behind `/healthz`.

One Redis: it answers PING. A Redis Cluster: *every* primary of the slot map answers, and
says `cluster_state:ok`. Pinging whichever node the client picks would say "healthy" while
a primary is down (until the cluster itself notices, `cluster-node-timeout`, 15 s by
default, or for good when no replica takes over), although every room in that primary's
slots fails: a balancer must see that.
"""

from __future__ import annotations

import asyncio

from redis.asyncio import RedisCluster

from server.redis_io.connect import AnyRedis

__all__ = ["CHECK_TIMEOUT", "redis_problem"]

CHECK_TIMEOUT = 1.0  # seconds a node may take to answer the health check


async def redis_problem(redis: AnyRedis, timeout: float = CHECK_TIMEOUT) -> str | None:
    """None when Redis (every primary of a cluster) is usable; otherwise what is wrong."""
    if not isinstance(redis, RedisCluster):
        try:
            await asyncio.wait_for(redis.ping(), timeout)
        except Exception as exc:
            return _why(exc)
        return None
    primaries = redis.get_primaries()
    answers = await asyncio.gather(
        *(
            asyncio.wait_for(redis.execute_command("CLUSTER INFO", target_nodes=node), timeout)
            for node in primaries
        ),
        return_exceptions=True,
    )
    problems = []
    for node, answer in zip(primaries, answers, strict=True):
        if isinstance(answer, BaseException):
            problems.append(f"primary {node.name} does not answer: {_why(answer)}")
        elif "cluster_state:ok" not in _text(answer):
            problems.append(f"primary {node.name} says the cluster is not ok")
    return "; ".join(problems) or None


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _text(answer: object) -> str:
    if isinstance(answer, bytes):
        return answer.decode(errors="replace")
    if isinstance(answer, dict):  # redis-py may parse CLUSTER INFO into a dict
        return "".join(f"{key}:{value}\n" for key, value in answer.items())
    return str(answer)
