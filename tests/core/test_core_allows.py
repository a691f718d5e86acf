"""A game's one-move legality check (`_allows`, asked on every move the servers apply) says
what listing the legal moves says, for every move between existing piles, in positions
reached by random play."""

from __future__ import annotations

import random

import pytest

from core import GAMES, new_game
from core.game import Game


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_allows_agrees_with_the_listed_moves(game_name: str) -> None:
    rng = random.Random(13)
    checked = allowed = 0
    for seed in range(1, 16):
        game = new_game(game_name, seed)
        for _ in range(40):
            piles = game.piles
            for src in range(len(piles)):
                if src in game.foundations or not piles[src]:
                    continue
                listed = game._legal_from(src)
                for dst in range(len(piles)):
                    if dst == src:
                        continue
                    for n in range(1, len(piles[src]) + 1):
                        fast = game._allows(src, dst, n)
                        assert fast == Game._allows(game, src, dst, n), (seed, src, dst, n)
                        assert fast == (game.code(src, dst, n) in listed)
                        checked += 1
                        allowed += fast
            legal = game.legal_moves()
            if not legal:
                break
            game.apply(rng.choice(legal))
    assert checked > 3_000 and allowed > 150
