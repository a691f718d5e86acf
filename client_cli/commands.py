"""The network subcommands: play, watch, rooms and bot."""

from __future__ import annotations

import argparse
import sys

from client_cli.cards import CardStyle

__all__ = ["run"]


def run(args: argparse.Namespace, style: CardStyle) -> int:
    print(f"solrace {args.command}: not available in this build yet", file=sys.stderr)
    return 2
