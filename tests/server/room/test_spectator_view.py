"""What a spectator sees in Moojub, over real sockets and a real Redis: every
board reaches every spectator (5), and no spectator frame shows a card a racer still
racing has not been dealt (6)."""

from __future__ import annotations

from typing import Any

from support.http import create_room
from support.wsclient import WsClient

import core
import protocol as p
from server.room.view import FACE_DOWN


def cards_in(board: dict[str, Any]) -> set[str]:
    return {card for pile in board["piles"].values() for card in pile}


def boards_seen(messages: list[p.Message]) -> list[dict[str, Any]]:
    """Every board in the frames a spectator got."""
    found: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, p.Progress | p.RaceStarted) and m.board is not None:
            found.append(m.board)
        if isinstance(m, p.Snapshot) and m.boards:
            found += m.boards.values()
    return found


async def test_5_a_spectator_who_came_early_gets_every_players_board(server_url: str) -> None:
    room = (await create_room(server_url, game="moojub", seed=845, seats=2))["id"]
    async with (
        WsClient.connect(server_url) as spy,
        WsClient.connect(server_url) as ann,
        WsClient.connect(server_url) as bo,
    ):
        await spy.send(p.Watch(room=room))
        await spy.expect(p.Snapshot)  # before anyone sat down
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        await ann.expect(p.RaceStarted)
        for client in (ann, bo):
            await client.send(p.Move(seq=1, move="deal"))
            await client.expect(p.Accepted)
        progress = [m for m in await spy.everything(0.5) if isinstance(m, p.Progress)]
        assert sorted(m.seat for m in progress) == [0, 1]
        assert all(m.board is not None for m in progress), progress


async def test_6_spectators_never_see_a_card_a_racer_has_not_been_dealt(server_url: str) -> None:
    seed = 845
    room = (await create_room(server_url, game="moojub", seed=seed, seats=2))["id"]
    talon = core.new_game("moojub", seed).state(view="full")["talon"]  # next card first
    async with (
        WsClient.connect(server_url) as ann,
        WsClient.connect(server_url) as bo,
        WsClient.connect(server_url) as spy,
    ):
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        # ann watches her own room on a second connection: a spectator like any other.
        await spy.send(p.Watch(room=room))
        await spy.expect(p.Snapshot)
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        await ann.expect(p.RaceStarted)
        for seq in (1, 2):  # ann is dealt 8 cards of the talon; bo none yet
            await ann.send(p.Move(seq=seq, move="deal"))
            assert (await ann.expect(p.Accepted)).board is not None
        await spy.everything(0.5)
        # A spectator who comes now gets a snapshot: the same rule.
        async with WsClient.connect(server_url) as late:
            await late.send(p.Watch(room=room))
            snapshot = await late.expect(p.Snapshot)
        shown = set().union(*map(cards_in, boards_seen([*spy.seen, snapshot])))
        assert not shown & set(talon), shown & set(talon)  # bo has not been dealt them
        # Face down, not gone: ann's reserves still hold three cards each.
        ann_board = [m for m in spy.seen if isinstance(m, p.Progress)][-1].board
        assert ann_board is not None
        assert ann_board["piles"]["r1"][1:] == [FACE_DOWN, FACE_DOWN]
        # bo is dealt four: those four may now be shown (both racers have them).
        await bo.send(p.Move(seq=1, move="deal"))
        await bo.expect(p.Accepted)
        progress = [m for m in await spy.everything(0.5) if isinstance(m, p.Progress)][-1]
        assert progress.board is not None and progress.seat == 1
        assert set(talon[:4]) <= cards_in(progress.board)
        # When bo stops racing, nothing of ann's is hidden any more.
        await bo.send(p.Resign())
        await spy.expect(p.PlayerOut)
        await ann.send(p.Move(seq=3, move="deal"))
        await ann.expect(p.Accepted)
        last = [m for m in await spy.everything(0.5) if isinstance(m, p.Progress)][-1]
        assert last.board is not None and FACE_DOWN not in cards_in(last.board)
        assert set(talon[:12]) <= cards_in(last.board)
