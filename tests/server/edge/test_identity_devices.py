"""A player's devices and password over HTTP on a real server (docs/protocol.md 11): the
keys they hold listed, one signed out from another (a lost phone), or all but this one, and
a new password for a claimed account, which signs the other devices out."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import pytest
from support.paths import ROOT
from support.players import call, new_player
from support.servers import MakeServer

from records.keys import hash_secret


def documented(heading: str) -> dict[str, Any]:
    """The first example under `### heading` in docs/protocol.md."""
    section = (ROOT / "docs" / "protocol.md").read_text().split(f"### {heading}", 1)[1]
    block = re.search(r"```json\n(.*?)```", section, flags=re.S)
    assert block is not None
    return dict(json.loads(block.group(1)))


async def claimed(base: str, name: str, password: str, label: str) -> str:
    """A claimed player called `name`: the key of its first device (labelled `label`)."""
    status, body, _ = await call(base, "POST", "/players", {"label": label})
    assert status == 201, body
    key = body["key"]
    status, body, _ = await call(base, "POST", "/me/name", {"name": name}, key)
    assert status == 200, body
    status, body, _ = await call(base, "POST", "/me/claim", {"password": password}, key)
    assert status == 200, body
    return str(key)


async def signed_in(base: str, name: str, password: str, label: str | None = None) -> str:
    body = {"name": name, "password": password, "label": label}
    status, answer, _ = await call(base, "POST", "/sign-in", body)
    assert status == 200, answer
    return str(answer["key"])


async def signs_in(base: str, key: str) -> bool:
    status, _, _ = await call(base, "GET", "/me", key=key)
    assert status in (200, 401)
    return status == 200


async def signs_in_as(base: str, name: str, password: str) -> bool:
    status, body, _ = await call(base, "POST", "/sign-in", {"name": name, "password": password})
    assert status in (200, 401, 403), body
    return status == 200


async def devices(base: str, key: str) -> list[dict[str, object]]:
    status, body, _ = await call(base, "GET", "/me/devices", key=key)
    assert status == 200, body
    assert set(body) == {"devices"}
    return list(body["devices"])


async def test_a_player_sees_the_devices_holding_their_keys_and_which_is_this_one(
    make_server: MakeServer, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    base = await make_server(database_url=database_url)
    laptop = await claimed(base, "ann", "correct horse", "laptop")
    phone = await signed_in(base, "ann", "correct horse", "phone")
    status, code, _ = await call(base, "POST", "/me/link", key=laptop)
    status, linked, _ = await call(base, "POST", "/link", {"code": code["code"]})
    assert status == 200
    bo, _ = await new_player(base, "bo")

    shown = await devices(base, phone)
    # The latest used first (each was last used when it signed in: a key's use is written
    # once a minute at most).
    assert [(d["label"], d["current"]) for d in shown] == [
        (None, False),
        ("phone", True),
        ("laptop", False),
    ]
    [example, _] = documented("`GET /me/devices`")["devices"]
    for device in shown:
        assert set(device) == set(example)
        assert re.fullmatch(r"[0-9a-f]{16}", str(device["id"]))
        assert isinstance(device["created_at"], float)
        assert isinstance(device["last_used_at"], float)
    text = json.dumps(shown)
    for key in (laptop, phone, linked["key"]):  # neither a key nor what is kept of it
        assert key not in text and hash_secret(key) not in text
    ids = {d["id"] for d in shown}
    assert [d["current"] for d in await devices(base, laptop)].count(True) == 1
    assert ids.isdisjoint(d["id"] for d in await devices(base, bo))  # bo's: bo's one key
    assert len(await devices(base, bo)) == 1

    status, body, _ = await call(base, "GET", "/me/devices")
    assert status == 401 and body["error"]["code"] == "bad_key"
    for key in (laptop, phone, linked["key"], bo):
        assert key not in caplog.text


async def test_a_device_is_signed_out_from_another_and_nobody_elses_is_found(
    make_server: MakeServer, database_url: str
) -> None:
    base = await make_server(database_url=database_url)
    laptop = await claimed(base, "cleo", "correct horse", "laptop")
    phone = await signed_in(base, "cleo", "correct horse", "phone")
    status, code, _ = await call(base, "POST", "/me/link", key=phone)  # made on the phone
    assert status == 201
    bo, _ = await new_player(base, "bo")
    [bo_device] = await devices(base, bo)
    lost = next(d["id"] for d in await devices(base, laptop) if d["label"] == "phone")

    # Another player's device, one that is not there, or a junk id: not found, alike.
    for device in (bo_device["id"], "0123456789abcdef", "x" * 300, "%00"):
        status, body, _ = await call(base, "POST", f"/me/devices/{device}/sign-out", key=laptop)
        assert (status, body["error"]["code"]) == (404, "unknown_device"), device
    assert await signs_in(base, bo) and await signs_in(base, phone)

    status, body, _ = await call(base, "POST", f"/me/devices/{lost}/sign-out", key=laptop)
    assert (status, body) == (200, {"signed_out": True})
    assert not await signs_in(base, phone)
    assert await signs_in(base, laptop)
    assert [d["label"] for d in await devices(base, laptop)] == ["laptop"]
    # A code made on the device signed out does not bring it back.
    status, body, _ = await call(base, "POST", "/link", {"code": code["code"]})
    assert (status, body["error"]["code"]) == (404, "bad_code")
    status, body, _ = await call(base, "POST", f"/me/devices/{lost}/sign-out", key=laptop)
    assert (status, body["error"]["code"]) == (404, "unknown_device")

    # This device's own id: as POST /sign-out.
    [mine] = await devices(base, laptop)
    assert mine["current"] is True
    status, body, _ = await call(base, "POST", f"/me/devices/{mine['id']}/sign-out", key=laptop)
    assert (status, body) == (200, {"signed_out": True})
    assert not await signs_in(base, laptop)
    status, body, _ = await call(base, "POST", f"/me/devices/{mine['id']}/sign-out")
    assert (status, body["error"]["code"]) == (401, "bad_key")


async def test_every_other_device_is_signed_out_at_once(
    make_server: MakeServer, database_url: str
) -> None:
    base = await make_server(database_url=database_url)
    laptop = await claimed(base, "dora", "correct horse", "laptop")
    others = [await signed_in(base, "dora", "correct horse", f"d{i}") for i in range(3)]
    status, code, _ = await call(base, "POST", "/me/link", key=others[0])
    bo, _ = await new_player(base, "bo")
    status, body, _ = await call(base, "POST", "/me/sign-out-others", key=laptop)
    assert (status, body) == (200, {"signed_out": 3})
    assert [await signs_in(base, key) for key in others] == [False] * 3
    assert await signs_in(base, laptop) and await signs_in(base, bo)
    status, body, _ = await call(base, "POST", "/link", {"code": code["code"]})
    assert (status, body["error"]["code"]) == (404, "bad_code")
    status, body, _ = await call(base, "POST", "/me/sign-out-others", key=laptop)
    assert (status, body) == (200, {"signed_out": 0})
    status, body, _ = await call(base, "POST", "/me/sign-out-others")
    assert (status, body["error"]["code"]) == (401, "bad_key")


async def test_two_devices_signing_each_other_out_at_once_leave_one_signed_in(
    make_server: MakeServer, database_url: str
) -> None:
    """Two devices of one player, each signing the other out at the same moment (`POST
    /me/sign-out-others`, the other's id, a new password): one of them goes first and
    stays in; the other's request, made by a key signed out meanwhile, is refused
    `bad_key` (a new password is then not taken). Never both out with `200` answers each:
    an anonymous player has no way back then."""
    base = await make_server(database_url=database_url)
    for trial in range(15):
        laptop = await claimed(base, f"eve{trial}", "correct horse", "laptop")
        phone = await signed_in(base, f"eve{trial}", "correct horse", "phone")
        bodies: dict[str, dict[str, str] | None] = {laptop: None, phone: None}
        if trial % 3 == 1:
            ids = {d["current"]: d["id"] for d in await devices(base, laptop)}
            paths = {laptop: f"/me/devices/{ids[False]}/sign-out"}
            paths[phone] = f"/me/devices/{ids[True]}/sign-out"
        elif trial % 3 == 2:
            paths = {laptop: "/me/password", phone: "/me/sign-out-others"}
            bodies[laptop] = {"password": "correct horse", "new_password": "battery staple"}
        else:
            paths = {laptop: "/me/sign-out-others", phone: "/me/sign-out-others"}
        answers = await asyncio.gather(
            *(call(base, "POST", path, bodies[key], key=key) for key, path in paths.items())
        )
        if trial % 3 == 2:  # the new password only if its request was answered 200
            new = answers[0][0] == 200
            assert await signs_in_as(base, f"eve{trial}", "battery staple") is new
            assert await signs_in_as(base, f"eve{trial}", "correct horse") is not new
        still = [await signs_in(base, key) for key in paths]
        assert still.count(True) == 1, (trial, answers)
        for (status, body, _), kept in zip(answers, still, strict=True):
            if kept:
                assert status == 200, body
            else:
                assert (status, body["error"]["code"]) == (401, "bad_key"), (trial, answers)


async def test_a_link_code_made_as_the_device_is_signed_out_brings_it_back_never(
    make_server: MakeServer, database_url: str
) -> None:
    """A lost phone asks for a link code at the moment the laptop signs every other
    device out: whichever goes first, the code never signs a device in (made before, it is
    void; asked after, by a key signed out, it is refused `bad_key`)."""
    base = await make_server(database_url=database_url)
    for _ in range(15):
        laptop, _ = await new_player(base)
        status, code, _ = await call(base, "POST", "/me/link", key=laptop)
        status, body, _ = await call(base, "POST", "/link", {"code": code["code"]})
        phone = str(body["key"])
        (status, body, _), made = await asyncio.gather(
            call(base, "POST", "/me/sign-out-others", key=laptop),
            call(base, "POST", "/me/link", key=phone),
        )
        assert (status, body) == (200, {"signed_out": 1})
        if made[0] == 401:
            assert made[1]["error"]["code"] == "bad_key"
            continue
        assert made[0] == 201, made
        status, body, _ = await call(base, "POST", "/link", {"code": made[1]["code"]})
        assert (status, body["error"]["code"]) == (404, "bad_code")


async def test_a_device_signed_out_while_claiming_the_account_gives_it_no_password(
    make_server: MakeServer, database_url: str
) -> None:
    """A lost phone claims the anonymous account (its password being hashed) while the
    laptop signs it out: once the sign-out is answered the phone acts no more, so its
    claim, not yet made then, is refused `bad_key` and the account stays unclaimed."""
    base = await make_server(database_url=database_url)
    laptop, _ = await new_player(base, "fay")
    status, code, _ = await call(base, "POST", "/me/link", key=laptop)
    status, body, _ = await call(base, "POST", "/link", {"code": code["code"]})
    phone = str(body["key"])
    answered: list[str] = []

    async def claim() -> tuple[int, Any, dict[str, str]]:
        answer = await call(base, "POST", "/me/claim", {"password": "correct horse"}, phone)
        answered.append("claim")
        return answer

    async def sign_out() -> tuple[int, Any, dict[str, str]]:
        await asyncio.sleep(0.02)  # the claim is in, hashing its password
        answer = await call(base, "POST", "/me/sign-out-others", key=laptop)
        answered.append("sign-out")
        return answer

    claimed_answer, signed_out = await asyncio.gather(claim(), sign_out())
    assert signed_out[:2] == (200, {"signed_out": 1})
    if answered[0] == "sign-out":
        assert (claimed_answer[0], claimed_answer[1]["error"]["code"]) == (401, "bad_key")
        status, body, _ = await call(base, "GET", "/me", key=laptop)
        assert (status, body["player"]["claimed"]) == (200, False)
        assert not await signs_in_as(base, "fay", "correct horse")


async def test_a_claimed_player_changes_their_password_and_the_other_devices_are_out(
    make_server: MakeServer, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    base = await make_server(database_url=database_url)
    guest, _ = await new_player(base, "eve")
    change = {"password": "whatever1", "new_password": "whatever2"}
    status, body, _ = await call(base, "POST", "/me/password", change, guest)
    assert (status, body["error"]["code"]) == (403, "not_claimed")

    laptop = await claimed(base, "fay", "correct horse", "laptop")
    phone = await signed_in(base, "fay", "correct horse", "phone")
    status, code, _ = await call(base, "POST", "/me/link", key=phone)
    for wrong, expected in (
        ({"password": "correct horse"}, (400, "bad_request")),
        ({"password": 5, "new_password": "battery staple"}, (400, "bad_request")),
        ({"password": "correct horse", "new_password": "short"}, (400, "bad_password")),
        ({"password": "wrong horse", "new_password": "battery staple"}, (401, "wrong_password")),
    ):
        status, body, _ = await call(base, "POST", "/me/password", wrong, laptop)
        assert (status, body["error"]["code"]) == expected, wrong
    assert await signs_in(base, phone)  # nothing changed yet

    change = {"password": "correct horse", "new_password": "battery staple"}
    status, body, _ = await call(base, "POST", "/me/password", change, laptop)
    assert status == 200, body
    example = documented("`POST /me/password`")
    assert set(body) == set(example) and set(body["player"]) == set(example["player"])
    assert body["signed_out"] == 1
    assert body["player"]["name"] == "fay" and body["player"]["claimed"] is True
    assert not await signs_in(base, phone)
    assert await signs_in(base, laptop)  # this device stays in
    status, body, _ = await call(base, "POST", "/link", {"code": code["code"]})
    assert (status, body["error"]["code"]) == (404, "bad_code")
    old = {"name": "fay", "password": "correct horse"}
    status, body, _ = await call(base, "POST", "/sign-in", old)
    assert (status, body["error"]["code"]) == (401, "wrong_password")
    assert await signed_in(base, "fay", "battery staple")
    for secret in ("correct horse", "battery staple", laptop, phone):
        assert secret not in caplog.text


async def test_a_wrong_current_password_counts_as_a_failed_sign_in(
    make_server: MakeServer,
) -> None:
    """The old password, guessed through the password change by whoever holds a key (a
    stolen or shared device), is limited as a sign-in is, in the same budget per name."""
    base = await make_server(limit_loopback=True)
    key = await claimed(base, "gil", "open sesame", "laptop")
    wrong = {"password": "not it at all", "new_password": "something else"}
    codes = [
        (await call(base, "POST", "/me/password", wrong, key))[1]["error"]["code"] for _ in range(5)
    ]
    assert codes == ["wrong_password"] * 5
    status, body, headers = await call(
        base, "POST", "/sign-in", {"name": "GIL", "password": "open sesame"}
    )
    assert (status, body["error"]["code"]) == (429, "rate_limited")
    right = {"password": "open sesame", "new_password": "something else"}
    status, body, headers = await call(base, "POST", "/me/password", right, key)
    assert (status, body["error"]["code"]) == (429, "rate_limited")
    assert int(headers["Retry-After"]) > 0
    assert await signs_in(base, key)
