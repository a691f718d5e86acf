"""The players' rules texts: one per game, the same in docs/rules.md."""

import pathlib

import pytest

import core

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "rules.md"


@pytest.mark.parametrize("game", core.GAMES)
def test_each_game_has_its_rules_text(game: str) -> None:
    text = core.rules_text(game)
    assert text.startswith(f"# {core.game_class(game).title}\n")
    assert "**Goal.**" in text and "**End.**" in text


@pytest.mark.parametrize("game", core.GAMES)
def test_docs_rules_holds_the_same_text(game: str) -> None:
    assert core.rules_text(game) in DOC.read_text(encoding="utf-8")


def test_shaula_explains_shifts_with_an_example() -> None:
    text = core.rules_text("shaula")
    assert "Shifts" in text and "`t2 t6 3`" in text


def test_the_shaula_shift_example_is_what_the_engine_does() -> None:
    piles: dict[str, list[str]] = {pid: [] for pid in core.Shaula.pile_ids}
    piles |= {"t2": ["9S", "8S", "7S"], "t6": ["TH"], "t7": ["6D", "5C", "4H"], "t3": ["7D"]}
    used = {card for cards in piles.values() for card in cards}
    rest = [r + s for s in "CDHS" for r in "A23456789TJQK" if r + s not in used]
    for i, card in enumerate(rest):
        piles[("t1", "t4", "t5", "t8")[i % 4]].append(card)
    game = core.from_state({"game": "shaula", "piles": piles})
    game.apply("t2 t6 3")
    assert game.state()["piles"]["t6"] == ["TH", "9S", "8S", "7S"]
    with pytest.raises(core.IllegalMove):
        game.apply("t6 c1 2")  # no longer a run where it stands now
    game.apply("t7 t3 3")
    assert game.state()["piles"]["t3"] == ["7D", "6D", "5C", "4H"]
    with pytest.raises(core.IllegalMove):
        game.apply("t3 c1 2")


def test_unknown_game_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        core.rules_text("../etc/passwd")
