"""The move path's lean client for a Redis Cluster: one lean connection per primary.

A batch of script calls (each routed by its first key: every key of a room shares the
room's hash tag, so one slot) is split by the primary owning each call's slot, the parts
go out at once, one pipeline per node, and the replies come back in the batch's order.
The slot map comes from ``CLUSTER SLOTS``; a ``MOVED`` reply (the slot has a new owner:
resharding, failover) updates it and the call is sent again to the new owner, an ``ASK``
reply (a slot being migrated) sends it once to the named node after ``ASKING``, as the
cluster specification asks of clients. Neither reply means the call ran, so the resend
cannot apply a move twice. A node that cannot be reached fails its calls (they may have
run: the player re-sends, and the seq makes that safe) and the map is read again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Sequence
from typing import Any

from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from server.redis_io.resp import RespConnection
from server.redis_io.resp_encode import encode_command

__all__ = ["ClusterResp", "slot_of"]

SLOTS = 16384
MAX_REDIRECTS = 5
_ASKING = encode_command(("ASKING",))

Address = tuple[str, int]


@functools.lru_cache(maxsize=16384)
def slot_of(key: str) -> int:
    """The cluster hash slot of a key (CRC16 of its hash tag, as Redis computes it)."""
    return int(key_slot(key.encode()))


def _address(text: str) -> Address:
    host, _, port = text.rpartition(":")
    return host, int(port)


class ClusterResp:
    """Lean connections to every primary of a cluster; see the module's docstring."""

    def __init__(
        self,
        startup: Sequence[Address],
        username: str | None = None,
        password: str | None = None,
    ) -> None:
        if not startup:
            raise ValueError("a cluster client needs at least one node to start from")
        self.startup = list(startup)
        self.username, self.password = username, password
        self._nodes: dict[Address, RespConnection] = {}
        self._slots: list[Address | None] = []
        self._refreshing: asyncio.Lock | None = None
        self.redirects = 0  # MOVED and ASK replies followed (for tests and metrics)

    @property
    def reconnects(self) -> int:
        """Connections made again to a node after one to it was lost (for /metrics)."""
        return sum(max(0, conn.connects - 1) for conn in self._nodes.values())

    def _conn(self, address: Address) -> RespConnection:
        conn = self._nodes.get(address)
        if conn is None:
            conn = self._nodes[address] = RespConnection(
                host=address[0], port=address[1], username=self.username, password=self.password
            )
        return conn

    async def refresh(self) -> None:
        """Read the slot map from the first node that answers."""
        if self._refreshing is None:
            self._refreshing = asyncio.Lock()
        async with self._refreshing:
            errors = []
            for address in dict.fromkeys([*self._nodes, *self.startup]):
                try:
                    (reply,) = await self._conn(address).execute([("CLUSTER", "SLOTS")])
                except (RedisConnectionError, OSError) as exc:
                    errors.append(f"{address[0]}:{address[1]}: {exc}")
                    continue
                if isinstance(reply, Exception):
                    errors.append(f"{address[0]}:{address[1]}: {reply}")
                    continue
                slots: list[Address | None] = [None] * SLOTS
                for start, end, primary, *_replicas in reply:
                    host = primary[0].decode() or address[0]  # "" : the node asked
                    owner = (host, int(primary[1]))
                    slots[start : end + 1] = [owner] * (end + 1 - start)
                self._slots = slots
                return
            raise RedisConnectionError("no cluster node gave its slots: " + "; ".join(errors))

    def owner(self, slot: int) -> Address | None:
        return self._slots[slot] if self._slots else None

    async def execute_routed(self, calls: Sequence[tuple[str, bytes]]) -> list[Any]:
        """Send encoded commands, each routed by its key; replies (errors in place) in order."""
        if not self._slots:
            await self.refresh()
        results: list[Any] = [None] * len(calls)
        slots = [slot_of(key) for key, _ in calls]
        todo = list(range(len(calls)))
        asking: dict[int, Address] = {}
        for _ in range(MAX_REDIRECTS + 1):
            groups: dict[Address, list[int]] = {}
            for i in todo:
                owner = asking.get(i) or self.owner(slots[i])
                if owner is None:
                    results[i] = RedisConnectionError(f"no node serves slot {slots[i]}")
                    continue
                groups.setdefault(owner, []).append(i)
            parts = list(groups.items())
            replies = await asyncio.gather(
                *(
                    self._send(node, [calls[i][1] for i in part], [i in asking for i in part])
                    for node, part in parts
                ),
                return_exceptions=True,
            )
            todo, asking, moved, lost, wait = [], {}, False, False, False
            for (_node, part), reply in zip(parts, replies, strict=True):
                if isinstance(reply, BaseException):
                    lost = True
                    for i in part:
                        results[i] = reply
                    continue
                for i, result in zip(part, reply, strict=True):
                    redirect = _redirect(result)
                    if redirect is None:
                        results[i] = result
                        continue
                    kind, slot, where = redirect
                    if kind == "MOVED" and where is not None:
                        moved = True
                        if self._slots:
                            self._slots[slot] = where
                    elif kind == "ASK" and where is not None:
                        asking[i] = where
                    else:
                        wait = True
                    self.redirects += 1
                    todo.append(i)
                    results[i] = result
            if lost or moved:
                # Unreadable now: the calls left fail with the redirection they got.
                with contextlib.suppress(RedisConnectionError):
                    await self.refresh()
            if not todo:
                break
            if wait:
                await asyncio.sleep(0.05)
        return results

    async def _send(self, node: Address, commands: list[bytes], ask: list[bool]) -> list[Any]:
        if not any(ask):
            return await self._conn(node).execute_encoded(commands)
        framed = [
            part
            for cmd, a in zip(commands, ask, strict=True)
            for part in ((_ASKING, cmd) if a else (cmd,))
        ]
        replies = iter(await self._conn(node).execute_encoded(framed))
        return [next(replies) if not a else (next(replies), next(replies))[1] for a in ask]

    async def close(self) -> None:
        for conn in self._nodes.values():
            await conn.close()
        self._nodes.clear()


def _redirect(result: Any) -> tuple[str, int, Address | None] | None:
    """("MOVED" or "ASK", slot, node) for a redirection, ("RETRY", -1, None) for a reply
    that asks to try again shortly (a slot mid-migration, a cluster electing a new
    primary; the command did not run), None for anything else."""
    if not isinstance(result, ResponseError):
        return None
    text = str(result)
    if text.startswith(("MOVED ", "ASK ")):
        kind, slot, where = text.split()[:3]
        return kind, int(slot), _address(where)
    if text.startswith(("TRYAGAIN", "CLUSTERDOWN")):
        return "RETRY", -1, None
    return None
