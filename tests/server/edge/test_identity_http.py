"""Players over HTTP on a real server: anonymous at once, a name, a claimed account, signing
in and out on other devices, link codes, and the refusals' codes (docs/protocol.md 11)."""

from __future__ import annotations

import asyncio
import logging
import re

import pytest
from support.players import call, new_player
from support.servers import MakeServer


async def test_a_first_visit_makes_an_anonymous_player_at_once(
    server_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    status, body, _ = await call(server_url, "POST", "/players", {})
    assert status == 201
    key, player = body["key"], body["player"]
    assert len(key) >= 43 and player["name"].startswith("Guest-")
    assert player["bot"] is False and player["claimed"] is False
    status, me, _ = await call(server_url, "GET", "/me", key=key)
    assert status == 200 and me["player"]["id"] == player["id"] and me["names"] == []
    assert "key" not in me  # a key is given once, to the device it is for
    # No key, a wrong one, or one sent otherwise than as a Bearer: bad_key.
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": f"Basic {key}"}):
        status, body, _ = await call(server_url, "GET", "/me", headers=headers)
        assert status == 401 and body["error"]["code"] == "bad_key"
    assert key not in caplog.text


async def test_a_field_given_as_null_takes_its_default(server_url: str) -> None:
    status, body, _ = await call(server_url, "POST", "/players", {"bot": None, "label": None})
    assert status == 201 and body["player"]["bot"] is False
    for bot in ("yes", 1):
        status, body, _ = await call(server_url, "POST", "/players", {"bot": bot})
        assert status == 400 and body["error"]["code"] == "bad_request", bot


async def test_a_bot_cannot_be_claimed(server_url: str) -> None:
    status, body, _ = await call(server_url, "POST", "/players", {"bot": True})
    assert status == 201 and body["player"]["bot"] is True
    bot = body["key"]
    status, _, _ = await call(server_url, "POST", "/me/name", {"name": "Botty"}, bot)
    assert status == 200  # a name of its own: no guest's bad_name
    status, body, _ = await call(server_url, "POST", "/me/claim", {"password": "hunter22!"}, bot)
    assert status == 400 and body["error"]["code"] == "bad_request"
    status, body, _ = await call(server_url, "GET", "/me", key=bot)
    assert status == 200 and body["player"]["claimed"] is False


async def test_names_are_checked_unique_whatever_the_case_and_kept_in_the_history(
    server_url: str,
) -> None:
    key, player = await new_player(server_url)
    guest = player["name"]
    for bad in ("a", "a b c", "Guest-1", "x" * 21, 5):
        status, body, _ = await call(server_url, "POST", "/me/name", {"name": bad}, key)
        assert status == 400 and body["error"]["code"] == "bad_name", bad
    status, body, _ = await call(server_url, "POST", "/me/name", {"name": "Ann_1"}, key)
    assert status == 200 and body["player"]["name"] == "Ann_1"
    other, _ = await new_player(server_url)
    status, body, _ = await call(server_url, "POST", "/me/name", {"name": "ANN_1"}, other)
    assert status == 409 and body["error"]["code"] == "name_taken"
    await call(server_url, "POST", "/me/name", {"name": "Annie"}, key)
    _, me, _ = await call(server_url, "GET", "/me", key=key)
    assert [n["name"] for n in me["names"]] == ["Ann_1", guest]


async def test_renames_are_limited_per_player(server_url: str) -> None:
    """Each rename keeps the old name in the player's history and answers: unlimited, a
    loop of renames (hundreds a second) would grow them without end. Ten at once, then
    one a minute; the name they have already asks for nothing, and a name the rules refuse
    spends nothing."""
    key, _ = await new_player(server_url)
    for n in range(10):
        status, body, _ = await call(server_url, "POST", "/me/name", {"name": f"Kai{n}"}, key)
        assert status == 200, body
    status, body, _ = await call(server_url, "POST", "/me/name", {"name": "Kai9"}, key)
    assert status == 200 and body["player"]["name"] == "Kai9"  # no change: nothing spent
    status, body, _ = await call(server_url, "POST", "/me/name", {"name": "k"}, key)
    assert status == 400 and body["error"]["code"] == "bad_name"  # before the limit
    status, body, headers = await call(server_url, "POST", "/me/name", {"name": "Kai10"}, key)
    assert status == 429 and body["error"]["code"] == "rate_limited"
    assert 0 < int(headers["Retry-After"]) <= 60
    _, me, _ = await call(server_url, "GET", "/me", key=key)
    assert me["player"]["name"] == "Kai9" and len(me["names"]) == 10
    other, _ = await new_player(server_url)  # a budget per player
    status, _, _ = await call(server_url, "POST", "/me/name", {"name": "Kai10"}, other)
    assert status == 200


async def test_a_profile_asked_by_a_name_given_up_is_the_player_who_had_it(
    server_url: str,
) -> None:
    """A race's result or a standings row names a player as they were called then: after a
    rename, that link still leads to them (the answer says their name now), until another
    player takes the name."""
    key, player = await new_player(server_url)
    guest = player["name"]
    await call(server_url, "POST", "/me/name", {"name": "Zoe_1"}, key)
    for asked in (guest, guest.lower()):
        status, body, _ = await call(server_url, "GET", f"/players/{asked}")
        assert status == 200, body
        assert (body["player"]["id"], body["player"]["name"]) == (player["id"], "Zoe_1")
    await call(server_url, "POST", "/me/name", {"name": "Zoe_2"}, key)
    _, taker = await new_player(server_url, "zoe_1")  # the name, free again, taken
    status, body, _ = await call(server_url, "GET", "/players/Zoe_1")
    assert status == 200 and body["player"]["id"] == taker["id"]  # whoever has it now
    status, body, _ = await call(server_url, "GET", "/players/Nobody_9")
    assert status == 404 and body["error"]["code"] == "unknown_player"


async def test_claim_then_sign_in_elsewhere_and_out(server_url: str) -> None:
    laptop, _ = await new_player(server_url)
    status, body, _ = await call(server_url, "POST", "/me/claim", {"password": "hunter22"}, laptop)
    assert status == 400 and body["error"]["code"] == "bad_name"  # a name first
    await call(server_url, "POST", "/me/name", {"name": "cleo"}, laptop)
    status, body, _ = await call(server_url, "POST", "/me/claim", {"password": "short"}, laptop)
    assert status == 400 and body["error"]["code"] == "bad_password"
    status, body, _ = await call(
        server_url, "POST", "/me/claim", {"password": "correct horse"}, laptop
    )
    assert status == 200 and body["player"]["claimed"] is True
    status, body, _ = await call(server_url, "POST", "/me/claim", {"password": "another1"}, laptop)
    assert status == 409 and body["error"]["code"] == "already_claimed"

    wrong = {"name": "CLEO", "password": "wrong horse"}
    status, body, _ = await call(server_url, "POST", "/sign-in", wrong)
    assert status == 401 and body["error"]["code"] == "wrong_password"
    status, body, _ = await call(
        server_url, "POST", "/sign-in", {"name": "nobody", "password": "x"}
    )
    assert status == 404 and body["error"]["code"] == "unknown_player"
    _, guest_player = await new_player(server_url)
    status, body, _ = await call(
        server_url, "POST", "/sign-in", {"name": guest_player["name"], "password": "whatever1"}
    )
    assert status == 403 and body["error"]["code"] == "not_claimed"

    right = {"name": "Cleo", "password": "correct horse", "label": "phone"}
    status, body, _ = await call(server_url, "POST", "/sign-in", right)
    assert status == 200 and body["player"]["name"] == "cleo"
    phone = body["key"]
    assert phone != laptop
    _, on_laptop, _ = await call(server_url, "GET", "/me", key=laptop)
    _, on_phone, _ = await call(server_url, "GET", "/me", key=phone)
    assert on_laptop["player"]["id"] == on_phone["player"]["id"]
    status, body, _ = await call(server_url, "POST", "/sign-out", key=phone)
    assert status == 200 and body == {"signed_out": True}
    status, _, _ = await call(server_url, "GET", "/me", key=phone)
    assert status == 401
    status, _, _ = await call(server_url, "GET", "/me", key=laptop)
    assert status == 200  # the other device stays signed in


async def claimed(server_url: str, name: str) -> dict[str, str]:
    """A player called `name` whose password is "open sesame"; a sign-in body with a wrong
    one."""
    key, _ = await new_player(server_url, name)
    await call(server_url, "POST", "/me/claim", {"password": "open sesame"}, key)
    return {"name": name, "password": "not it at all"}


async def test_sign_in_attempts_are_limited_per_name_and_per_address(
    make_server: MakeServer,
) -> None:
    server_url = await make_server(limit_loopback=True)
    wrong = await claimed(server_url, "dora")
    codes = [
        (await call(server_url, "POST", "/sign-in", wrong))[1]["error"]["code"] for _ in range(6)
    ]
    assert codes == ["wrong_password"] * 5 + ["rate_limited"]
    status, body, headers = await call(
        server_url, "POST", "/sign-in", {"name": "dora", "password": "open sesame"}
    )
    # Even the right password waits: the name's budget is spent.
    assert status == 429 and body["error"]["code"] == "rate_limited"
    assert int(headers["Retry-After"]) > 0
    # Per address: every attempt from it counts (here link codes), 20 at once.
    codes = []
    while "rate_limited" not in codes and len(codes) < 40:
        _, body, _ = await call(server_url, "POST", "/link", {"code": "AAAA-AAAA"})
        codes.append(body["error"]["code"])
    # The 7 sign-ins spent 7 of the 20 (the refused ones too: every attempt counts; one
    # more comes back every 6 s meanwhile).
    assert codes[-1] == "rate_limited" and set(codes[:-1]) == {"bad_code"}
    assert 13 <= len(codes) - 1 < 20


async def test_sign_in_limits_are_shared_by_every_server_process(
    make_server: MakeServer,
) -> None:
    """Behind a balancer a guesser's attempts land on several processes: they spend one
    budget per name and per address, not one per process."""
    one = await make_server(limit_loopback=True)
    two = await make_server(limit_loopback=True)
    key, _ = await new_player(one, "elsa")
    await call(one, "POST", "/me/claim", {"password": "open sesame"}, key)
    wrong = {"name": "ELSA", "password": "not it at all"}
    codes = [
        (await call(url, "POST", "/sign-in", wrong))[1]["error"]["code"]
        for url in (one, two, one, two, one, two)
    ]
    assert codes == ["wrong_password"] * 5 + ["rate_limited"]
    # The right password on one process refills the name's budget on the other too.
    key, _ = await new_player(one, "fay")
    await call(one, "POST", "/me/claim", {"password": "open sesame"}, key)
    wrong = {"name": "fay", "password": "not it at all"}
    for _ in range(4):
        assert (await call(two, "POST", "/sign-in", wrong))[0] == 401
    right = {"name": "fay", "password": "open sesame"}
    assert (await call(one, "POST", "/sign-in", right))[0] == 200
    codes = [(await call(two, "POST", "/sign-in", wrong))[1]["error"]["code"] for _ in range(5)]
    assert codes == ["wrong_password"] * 5


async def test_a_link_code_signs_in_another_device_once(server_url: str) -> None:
    key, player = await new_player(server_url, "eve")
    status, body, _ = await call(server_url, "POST", "/me/link", key=key)
    assert status == 201 and len(body["code"]) == 9
    code = body["code"]
    status, body, _ = await call(server_url, "POST", "/link", {"code": code.lower()})
    assert status == 200 and body["player"]["id"] == player["id"]
    status, again, _ = await call(server_url, "POST", "/link", {"code": code})
    assert status == 404 and again["error"]["code"] == "bad_code"
    status, me, _ = await call(server_url, "GET", "/me", key=body["key"])
    assert status == 200 and me["player"]["name"] == "eve"


async def test_a_link_code_outlives_its_devices_own_sign_out(server_url: str) -> None:
    """Moving to another device: a code made, this device signed out, the code typed on
    the new one. An account with no password lives only on its devices' keys: a code
    void with its device's own sign-out would lose it. (Signed out from another device,
    a lost one, the player's codes are void.)"""
    laptop, player = await new_player(server_url)
    _, made, _ = await call(server_url, "POST", "/me/link", key=laptop)
    status, _, _ = await call(server_url, "POST", "/sign-out", key=laptop)
    assert status == 200
    status, body, _ = await call(server_url, "POST", "/link", {"code": made["code"]})
    assert status == 200 and body["player"]["id"] == player["id"]


async def test_a_page_may_ask_whether_a_name_is_free_without_a_refusal(server_url: str) -> None:
    quin, _ = await new_player(server_url, "Quin")
    # Asked with the key of the player called so, in any case: theirs to take (a rename in
    # case only is one), not another player's.
    status, body, _ = await call(server_url, "GET", "/names/QUIN", key=quin)
    assert status == 200 and (body["available"], body["problem"]) == (True, None), body
    status, body, _ = await call(server_url, "GET", "/names/QUIN", key="not a key")
    assert status == 200 and body["available"] is False  # a key that signs nobody in
    for name, available, problem in (
        ("quin", False, "another player is called 'Quin'"),
        ("quinn", True, None),
        ("q", False, "2 to 20"),
    ):
        status, body, _ = await call(server_url, "GET", f"/names/{name}")
        assert status == 200 and body["available"] is available, body
        assert (body["problem"] is None) if problem is None else problem in body["problem"]
    # The answer names the name asked, however long: a page matches it to its question.
    status, body, _ = await call(server_url, "GET", f"/names/{'q' * 50}")
    assert status == 200 and body["name"] == "q" * 50 and body["available"] is False


async def test_text_no_database_can_hold_is_looked_up_as_nobody_and_no_password_fails(
    make_server: MakeServer, database_url: str
) -> None:
    """A NUL (which PostgreSQL text cannot hold) or a lone surrogate (`"\\ud800"` in JSON,
    which no driver can send) in a name or a race's id finds nothing, as any unknown one
    does: never a 503 as if the database were down, nor a 500. A password is any string."""
    base = await make_server(database_url=database_url)
    for path, code in (
        ("/players/ann%00", "unknown_player"),
        ("/players/ann%ED%A0%80", "unknown_player"),
        ("/races/3f2a9c1b%00.1/replay", "unknown_race"),
        ("/rooms/3f2a9c1b%00/replay", "unknown_room"),
    ):
        status, body, _ = await call(base, "GET", path)
        assert (status, body["error"]["code"]) == (404, code), path
    status, body, _ = await call(base, "POST", "/rooms", {"ghost": "3f2a9c1b\x00.1"})
    assert (status, body["error"]["code"]) == (404, "unknown_race")
    for name in ("ann\x00", "ann\ud800"):
        status, body, _ = await call(
            base, "POST", "/sign-in", {"name": name, "password": "correct horse"}
        )
        assert (status, body["error"]["code"]) == (404, "unknown_player"), name
    key, _ = await new_player(base, "ann")
    odd = "correct \ud800 horse"
    status, body, _ = await call(base, "POST", "/me/claim", {"password": odd}, key)
    assert status == 200 and body["player"]["claimed"] is True
    status, body, _ = await call(base, "POST", "/sign-in", {"name": "ann", "password": odd})
    assert status == 200 and body["player"]["name"] == "ann"
    status, body, _ = await call(
        base, "POST", "/sign-in", {"name": "ann", "password": "correct \udc00 horse"}
    )
    assert (status, body["error"]["code"]) == (401, "wrong_password")


@pytest.mark.parametrize(
    "query",
    [
        "page=0",
        "page=10001",
        "page=1_0",
        "page=%D9%A3",
        "per_page=%205",
        "per_page=x",
        "per_page=101",
    ],
)
async def test_a_profile_page_that_is_no_whole_number_is_refused(
    server_url: str, query: str
) -> None:
    _, player = await new_player(server_url)
    status, body, _ = await call(server_url, "GET", f"/players/{player['name']}?{query}")
    assert status == 400 and body["error"]["code"] == "bad_request"


async def test_a_401_says_how_to_authenticate(server_url: str) -> None:
    """HTTP asks every 401 for a `WWW-Authenticate` challenge (and some HTTP clients fail
    to read a 401 without one): the server's is `Bearer`, the player key's scheme."""
    key, _ = await new_player(server_url, "gia")
    await call(server_url, "POST", "/me/claim", {"password": "open sesame"}, key)
    for method, path, body, sent in (
        ("GET", "/me", None, None),
        ("GET", "/me/devices", None, "not a key"),
        ("POST", "/me/name", {"name": "gina"}, "not a key"),
        ("POST", "/sign-in", {"name": "gia", "password": "not it at all"}, None),
        ("POST", "/me/password", {"password": "nope nope", "new_password": "x" * 8}, key),
    ):
        status, answer, headers = await call(server_url, method, path, body, sent)
        assert status == 401, (path, answer)
        assert headers.get("WWW-Authenticate") == "Bearer", path
    status, _, headers = await call(server_url, "GET", "/me", key=key)
    assert status == 200 and "WWW-Authenticate" not in headers


async def test_a_sign_in_limits_message_says_the_seconds_retry_after_does(
    make_server: MakeServer,
) -> None:
    server_url = await make_server(limit_loopback=True)
    wrong = await claimed(server_url, "hana")
    for _ in range(5):
        await call(server_url, "POST", "/sign-in", wrong)
    await asyncio.sleep(0.7)  # the wait is no whole number of seconds now
    status, body, headers = await call(server_url, "POST", "/sign-in", wrong)
    assert status == 429
    said = re.search(r"try again in (\d+) s", body["error"]["message"])
    assert said is not None and said.group(1) == headers["Retry-After"], body
