"""Seats this machine holds: kept per room (not per name), taken back without --name,
asked about when there are several, and explained when there are none."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from client_cli.commands import ServerError, ask_in_terminal, choose_seat
from client_cli.memory import StoredSeat, forget_seat, remember_seat, state_file, stored_seats

SERVER = "http://127.0.0.1:8765"


@pytest.fixture(autouse=True)
def state_home(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path


def room(status: str, *players: tuple[int, str, bool]) -> dict[str, Any]:
    return {
        "id": "ab12cd34",
        "status": status,
        "players": [{"seat": s, "name": n, "connected": c} for s, n, c in players],
    }


def test_two_seats_of_one_name_in_one_room_are_both_kept() -> None:
    remember_seat(SERVER, "ab12cd34", "player", "tok-a", 0)
    remember_seat(SERVER, "ab12cd34", "player", "tok-b", 1)
    remember_seat(SERVER, "other", "player", "tok-c", 0)
    assert [(s.token, s.seat) for s in stored_seats(SERVER, "ab12cd34")] == [
        ("tok-a", 0),
        ("tok-b", 1),
    ]
    assert stored_seats(SERVER + "/", "AB12CD34") == stored_seats(SERVER, "ab12cd34")
    forget_seat(SERVER, "ab12cd34", "tok-a")
    assert [s.token for s in stored_seats(SERVER, "ab12cd34")] == ["tok-b"]
    assert oct(state_file().stat().st_mode & 0o777) == "0o600"


def test_seats_stored_by_an_older_solrace_are_still_found() -> None:
    state_file().parent.mkdir(parents=True)
    state_file().write_text(json.dumps({f"{SERVER} ab12cd34 ann": "old-token"}))
    assert stored_seats(SERVER, "ab12cd34") == [
        StoredSeat(SERVER, "ab12cd34", "ann", "old-token", None)
    ]


def never(options: list[str]) -> int:
    raise AssertionError(f"asked {options}")


def test_mid_race_the_seat_held_here_is_taken_back_without_the_same_name() -> None:
    remember_seat(SERVER, "ab12cd34", "ann", "tok-a", 0)
    view = room("running", (0, "ann", False), (1, "bo", True))
    assert choose_seat(SERVER, view, name=None, pick=None, ask=never) == "tok-a"
    assert choose_seat(SERVER, view, name="someone", pick=None, ask=never) == "tok-a"


def test_several_seats_held_here_asks_which() -> None:
    remember_seat(SERVER, "ab12cd34", "player", "tok-a", 0)
    remember_seat(SERVER, "ab12cd34", "player", "tok-b", 1)
    view = room("running", (0, "player", False), (1, "player 2", True))
    asked: list[list[str]] = []

    def second(options: list[str]) -> int:
        asked.append(options)
        return 1

    assert choose_seat(SERVER, view, name=None, pick=None, ask=second) == "tok-b"
    assert asked == [["seat 1: player", "seat 2: player 2"]]
    assert choose_seat(SERVER, view, name=None, pick=1, ask=never) == "tok-a"  # --seat 1
    with pytest.raises(ServerError, match="seat 3"):
        choose_seat(SERVER, view, name=None, pick=3, ask=never)


def test_no_seat_held_here_mid_race_says_how_to_get_one_back() -> None:
    view = room("running", (0, "ann", False))
    with pytest.raises(ServerError) as error:
        choose_seat(SERVER, view, name="ann", pick=None, ask=never)
    message = str(error.value)
    assert "solrace watch ab12cd34" in message
    assert "no seat" in message and str(state_file()) in message


def test_in_the_lobby_a_seat_in_use_elsewhere_is_left_to_its_terminal() -> None:
    # A friend at a second terminal of this account wants a seat of their own.
    remember_seat(SERVER, "ab12cd34", "ann", "tok-a", 0)
    view = room("lobby", (0, "ann", True))
    assert choose_seat(SERVER, view, name=None, pick=None, ask=never) is None
    away = room("lobby", (0, "ann", False))
    assert choose_seat(SERVER, away, name=None, pick=None, ask=never) == "tok-a"


def test_a_seat_the_room_no_longer_has_is_not_offered() -> None:
    remember_seat(SERVER, "ab12cd34", "ann", "tok-a", 3)  # left the lobby since
    view = room("lobby", (0, "bo", True))
    assert choose_seat(SERVER, view, name=None, pick=None, ask=never) is None


def answering(monkeypatch: pytest.MonkeyPatch, *answers: str) -> None:
    """A terminal on stdin that types `answers`, then Ctrl+D."""
    typed = iter(answers)

    def fake_input(prompt: str = "") -> str:
        print(prompt)
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", fake_input)


def test_the_seat_question_takes_a_number_and_asks_again_otherwise(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answering(monkeypatch, "", "x", "3", " 2 ")
    assert ask_in_terminal("ab12cd34")(["seat 1: ann", "seat 2: bo"]) == 1
    out = capsys.readouterr().out
    assert "1) seat 1: ann" in out and "2) seat 2: bo" in out
    assert out.count("Which one? [1-2, q quits]") == 4


@pytest.mark.parametrize("answers", [("q", "1"), ("Q ", "1"), ()])
def test_q_or_ctrl_d_at_the_seat_question_quits(
    monkeypatch: pytest.MonkeyPatch, answers: tuple[str, ...]
) -> None:
    # q quits every screen of the client; at this question it was asked again.
    answering(monkeypatch, *answers)
    with pytest.raises(ServerError, match="no seat chosen"):
        ask_in_terminal("ab12cd34")(["seat 1: ann", "seat 2: bo"])


def test_without_a_terminal_the_seat_question_says_to_use_seat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    with pytest.raises(ServerError) as error:
        ask_in_terminal("ab12cd34")(["seat 1: ann", "seat 2: bo"])
    assert "1) seat 1: ann; 2) seat 2: bo" in str(error.value)
    assert "--seat N" in str(error.value)


def test_every_spelling_of_the_servers_address_is_one_server() -> None:
    # `--server 127.0.0.1:8765` is the very server `http://127.0.0.1:8765` names (the
    # client connects to both alike), but it made this machine a new player there and
    # found none of its seats.
    from client_cli.identity import load_identity, save_identity

    remember_seat(SERVER, "ab12cd34", "player", "tok-a", 0)
    save_identity(SERVER, "key-1", {"id": "p1", "name": "ann"})
    for spelling in ("127.0.0.1:8765", "ws://127.0.0.1:8765/ws", "http://127.0.0.1:8765/"):
        assert [s.token for s in stored_seats(spelling, "ab12cd34")] == ["tok-a"]
        me = load_identity(spelling)
        assert me is not None and me.key == "key-1"


def test_a_player_and_seats_kept_under_another_spelling_are_still_found(
    state_home: pathlib.Path,
) -> None:
    from client_cli.identity import load_identity

    folder = state_home / "solrace"
    folder.mkdir()
    seat = {"server": "127.0.0.1:8765", "room": "ab12cd34", "name": "ann", "token": "t", "seat": 0}
    (folder / "seats.json").write_text(json.dumps({"seats": [seat]}))
    player = {"key": "key-1", "id": "p1", "name": "ann"}
    (folder / "players.json").write_text(json.dumps({"127.0.0.1:8765/": {"player": player}}))
    assert [s.token for s in stored_seats(SERVER, "ab12cd34")] == ["t"]
    me = load_identity(SERVER)
    assert me is not None and me.key == "key-1"


def _remember_many(home: str, terminal: int, go: Any) -> None:
    """One terminal of this machine taking seats (and tournament places) in turn."""
    import os

    from client_cli.tournament import remember_token

    os.environ["XDG_STATE_HOME"] = home
    go.wait(30)
    for n in range(TAKEN):
        remember_seat(SERVER, f"room{terminal}-{n}", "ann", f"tok-{terminal}-{n}", 0)
        remember_token(SERVER, f"t{terminal}", f"player p{n}", f"tok-{terminal}-{n}")


TAKEN = 12  # seats each terminal takes (the file keeps the newest 50)


def test_terminals_taking_seats_at_once_each_keep_theirs(state_home: pathlib.Path) -> None:
    # Two terminals matched at the same moment (a quick match of one machine's two
    # terminals) each read the file, added their seat and wrote it back: one seat was lost.
    import multiprocessing

    from client_cli.tournament import recall_token

    context = multiprocessing.get_context("spawn")
    go = context.Event()
    terminals = [
        context.Process(target=_remember_many, args=(str(state_home), t, go)) for t in range(4)
    ]
    for process in terminals:
        process.start()
    go.set()
    for process in terminals:
        process.join(60)
        assert process.exitcode == 0
    for t in range(4):
        for n in range(TAKEN):
            assert [s.token for s in stored_seats(SERVER, f"room{t}-{n}")] == [f"tok-{t}-{n}"]
            assert recall_token(SERVER, f"t{t}", f"player p{n}") == f"tok-{t}-{n}"
