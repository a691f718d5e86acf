"""Argument types shared by the client's command-line parsers."""

from __future__ import annotations

import argparse
import math

__all__ = ["seconds", "server_address"]


def seconds(text: str) -> float:
    """A duration in seconds: finite and not negative.

    nan slips through every comparison and max(), so a pace or time limit of nan
    would sleep or wait for ever; it is refused here, with inf and negatives.
    """
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if math.isfinite(value) and value >= 0:
        return value
    raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds")


def server_address(text: str) -> str:
    """--server (and $SOLRACE_SERVER, its default): an address a server can have
    (client_cli/net.py spells them out), refused here with the reason."""
    from client_cli.net import check_address  # (websockets: not for offline commands)

    try:
        check_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a server address ({error}): HOST:PORT, http(s)://HOST:PORT/PATH"
            " or ws(s)://HOST:PORT/PATH/ws"
        ) from None
    return text
