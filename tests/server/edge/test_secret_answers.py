"""An answer that carries a secret (a player's key, a link code, a seat's or a
registration's token, an organiser's token) tells every cache on its way not to keep it
(`Cache-Control: no-store`): a shared proxy or the browser's cache must not hand one
device's key to the next who asks."""

from __future__ import annotations

from support.players import call, new_player

SECRET = "no-store"


async def test_every_answer_carrying_a_secret_is_not_to_be_stored(server_url: str) -> None:
    status, body, headers = await call(server_url, "POST", "/players", {})
    assert status == 201 and body["key"], body
    assert headers.get("Cache-Control") == SECRET, "POST /players"
    key = body["key"]

    status, body, headers = await call(server_url, "POST", "/me/link", {}, key)
    assert status == 201 and body["code"], body
    assert headers.get("Cache-Control") == SECRET, "POST /me/link"
    status, body, headers = await call(server_url, "POST", "/link", {"code": body["code"]})
    assert status == 200 and body["key"], body
    assert headers.get("Cache-Control") == SECRET, "POST /link"

    owner, _ = await new_player(server_url, "secretive")
    password = "a long enough password 1"
    status, body, _ = await call(server_url, "POST", "/me/claim", {"password": password}, owner)
    assert status == 200, body
    status, body, headers = await call(
        server_url, "POST", "/sign-in", {"name": "secretive", "password": password}
    )
    assert status == 200 and body["key"], body
    assert headers.get("Cache-Control") == SECRET, "POST /sign-in"

    status, body, headers = await call(
        server_url,
        "POST",
        "/tournaments",
        {"name": "the secret cup", "game": "shaula", "format": "rounds"},
    )
    assert status == 201 and body["organiser_token"], body
    assert headers.get("Cache-Control") == SECRET, "POST /tournaments"
    tid = body["tournament"]["id"]
    status, body, headers = await call(
        server_url, "POST", f"/tournaments/{tid}/players", {"name": "zed"}
    )
    assert status == 201 and body["token"], body
    assert headers.get("Cache-Control") == SECRET, "POST /tournaments/{id}/players"

    status, body, headers = await call(server_url, "POST", "/daily/shaula", {}, key)
    assert status in (200, 201) and body["token"], body
    assert headers.get("Cache-Control") == SECRET, "POST /daily/{game}"

    # An answer without a secret keeps its default.
    status, body, headers = await call(server_url, "GET", "/games")
    assert status == 200 and "Cache-Control" not in headers, headers
