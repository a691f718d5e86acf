"""What each tournament request answers, as docs/tournaments.md and docs/protocol.md
section 10 promise, on a real server and a real Redis: names too long refused (not cut),
withdrawing twice, `return` without a withdrawal, starting twice, a replay that does not
exist, what answers `tournament_over` once it is over; the knockout's seeding and bracket
order; a live round's deal kept out of the CSV; the start of a race and when `you.room`
is cleared; empty names, ids in any case, an unknown player and a wrong watch token."""

from __future__ import annotations

import asyncio
import csv
import io
import json

from support.http import get_json, get_text, post_json
from support.tour_bots import create, register, wait_for
from support.wsclient import WsClient

import protocol as p


async def test_names_longer_than_the_limits_are_refused_not_cut(server_url: str) -> None:
    status, data = await post_json(f"{server_url}/tournaments", {"name": "c" * 65})
    assert status == 400 and data["error"]["code"] == "bad_name"
    status, data = await post_json(f"{server_url}/tournaments", {"name": "c" * 64})
    assert status == 201 and data["tournament"]["name"] == "c" * 64
    tid = data["tournament"]["id"]
    url = f"{server_url}/tournaments/{tid}/players"
    status, data = await post_json(url, {"name": "a" * 33})
    assert status == 400 and data["error"]["code"] == "bad_name"
    status, data = await post_json(url, {"name": " " + "a" * 32 + "\x1b "})
    assert status == 201 and data["player"]["name"] == "a" * 32  # control characters dropped
    _, doc = await get_json(f"{server_url}/tournaments/{tid}")
    assert doc["tournament"]["players"] == 1


async def test_an_empty_name_is_a_bad_name_and_a_name_of_another_type_a_bad_request(
    server_url: str,
) -> None:
    for name in ("", "   ", "\x01\x1b"):  # nothing left once controls and spaces are gone
        status, data = await post_json(f"{server_url}/tournaments", {"name": name})
        assert (status, data["error"]["code"]) == (400, "bad_name"), repr(name)
    status, data = await post_json(f"{server_url}/tournaments", {"name": 5})
    assert (status, data["error"]["code"]) == (400, "bad_request")
    tid, _ = await create(server_url)
    url = f"{server_url}/tournaments/{tid}/players"
    for name in ("", "   ", "\x01\x1b"):
        status, data = await post_json(url, {"name": name})
        assert (status, data["error"]["code"]) == (400, "bad_name"), repr(name)
    status, data = await post_json(url, {"name": ["ann"]})
    assert (status, data["error"]["code"]) == (400, "bad_request")


async def test_a_game_of_another_type_is_a_bad_request_and_no_game_a_bad_game(
    server_url: str,
) -> None:
    """docs/protocol.md section 10: a field of the wrong type is `bad_request`; a name in
    `games` that is no game, `bad_game`."""
    for games in ([1], [["shaula"]], [{"a": 1}], [None], "shaula"):
        status, data = await post_json(f"{server_url}/tournaments", {"name": "t", "games": games})
        assert (status, data["error"]["code"]) == (400, "bad_request"), games
    status, data = await post_json(f"{server_url}/tournaments", {"name": "t", "game": 5})
    assert (status, data["error"]["code"]) == (400, "bad_request")
    for games in (["chess"], ["shaula", "SHAULA"]):
        status, data = await post_json(f"{server_url}/tournaments", {"name": "t", "games": games})
        assert (status, data["error"]["code"]) == (400, "bad_game"), games


