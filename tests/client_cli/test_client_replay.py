"""`solrace replay`: a replay checked, then stepped through in the terminal (the model, the
screen with its keys, a file, and a finished race fetched from a real server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.client_screen import screen_text, until
from support.finished import archived_replay
from support.http import create_room
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from client_cli.__main__ import main
from client_cli.replay import ReplayModel, ReplayUnavailable, load_replay
from client_cli.replay_app import ReplayApp
from core.replay import write_replay

SEED = 617


def two_racers() -> str:
    """ann plays the solver's line a move a second, bo its first 20 moves two a second."""
    line = core.solve(core.new_game("shaula", SEED)).moves
    moves = [(0, move, 1.0 * (i + 1)) for i, move in enumerate(line)]
    moves += [(1, move, 0.5 * (i + 1)) for i, move in enumerate(line[:20])]
    moves.sort(key=lambda m: m[2])
    players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bo"}]
    return write_replay({"game": "shaula", "seed": SEED, "players": players}, moves)


def board_after(model: ReplayModel, n: int, seat: int) -> dict[str, list[str]]:
    game = core.new_game("shaula", SEED)
    for s, move, _t in model.replay.moves[:n]:
        if s == seat:
            game.apply(move)
    return dict(game.state(view="player")["piles"])


def test_the_model_stands_after_any_move_and_at_any_time() -> None:
    model = ReplayModel.from_text(two_racers())
    total = model.total
    for n in (5, 40, 3, total, 0, 17):
        model.go(n)
        assert model.pos == n
        for seat in (0, 1):
            assert model.games[seat].state(view="player")["piles"] == board_after(model, n, seat)
    assert model.at_time(10.0) == sum(1 for m in model.replay.moves if m[2] <= 10.0)
    model.go(total)
    assert model.games[0].won and model.splits_by(0, 1e9)[3] == model.replay.moves[-1][2]
    assert model.splits_by(0, 0.5) == (None, None, None, None)


def test_a_bots_seat_is_named_as_a_bot() -> None:
    players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "Bot-1", "bot": True}]
    text = write_replay({"game": "shaula", "seed": SEED, "players": players}, [])
    model = ReplayModel.from_text(text)
    assert (model.name(0), model.name(1), model.name(2)) == ("ann", "Bot-1 (bot)", "seat 2")


def test_a_changed_replay_is_refused_with_where() -> None:
    lines = two_racers().splitlines()
    lines[3] = lines[3].replace('"t":', '"t":1')
    with pytest.raises(ReplayUnavailable, match="does not verify: line 5"):
        ReplayModel.from_text("\n".join(lines))


async def test_the_keys_step_jump_and_play() -> None:
    model = ReplayModel.from_text(two_racers())
    app = ReplayApp(model, "test")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("right", "right", "right")
        assert model.pos == 3
        assert "move 3 of" in screen_text(app) and "verified" in screen_text(app)
        await pilot.press("left")
        assert model.pos == 2
        await pilot.press("end")
        assert model.pos == model.total
        text = screen_text(app)
        assert "won" in text and "1:" in text  # ann's splits beside her bar
        await pilot.press("home")
        assert model.pos == 0 and "the deal" in screen_text(app)
        await pilot.press("b")
        assert app.boards.shown() == [0]
        await pilot.press("tab")
        assert app.boards.shown() == [1]
        # Play at 16x from a few moves before the end: it gets there by itself.
        start = model.total - 6
        model.go(start)
        await pilot.press("s", "s", "space")
        # Playing, or (a loaded machine answering the keys late) already moves further on.
        assert app.speed == 16 and (app.playing or model.pos > start)
        await until(pilot, lambda: model.pos == model.total, timeout=10)
        await until(pilot, lambda: not app.playing)


async def test_on_80_columns_the_keys_are_all_in_sight_and_so_is_tab_to_the_next_board() -> None:
    # One status line cut the keys short at 80 columns (after "Home"), and one board of
    # two fits there with nothing saying Tab shows the other.
    model = ReplayModel.from_text(two_racers())
    app = ReplayApp(model, "test")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("right")
        text = screen_text(app)
        assert "move 1 of" in text and "q quit" in text and "Tab" in text, text
        assert app.boards.shown() == [0]


def test_the_command_refuses_a_changed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "race.ndjson"
    lines = two_racers().splitlines()
    path.write_text("\n".join([*lines[:2], *lines[3:]]) + "\n")
    assert main(["replay", str(path)]) == 1
    assert "does not verify" in capsys.readouterr().err


def test_a_move_before_the_deal_is_refused_as_a_time_before_the_start_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --at -3 was refused, but --move -5 opened at the deal without a word.
    path = tmp_path / "race.ndjson"
    path.write_text(two_racers())
    with pytest.raises(SystemExit) as exit_:
        main(["replay", str(path), "--move", "-5"])
    assert exit_.value.code == 2
    assert "a move number is a whole number from 0" in capsys.readouterr().err


async def test_a_finished_race_comes_from_the_server(make_server: MakeServer) -> None:
    url = await make_server()
    room = (await create_room(url, seed=SEED, seats=1))["id"]
    with pytest.raises(ReplayUnavailable, match="has not finished"):
        await load_replay(url, room)
    async with WsClient.connect(url) as ann:
        await race_alone(ann, room)
        await ann.send(p.Move(seq=1, move=core.new_game("shaula", SEED).legal_moves()[0]))
        await ann.expect(p.Accepted)
        await ann.send(p.Resign())
        await ann.expect(p.RaceFinished)
    model = ReplayModel.from_text(await load_replay(url, room.upper()))
    assert model.total == 1 and model.players == [{"seat": 0, "name": "ann"}]
    with pytest.raises(ReplayUnavailable, match="no such room"):
        await load_replay(url, "0badc0de")


async def test_an_earlier_round_comes_by_its_race_id(make_server: MakeServer) -> None:
    # A room's code gives its latest race; an earlier round is only ROOM.ROUND (profiles
    # list races by that id), in any case, as the web page /replay/{id} takes it.
    url = await make_server()
    room = (await create_room(url, seed=SEED, seats=1))["id"]
    async with WsClient.connect(url) as ann:
        await race_alone(ann, room)
        await ann.play(core.new_game("shaula", SEED).legal_moves()[:1])
        await ann.send(p.Resign())
        await ann.expect(p.RaceFinished)
        await ann.send(p.Rematch())  # round 2: a deal of its own, no move
        await ann.expect(p.RaceStarted)
        await ann.send(p.Resign())
        await ann.expect(p.RaceFinished)
    await archived_replay(url, f"{room}.1")
    assert ReplayModel.from_text(await load_replay(url, room)).total == 0
    first = ReplayModel.from_text(await load_replay(url, f"{room.upper()}.1"))
    assert first.total == 1 and first.seed == SEED
    with pytest.raises(ReplayUnavailable) as error:
        await load_replay(url, f"{room}.7")
    assert str(error.value) == f"no replay of race {room}.7: no archived race has that id"
    with pytest.raises(ReplayUnavailable) as error:
        await load_replay(url, "0badc0de")
    assert str(error.value) == "no replay of room 0badc0de: no such room"
    with pytest.raises(ReplayUnavailable) as error:
        await load_replay(url, "missing/race.ndjson")
    assert str(error.value) == (
        "no replay file missing/race.ndjson (nor is it a room's code or a race's id, ROOM.ROUND)"
    )
