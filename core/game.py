"""The base class of the three games: the public surface of RULES.md section 9.

Two ways to play a move:

* the checked path, for untrusted input: :meth:`Game.apply` takes text (or a
  :class:`~core.moves.Move`), refuses an illegal move with :class:`IllegalMove`
  naming the rule, and changes nothing then;
* the fast path, for search (solver, bots, benchmarks): :meth:`Game.generate`
  lists legal :class:`Move` values (shared, precomputed objects), :meth:`Game.push`
  plays one of them WITHOUT checking it, :meth:`Game.pop` takes the last one back
  exactly (a Moojub deal too), and :meth:`Game.copy` is a cheap independent copy.

Internally a move is an int code ``(src * npiles + dst) * 64 + n`` over pile
indices (the order of ``pile_ids``), with ``-1`` for the deal; per-class tables
map codes to :class:`Move` values and to canonical text, so listing moves does no
string work. A pile is a list of card ints (see :mod:`core.cards`), bottom to top.
"""

from __future__ import annotations

from typing import Any, ClassVar

from core.cards import CARD_TEXT, Card
from core.deals import check_seed, shuffled_stock
from core.moves import DEAL, IllegalMove, Move

__all__ = ["DEAL_CODE", "Game"]

DEAL_CODE = -1
_NMAX = 64  # room for a group size in a move code