async def test_a_tournament_id_in_any_case_an_unknown_player_and_a_wrong_watch_token(
    server_url: str,
) -> None:
    tid, organiser = await create(server_url)
    while tid.upper() == tid:  # an id of digits alone (one in 43) would prove nothing here
        tid, organiser = await create(server_url)
    shout = tid.upper()
    status, data = await get_json(f"{server_url}/tournaments/{shout}")
    assert status == 200 and data["tournament"]["id"] == tid
    ann = await register(server_url, shout, "ann")
    status, _ = await get_text(f"{server_url}/tournaments/{shout}/standings?format=csv")
    assert status == 200
    base = f"{server_url}/tournaments/{shout}"
    for player in (99, "nobody"):
        status, data = await post_json(
            f"{base}/remove", {"organiser_token": organiser, "player": player}
        )
        assert (status, data["error"]["code"]) == (404, "unknown_player"), player
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=shout, token=ann))
        state = await watcher.expect(p.TourState)
        assert state.tournament["id"] == tid and state.you is not None
        # A refused tour_watch leaves the one before it in place.
        await watcher.send(p.TourWatch(tournament=tid, token="not a token"))
        error = await watcher.expect(p.Error)
        assert (error.code, error.request) == ("bad_token", "tour_watch")
        await register(server_url, tid, "bo")
        state = await wait_for(watcher, lambda s: s.tournament["players"] == 2)
        assert state.you is not None and state.you["name"] == "ann"


async def test_the_answers_to_each_request_through_a_tournament(server_url: str) -> None:
    # Two players who never come to their race: it ends when both have forfeited (after
    # the grace), and the tournament of one round with it.
    tid, organiser = await create(server_url, rounds=1, countdown=0.5, grace=0.5)
    ann, bo = [await register(server_url, tid, name) for name in ("ann", "bo")]
    base = f"{server_url}/tournaments/{tid}"

    async def as_player(action: str, token: str) -> tuple[int, str]:
        status, data = await post_json(f"{base}/{action}", {"token": token})
        return status, data["player"]["status"] if status == 200 else data["error"]["code"]

    async def organise(action: str, **body: object) -> tuple[int, str]:
        status, data = await post_json(f"{base}/{action}", {"organiser_token": organiser, **body})
        return status, data["tournament"]["status"] if status == 200 else data["error"]["code"]

    # Withdrawing twice, returning twice, returning without a withdrawal: each answers the
    # player's row as it now is; doing it again changes nothing.
    assert await as_player("return", bo) == (200, "active")
    assert await as_player("withdraw", bo) == (200, "withdrawn")
    assert await as_player("withdraw", bo) == (200, "withdrawn")
    assert await as_player("return", bo) == (200, "active")
    assert await as_player("return", bo) == (200, "active")

    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid, token=ann))
        await watcher.expect(p.TourState)
        assert await organise("start") == (200, "running")
        assert await organise("start") == (409, "already_started")
        status, data = await post_json(f"{base}/players", {"name": "cy"})
        assert (status, data["error"]["code"]) == (409, "registration_closed")

        racing = await wait_for(watcher, lambda s: s.you is not None and s.you["room"])
        assert racing.you is not None
        room = racing.you["room"]
        (race,) = racing.tournament["live"]
        assert race["room"] == room and race["seed"] is None
        # The deal of a round being raced is in no export.
        _, text = await get_text(f"{base}/standings?format=csv")
        header = next(csv.reader(io.StringIO(text)))
        assert header == ["rank", "name", "status", "points", "wins", "time", "progress", "rounds"]
        status, data = await get_json(f"{base}/replays/{race['heat']}")
        assert (status, data["error"]["code"]) == (409, "not_finished")
        # A race's number is decimal digits alone, as every number in a path or query.
        for heat in (f"%20{race['heat']}", f"{race['heat']}_", "\u0660", f"+{race['heat']}"):
            status, data = await get_json(f"{base}/replays/{heat}")
            assert (status, data["error"]["code"]) == (404, "not_found"), heat

        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished")
    # `you.room` names the race from its room's opening until the tournament has scored it.
    states = [m for m in watcher.seen if isinstance(m, p.TourState)]
    scored = [s for s in states if not s.tournament["racing"] and s.tournament["round"] == 1]
    assert scored and all(s.you is not None and s.you["room"] is None for s in scored)
    assert final.you is not None and final.you["room"] is None and final.you["seat"] is None

    # The CSV's numbers are written as in the JSON: the two no-shows share 1st and 2nd,
    # 1.5 points and a round win each (a shared 1st place is one), and finished nothing
    # (time 0.0, in seconds).
    _, text = await get_text(f"{base}/standings?format=csv")
    header, *rows = list(csv.reader(io.StringIO(text)))
    assert [row[3:6] for row in rows] == [["1.5", "1", "0.0"], ["1.5", "1", "0.0"]]
    assert [row[8:] for row in rows] == [["1.5"], ["1.5"]] and len(header) == 9

    for heat in ("1", "99", "-1", "x"):
        status, data = await get_json(f"{base}/replays/{heat}")
        assert (status, data["error"]["code"]) == (404, "not_found"), heat

    # Once it is over, every request that would change it answers tournament_over.
    for action, token in (("withdraw", ann), ("return", bo)):
        assert await as_player(action, token) == (409, "tournament_over")
    for action in ("start", "pause", "resume"):
        assert await organise(action) == (409, "tournament_over")
    assert await organise("remove", player="bo") == (409, "tournament_over")
    status, data = await post_json(f"{base}/players", {"name": "cy"})
    assert (status, data["error"]["code"]) == (409, "registration_closed")

    # The start is when the countdown ended: the replay's started_at is the room's
    # start_at, and every time in it counts from there.
    status, text = await get_text(f"{base}/replays/0")
    assert status == 200
    lines = [json.loads(line) for line in text.splitlines()]
    _, doc = await get_json(f"{server_url}/rooms/{room}")
    assert lines[0]["started_at"] == doc["room"]["start_at"]
    assert all(r["reached"] >= 0 for r in lines[-1]["results"])


