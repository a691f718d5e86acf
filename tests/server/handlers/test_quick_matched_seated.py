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
            answers = [await ann.recv() for _ in range(3)]
            assert [type(m) for m in answers] == [p.Welcome, p.Snapshot, p.Snapshot], answers
            assert isinstance(answers[0], p.Welcome) and answers[0].seat == matched.seat
