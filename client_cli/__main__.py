"""`solrace`: the terminal client. `solrace --help` lists the subcommands."""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Sequence

from client_cli.cards import CardStyle, style_from_env

__all__ = ["DEFAULT_SERVER", "build_parser", "main"]

DEFAULT_SERVER = "http://127.0.0.1:8765"
GAMES = ("shaula", "stalactites", "moojub")

DESCRIPTION = """\
Race friends at solitaire from the terminal: Shaula, Stalactites and Moojub.
Every player of a race gets the very same deal; the first to finish wins.

Moves are typed in the engine's notation (t5 t2, t5 t2 3, c1 f, r2 f7, deal) or
picked by keys: a digit picks a tableau pile (Moojub: a reserve), then a digit,
f (foundation) or c (free cell) drops it; arrows and space do the same with a
cursor. u undo, h hint, a autoplay, ? the rules and keys, q quit.
"""


def seed_choice(text: str) -> str:
    if text.isdigit() or text in ("random", "winnable"):
        return text
    raise argparse.ArgumentTypeError("a seed is a whole number, 'random' or 'winnable'")


def deal_number(text: str) -> int:
    """A practice seed: a deal number the engine takes (1 to 2^63-1)."""
    if text.isdigit() and 1 <= int(text) < 2**63:
        return int(text)
    raise argparse.ArgumentTypeError(f"a deal is a whole number from 1 to {2**63 - 1}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solrace",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--server",
        default=os.environ.get("SOLRACE_SERVER", DEFAULT_SERVER),
        help="the race server's URL (default: $SOLRACE_SERVER, else %(default)s)",
    )
    parser.add_argument(
        "--ascii", action="store_true", help="suits as letters (S H D C) instead of ♠ ♥ ♦ ♣"
    )
    parser.add_argument(
        "--no-color",
        action="store_true",
        help="no colours (also when the NO_COLOR environment variable is set)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    play = sub.add_parser(
        "play",
        help="create a room (or join ROOM) and race",
        description="Create a room and race in it, or join ROOM. The room's code is shown "
        "in the lobby: give it to friends (solrace play CODE) and spectators (solrace watch "
        "CODE). Press r when ready; the host (first seat) may press s to start at once.",
    )
    play.add_argument("room", nargs="?", help="the room to join; none: create a new room")
    play.add_argument("--name", default=os.environ.get("USER", "player"), help="your name")
    play.add_argument(
        "--quick",
        action="store_true",
        help="quick match: race the next player who asks for the same --game",
    )
    play.add_argument("--game", choices=GAMES, default="shaula", help="game of a new room")
    play.add_argument(
        "--seed",
        type=seed_choice,
        help="deal of a new room: a number, 'random' (the default) or 'winnable'",
    )
    play.add_argument("--seats", type=int, default=4, help="seats in a new room (default 4)")
    play.add_argument("--no-undo", action="store_true", help="a new room without undo")
    play.add_argument("--no-hints", action="store_true", help="a new room without hints")

    watch = sub.add_parser(
        "watch",
        help="spectate a room: every board, live",
        description="Watch a room: every player's board side by side with their progress "
        "(one at a time on a small terminal: Tab or the digits switch).",
    )
    watch.add_argument("room")

    sub.add_parser(
        "rooms", help="list the rooms", description="List the server's open and running rooms."
    )

    practice = sub.add_parser(
        "practice",
        help="play offline, with hints, undo and autoplay",
        description="Play a deal alone and offline (no server): undo, hints from the solver "
        "and autoplay are always allowed.",
    )
    practice.add_argument("game", choices=GAMES)
    practice.add_argument(
        "seed", nargs="?", type=deal_number, help="the deal (default: a random one)"
    )

    rules = sub.add_parser(
        "rules",
        help="how to play a game, in plain words",
        description="Print a game's rules (the same text as ? in the client and docs/rules.md).",
    )
    rules.add_argument("game", choices=GAMES)

    bot = sub.add_parser(
        "bot",
        help="join a room and let the solver play",
        description="Take a seat in ROOM and play with the solver (or, without one, a simple "
        "legal-move player) at a chosen pace. It says ready at once.",
    )
    bot.add_argument("room")
    bot.add_argument("--name", default="bot", help="the bot's name (default: bot)")
    bot.add_argument("--pace", type=float, default=1.0, help="seconds between moves (default 1.0)")
    return parser


def card_style(args: argparse.Namespace) -> CardStyle:
    return style_from_env(ascii_only=args.ascii, no_color=True if args.no_color else None)


def print_rules(game: str, style: CardStyle) -> None:
    """The rules as Markdown on a terminal; the plain text when piped (for a pager or a file)."""
    from core import rules_text

    text = rules_text(game)
    if not sys.stdout.isatty():
        sys.stdout.write(text)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console(no_color=not style.color).print(Markdown(text))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "rules":
        print_rules(args.game, card_style(args))
        return 0
    if args.command == "practice":
        from client_cli.play_app import PlayApp
        from client_cli.session import LocalSession

        seed = args.seed if args.seed is not None else random.randint(1, 1_000_000)
        session = LocalSession.new(args.game, seed)
        PlayApp(session, f"{args.game.capitalize()} #{seed} · practice", card_style(args)).run()
        return 0
    from client_cli.commands import run

    return run(args, card_style(args))


if __name__ == "__main__":
    sys.exit(main())
