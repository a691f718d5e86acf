"""Every refusal: bad frames, bad fields, unknown rooms, wrong players, wrong times, floods."""

import asyncio
import contextlib
import json
import socket
from typing import Any

import msgpack
import pytest
import websockets
from support.http import create_room, get_json, get_text
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone, seat_two_and_watch

import core
import protocol as p
from server.room.ids import clean_name


async def error_for(client: WsClient, data: bytes | str) -> p.Error:
    await client.send_raw(data)
    return await client.expect(p.Error)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\xc1\xc1", "bad_frame"),
        (b"\x92\x01\x02", "bad_frame"),
        ("{not json", "bad_frame"),
        ("[1, 2]", "bad_frame"),
        (msgpack.packb({"type": "fly", "v": 1}), "unknown_type"),
        (json.dumps({"type": "fly", "v": 1}), "unknown_type"),
        (msgpack.packb({"type": "ping", "v": 99}), "bad_version"),
        (msgpack.packb({"type": "ping", "v": 1.0}), "bad_version"),
        ('{"type": "ping", "v": 1.0}', "bad_version"),
        (msgpack.packb({"type": "move", "v": 1, "seq": "one", "move": "t1 c1"}), "bad_message"),
        (json.dumps({"type": "join", "v": 1}), "bad_message"),
        (json.dumps({"type": "join", "v": 1, "room": 7}), "bad_message"),
    ],
)
async def test_bad_input_gets_an_error_and_the_socket_stays_open(
    server_url: str, data: bytes | str, code: str
) -> None:
    async with WsClient.connect(server_url) as c:
        err = await error_for(c, data)
        assert err.code == code and err.message
        await c.send(p.Ping(id=5))
        assert (await c.expect(p.Pong)).id == 5


async def test_errors_name_the_request_they_answer(make_server: MakeServer) -> None:
    url = await make_server(rate_per_second=0.01, rate_burst=3.0, flood_close_after=1000)
    async with WsClient.connect(url, binary=False) as c:
        err = await error_for(c, json.dumps({"type": "move", "v": 1, "seq": 9, "move": 5}))
        assert (err.code, err.request, err.seq) == ("bad_message", "move", 9)
        await c.send(p.Ready())  # decoded, refused by the service
        err = await c.expect(p.Error)
        assert (err.code, err.request, err.seq, err.id) == ("not_joined", "ready", None, None)
        err = await error_for(c, "{not json")
        assert err.code == "bad_frame" and err.request is None
        await c.send(p.Ping(id=100))  # past the burst of 3: dropped, and it says which one
        err = await c.expect(p.Error)
        assert (err.code, err.request, err.id) == ("rate_limited", "ping", 100)


async def test_a_move_before_joining_is_refused_by_seq(server_url: str) -> None:
    async with WsClient.connect(server_url) as c:
        await c.send(p.Undo(seq=3))
        refused = await c.expect(p.Refused)
        assert (refused.seq, refused.code) == (3, "not_joined")


async def test_text_frames_get_json_answers(server_url: str) -> None:
    async with WsClient.connect(server_url, binary=False) as c:
        await c.send_raw(json.dumps({"type": "ping", "v": 1, "id": 3}))
        raw = await c.ws.recv()
        assert isinstance(raw, str) and json.loads(raw)["type"] == "pong"


async def test_an_oversized_frame_closes_with_1009(make_server: MakeServer) -> None:
    url = await make_server(max_frame=1024)
    async with WsClient.connect(url) as c:
        await c.send_raw(b"\x00" * 2048)
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await c.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_a_text_frame_that_is_not_utf8_closes_with_1007(server_url: str) -> None:
    async with WsClient.connect(server_url) as c:
        await c.ws.send(b"\xff\xfe{}", text=True)
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await c.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == p.CloseCode.BAD_DATA
    async with WsClient.connect(server_url) as c:  # the server is fine
        await c.send(p.Ping(id=1))
        assert (await c.expect(p.Pong)).id == 1


