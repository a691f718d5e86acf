"""Connecting to Redis, one node or a Cluster, behind one small interface.

`connect(url)` gives redis-py's client for the plain commands: `Redis` for one node, or
`RedisCluster` when the node at `url` says it is part of a cluster (``INFO cluster``), so
`REDIS_URL` may name any node of a cluster and nothing else changes. `lean_client` gives the
move path's own client (server/redis_io/resp.py for one node, server/redis_io/cluster.py for a
cluster),
and `tcp_nodes` where the pub/sub feed may connect. Anything but plain TCP (a Unix socket,
TLS) stays with redis-py alone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from server.redis_io.cluster import Address, ClusterResp
from server.redis_io.resp import REPLY_DEADLINE, RespConnection, tcp_address

__all__ = ["AnyRedis", "LeanClient", "Nodes", "connect", "lean_client", "tcp_nodes"]

log = logging.getLogger(__name__)

AnyRedis = Redis | RedisCluster
LeanClient = RespConnection | ClusterResp


def _retry() -> Retry:
    # A restarted Redis (see server/redis_io/supervisor.py) leaves every pooled connection
    # dead: retry on a fresh connection rather than fail one command per stale connection.
    # Not a timeout: a Redis that did not answer within REPLY_DEADLINE is stuck (frozen,
    # or a dead link), and three more tries made a request wait four deadlines (20 s)
    # before its 503, and the sweeps notice the outage as late.
    backoff = ExponentialBackoff(cap=1.0, base=0.05)
    return Retry(backoff, 3, supported_errors=(RedisConnectionError,))


async def connect(url: str) -> AnyRedis:
    # A burst (a thousand sockets dropping at once) must wait for a connection: the default
    # pool raises MaxConnectionsError past 100 connections in use.
    # socket_timeout: a reply that does not come fails its command (REPLY_DEADLINE, the
    # lean client's deadline too) instead of holding a pooled connection forever.
    pool = BlockingConnectionPool.from_url(
        url, max_connections=64, timeout=20, retry=_retry(), socket_timeout=REPLY_DEADLINE
    )
    redis = Redis.from_pool(pool)
    try:
        info = await redis.info("cluster")
    except ResponseError:  # a proxy or a Redis without the section: one node
        info = {}
    if not info.get("cluster_enabled"):
        return redis
    await redis.aclose()
    cluster = RedisCluster.from_url(
        url, max_connections=64, retry=_retry(), socket_timeout=REPLY_DEADLINE
    )
    await cluster.initialize()
    log.info("Redis Cluster with %d primaries", len(cluster.get_primaries()))
    return cluster


@dataclass(frozen=True, slots=True)
class Nodes:
    """Where to reach Redis over plain TCP: the first of `addresses` that answers."""

    addresses: list[Address]
    db: int
    username: str | None
    password: str | None


def tcp_nodes(redis: AnyRedis) -> Nodes | None:
    """The client's nodes and credentials, or None when it needs more than plain TCP."""
    kwargs: dict[str, Any]
    if isinstance(redis, RedisCluster):
        kwargs = redis.nodes_manager.connection_kwargs
    else:
        kwargs = redis.connection_pool.connection_kwargs
    address = tcp_address(kwargs)
    if address is None:
        return None
    if isinstance(redis, RedisCluster):
        addresses = [(n.host, int(n.port)) for n in redis.get_primaries()]
    else:
        addresses = [address]
    return Nodes(
        addresses=addresses,
        db=int(kwargs.get("db") or 0),
        username=kwargs.get("username"),
        password=kwargs.get("password"),
    )


def lean_client(redis: AnyRedis) -> LeanClient | None:
    """The move path's lean client for `redis`'s nodes (None: redis-py does it all)."""
    nodes = tcp_nodes(redis)
    if nodes is None:
        return None
    if isinstance(redis, RedisCluster):
        return ClusterResp(nodes.addresses, nodes.username, nodes.password)
    host, port = nodes.addresses[0]
    # RESP3: the pub/sub feed may share it (server/storage/feed.py, LeanFeed.sharing).
    return RespConnection(host, port, nodes.db, nodes.username, nodes.password, resp3=True)
