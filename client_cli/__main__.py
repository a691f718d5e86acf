"""`solrace`: the terminal client. `solrace --help` lists the subcommands."""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
from argparse import SUPPRESS
from collections.abc import Iterator, Sequence

from client_cli.cards import CardStyle, style_from_env
from client_cli.options import seconds, server_address

__all__ = ["DEFAULT_SERVER", "build_parser", "main", "parse_args"]

DEFAULT_SERVER = "http://127.0.0.1:8765"
GAMES = ("shaula", "stalactites", "moojub")
# The account subcommands (client_cli/account.py).
OFFLINE = ("rules", "practice")  # the commands that reach no server
ACCOUNT_COMMANDS = ("whoami", "name", "claim", "login", "logout", "link", "profile", "top")

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


def move_number(text: str) -> int:
    """A replay's move: 0 is the deal (as --at refuses a time before the start)."""
    if text.strip().isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"a move number is a whole number from 0, not {text!r}")


def seat_number(text: str) -> int:
    """A seat as a terminal user counts them: from 1 (the wire counts from 0)."""
    if text.strip().isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(f"seats are counted from 1 (seat 1, 2, ...), not {text!r}")


def room_code(text: str) -> str:
    """Room codes are case-insensitive: the server's are lower-case hex."""
    code = text.strip().lower()
    if not code:
        raise argparse.ArgumentTypeError("a room code is the 8 letters and digits shown")
    return code


