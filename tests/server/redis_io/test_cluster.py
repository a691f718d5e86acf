"""Redis Cluster: rooms spread over the primaries, and the lean move client follows the
cluster's redirections (tests/server/test_two_processes.py runs whole races on it)."""

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from support.http import create_room
from support.ports import free_port
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from server.redis_io.cluster import ClusterResp, slot_of
from server.redis_io.connect import connect
from server.redis_io.resp_encode import encode_command
from server.storage.keys import RoomKeys


@pytest.fixture
async def cluster(redis_cluster_url: str) -> AsyncIterator[RedisCluster]:
    client = await connect(redis_cluster_url)
    assert isinstance(client, RedisCluster)  # found out from the URL of one node
    yield client
    await client.aclose()


async def node_id(port: int) -> str:
    redis = Redis(port=port)
    myid = await redis.execute_command("CLUSTER", "MYID")
    await redis.aclose()
    return myid.decode() if isinstance(myid, bytes) else str(myid)


async def test_a_plain_redis_url_stays_one_node(redis_url: str) -> None:
    client = await connect(redis_url)
    assert isinstance(client, Redis)
    await client.aclose()


async def test_rooms_spread_over_the_primaries_and_play_there(
    make_cluster_server: MakeServer, cluster: RedisCluster
) -> None:
    url = await make_cluster_server()
    rooms = [(await create_room(url, seed=40 + i, seats=1))["id"] for i in range(12)]
    owners = {cluster.get_node_from_key(RoomKeys(room).meta).port for room in rooms}
    assert len(owners) >= 2
    for room in rooms[:4]:  # a move in rooms on different nodes, each persisted there
        game = core.new_game("shaula", 40 + rooms.index(room))
        async with WsClient.connect(url) as ann:
            await race_alone(ann, room)
            move = game.legal_moves()[0]
            await ann.send(p.Move(seq=1, move=move))
            assert (await ann.expect(p.Accepted)).moves == 1
        node = cluster.get_node_from_key(RoomKeys(room).moves(0))
        assert await cluster.llen(RoomKeys(room).moves(0)) == 1
        assert node.port in owners


async def test_a_moved_reply_reroutes_and_updates_the_slot_map(redis_cluster_url: str) -> None:
    port = int(redis_cluster_url.rsplit(":", 1)[1].split("/")[0])
    client = ClusterResp([("127.0.0.1", port)])
    key = "{room:moved}:meta"
    await client.refresh()
    owner = client.owner(slot_of(key))
    assert owner is not None
    wrong = next(a for a in {client.owner(s) for s in range(0, 16384, 512)} if a != owner)
    assert wrong is not None
    client._slots[slot_of(key)] = wrong  # a stale map, as after a resharding
    (reply,) = await client.execute_routed([(key, encode_command(("HSET", key, "a", 1)))])
    assert reply == 0 or reply == 1
    assert client.redirects == 1 and client.owner(slot_of(key)) == owner
    await client.close()


async def test_an_ask_reply_during_a_migration_is_followed_once(redis_cluster_url: str) -> None:
    port = int(redis_cluster_url.rsplit(":", 1)[1].split("/")[0])
    client = ClusterResp([("127.0.0.1", port)])
    await client.refresh()
    key = "{room:asked}:meta"
    slot = slot_of(key)
    source = client.owner(slot)
    target = next(a for a in {client.owner(s) for s in range(0, 16384, 512)} if a != source)
    assert source is not None and target is not None
    source_id, target_id = await node_id(source[1]), await node_id(target[1])
    src, dst = Redis(port=source[1]), Redis(port=target[1])
    await dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    await src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    try:
        # The key is not on the source (any more): it answers ASK, the target serves it.
        script = "return {redis.call('EXISTS', KEYS[1]), ARGV[1]}"
        command = encode_command(("EVAL", script, 1, key, "hello"))
        (reply,) = await client.execute_routed([(key, command)])
        assert reply == [0, b"hello"]
        assert client.redirects == 1 and client.owner(slot) == source  # ASK: map unchanged
    finally:
        for node in (src, dst):
            await node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", source_id)
            await node.aclose()
        await client.close()


async def test_the_slot_map_comes_from_the_first_node_that_answers(
    redis_cluster_url: str,
) -> None:
    port = int(redis_cluster_url.rsplit(":", 1)[1].split("/")[0])
    dead = free_port()  # nothing listens there
    client = ClusterResp([("127.0.0.1", dead), ("127.0.0.1", port)])
    key = "{room:firstnode}:meta"
    (reply,) = await client.execute_routed([(key, encode_command(("HSET", key, "a", 1)))])
    assert reply in (0, 1) and client.owner(slot_of(key)) is not None
    await client.close()
    nobody = ClusterResp([("127.0.0.1", dead)])
    with pytest.raises(RedisConnectionError, match="no cluster node gave its slots"):
        await nobody.refresh()
