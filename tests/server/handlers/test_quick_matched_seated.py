"""`matched` says the socket is seated: a request sent on reading it is answered as a
seated player's, on the socket that waited in the queue too (its `matched` comes from the
other socket's pairing, beside its own messages)."""

from __future__ import annotations

from support.wsclient import WsClient

import protocol as p


async def test_a_request_sent_on_reading_matched_is_a_seated_players(server_url: str) -> None:
    for game in ("shaula", "stalactites", "moojub"):
        async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as bo:
            await ann.send(p.QuickMatch(game=game, name="ann"))
            await ann.expect(p.Queued)
            await bo.send(p.QuickMatch(game=game, name="bo"))
            matched = await ann.expect(p.Matched)  # the one who waited
            await ann.send(p.Resync())  # at once, before anything else comes
            welcome = await ann.recv()
            assert isinstance(welcome, p.Welcome) and welcome.seat == matched.seat, welcome
            # The join's snapshot, then the resync's; the room's events (the partner's
            # presence, the countdown) may come between them. Never an error.
            answers: list[p.Message] = []
            while sum(isinstance(m, p.Snapshot) for m in answers) < 2:
                answers.append(await ann.recv())
                assert not isinstance(answers[-1], p.Error), (game, answers)
