"""Drawing each game from its state dict: labels, suits, fallbacks, the 80x24 fit."""

from __future__ import annotations

import pytest

from client_cli.board import Marks, pile_at, render_board
from client_cli.cards import CardStyle, card_text, cards_in_text, style_from_env
from core import GAMES, new_game

PLAIN = CardStyle(symbols=False, color=False)


@pytest.mark.parametrize("game", GAMES)
def test_every_pile_is_labelled_and_it_fits_80x24(game: str) -> None:
    state = new_game(game, 617).state(view="player")
    text = render_board(state, width=80, height=20)
    lines = text.plain.splitlines()
    assert len(lines) <= 20
    assert max(len(line) for line in lines) <= 80
    words = set(text.plain.split())
    assert set(state["piles"]) <= words


def test_shaula_shows_every_tableau_card_top_to_bottom() -> None:
    state = new_game("shaula", 2).state()
    lines = render_board(state, style=PLAIN).plain.splitlines()
    # Column t5 (the fifth slot) lists its seven cards in deal order, bottom first.
    slot = lines[3].index("t5")
    column = [line[slot : slot + 3].strip() for line in lines[4:]]
    expected = [c.replace("T", "10") for c in state["piles"]["t5"]]
    assert column[: len(expected)] == expected


def test_suits_are_coloured_symbols_with_a_plain_letter_fallback() -> None:
    heart, spade = card_text("TH", CardStyle()), card_text("AS", CardStyle())
    assert heart.plain == "10♥" and spade.plain == "A♠ "
    assert "red" in str(heart.spans[0].style)
    assert "black" in str(spade.spans[0].style)
    assert card_text("TH", PLAIN).plain == "10H"
    assert card_text("TH", PLAIN).spans == []


def test_no_color_and_ascii_come_from_flag_and_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert style_from_env() == CardStyle(symbols=True, color=False)
    monkeypatch.delenv("NO_COLOR")
    assert style_from_env(ascii_only=True) == CardStyle(symbols=False, color=True)


def test_plain_board_has_no_suit_symbols() -> None:
    plain = render_board(new_game("stalactites", 5).state(), style=PLAIN).plain
    assert not set("♠♥♦♣") & set(plain)


def test_moojub_draws_its_foundation_grid_and_talon_count() -> None:
    state = new_game("moojub", 2).state(view="player")
    lines = render_board(state, style=PLAIN).plain.splitlines()
    assert lines[0].split() == ["f1", "f5", "f9", "f13", "f17", "f21", "f25", "f29"]
    assert lines[6].split() == ["f4", "f8", "f12", "f16", "f20", "f24", "f28", "f32"]
    assert lines[-2].split() == ["r1", "r2", "r3", "r4", "talon"]
    assert lines[-1].split()[-1] == "48"


def test_long_piles_fold_to_fit_the_height() -> None:
    state = new_game("shaula", 2).state()
    state["piles"]["t5"] = ["KS", "QH", "JC", "TD", "9S", "8H", "7C", "6D", "5S", "4H", "3C"]
    lines = render_board(state, height=10, style=PLAIN).plain.splitlines()
    assert len(lines) == 10
    slot = lines[3].index("t5")
    column = [line[slot : slot + 3].strip() for line in lines[4:]]
    assert column == ["+6", "7C", "6D", "5S", "4H", "3C"]


def test_more_room_gives_wider_piles() -> None:
    state = new_game("shaula", 2).state()
    narrow = render_board(state, width=40).plain.splitlines()
    wide = render_board(state, width=120).plain.splitlines()
    assert max(map(len, narrow)) <= 40 < max(map(len, wide))


def test_marks_show_the_picked_pile_and_the_cursor() -> None:
    state = new_game("shaula", 2).state()
    text = render_board(state, marks=Marks(selected="t3", cursor="t6", hint=("c1",)))
    assert ">t6" in text.plain and "c1*" in text.plain
    start = text.plain.index("t3")
    assert any(
        "reverse" in str(span.style) and span.start <= start < span.end for span in text.spans
    )


def test_a_click_finds_the_pile_drawn_there() -> None:
    assert pile_at("moojub", 0, 0, 80) == "f1"
    assert pile_at("moojub", 12, 3, 80) == "f6"
    assert pile_at("moojub", 55, 10, 80) == "talon"
    assert pile_at("moojub", 35, 9, 80) == "r4"
    assert pile_at("stalactites", 45, 1, 80) is None
    assert pile_at("stalactites", 65, 1, 80) == "c1"
    assert pile_at("shaula", 75, 15, 80) == "t8"
    assert pile_at("shaula", 5, 2, 80) is None


def test_cards_in_a_reason_read_as_on_the_board() -> None:
    reason = "8H does not go on 9D in t3: TS and AS are in c1"
    assert cards_in_text(reason, CardStyle()).plain == (
        "8♥ does not go on 9♦ in t3: 10♠ and A♠ are in c1"
    )
    assert cards_in_text(reason, PLAIN).plain == "8H does not go on 9D in t3: 10S and AS are in c1"
    # What the player typed, quoted back, reads as they typed it.
    typed = "could not read move 'QD JH': 'qd' is not a pile id"
    assert cards_in_text(typed, CardStyle()).plain == typed
    # An apostrophe within a word quotes nothing: the cards after it read as on the board.
    owned = "f1's base is QS, f2's base is JH"
    assert cards_in_text(owned, CardStyle()).plain == "f1's base is Q♠, f2's base is J♥"


def test_a_card_a_spectator_may_not_see_yet_is_drawn_face_down() -> None:
    # docs/protocol.md: Moojub cards not dealt to every racer still racing come as "??".
    for style in (CardStyle(), PLAIN):
        assert card_text("??", style).plain == "## "
