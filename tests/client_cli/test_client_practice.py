"""The practice screen, headless through Textual's own pilot."""

from __future__ import annotations

import pytest
from support.client_screen import screen_text
from textual import events

from client_cli.help_screen import HelpScreen
from client_cli.play_app import PlayApp
from client_cli.session import LocalSession
from core import GAMES, new_game


def practice(game: str, seed: int) -> PlayApp:
    return PlayApp(LocalSession(new_game(game, seed)), f"{game} #{seed} · practice")


@pytest.mark.parametrize("game", GAMES)
async def test_each_game_renders_in_80x24(game: str) -> None:
    app = practice(game, 617)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert len(lines) == 24
        text = "\n".join(lines)
        assert f"{game} #617" in lines[0]
        for pile in app.session.state()["piles"]:
            assert pile in text.split()
        example = {"shaula": "t5 t2", "stalactites": "t5 f", "moojub": "r1 f"}[game]
        assert f"move ({example})" in lines[-1]


async def test_typing_a_move_plays_it() -> None:
    app = practice("shaula", 2)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"t2 f", "enter")
        await pilot.pause()
        assert app.session.state()["piles"]["f1"] == ["AD"]
        assert "1/52 cards" in screen_text(app).splitlines()[0]
        assert app.query_one("#move").value == ""  # type: ignore[attr-defined]


async def test_a_refused_move_shows_the_reason_and_keeps_the_board() -> None:
    app = practice("shaula", 2)
    async with app.run_test(size=(80, 24)) as pilot:
        before = screen_text(app).splitlines()[1:13]
        await pilot.press(*"t5 t1", "enter")
        await pilot.pause()
        shown = screen_text(app)
        assert "t5 t1: A♠ does not go on 3♥" in shown  # cards drawn as on the board
        assert shown.splitlines()[1:13] == before
        assert app.session.state()["moves"] == 0


async def test_keys_pick_a_source_then_a_destination() -> None:
    app = practice("shaula", 2)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        await pilot.pause()
        assert app.selected == "t2" and "t2 → ?" in screen_text(app)
        await pilot.press("f")  # a quick key now, not the start of notation
        await pilot.press("8", "c")
        await pilot.pause()
        piles = app.session.state()["piles"]
        assert piles["f1"] == ["AD"] and piles["c1"] == ["JH"]
        # The cursor: right lands on t1, up on f1, space picks... f1 is empty: refused kindly.
        await pilot.press("right", "space", "right", "space")
        await pilot.pause()
        assert app.session.state()["piles"]["t1"][-1] == "3H"
        assert "t1 t2" in screen_text(app)  # 3H on 9S is refused with the reason


async def test_undo_hint_and_autoplay_keys() -> None:
    app = practice("shaula", 2)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"t2 f", "enter", "u")
        await pilot.pause()
        state = app.session.state()
        assert state["piles"]["f1"] == [] and state["moves"] == 2
        await pilot.press("h")
        await pilot.pause()
        assert "hint" in screen_text(app).splitlines()[-2]
        await pilot.press("a")
        await pilot.pause()
        assert app.session.state()["progress"] >= 2  # both aces are always safe


async def test_help_opens_and_closes() -> None:
    app = practice("moojub", 3)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "Quick keys" in screen_text(app)
        await pilot.pause(1.2)  # the clock ticks under the help: the board must not be lost
        await pilot.press("x")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_moojub_deal_by_key_lowers_the_talon_count() -> None:
    app = practice("moojub", 3)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert app.session.state()["talon_count"] == 44
        lines = screen_text(app).splitlines()
        below_talon = next(i for i, line in enumerate(lines) if "talon" in line) + 1
        assert lines[below_talon].split()[-1] == "44"


async def test_autodrop_plays_safe_cards_after_each_move() -> None:
    app = practice("shaula", 2)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("A")
        await pilot.pause()
        assert app.autodrop and "autodrop" in screen_text(app).splitlines()[0]
        up = app.session.state()["progress"]
        assert up >= 1  # AD was already free: it went up at once
        await pilot.press(*"t1 c1", "enter")  # frees AH beneath 3H
        await pilot.pause()
        assert app.session.state()["progress"] > up


async def test_autodrop_in_moojub_says_there_is_none_and_stays_off() -> None:
    app = practice("moojub", 845)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(2):
            await pilot.press("A")
            await pilot.pause()
            lines = screen_text(app).splitlines()
            assert not app.autodrop and "autodrop" not in lines[0]
            assert "Moojub has no autodrop" in "\n".join(lines[-3:])
        assert app.session.state()["moves"] == 0


async def test_the_mouse_picks_piles_and_a_double_click_sends_home() -> None:
    app = practice("shaula", 2)
    async with app.run_test(size=(80, 24)) as pilot:
        board = app.board_view
        # t2 is the second 10-column slot; its top card AD is on line 9 (label on line 3).
        await pilot.click(board, offset=(12, 9), times=2)
        await pilot.pause()
        assert app.session.state()["piles"]["f1"] == ["AD"]
        await pilot.click(board, offset=(72, 5))  # t8: JH
        await pilot.click(board, offset=(42, 1))  # c1
        await pilot.pause()
        assert app.session.state()["piles"]["c1"] == ["JH"]


async def test_moves_typed_in_one_burst_are_each_played() -> None:
    start = new_game("stalactites", 5).state()["piles"]
    app = practice("stalactites", 5)
    async with app.run_test(size=(80, 24)) as pilot:
        # As a paste or a fast typist sends them: all queued before any is handled.
        for key in [*"t2 c2", "enter", *"t3 c1", "enter"]:
            char = {"enter": "\r", "space": " "}.get(key, key)
            app.post_message(events.Key("space" if key == " " else key, char))
        await pilot.pause(0.2)
        piles = app.session.state()["piles"]
        assert piles["c2"] == start["t2"][-1:] and piles["c1"] == start["t3"][-1:]


async def test_quick_keys_typed_in_one_burst_pick_then_drop() -> None:
    # A digit then f or c, as a fast typist (or a slow link) sends them: the letter came
    # before the pick was handled, and was typed on the move line instead of dropping.
    app = practice("shaula", 2)
    async with app.run_test(size=(80, 24)) as pilot:
        for key in ["2", "f", "8", "c", *"t1 c2", "enter"]:
            char = {"enter": "\r", "space": " "}.get(key, key)
            app.post_message(events.Key("space" if key == " " else key, char))
        await pilot.pause(0.2)
        piles = app.session.state()["piles"]
        assert piles["f1"] == ["AD"] and piles["c1"] == ["JH"] and piles["c2"] == ["3H"]
        assert app.move_input.value == "" and app.session.state()["moves"] == 3


async def test_a_narrow_title_uses_short_words_and_keeps_the_step() -> None:
    app = practice("stalactites", 5)
    async with app.run_test(size=(60, 24)) as pilot:
        await pilot.press(*"t2 c2", "enter")
        await pilot.pause()
        title = screen_text(app).splitlines()[0]
        assert "1 mv" in title and title.rstrip().endswith("step open")