async def test_unknown_room(server_url: str) -> None:
    async with WsClient.connect(server_url) as c:
        await c.send(p.Join(room="nope", name="x"))
        assert (await c.expect(p.Error)).code == "unknown_room"
        await c.send(p.Watch(room="nope"))
        assert (await c.expect(p.Error)).code == "unknown_room"


async def test_room_actions_need_a_room(server_url: str) -> None:
    async with WsClient.connect(server_url) as c:
        await c.send(p.Move(seq=1, move="t1 c1"))
        assert (await c.expect(p.Refused)).code == "not_joined"
        await c.send(p.Resign())
        assert (await c.expect(p.Error)).code == "not_joined"


async def test_full_room_and_joining_twice(server_url: str) -> None:
    room = (await create_room(server_url, seats=1))["id"]
    async with WsClient.connect(server_url) as a, WsClient.connect(server_url) as b:
        await a.join(room, "ann")
        await a.send(p.Join(room=room, name="again"))
        assert (await a.expect(p.Error)).code == "already_joined"
        await b.send(p.Join(room=room, name="bo"))
        assert (await b.expect(p.Error)).code == "room_full"


async def test_nobody_moves_before_the_start_or_after_the_end(server_url: str) -> None:
    room = (await create_room(server_url, seed=7, countdown=0.3))["id"]
    game = core.new_game("shaula", 7)
    async with WsClient.connect(server_url) as a:
        await a.join(room, "ann")
        await a.send(p.Move(seq=1, move=game.legal_moves()[0]))
        refused = await a.expect(p.Refused)
        assert (refused.seq, refused.code) == (1, "not_running")
        await a.send(p.Start())
        await a.expect(p.Countdown)
        await a.send(p.Move(seq=1, move=game.legal_moves()[0]))
        assert (await a.expect(p.Refused)).code == "not_running"
        await a.expect(p.RaceStarted)
        await a.send(p.Resign())
        await a.expect(p.RaceFinished)
        await a.send(p.Move(seq=2, move=game.legal_moves()[0]))
        assert (await a.expect(p.Refused)).code == "not_running"


async def test_spectators_cannot_move_and_players_only_move_their_own_board(
    server_url: str,
) -> None:
    room = (await create_room(server_url, seed=8))["id"]
    game = core.new_game("shaula", 8)
    async with (
        WsClient.connect(server_url) as a,
        WsClient.connect(server_url) as b,
        WsClient.connect(server_url) as spy,
    ):
        _, token_b = await seat_two_and_watch(room, a, b, spy)
        await a.expect(p.RaceStarted)
        await spy.send(p.Move(seq=1, move=game.legal_moves()[0]))
        assert (await spy.expect(p.Refused)).code == "not_player"
        await spy.send(p.Resign())
        assert (await spy.expect(p.Error)).code == "not_player"
        # Ann's move changes Ann's board only: Bo's same first move is still legal.
        move = game.legal_moves()[0]
        await a.send(p.Move(seq=1, move=move))
        await a.expect(p.Accepted)
        await b.send(p.Move(seq=1, move=move))
        accepted = await b.expect(p.Accepted)
        assert accepted.moves == 1
        # Ann cannot take Bo's seat with a made-up token, nor act for it.
        await spy.send(p.Join(room=room, token=(token_b or "") + "x"))
        assert (await spy.expect(p.Error)).code == "already_joined"


@pytest.mark.parametrize(("game_name", "seed"), [("shaula", 9), ("moojub", 845)])
async def test_a_replayed_seq_is_answered_again_never_applied_twice(
    server_url: str, game_name: str, seed: int
) -> None:
    room = (await create_room(server_url, game=game_name, seed=seed, seats=1))["id"]
    game = core.new_game(game_name, seed)
    async with WsClient.connect(server_url) as a:
        await race_alone(a, room)
        move = game.legal_moves()[0]
        await a.send(p.Move(seq=1, move=move))
        first = await a.expect(p.Accepted)
        # Moojub answers carry the board (a move may turn up an unknown card), a
        # repeated answer too: the client may have lost the first one.
        game.apply(move)
        hidden = game_name == "moojub"
        assert first.board == (game.state(view="player") if hidden else None)
        await a.send(p.Move(seq=1, move=move))
        again = await a.expect(p.Accepted)
        assert again == first
        await a.send(p.Move(seq=1, move="anything at all"))
        assert await a.expect(p.Accepted) == first
        await a.send(p.Move(seq=0, move=move))
        assert (await a.expect(p.Refused)).code == "stale_seq"
        progress = [m for m in await a.everything() if isinstance(m, p.Progress)]
        assert len(progress) == 1  # applied once


