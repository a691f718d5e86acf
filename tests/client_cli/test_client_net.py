"""The client's reconnecting link (client_cli/net.py) against a scripted server."""

from __future__ import annotations

import asyncio

import pytest
from support.client_fake_server import FakeServer

from client_cli.seat import Seat
from protocol import PlayerJoined, Snapshot


@pytest.mark.timeout(30)
async def test_a_message_the_client_cannot_take_in_is_dropped_and_the_link_lives_on() -> None:
    # A snapshot that decodes but whose room holds a seat "one" (a server of another
    # version, a fake one) raised inside the link's task: the task ended in silence, and
    # no later message, nor any reconnection, ever came; the screen (or the bot) waited.
    async with FakeServer() as fake:
        seat = Seat(fake.url, fake.room, "ann")
        await seat.start()
        try:
            room = {**fake.room_view(), "players": [{"seat": "one", "name": "ann"}]}
            await fake.tell(Snapshot(version=fake.version, room=room))  # type: ignore[typeddict-item]
            await fake.push(PlayerJoined(version=0, at=0.0, seat=1, name="bo"))
            async with asyncio.timeout(5):
                while 1 not in seat.view.racers:
                    await asyncio.sleep(0.02)
            assert seat.link.connected.is_set()
        finally:
            await seat.close()
