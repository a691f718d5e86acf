"""Moojub's rules (RULES.md section 6), each with a hand-built position."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import core
from core import Game, IllegalMove

Position = Callable[..., Game]
Refused = Callable[[Game, str, str], None]


COLUMN_1 = {"f1": ["3C"], "f2": ["4D"], "f3": ["5H"], "f4": ["6S"]}


def test_layout_of_a_deal() -> None:
    game = core.new_game("moojub", 845)
    state = game.state()
    assert list(state["piles"]) == [*(f"f{i}" for i in range(1, 33)), "r1", "r2", "r3", "r4"]
    assert all(state["piles"][f"f{i}"] == [] for i in range(1, 33))
    assert [len(state["piles"][f"r{i}"]) for i in range(1, 5)] == [1, 1, 1, 1]
    assert state["talon_count"] == len(state["talon"]) == 48
    assert "step" not in state
    player = game.state(view="player")
    assert "talon" not in player
    assert player["talon_count"] == 48
    # The seed would give away the talon's order: the player view hides it too.
    assert player["seed"] is None
    assert {k: v for k, v in state.items() if k != "talon"} | {"seed": None} == player
    with pytest.raises(ValueError, match="view must be"):
        game.state(view="spectator")


def test_builds_go_up_in_suit_and_wrap(position: Position, refused: Refused) -> None:
    game = position("moojub", {"f1": ["QH", "KH"], "r1": ["AH"], "r2": ["AS"], "r3": ["3H"]})
    assert game.legal_moves()[0] == "r1 f1"
    refused(game, "r3 f1", "3H does not go on KH in f1: one rank higher needed (King to Ace wraps)")
    game.apply("r1 f1")
    assert game.state()["piles"]["f1"] == ["QH", "KH", "AH"]
    refused(game, "r2 f1", "AS does not go on AH in f1: same suit needed")


def test_a_foundation_holds_13_cards(position: Position, refused: Refused) -> None:
    full = ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH"]
    # In one deck a full foundation holds its whole suit: any card is refused for that.
    game = position("moojub", {"f1": full, "f2": ["2C"], "r1": ["3C"]})
    refused(game, "r1 f1", "f1 is full: a foundation holds 13 cards")


def test_start_rule_1_foundations_start_in_order(position: Position, refused: Refused) -> None:
    game = position("moojub", {"f1": ["3C"], "r1": ["2D"]})
    refused(game, "r1 f3", "f3 cannot be started yet: foundations start in order, f2 is next")
    game.apply("r1 f2")
    assert game.state()["piles"]["f2"] == ["2D"]


def test_start_rule_2_a_row_keeps_its_suit(position: Position, refused: Refused) -> None:
    game = position("moojub", {**COLUMN_1, "r1": ["9D"], "r2": ["9C"]})
    refused(game, "r1 f5", "f5 must start with a club, the suit of f1's base card")
    assert "r2 f5" in game.legal_moves()
    game.apply("r2 f5")
    assert "r1 f6" in game.legal_moves()  # f2's base is a diamond


def test_start_rule_3_column_1_has_four_suits(position: Position, refused: Refused) -> None:
    game = position("moojub", {"f1": ["3C"], "r1": ["9C"], "r2": ["9D"]})
    refused(game, "r1 f2", "column 1 already has a club foundation (f1)")
    assert "r2 f2" in game.legal_moves()


def test_start_rule_4_only_the_lowest_visible_card_of_a_suit(
    position: Position, refused: Refused
) -> None:
    game = position("moojub", {"r1": ["7S"], "r2": ["3S"], "r3": ["KS"]})
    msg = "3S on r2 is a lower spade: only the lowest visible card of a suit starts a foundation"
    refused(game, "r1 f1", msg)
    refused(game, "r3 f1", msg)
    assert game.legal_moves() == ["r2 f1", "deal"]


def test_start_rule_5_a_card_that_builds_does_not_start(
    position: Position, refused: Refused
) -> None:
    # 5D could start f6 (a diamond row) by rules 1-4, but it goes on f2.
    game = position("moojub", {**COLUMN_1, "f5": ["8C"], "r1": ["5D"]})
    refused(game, "r1 f6", "5D goes on f2, so it cannot start a new foundation")
    assert game.legal_moves() == ["r1 f2", "deal"]


def test_listing_order(position: Position) -> None:
    game = position(
        "moojub",
        {**COLUMN_1, "f5": ["8C"], "r1": ["9C"], "r2": ["7D"], "r3": [], "r4": ["AC"]},
        talon=["2S"],
    )
    # r1 builds on f5; r2 starts f6 (diamond row); AC starts nothing: 9C... is not lower.
    assert game.legal_moves() == ["r1 f5", "r2 f6", "deal"]


def test_cards_move_only_from_reserves_to_foundations(position: Position, refused: Refused) -> None:
    game = position("moojub", {"f1": ["3C"], "r1": ["8D", "9D"], "r2": ["9C"]})
    refused(game, "r1 r3", "cards never move onto a reserve except by deal")
    refused(game, "f1 r1", "cards never leave a foundation")
    refused(game, "talon r1", "cards leave the talon only by deal")
    refused(game, "r3 f2", "r3 is empty")
    refused(game, "r1 t1", "Moojub has no pile t1")
    refused(game, "r1 f2 2", "only one card at a time moves from r1 to f2")


def test_deal_one_card_to_each_reserve_from_r1(position: Position) -> None:
    game = position("moojub", {"r1": ["KD"]}, talon=["2C", "3D", "4H", "5S", "6C"])
    assert game.legal_moves()[-1] == "deal"
    game.apply("deal")
    piles = game.state()["piles"]
    assert [piles[f"r{i}"] for i in range(1, 5)] == [["KD", "2C"], ["3D"], ["4H"], ["5S"]]
    assert game.state()["talon"][:1] == ["6C"]


def test_a_short_talon_deals_while_cards_last(position: Position, refused: Refused) -> None:
    game = position("moojub", {"r1": ["KD"]}, talon=[])
    # Move all but two talon cards onto r4 to leave a short talon.
    data = game.state()
    data["piles"]["r4"] = data["talon"][:-2]
    data["talon"] = data["talon"][-2:]
    game = core.from_state(data)
    last_two = data["talon"]
    game.apply("deal")
    state = game.state()
    assert state["piles"]["r1"][-1] == last_two[0]
    assert state["piles"]["r2"] == [last_two[1]]
    assert state["piles"]["r3"] == []
    assert state["talon"] == [] and state["talon_count"] == 0
    refused(game, "deal", "the talon is empty")


def test_twelve_deals_empty_the_talon_of_a_new_game() -> None:
    game = core.new_game("moojub", 845)
    for _ in range(12):
        game.apply("deal")
    assert game.state()["talon_count"] == 0
    assert "deal" not in game.legal_moves()
    assert [len(game.state()["piles"][f"r{i}"]) for i in range(1, 5)] == [13] * 4


def test_a_deal_cannot_be_undone() -> None:
    game = core.new_game("moojub", 845)
    game.apply("deal")
    before = game.state()
    with pytest.raises(IllegalMove, match="a deal cannot be undone"):
        game.undo()
    assert game.state() == before


def test_no_autoplay_in_moojub(position: Position) -> None:
    game = position("moojub", {"f1": ["4H"], "r1": ["5H"]})
    assert game.autoplay() == []
    assert game.moves == 0


def test_won_and_stuck(position: Position) -> None:
    suits = "CDHS"
    ranks = "A23456789TJQK"
    piles = {f"f{i + 1}": [f"{r}{suits[i]}" for r in ranks] for i in range(4)}
    piles["f4"].pop()
    piles["r2"] = ["KS"]
    game = position("moojub", piles, talon=[])
    assert not game.won and not game.stuck
    assert game.progress == 51
    game.apply("r2 f4")
    assert game.won and not game.stuck and game.progress == 52
    # Stuck: talon empty, and the only reserve card cannot start or build.
    piles = {f"f{i + 1}": [f"{r}{suits[i]}" for r in ranks[:12]] for i in range(3)}
    piles["f4"] = ["AS"]
    piles["r1"] = ["KC", "KD", "KH", "2S"]
    piles["r2"] = ["KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S"]
    game = core.from_state({"game": "moojub", "piles": {**_empty(), **piles}, "talon": []})
    game.apply("r1 f4")  # 2S
    assert game.legal_moves() == ["r1 f3", "r2 f4"]


def _empty() -> dict[str, list[str]]:
    return {pid: [] for pid in core.game_class("moojub").pile_ids}


def test_stuck_when_talon_empty_and_nothing_moves() -> None:
    # 3C neither builds on AC nor starts f2 (column 1 has its club): nothing moves.
    piles = _empty()
    piles["f1"] = ["AC"]
    piles["r1"] = [c for c in core.CARD_TEXT if c not in ("AC", "3C")] + ["3C"]
    game = core.from_state({"game": "moojub", "piles": piles, "talon": []})
    assert game.legal_moves() == []
    assert game.stuck and not game.won
    # The same position with one card left in the talon is not stuck: deal is a move.
    piles["r1"].remove("KD")
    game = core.from_state({"game": "moojub", "piles": piles, "talon": ["KD"]})
    assert game.legal_moves() == ["deal"]
    assert not game.stuck
