"""How frames leave a socket: written together at the end of a tick, in order."""

from __future__ import annotations

import asyncio

from support.in_memory import Transport, connection

import protocol as p
from server.live.connection import Connection, Flusher


async def test_frames_of_one_tick_go_out_in_one_write_in_order() -> None:
    conn, transport = connection(flusher=Flusher())
    conn.send_frame(b"a")
    conn.send_frame(b"b")
    assert transport.writes == []  # nothing before the end of the tick
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert transport.writes == [b"ab"]


async def test_what_one_read_sends_goes_out_one_round_later_in_one_write() -> None:
    """A move's progress (pub/sub) and its mover's accepted (built from the script's reply
    as it is read) come in one read from Redis: they leave together, after one round of
    the event loop, before any task woken by that read runs."""
    conn, transport = connection(flusher=Flusher())
    woken: list[list[bytes]] = []

    def read_from_redis() -> None:  # one data_received: the push, then the reply
        conn.send_frame(b"progress")
        conn.send_frame(b"accepted")
        asyncio.get_running_loop().call_soon(lambda: woken.append(list(transport.writes)))

    asyncio.get_running_loop().call_soon(read_from_redis)
    await asyncio.sleep(0)  # the read
    assert transport.writes == []
    await asyncio.sleep(0)  # the next round
    assert transport.writes == [b"progressaccepted"]
    assert woken == [[b"progressaccepted"]]  # written before what the read woke


async def test_a_frame_sent_now_leaves_at_once_but_after_what_waits() -> None:
    conn, transport = connection(flusher=Flusher())
    conn.send_frame_now(b"a")
    assert transport.writes == [b"a"]  # at once
    conn.send_frame(b"b")
    conn.send_frame_now(b"c")  # behind b, which waits for the end of the tick
    assert transport.writes == [b"a"]
    for _ in range(3):
        await asyncio.sleep(0)
    assert transport.writes == [b"a", b"bc"]


async def test_an_answer_leaves_before_the_frames_other_sockets_got_in_its_tick() -> None:
    """A move's `accepted` is written before the `progress` its opponents got from the same
    read from Redis: the mover's wait is not the length of the room's fan-out. The mover's
    own frames keep their order, in one write."""
    flusher = Flusher()
    order: list[str] = []

    def sending(name: str) -> tuple[Connection, Transport]:
        conn, transport = connection(name, flusher)
        write = transport.write
        transport.write = lambda data: (order.append(name), write(data))  # type: ignore[method-assign]
        return conn, transport

    opponent, _ = sending("opponent")
    mover, mover_transport = sending("mover")
    answer = p.Accepted(seq=1, move="x", progress=1, moves=1, won=False, stuck=False, version=2)
    opponent.send_frame(b"progress")
    mover.send(p.Pong(id=1, server_time=1.0))
    mover.answer(answer)
    quiet, _ = sending("quiet")
    quiet.answer(answer)  # an answer with nothing before it in its tick
    await asyncio.sleep(0)
    assert order == ["mover", "quiet", "opponent"]
    assert len(mover_transport.writes) == 1
    assert mover_transport.messages() == [p.Pong(id=1, server_time=1.0), answer]