def add_common_options(parser: argparse.ArgumentParser, top: bool) -> None:
    """--server, --ascii and --no-color, before the subcommand (`top`) or after it.

    After it they default to SUPPRESS: left out there, what was given before the
    subcommand (or the default) stays."""
    server_default = os.environ.get("SOLRACE_SERVER", DEFAULT_SERVER) if top else SUPPRESS
    flag_default = False if top else SUPPRESS
    parser.add_argument(
        "--server",
        default=server_default,
        help="the race server's URL (default: $SOLRACE_SERVER, else http://127.0.0.1:8765)",
    )
    parser.add_argument(
        "--ascii",
        action="store_true",
        default=flag_default,
        help="suits as letters (S H D C) instead of ♠ ♥ ♦ ♣",
    )
    parser.add_argument(
        "--no-color",
        action="store_true",
        default=flag_default,
        help="no colours (also when the NO_COLOR environment variable is set)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solrace",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    play = sub.add_parser(
        "play",
        help="create a room (or join ROOM) and race",
        description="Create a room and race in it, or join ROOM. The room's code is shown "
        "in the lobby: give it to friends (solrace play CODE) and spectators (solrace watch "
        "CODE). Press r when ready; the host (first seat) may press s to start at once. "
        "Run it again for a room where this machine holds a seat to take that seat back. "
        "A new room has the server's defaults (as one created over HTTP) for every option "
        "not given; a room joined, or a quick match's, is as it was made: the options of a "
        "new room (--seed, --seats, --hints...) are refused there.",
    )
    play.add_argument(
        "room", nargs="?", type=room_code, help="the room to join; none: create a new room"
    )
    play.add_argument(
        "--name",
        help="play an anonymous seat under this name (a friend at this machine, say); "
        "default: as this machine's player (solrace whoami)",
    )
    play.add_argument(
        "--seat",
        type=seat_number,
        metavar="N",
        help="take back seat N (1, 2, ...) of those this machine holds in ROOM",
    )
    play.add_argument(
        "--quick",
        action="store_true",
        help="quick match: race the next player who asks for the same --game, in a room "
        "the server makes (two seats, a random deal, the default rules)",
    )
    play.add_argument(
        "--game",
        type=str.lower,
        choices=GAMES,
        help="game of a new room or a quick match (default shaula); with --ghost best, the game",
    )
    play.add_argument(
        "--seed",
        type=seed_choice,
        help="deal of a new room: a number, 'random' (the default) or 'winnable'",
    )
    play.add_argument("--seats", type=int, help="seats in a new room (default 2)")
    play.add_argument(
        "--ghost",
        type=room_code,
        metavar="ROOM",
        help="race a ghost: the recorded run of ROOM's finished race (or of an archived race, "
        "ROOM.ROUND, or 'best': your own fastest win at --game), on its deal, by its "
        "recorded times (never rated); its fastest winner unless --ghost-seat. Its game, "
        "deal and seats are that race's: not with --game (but for best), --seed or --seats",
    )
    play.add_argument(
        "--ghost-seat",
        type=seat_number,
        metavar="N",
        help="with --ghost: the racer of that race to race (seat 1, 2, ...)",
    )
    play.add_argument(
        "--undo",
        action=argparse.BooleanOptionalAction,
        help="a new room with (the default) or without undo",
    )
    play.add_argument(
        "--hints",
        action=argparse.BooleanOptionalAction,
        help="a new room with or without (the default) hints from the solver",
    )
    play.add_argument(
        "--rated",
        action=argparse.BooleanOptionalAction,
        help="a new room rated (the default, moving its players' ratings) or casual "
        "(--no-rated); a deal picked by its number is never rated",
    )
    play.add_argument(
        "--time-limit",
        type=seconds,
        metavar="SECONDS",
        help="a new room's race ends this long after the start (default: no limit)",
    )
    play.add_argument(
        "--spectator-delay",
        type=seconds,
        metavar="SECONDS",
        help="spectators of a new room see the race this late (default 0)",
    )

    watch = sub.add_parser(
        "watch",
        help="spectate a room: every board, live",
        description="Watch a room: every player's board side by side with their progress "
        "(one at a time on a small terminal: Tab or the digits switch).",
    )
    watch.add_argument("room", type=room_code, help="the room's code (any case)")

    sub.add_parser(
        "rooms", help="list the rooms", description="List the server's open and running rooms."
    )

    replay = sub.add_parser(
        "replay",
        help="step through a finished race, move by move",
        description="Show a finished race move by move: a room's latest race or an archived "
        "race by its id (ROOM.ROUND, as profiles list races: an earlier round of a room that "
        "had a rematch), from the server, or a replay file (NDJSON, as GET /rooms/ROOM/replay "
        "and GET /races/ID/replay give it). It is checked first "
        "(the hash chain, every move with the engine). Left and right step, Home and End go "
        "to the deal and the end, space plays (s: 1x, 4x, 16x), b shows one board at a time.",
    )
    replay.add_argument(
        "race",
        help="a room's code (its latest race), a race's id ROOM.ROUND (any case), or a replay file",
    )
    start = replay.add_mutually_exclusive_group()
    start.add_argument("--move", type=move_number, metavar="N", help="open after move N")
    start.add_argument(
        "--at", type=seconds, metavar="SECONDS", help="open at this time since the start"
    )

    practice = sub.add_parser(
        "practice",
        help="play offline, with hints, undo and autoplay",
        description="Play a deal alone and offline (no server): undo, hints from the solver "
        "and autoplay are always allowed (Moojub has no autoplay: no move is safe in every "
        "deal).",
    )
    practice.add_argument("game", type=str.lower, choices=GAMES, help="the game (any case)")
    practice.add_argument(
        "seed", nargs="?", type=deal_number, help="the deal (default: a random one)"
    )

    rules = sub.add_parser(
        "rules",
        help="how to play a game, in plain words",
        description="Print a game's rules (the same text as ? in the client and docs/rules.md).",
    )
    rules.add_argument("game", type=str.lower, choices=GAMES, help="the game (any case)")

    bot = sub.add_parser(
        "bot",
        help="join a room and let the solver play",
        description="Take a seat in ROOM and play at a chosen pace: the solver's winning line "
        "in Shaula and Stalactites (a simple player when it finds none), a simple player in "
        "Moojub, whose talon a racer does not see. It says which, says ready at once, and "
        "leaves after the race (unless --rematch). Ctrl+C stops it.",
    )
    bot.add_argument("room", type=room_code, help="the room's code (any case)")
    bot.add_argument(
        "--name",
        help="play as this machine's bot of that name, made the first time (2 to 20 "
        "letters, digits, _ and -, unique on the server): bots named apart take a seat each "
        "and race each other; without it, the machine's own bot, named Bot-NNNN at first",
    )
    bot.add_argument(
        "--pace",
        type=seconds,
        default=1.0,
        help="seconds between moves (default 1.0, at least 0.05)",
    )
    bot.add_argument(
        "--rematch",
        action="store_true",
        help="stay after the race: vote for a rematch when another player does, and race "
        "again (until the others have gone); without it the bot leaves after one race",
    )
    for command in subcommands(parser):
        add_common_options(command, top=False)
    from client_cli.account import add_account_parser
    from client_cli.tournament import add_tournament_parser

    add_tournament_parser(sub, lambda command: add_common_options(command, top=False))
    add_account_parser(sub, lambda command: add_common_options(command, top=False))
    from client_cli.daily import add_daily_parser

    add_daily_parser(sub, lambda command: add_common_options(command, top=False))
    return parser


# The options of `solrace play` that make a new room (POST /rooms's settings).
NEW_ROOM_OPTIONS = ("seed", "seats", "hints", "undo", "rated", "time_limit", "spectator_delay")


def given_options(args: argparse.Namespace, names: Sequence[str]) -> list[str]:
    """The options among `names` given on the command line, as they were spelt there
    (`--no-hints` for hints turned off)."""
    given = []
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            given.append(("--no-" if value is False else "--") + name.replace("_", "-"))
    return given


def check_play(play: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The options of `solrace play` that argparse cannot check one by one: one that would
    be dropped is refused (play.error), and a new room's game is shaula unless given."""
    if args.seat is not None and args.room is None:
        play.error("--seat takes back a seat this machine holds in ROOM: give ROOM too")
    if args.quick and args.room:
        play.error("--quick races in a new room the server makes: not with a ROOM to join")
    if args.ghost is None and args.quick:
        refused = given_options(args, NEW_ROOM_OPTIONS)
        if refused:
            play.error(
                "a quick match's room is the server's (two seats, a random deal, the default"
                f" rules): not {' or '.join(refused)}"
            )
    if args.ghost is None and args.room:
        refused = given_options(args, ("game", *NEW_ROOM_OPTIONS))
        if refused:
            play.error(
                f"room {args.room} is joined as it was made (its game, deal, seats and rules,"
                f" shown in its lobby): not {' or '.join(refused)}"
            )
    if args.ghost is None:
        if args.ghost_seat is not None:
            play.error("--ghost-seat picks a racer of the race --ghost names: give --ghost too")
        args.game = args.game or GAMES[0]
        return
    # A ghost race's game, deal and seats are the recorded race's.
    clash = [
        option
        for option, given in (
            ("--game", args.game is not None and args.ghost != "best"),
            ("--seed", args.seed is not None),
            ("--seats", args.seats is not None),
        )
        if given
    ]
    if clash:
        play.error(
            f"a ghost race's game, deal and seats are its recorded race's: not {' or '.join(clash)}"
        )
    if args.quick or args.room:
        play.error("--ghost opens a room of its own: not with --quick or a ROOM to join")
    args.game = args.game or GAMES[0]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, parsed and its options checked together."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in OFFLINE:  # (a wrong $SOLRACE_SERVER stops no offline command)
        try:
            server_address(args.server)
        except argparse.ArgumentTypeError as error:
            parser.error(f"--server (or $SOLRACE_SERVER): {error}")
    if args.command == "play":
        check_play(next(c for c in subcommands(parser) if c.prog.endswith(" play")), args)
    if args.command == "daily":
        from client_cli.daily import check_daily

        check_daily(next(c for c in subcommands(parser) if c.prog.endswith(" daily")), args)
    return args


def subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every subcommand's parser, nested ones too (`solrace tournament create`)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                found += [command, *subcommands(command)]
    return found


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


@contextlib.contextmanager
def colour_choice(no_color: bool) -> Iterator[None]:
    """With --no-color, NO_COLOR is set while the command runs: the screens (Textual) drop
    every colour then, as they do for the environment's NO_COLOR, not the cards' alone."""
    if not no_color or "NO_COLOR" in os.environ:
        yield
        return
    os.environ["NO_COLOR"] = "1"
    try:
        yield
    finally:
        os.environ.pop("NO_COLOR", None)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        with colour_choice(args.no_color):
            return run_command(args)
    except KeyboardInterrupt:
        # Ctrl+C (the bot, the rooms list, the seat question): stop, without a traceback.
        print(f"solrace {args.command}: stopped", file=sys.stderr)
        return 130


def run_command(args: argparse.Namespace) -> int:
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
    if args.command == "replay":
        from client_cli.replay_app import run_replay

        return run_replay(args, card_style(args))
    if args.command == "daily":
        from client_cli.daily import run_daily

        return run_daily(args, card_style(args))
    if args.command in ACCOUNT_COMMANDS:
        from client_cli.account import run_account

        return run_account(args)
    if args.command == "tournament":
        from client_cli.tournament import run_tournament

        return run_tournament(args, card_style(args))
    from client_cli.commands import run

    return run(args, card_style(args))


if __name__ == "__main__":
    sys.exit(main())
