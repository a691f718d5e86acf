"""Every client message goes through one table (server/edge/dispatch.py) to the one part
that answers it; the service, the live lobby and the tournaments' standings run on the
memory store here."""

from __future__ import annotations

import typing
from typing import Any

from support.in_memory import connection, settled, world

import protocol as p
from protocol import ErrorCode
from server.edge.dispatch import Dispatcher
from server.live.lobby_live import LobbyLive
from server.tournament.live import TourLive


def dispatcher() -> Dispatcher:
    store, hub, service = world()
    tours: Any = None  # no tournament is looked up by these tests
    return Dispatcher(service, LobbyLive(store, hub.feed), TourLive(tours, hub.feed))


def test_every_client_message_has_exactly_one_route() -> None:
    routes = dispatcher().routes
    assert set(routes) == set(typing.get_args(p.ClientToServer))
    owner = {kind: type(getattr(route, "__self__", None)) for kind, route in routes.items()}
    to_lobby = {kind for kind, part in owner.items() if part is LobbyLive}
    to_tours = {kind for kind, part in owner.items() if part is TourLive}
    assert to_lobby == {p.LobbyWatch, p.LobbyUnwatch}
    assert to_tours == {p.TourWatch, p.TourUnwatch}


async def test_messages_reach_the_service_the_lobby_and_the_tournaments() -> None:
    dispatch = dispatcher()
    conn, out = connection("ann")
    await dispatch.handle(conn, p.Ping(id=7))
    await dispatch.handle(conn, p.LobbyWatch())
    await dispatch.handle(conn, p.TourWatch(tournament="t1", top=0))  # refused by its part
    await dispatch.handle(conn, p.Unexpected(code=ErrorCode.BAD_MESSAGE, message="garbage"))
    await settled()
    kinds = [type(message) for message in out.messages()]
    assert kinds == [p.Pong, p.LobbyState, p.Error, p.Error], kinds
    pong, _, tour_error, bad = out.messages()
    assert isinstance(pong, p.Pong) and pong.id == 7
    assert isinstance(tour_error, p.Error) and tour_error.code == ErrorCode.BAD_MESSAGE.value
    assert isinstance(bad, p.Error) and bad.code == ErrorCode.BAD_MESSAGE.value
    assert conn in dispatch.lobby.watchers
    await dispatch.closed(conn)
    assert conn not in dispatch.lobby.watchers
