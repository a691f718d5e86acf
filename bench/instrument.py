"""What a load process does to stay a quiet measuring instrument."""

from __future__ import annotations

import gc

__all__ = ["collections_off", "collections_on"]


def collections_off() -> None:
    """No garbage collection while the load runs. A load process's own collections are
    latency the server did not cause: a full collection over 1,000 racers' frames and
    timestamps paused the load generator 60-80 ms inside the measured window. What
    exists once the clients are connected is frozen out of collections; a bounded run
    makes little cyclic garbage, and reference counting frees the rest."""
    gc.collect()
    gc.freeze()
    gc.disable()


def collections_on() -> None:
    gc.enable()
