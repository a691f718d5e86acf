"""docs/protocol.md against the protocol package: a client written from the page alone must
get the same names, types and codes as the server really uses.

Every JSON example in the page is decoded by the protocol module and must come back out
unchanged; every message has an example and a table row naming each of its fields; the
error and close code tables list exactly the codes the module defines; the ROOM, RESULT
and BOARD examples have the keys the server sends.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from typing import Any

import pytest
from support.paths import ROOT

import core
import protocol as p
from server.room.race import Race, RoomConfig, Seat, rank

DOC = (ROOT / "docs" / "protocol.md").read_text()


def sections() -> dict[str, str]:
    """The page's text by top-level section number ("3", "4", ...)."""
    parts = re.split(r"^## (\d+)\. ", DOC, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def json_blocks(text: str) -> list[str]:
    return re.findall(r"```json\n(.*?)```", text, flags=re.S)


def objects(block: str, placeholders: dict[str, Any] | None = None) -> list[Any]:
    """A block holds one JSON value, or one per line; placeholders (ROOM, BOARD, RESULT)
    are replaced by the documented objects."""
    for name, value in (placeholders or {}).items():
        block = re.sub(rf"\b{name}\b", json.dumps(value), block)
    try:
        return [json.loads(block)]
    except ValueError:
        return [json.loads(line) for line in block.splitlines() if line.strip()]


BLANKS: dict[str, Any] = {  # to read an example alone
    "ROOM": {},
    "LOBBY_ROOM": {},
    "BOARD": {},
    "RESULT": {},
    "TOURNAMENT": {},
    "STANDING": {},
    "YOU": {},
}


def first_object(section: str, key: str, lacking: str = "") -> dict[str, Any]:
    """The first example in `section` that is a map with `key` (and without `lacking`)."""
    for block in json_blocks(sections()[section]):
        for obj in objects(block, BLANKS):
            if isinstance(obj, dict) and key in obj and lacking not in obj:
                return obj
    raise AssertionError(f"no example with {key!r} in section {section}")


ROOM = first_object("3", "results")
LOBBY_ROOM = first_object("3", "players", lacking="results")
RESULT = first_object("3", "rank")
BOARD = first_object("5", "piles")
TOURNAMENT = first_object("10", "champion")
STANDING = first_object("10", "rank")
YOU = first_object("10", "standing")
RACE = first_object("10", "heat")
PLACEHOLDERS = {
    "ROOM": ROOM,
    "LOBBY_ROOM": LOBBY_ROOM,
    "BOARD": BOARD,
    "RESULT": RESULT,
    "TOURNAMENT": TOURNAMENT,
    "STANDING": STANDING,
    "YOU": YOU,
}


def message_examples() -> list[tuple[str, dict[str, Any]]]:
    """(direction, example) for every message map in sections 4 (client) and 5 (server)."""
    found = []
    for number, direction in (("4", "in"), ("5", "out")):
        for block in json_blocks(sections()[number]):
            for obj in objects(block, PLACEHOLDERS):
                if isinstance(obj, dict) and "type" in obj:
                    found.append((direction, obj))
    return found


EXAMPLES = message_examples()


@pytest.mark.parametrize(
    ("direction", "example"), EXAMPLES, ids=[f"{d}-{e['type']}" for d, e in EXAMPLES]
)
def test_every_example_is_what_the_protocol_module_reads_and_writes(
    direction: str, example: dict[str, Any]
) -> None:
    registry = p.CLIENT_TO_SERVER if direction == "in" else p.SERVER_TO_CLIENT
    message = registry.build(example)
    assert isinstance(message, p.Message), message
    names = {f.name for f in dataclasses.fields(type(message))}
    assert set(example) - {"type", "v"} <= names, "a field the module does not have"
    wire = p.to_wire(message)
    assert {k: wire.get(k) for k in example} == example  # same names and types, no nulls
    defaults = {f.name: f.default for f in dataclasses.fields(type(message))}
    assert all(wire[k] == defaults[k] for k in set(wire) - set(example))  # left out: default
    assert p.decode_json(json.dumps(example), registry) == message


def test_every_message_has_an_example() -> None:
    for direction, union in (("in", p.ClientToServer), ("out", p.ServerToClient)):
        shown = {e["type"] for d, e in EXAMPLES if d == direction}
        for cls in typing.get_args(union):
            assert cls.TYPE in shown, f"no example of {cls.TYPE!r} ({direction})"


def table_rows(text: str) -> dict[str, str]:
    """Rows of the page's tables whose first cell is a `name`, by that name."""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        match = re.match(r"\| `([a-z_0-9]+)` \|(.*)", line)
        if match:
            rows.setdefault(match.group(1), match.group(2))
    return rows


def test_every_message_has_a_table_row_naming_each_field() -> None:
    for number, union in (("4", p.ClientToServer), ("5", p.ServerToClient)):
        rows = table_rows(sections()[number])
        for cls in typing.get_args(union):
            row = rows.get(cls.TYPE)
            assert row is not None, f"no row for {cls.TYPE!r} in section {number}"
            for field in dataclasses.fields(cls):
                if field.name in ("version", "at"):
                    continue  # said once for all events
                assert f"`{field.name}`" in row, f"{cls.TYPE}: field {field.name!r} not shown"


def test_the_error_codes_table_lists_exactly_the_codes() -> None:
    rows = table_rows(sections()["7"])
    assert set(rows) == {code.value for code in p.ErrorCode}


def test_the_close_codes_table_lists_exactly_the_codes() -> None:
    listed = {int(c) for c in re.findall(r"^\| (\d{4}) \|", sections()["8"], flags=re.M)}
    assert listed == {int(code) for code in p.CloseCode}


def test_the_room_and_result_examples_have_the_server_s_keys() -> None:
    race = Race(room="r", config=RoomConfig(game="shaula"), seed=617, created_at=1.0)
    race.seats[0] = Seat(name="ann", token_hash="h")
    view = race.view()
    assert set(ROOM) == set(view)
    assert set(ROOM["players"][0]) == set(view["players"][0])
    assert set(RESULT) == set(rank(race.seats, 0.0)[0])
    # ... and the protocol's types of them name the same keys.
    assert set(ROOM) == set(typing.get_type_hints(p.RoomView))
    assert set(ROOM["players"][0]) == set(typing.get_type_hints(p.PlayerView))
    assert set(RESULT) == set(typing.get_type_hints(p.Result))


def test_the_lobby_room_example_is_what_the_lobby_sends() -> None:
    race = Race(room="r", config=RoomConfig(game="shaula"), seed=617, created_at=1.0)
    race.seats[0] = Seat(name="ann", token_hash="h")
    entry = race.lobby_view()
    assert set(LOBBY_ROOM) == set(entry) == set(typing.get_type_hints(p.LobbyRoom))
    assert set(LOBBY_ROOM["players"][0]) == set(entry["players"][0])
    assert set(LOBBY_ROOM["players"][0]) == set(typing.get_type_hints(p.LobbyPlayer))
    assert json.loads(json.dumps(entry)) == entry  # plain JSON values


def test_the_board_examples_are_the_engine_s_boards() -> None:
    boards = [obj for block in json_blocks(sections()["5"]) for obj in objects(block, BLANKS)]
    boards = [b for b in boards if isinstance(b, dict) and "piles" in b]
    assert {b["game"] for b in boards} == {"shaula", "moojub"}
    for board in boards:
        seed = board["seed"] or 845  # the Moojub example's deal (its seed is never sent)
        game = core.new_game(board["game"], seed)
        for _ in range(board["moves"]):
            game.apply("t8 c1")  # the move the page says it made
        assert board == game.state(view="player")


def test_the_room_creation_example_uses_every_documented_field() -> None:
    body = first_object("3", "game")
    assert set(body) == set(table_rows(sections()["3"]))


def test_the_http_error_example_has_the_documented_shape() -> None:
    error = first_object("3", "error")["error"]
    assert set(error) == {"code", "message"} and error["code"] in set(p.ErrorCode)


def test_the_tournament_examples_have_the_server_s_keys() -> None:
    from server.tournament.machine import Tournament
    from server.tournament.model import TourConfig
    from server.tournament.scoring import RaceResult
    from server.tournament.views import race_view, tour_view, you_view

    tour = Tournament("t", TourConfig(name="cup"), "h", 1.0)
    for name in ("ann", "bo"):
        tour.register(name, name, 1.0)
    tour.start(2.0)
    tour.add_seeds("shaula", [617])
    tour.tick(2.0)
    tour.heat_opened(0)
    rows = tour.standings()
    assert set(TOURNAMENT) == set(tour_view(tour))
    assert set(TOURNAMENT["live"][0]) == set(race_view(tour, tour.heats[0]))
    assert set(STANDING) == set(rows[0])
    assert set(YOU) == set(you_view(tour, 0, rows))
    assert set(YOU["standing"]) == set(rows[0])
    tour.heat_finished(
        0, [RaceResult(0, True, 1.0, 52, 1.0, 9), RaceResult(1, False, None, 0, 0, 0)], 3
    )
    race = race_view(tour, tour.heats[0])
    assert set(RACE) == set(race) and set(RACE["results"][0]) == set(race["results"][0])


def test_the_tournament_creation_example_uses_every_documented_field() -> None:
    from server.edge.tournament_routes import config_from_body

    body = first_object("10", "name")
    rows = table_rows(sections()["10"].split("### Players")[0])
    assert set(body) == set(rows)
    config = config_from_body(body, 8)
    assert config.name == body["name"] and config.games == tuple(body["games"])