async def test_a_move_resent_after_the_end_gets_its_first_answer(server_url: str) -> None:
    # The race may end on the very move whose answer was lost with the connection.
    room = (await create_room(server_url, seed=9, seats=1))["id"]
    move = core.new_game("shaula", 9).legal_moves()[0]
    async with WsClient.connect(server_url) as a:
        await race_alone(a, room)
        await a.send(p.Move(seq=1, move=move))
        first = await a.expect(p.Accepted)
        await a.send(p.Resign())
        await a.expect(p.RaceFinished)
        await a.send(p.Move(seq=1, move=move))
        assert await a.expect(p.Accepted) == first
        await a.send(p.Move(seq=2, move=move))
        assert (await a.expect(p.Refused)).code == "not_running"


async def test_undo_and_hints_follow_the_room_settings(server_url: str) -> None:
    room = (await create_room(server_url, seed=10, seats=1, undo=False))["id"]
    async with WsClient.connect(server_url) as a:
        await race_alone(a, room)
        await a.send(p.Undo(seq=1))
        assert (await a.expect(p.Refused)).code == "undo_not_allowed"
        await a.send(p.Hint())
        assert (await a.expect(p.Error)).code == "hints_not_allowed"


async def test_hints_when_allowed(server_url: str) -> None:
    room = (await create_room(server_url, game="stalactites", seed=11, seats=1, hints=True))["id"]
    async with WsClient.connect(server_url) as a:
        await race_alone(a, room)
        await a.send(p.Hint())
        hint = await a.expect(p.HintReply, timeout=20)
        assert hint.move in core.new_game("stalactites", 11).legal_moves()


async def test_a_player_out_of_the_race_gets_no_hints_or_legal_moves(server_url: str) -> None:
    """`hint` and `legal` are for players still racing (docs/protocol.md section 4): after a
    resign, while the other racer races on, both are refused `player_out`, as a move is."""
    room = (await create_room(server_url, seed=12, hints=True))["id"]
    async with WsClient.connect(server_url) as a, WsClient.connect(server_url) as b:
        for client, name in ((a, "ann"), (b, "bo")):
            await client.join(room, name)
            await client.send(p.Ready())
        await a.expect(p.RaceStarted)
        await a.send(p.Legal())
        assert (await a.expect(p.LegalReply)).moves
        await a.send(p.Resign())
        await a.expect(p.PlayerOut)
        for ask in (p.Legal(), p.Hint()):
            await a.send(ask)
            assert (await a.expect(p.Error)).code == "player_out"
        await b.send(p.Legal())
        assert (await b.expect(p.LegalReply)).moves  # the other racer still gets them


async def test_hints_followed_one_by_one_never_lead_back(server_url: str) -> None:
    """In Shaula a line found afresh after a hint could begin by taking it back: hints
    taken one by one went back and forth between two positions for ever."""
    room = (await create_room(server_url, game="shaula", seed=617, seats=1, hints=True))["id"]
    board = core.new_game("shaula", 617)
    been = {board.key()}
    async with WsClient.connect(server_url) as a:
        await race_alone(a, room)
        for seq in range(1, 21):
            await a.send(p.Hint())
            move = (await a.expect(p.HintReply, timeout=20)).move
            assert move is not None
            await a.send(p.Move(seq=seq, move=move))
            await a.expect(p.Accepted)
            board.apply(move)
            assert board.key() not in been, f"hint {seq}, {move}, went back"
            been.add(board.key())