async def test_the_knockout_bracket_is_seeded_by_registration_in_bracket_order(
    server_url: str,
) -> None:
    # Seven players, one withdrawn before the start: six seeds in a bracket of 8, byes for
    # seeds 1 and 2; seed k is the k-th registered of those still in.
    tid, organiser = await create(server_url, format="knockout")
    tokens = {
        n: await register(server_url, tid, n) for n in ("s1", "x", "s2", "s3", "s4", "s5", "s6")
    }
    await post_json(f"{server_url}/tournaments/{tid}/withdraw", {"token": tokens["x"]})
    status, data = await post_json(
        f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser}
    )
    assert status == 200
    matches = data["tournament"]["matches"]
    assert [(m["slot"], m["a"], m["b"]) for m in matches if m["round"] == 1] == [
        (0, "s1", None),  # 1 against 8: a bye
        (1, "s4", "s5"),
        (2, "s2", None),  # 2 against 7: a bye
        (3, "s3", "s6"),
    ]
    assert [m["how"] for m in matches if m["b"] is None] == ["bye", "bye"]


async def test_next_at_is_null_while_paused_before_the_start_and_in_an_arena(
    server_url: str,
) -> None:
    # TOURNAMENT `next_at`: when the next round (Arena: pairing) begins, `null` while
    # paused. A pause before the start holds the first round; an Arena's pause holds its
    # pairings.
    for fmt in ("rounds", "arena"):
        tid, organiser = await create(server_url, format=fmt, duration=60, wave=0.5)
        for name in ("ann", "bo"):
            await register(server_url, tid, name)
        base = f"{server_url}/tournaments/{tid}"
        body = {"organiser_token": organiser}
        if fmt == "rounds":
            status, data = await post_json(f"{base}/pause", body)
            assert status == 200 and data["tournament"]["paused"]
        status, data = await post_json(f"{base}/start", body)
        assert status == 200 and data["tournament"]["status"] == "running"
        if fmt == "arena":
            status, data = await post_json(f"{base}/pause", body)
            assert status == 200
        for _ in range(2):  # the answer, and the state a moment later
            tour = data["tournament"]
            assert tour["paused"] and tour["next_at"] is None, (fmt, tour)
            await asyncio.sleep(1.0)
            _, data = await get_json(base)
        status, data = await post_json(f"{base}/resume", body)
        assert status == 200 and data["tournament"]["next_at"] is not None