class Game:
    """One game in progress. Subclasses set the class-level metadata below."""

    name: ClassVar[str]  # "shaula"
    title: ClassVar[str]  # "Shaula", for messages
    pile_ids: ClassVar[tuple[str, ...]]  # every pile, in listing order
    foundations: ClassVar[range]  # pile indices of the foundations
    cells: ClassVar[range]  # cells (Shaula, Stalactites) or reserves (Moojub)
    tableau: ClassVar[range]
    max_group: ClassVar[int] = 1  # largest N of a group move
    progress_base: ClassVar[int] = 0  # cards on foundations at the start that do not count
    progress_total: ClassVar[int] = 52
    has_talon: ClassVar[bool] = False

    # Built by __init_subclass__ from the metadata above.
    npiles: ClassVar[int]
    index: ClassVar[dict[str, int]]  # pile id -> pile index
    _move_of: ClassVar[dict[int, Move]]
    _text_of: ClassVar[dict[int, str]]
    _code_of: ClassVar[dict[Move, int]]
    _parsed: ClassVar[dict[str, Move]]  # canonical text -> Move.parse(text), for apply()
    _decode: ClassVar[dict[int, tuple[int, int, int]]]  # code -> (src, dst, n); not the deal
    _codes: ClassVar[list[list[int]]]  # [src][dst] -> code of the one-card move

    seed: int | None
    piles: list[list[int]]  # read it freely (e.g. for a search key); change it only by push/pop
    talon: list[int]  # Moojub: face-down cards, the LAST is dealt first; [] otherwise
    history: list[str]  # canonical moves played since the deal (undone ones removed)
    # The undo stack, as two lists of ints: each move's code, and whatever the subclass
    # needs to undo it. Not a list of pairs: a pair per move is an object the garbage
    # collector tracks and counts until the race is over, so a busy server's young
    # collections came every few tens of thousands of moves, each a pause for every room.
    _stack: list[int]
    _aux: list[int]
    _moves: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not hasattr(cls, "pile_ids"):
            return
        cls.npiles = len(cls.pile_ids)
        assert cls.foundations.step == 1, "progress reads the foundations from start to stop"
        cls.index = {pid: i for i, pid in enumerate(cls.pile_ids)}
        cls._move_of = {DEAL_CODE: DEAL}
        cls._text_of = {DEAL_CODE: "deal"}
        cls._decode = {}
        cls._codes = [[cls.code(s, d) for d in range(cls.npiles)] for s in range(cls.npiles)]
        for s, src in enumerate(cls.pile_ids):
            for d, dst in enumerate(cls.pile_ids):
                groups = s in cls.tableau and d in cls.tableau
                for n in range(1, (cls.max_group if groups else 1) + 1):
                    move = Move(src, dst, n)
                    code = cls.code(s, d, n)
                    cls._move_of[code] = move
                    cls._text_of[code] = str(move)
                    cls._decode[code] = (s, d, n)
        cls._code_of = {move: code for code, move in cls._move_of.items()}
        cls._parsed = {text: cls._move_of[code] for code, text in cls._text_of.items()}

    # ------------------------------------------------------------------ setup

    def __init__(self, seed: object, *, blank: bool = False) -> None:
        """A new deal of this game for ``seed`` (1 .. 2**63-1; ValueError otherwise).

        ``blank`` (for from_state and copy) makes empty piles and no seed instead. The seed
        is typed ``object`` because check_seed is what refuses a bad one: the compiled
        build checks declared argument types itself, with a TypeError, before any code of
        ours runs."""
        self._clear()
        if blank:
            self.seed = None
            return
        self.seed = checked = check_seed(seed)
        self._deal(shuffled_stock(checked))

    def _clear(self) -> None:
        self.piles = [[] for _ in self.pile_ids]
        self.talon = []
        self.history = []
        self._stack = []
        self._aux = []
        self._moves = 0

    def _deal(self, stock: list[int]) -> None:
        """Deal the shuffled ``stock`` (its last card first) into the piles."""
        raise NotImplementedError

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Game:
        """Build a game from a ``state()``-shaped dict (seed, step, talon, moves optional)."""
        game = cls(None, blank=True)
        seed = data.get("seed")
        game.seed = None if seed is None else check_seed(seed)
        piles = data.get("piles")
        if not isinstance(piles, dict) or set(piles) != set(cls.pile_ids):
            raise ValueError(f"{cls.title} needs exactly the piles {', '.join(cls.pile_ids)}")
        seen: list[int] = []
        for pid in cls.pile_ids:
            cards = _parse_cards(piles[pid], pid)
            game.piles[cls.index[pid]] = cards
            seen += cards
        if cls.has_talon:
            if "talon" not in data:
                raise ValueError("a Moojub state needs its talon (the full view)")
            game.talon = _parse_cards(data["talon"], "talon")[::-1]
            seen += game.talon
        if sorted(seen) != list(range(52)):
            raise ValueError("a state must hold each of the 52 cards exactly once")
        moves = data.get("moves", 0)
        if isinstance(moves, bool) or not isinstance(moves, int) or moves < 0:
            raise ValueError("moves must be a whole number from 0")
        game._moves = moves
        game._load(data)
        return game

    def _load(self, data: dict[str, Any]) -> None:
        """Check the piles just loaded by from_state and rebuild the derived fields."""
        raise NotImplementedError

    def copy(self) -> Game:
        """An independent copy (undo stack and history included), cheaper than deepcopy."""
        new = type(self)(None, blank=True)
        new.seed = self.seed
        new.piles = [p.copy() for p in self.piles]
        new.talon = self.talon.copy()
        new.history = self.history.copy()
        new._stack = self._stack.copy()
        new._aux = self._aux.copy()
        new._moves = self._moves
        self._copy_extra(new)
        return new

    def _copy_extra(self, new: Game) -> None:
        """Copy every field a subclass adds into ``new`` (mutable ones as copies)."""

    # ------------------------------------------------------------------ moves

    @classmethod
    def code(cls, src: int, dst: int, n: int = 1) -> int:
        """The int code of a move between pile indices (see the module docstring)."""
        return (src * cls.npiles + dst) * _NMAX + n

    def legal_moves(self) -> list[str]:
        """Every move apply() accepts, canonical, ordered as RULES.md section 2 says."""
        text = self._text_of
        return [text[c] for c in self._gen()]

    def generate(self) -> list[Move]:
        """The legal moves as :class:`Move` values, in the order of legal_moves()."""
        move = self._move_of
        return [move[c] for c in self._gen()]

    def push(self, move: Move) -> None:
        """Play ``move`` UNCHECKED (it must come from generate()). Fast path for search."""
        self._push(self._code_of[move])

    def pop(self) -> Move:
        """Take back the last pushed or applied move exactly (a deal too) and return it."""
        if not self._stack:
            raise IllegalMove("nothing to undo")
        code = self._stack.pop()
        self._unplay(code, self._aux.pop())
        self.history.pop()
        self._moves -= 1
        return self._move_of[code]

    def _push(self, code: int) -> None:
        self._aux.append(self._play(code))
        self._stack.append(code)
        self.history.append(self._text_of[code])
        self._moves += 1

    def apply(self, move: str | Move) -> None:
        """Play a move given as text or Move; IllegalMove (nothing changes) if refused."""
        if not isinstance(move, Move):
            # Canonical text (what clients send back) skips the parser: same Move.
            known = self._parsed.get(move) if isinstance(move, str) else None
            move = known if known is not None else Move.parse(move)
        self._push(self._resolve(move))

    def undo(self) -> None:
        """Take back the last move; it counts as a move. A Moojub deal cannot be undone."""
        if not self._stack:
            raise IllegalMove("nothing to undo")
        if self._stack[-1] == DEAL_CODE:
            raise IllegalMove("a deal cannot be undone: it would show the talon")
        self.pop()
        self._moves += 2

    def autoplay(self) -> list[str]:
        """Play the safe moves of RULES.md section 7 one by one and return them."""
        done: list[str] = []
        while (code := self._safe_move()) is not None:
            self._push(code)
            done.append(self._text_of[code])
        return done

    def _resolve(self, move: Move) -> int:
        """The code of ``move`` if it is legal now; else IllegalMove with the reason."""
        if move.is_deal:
            if DEAL_CODE in self._gen():
                return DEAL_CODE
            raise IllegalMove(self._why_not_deal())
        if move.src == "talon" and self.has_talon:
            raise IllegalMove("cards leave the talon only by deal")
        s = self.index.get(move.src)
        if s is None:
            raise IllegalMove(f"{self.title} has no pile {move.src}")
        pile = self.piles[s]
        if s in self.foundations:
            raise IllegalMove("cards never leave a foundation")
        if not pile:
            raise IllegalMove(f"{move.src} is empty")
        if move.dst == "f" and move.n != 1:
            raise IllegalMove("only one card at a time goes to a foundation")
        if move.n > len(pile):
            raise IllegalMove(f"{move.src} holds only {_cards(len(pile))}")
        if move.dst == "f":
            for f in self.foundations:
                if self._allows(s, f, 1):
                    return self.code(s, f)
            raise IllegalMove(f"no foundation takes {CARD_TEXT[pile[-1]]}")
        d = self.index.get(move.dst)
        if d is None:
            raise IllegalMove(f"{self.title} has no pile {move.dst}")
        if s == d:
            raise IllegalMove("a move needs two different piles")
        if move.n > 1 and not (s in self.tableau and d in self.tableau and self.max_group > 1):
            raise IllegalMove(f"only one card at a time moves from {move.src} to {move.dst}")
        if self._allows(s, d, move.n):
            return self.code(s, d, move.n)
        raise IllegalMove(self._why(s, d, move.n))

    # Subclass hooks for the rules.
    def _gen(self) -> list[int]:
        """Codes of the legal moves, in the order of RULES.md section 2."""
        raise NotImplementedError

    def _has_move(self) -> bool:
        """Whether any move is legal: a subclass may stop at the first one it finds."""
        return bool(self._gen())

    def _allows(self, src: int, dst: int, n: int) -> bool:
        """Whether moving `n` cards from pile `src` (not empty, not a foundation) to `dst`
        (another pile) is legal now. A subclass may decide it without listing the moves
        (the servers ask on every move; a differential test keeps the two in step)."""
        return self.code(src, dst, n) in self._legal_from(src)

    def _legal_from(self, src: int) -> list[int]:
        """Codes of the legal moves from pile ``src``: all the checked path needs."""
        decode = self._decode
        return [c for c in self._gen() if c != DEAL_CODE and decode[c][0] == src]

    def _play(self, code: int) -> int:
        """Play a legal move; return what _unplay needs besides the code."""
        raise NotImplementedError

    def _unplay(self, code: int, aux: int) -> None:
        raise NotImplementedError

    def _why(self, src: int, dst: int, n: int) -> str:
        """Why a move between existing, different piles, with enough cards, is refused."""
        raise NotImplementedError

    def _why_not_deal(self) -> str:
        return f"there is no deal in {self.title}"

    def _safe_move(self) -> int | None:
        """The first move autoplay may make now, or None."""
        return None

    # ------------------------------------------------------------------ status

    @property
    def moves(self) -> int:
        """Moves applied so far; an undo counts as a move of its own."""
        return self._moves

    @property
    def progress(self) -> int:
        """Cards the player has put on foundations (out of ``progress_total``)."""
        piles = self.piles
        f = self.foundations  # contiguous (checked by __init_subclass__)
        up = -self.progress_base
        for i in range(f.start, f.stop):  # a C loop compiled, where sum(map(...)) is not
            up += len(piles[i])
        return up

    @property
    def won(self) -> bool:
        return self.progress == self.progress_total

    @property
    def stuck(self) -> bool:
        """Not won, and no legal move (a Moojub deal is a move while the talon has cards)."""
        return self.stuck_at(self.progress)

    def stuck_at(self, progress: int) -> bool:
        """`stuck`, for a caller that has just read `progress` (the servers, on every
        move): the cards up are not counted twice."""
        return progress != self.progress_total and not self._has_move()

    def key(self) -> tuple[Any, ...]:
        """A hashable snapshot of the position (piles, talon, derived rule state)."""
        return (tuple(map(tuple, self.piles)), tuple(self.talon), self._key_extra())

    def _key_extra(self) -> int:
        return 0

    def state(self, view: str = "full") -> dict[str, Any]:
        """Plain JSON-able data, RULES.md section 9; ``view="player"`` hides the talon.

        A game with a talon also hides its seed (None) in the player view: the seed
        would give away the talon's order.
        """
        if view not in ("full", "player"):
            raise ValueError(f"view must be 'full' or 'player', not {view!r}")
        text = CARD_TEXT
        hide_seed = view == "player" and self.has_talon
        data: dict[str, Any] = {
            "game": self.name,
            "seed": None if hide_seed else self.seed,
            "piles": {
                pid: [text[c] for c in p] for pid, p in zip(self.pile_ids, self.piles, strict=True)
            },
        }
        self._state_extra(data, view)
        data["moves"] = self._moves
        data["progress"] = self.progress
        data["won"] = self.won
        data["stuck"] = self.stuck
        return data

    def _state_extra(self, data: dict[str, Any], view: str) -> None:
        """Add the game's own keys (talon, step) to a state dict."""

    def __repr__(self) -> str:
        return f"<{self.title} seed={self.seed} moves={self._moves} progress={self.progress}>"


def _cards(n: int) -> str:
    return f"{n} card" if n == 1 else f"{n} cards"


def _parse_cards(cards: object, pid: str) -> list[int]:
    if not isinstance(cards, list):
        raise ValueError(f"pile {pid} must be a list of cards")
    try:
        return [Card.parse(c) for c in cards]
    except ValueError as exc:
        raise ValueError(f"pile {pid}: {exc}") from None