async def test_a_flood_is_rate_limited_then_closed_with_1008(make_server: MakeServer) -> None:
    url = await make_server(rate_per_second=5.0, rate_burst=5.0, flood_close_after=20)
    async with WsClient.connect(url) as c:
        for i in range(40):
            await c.send(p.Ping(id=i))
        got: list[p.Message] = []
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                got.append(await c.recv())
        assert any(isinstance(m, p.Error) and m.code == "rate_limited" for m in got)
        assert sum(isinstance(m, p.Pong) for m in got) < 20  # burst 5, then 5/s
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_a_rate_limited_move_is_refused_by_seq(make_server: MakeServer) -> None:
    # A client waits for the answer to each seq: a dropped move must say so.
    url = await make_server(rate_per_second=5.0, rate_burst=5.0, flood_close_after=1000)
    room = (await create_room(url, seed=617, seats=1))["id"]
    async with WsClient.connect(url) as a:
        await race_alone(a, room)
        for seq in range(1, 21):
            await a.send(p.Move(seq=seq, move="t8 c1" if seq == 1 else "c1 c2"))
        answers = {}
        while len(answers) < 20:
            m = await a.recv()
            if isinstance(m, p.Accepted | p.Refused):
                answers[m.seq] = m
        limited = [m for m in answers.values() if getattr(m, "code", "") == "rate_limited"]
        assert limited and all(isinstance(m, p.Refused) for m in limited)