async def test_a_request_that_changes_nothing_writes_nothing_and_pushes_nothing(
    server_url: str,
) -> None:
    """Withdrawing, returning, pausing, resuming or removing again answers the same, but is
    no change: the tournament's version stays and its followers are sent nothing."""
    tid, organiser = await create(server_url)
    ann = await register(server_url, tid, "ann")
    base = f"{server_url}/tournaments/{tid}"

    async def version() -> int:
        _, data = await get_json(base)
        return int(data["version"])

    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid, token=ann))
        await watcher.expect(p.TourState)
        for action, body in (
            ("withdraw", {"token": ann}),
            ("return", {"token": ann}),
            ("pause", {"organiser_token": organiser}),
            ("resume", {"organiser_token": organiser}),
            ("remove", {"organiser_token": organiser, "player": "ann"}),
        ):
            status, _ = await post_json(f"{base}/{action}", body)
            assert status == 200
            changed = await watcher.expect(p.TourState)
            before = await version()
            status, _ = await post_json(f"{base}/{action}", body)  # again: no change
            assert status == 200, action
            assert await version() == before, action
            assert await watcher.quiet(0.3) == [], action
            assert changed.tournament == (await get_json(base))[1]["tournament"]


async def test_a_field_given_as_null_takes_its_default(server_url: str) -> None:
    fields = ("rounds", "time_limit", "spectator_delay", "max_players", "pause", "grace")
    status, plain = await post_json(f"{server_url}/tournaments", {"name": "cup"})
    assert status == 201
    status, data = await post_json(
        f"{server_url}/tournaments", {"name": "cup", **dict.fromkeys(fields)}
    )
    assert status == 201, data
    for field in fields:
        assert data["tournament"][field] == plain["tournament"][field], field


async def test_starting_with_too_few_players_says_how_many_are_needed(server_url: str) -> None:
    for fields, registered, message in (
        ({"format": "rounds"}, [], "at least 1 active player is needed to start"),
        ({"format": "knockout"}, ["ann"], "at least 2 active players are needed to start"),
    ):
        tid, organiser = await create(server_url, **fields)
        for name in registered:
            await register(server_url, tid, name)
        status, data = await post_json(
            f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser}
        )
        assert status == 409
        assert data["error"] == {"code": "not_enough_players", "message": message}


async def test_an_arena_too_short_for_a_countdown_is_refused(server_url: str) -> None:
    # No Arena heat begins after the end, and each counts down first: an Arena no longer
    # than its countdown could race nothing. Other formats have no `duration` to check.
    for countdown, duration in ((5, 5), (10, 3)):
        status, data = await post_json(
            f"{server_url}/tournaments",
            {"name": "t", "format": "arena", "duration": duration, "countdown": countdown},
        )
        assert (status, data["error"]["code"]) == (400, "bad_request"), data
        assert "duration" in data["error"]["message"]
    status, data = await post_json(
        f"{server_url}/tournaments", {"name": "t", "format": "arena", "duration": 6}
    )
    assert status == 201 and data["tournament"]["countdown"] == 5.0, data
    status, _ = await post_json(
        f"{server_url}/tournaments", {"name": "t", "format": "rounds", "duration": 1}
    )
    assert status == 201


async def test_next_at_is_null_while_a_round_is_raced(server_url: str) -> None:
    # TOURNAMENT `next_at`: between rounds, when the next one begins. While a round is
    # raced there is none to give, a tied Knockout match waiting for its new deal included
    # (nobody comes here: two tied races, then a walkover).
    tid, organiser = await create(server_url, format="knockout", time_limit=30, grace=0.3)
    for name in ("ann", "bo"):
        await register(server_url, tid, name)
    seen: list[dict[str, object]] = []

    async def poll() -> None:
        while True:
            _, data = await get_json(f"{server_url}/tournaments/{tid}")
            seen.append(data["tournament"])
            await asyncio.sleep(0.02)

    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid))
        await watcher.expect(p.TourState)
        polling = asyncio.create_task(poll())
        await post_json(f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser})
        pushed: list[p.TourState] = []

        def done(state: p.TourState) -> bool:
            pushed.append(state)
            return state.tournament["status"] == "finished"

        await wait_for(watcher, done, 30.0)
        polling.cancel()
    seen += [state.tournament for state in pushed]
    racing = [t for t in seen if t["racing"]]
    assert racing and [t["next_at"] for t in racing] == [None] * len(racing)
