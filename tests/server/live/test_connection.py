"""How frames leave a socket: written together at the end of a tick, in order."""

from __future__ import annotations

import asyncio

from support.in_memory import connection

from server.live.connection import Flusher


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