async def test_a_client_that_does_not_read_is_dropped(make_server: MakeServer) -> None:
    url = await make_server(send_buffer=16384, rate_per_second=10000.0, rate_burst=10000.0)
    room = (await create_room(url, seats=1))["id"]
    async with WsClient.connect(url) as player:  # a running race: snapshots carry boards
        await race_alone(player, room)
    ws_url = url.replace("http://", "ws://") + "/ws"
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fill up fast
    sock.connect(("127.0.0.1", int(url.rsplit(":", 1)[1])))
    async with websockets.connect(ws_url, max_queue=1, sock=sock) as ws:
        await ws.send(p.encode_msgpack(p.Watch(room=room)))
        # Ask for many snapshots while reading none: TCP buffers fill, then the queue.
        with contextlib.suppress(websockets.ConnectionClosed):
            for _ in range(8000):
                await ws.send(p.encode_msgpack(p.Resync()))
        for _ in range(100):  # not reading the socket: watch the server's metrics instead
            _, text = await get_text(f"{url}/metrics")
            if "solrace_slow_clients_dropped_total 1" in text:
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("the slow client was not dropped")
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                await asyncio.wait_for(ws.recv(), 5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4000


async def test_names_lose_control_characters(server_url: str) -> None:
    # An escape sequence in a name would reach every other player's terminal.
    assert clean_name("\x1b[2J\x1b[31mEVIL\x07\r\nX\u202e") == "[2J[31mEVILX"
    assert clean_name("  ann  ") == "ann" and clean_name("é😀" * 40) == "é😀" * 16
    room = (await create_room(server_url, seats=2))["id"]
    async with WsClient.connect(server_url) as a, WsClient.connect(server_url) as b:
        await a.join(room, "ann")
        await b.join(room, "\x1b]52;c;ZXZpbA==\x07bo")
        joined = await a.expect(p.PlayerJoined)
        while joined.seat != 1:  # ann's own may come first, after her welcome
            joined = await a.expect(p.PlayerJoined)
        assert joined.name == "]52;c;ZXZpbA==bo"


async def test_hints_take_turns_and_are_remembered(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The solver is CPU-bound: sockets asking at once must not run it side by side.
    running, most, calls = 0, 0, 0
    real_hint = core.hint

    def hint(game: core.Game) -> str | None:
        nonlocal running, most, calls
        running += 1
        calls += 1
        most = max(most, running)
        try:
            return real_hint(game)
        finally:
            running -= 1

    monkeypatch.setattr(core, "hint", hint)
    room = (await create_room(server_url, game="moojub", seed=2, seats=3, hints=True))["id"]
    async with contextlib.AsyncExitStack() as stack:
        players = [await stack.enter_async_context(WsClient.connect(server_url)) for _ in "abc"]
        for player in players:
            await player.join(room, "p")
        await players[0].send(p.Start())
        for player in players:
            await player.expect(p.RaceStarted)
        for player in players:
            for _ in range(3):
                await player.send(p.Hint())
        answers = [(await player.expect(p.HintReply)).move for player in players for _ in range(3)]
    assert len(set(answers)) == 1 and answers[0] in core.new_game("moojub", 2).legal_moves()
    assert most == 1 and calls == 1  # nine asks of one position: solved once


async def test_refused_or_repeated_rematch_votes_run_no_solver(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A "winnable" rematch deal costs a solver run: spam must not buy one per message.
    room = (await create_room(server_url, game="stalactites", seed="winnable"))["id"]
    calls = 0
    real = core.winnable_seed

    def winnable_seed(*args: Any, **kwargs: Any) -> int:
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(core, "winnable_seed", winnable_seed)
    async with WsClient.connect(server_url) as a, WsClient.connect(server_url) as b:
        await a.join(room, "ann")
        await b.join(room, "bo")
        await a.send(p.Start())
        await a.expect(p.RaceStarted)
        for _ in range(5):
            await a.send(p.Rematch())
            assert (await a.expect(p.Error)).code == "not_finished"
        await a.send(p.Resign())
        await b.send(p.Resign())
        await a.expect(p.RaceFinished)
        await a.send(p.Rematch())
        await a.expect(p.RematchVote)
        for _ in range(3):  # already counted
            await a.send(p.Rematch())
        await b.send(p.Rematch())
        await a.expect(p.NewRound)
    assert calls == 2  # ann's first vote and bo's


@pytest.mark.parametrize("room", ["\\udfff", "a b", "x" * 65, "{room:1}:race"])
async def test_a_room_id_of_the_wrong_shape_is_no_room(server_url: str, room: str) -> None:
    # Checked before Redis: a lone surrogate (JSON allows it) could not even be encoded.
    async with WsClient.connect(server_url, binary=False) as c:
        for kind in ("watch", "join"):
            await c.send_raw(f'{{"type": "{kind}", "v": 1, "room": "{room}"}}')
            assert (await c.expect(p.Error)).code == "unknown_room"


async def test_a_token_no_utf8_can_carry_is_a_bad_token(server_url: str) -> None:
    room = (await create_room(server_url))["id"]
    async with WsClient.connect(server_url, binary=False) as c:
        await c.send_raw(f'{{"type": "join", "v": 1, "room": "{room}", "token": "\\udfff"}}')
        assert (await c.expect(p.Error)).code == "bad_token"


async def test_bad_input_mid_race_loses_nothing_accepted(make_server: MakeServer) -> None:
    # Every kind of bad input from a racer, then the two closes (size cap, flood): the
    # room races on, the other racer is not disturbed, and every accepted move is kept.
    url = await make_server(max_frame=2048, rate_per_second=5.0, rate_burst=30.0)
    room = (await create_room(url, seed=617, seats=2))["id"]
    game = core.new_game("shaula", 617)
    accepted: list[str] = []
    async with (
        WsClient.connect(url) as ann,
        WsClient.connect(url) as bo,
        WsClient.connect(url) as spy,
    ):
        token, _ = await seat_two_and_watch(room, ann, bo, spy)
        await ann.expect(p.RaceStarted)

        async def play(seq: int) -> None:
            move = game.legal_moves()[0]
            await ann.send(p.Move(seq=seq, move=move))
            assert (await ann.expect(p.Accepted)).seq == seq
            game.apply(move)
            accepted.append(game.history[-1])

        await play(1)
        await play(2)
        for data, code in [
            (b"\xc1", "bad_frame"),
            ("{oops", "bad_frame"),
            (msgpack.packb({"type": "teleport", "v": 1}), "unknown_type"),
            (msgpack.packb({"type": "move", "v": 1, "seq": "3", "move": "t1 c1"}), "bad_message"),
            (msgpack.packb({"type": "join", "v": 1, "room": "nope"}), "already_joined"),
        ]:
            assert (await error_for(ann, data)).code == code
        await ann.send(p.Move(seq=3, move="t1 t1"))
        assert (await ann.expect(p.Refused)).code == "illegal_move"
        await ann.send(p.Move(seq=1, move="t1 c1"))  # a re-send: its first answer
        assert (await ann.expect(p.Accepted)).seq == 1
        await play(3)
        await ann.send_raw(b"\x00" * 4096)  # over the size cap: closed
        with pytest.raises(websockets.ConnectionClosed):
            while True:
                await ann.recv()
        # Bo races on, unaware.
        bo_move = core.new_game("shaula", 617).legal_moves()[0]
        await bo.send(p.Move(seq=1, move=bo_move))
        assert (await bo.expect(p.Accepted)).moves == 1
    async with WsClient.connect(url) as back:
        await back.send(p.Join(room=room, token=token))
        snapshot = await back.expect(p.Snapshot)
        assert snapshot.moves == accepted and snapshot.board == game.state(view="player")
        for i in range(200):  # a flood: closed with 1008
            await back.send(p.Ping(id=i))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                await back.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    async with WsClient.connect(url) as again:
        await again.send(p.Join(room=room, token=token))
        assert (await again.expect(p.Snapshot)).moves == accepted
        await again.send(p.Move(seq=4, move=game.legal_moves()[0]))
        assert (await again.expect(p.Accepted)).moves == 4
    status, state = await get_json(f"{url}/rooms/{room}")
    assert status == 200 and state["room"]["status"] == "running"
    assert [pl["moves"] for pl in state["room"]["players"]] == [4, 1]
    assert (await get_json(f"{url}/healthz"))[1]["ok"] is True


async def test_lobby_race_and_quick_refusals_over_the_wire(server_url: str) -> None:
    room = (await create_room(server_url, seed=617, seats=3))["id"]
    game = core.new_game("shaula", 617)

    async def error(client: WsClient, message: p.Message) -> str:
        await client.send(message)
        return (await client.expect(p.Error)).code

    async with (
        WsClient.connect(server_url) as ann,
        WsClient.connect(server_url) as bo,
        WsClient.connect(server_url) as cy,
        WsClient.connect(server_url) as late,
    ):
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        cy_token = (await cy.join(room, "cy")).token
        assert await error(bo, p.Start()) == "not_host"
        assert await error(ann, p.Rematch()) == "not_finished"
        assert await error(ann, p.Resign()) == "not_running"
        await cy.send(p.Leave())  # gives the seat up: its token is dead, the socket free
        left = await ann.expect(p.PlayerLeft)
        assert left.seat == 2
        await cy.send(p.Join(room=room, token=cy_token))
        assert (await cy.expect(p.Error)).code == "bad_token"
        await ann.send(p.Start())
        await ann.expect(p.RaceStarted)
        await late.send(p.Join(room=room, name="late"))
        assert (await late.expect(p.Error)).code == "room_closed"
        assert await error(ann, p.Ready()) == "not_running"
        await bo.send(p.Resign())
        await bo.expect(p.PlayerOut)
        await bo.send(p.Move(seq=1, move=game.legal_moves()[0]))
        assert (await bo.expect(p.Refused)).code == "player_out"
        assert await error(bo, p.Resign()) == "player_out"
        await ann.send(p.Resync())  # no since: a snapshot
        assert (await ann.expect(p.Snapshot)).room["status"] == "running"
    async with WsClient.connect(server_url) as q:
        assert await error(q, p.QuickMatch(game="chess")) == "bad_game"
        await q.send(p.QuickMatch(game="stalactites"))
        await q.expect(p.Queued)
        assert await error(q, p.QuickMatch(game="stalactites")) == "already_joined"
        assert await error(q, p.Watch(room=room)) == "already_joined"
        await q.send(p.QuickCancel())
        await q.send(p.Watch(room=room))  # out of the queue: free to watch
        assert (await q.expect(p.Welcome)).role == "spectator"
