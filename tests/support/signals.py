"""Starting a child as a terminal starts a command, for tests that press Ctrl-C on it."""

import signal

__all__ = ["interruptible"]


def interruptible() -> None:
    """A `preexec_fn`: SIGINT at its default in the child. A suite started in the
    background by a non-interactive shell (`make test &`, CI) runs with SIGINT ignored, and
    a child would inherit that: Python would install no handler for it and bash could not
    trap it, and no Ctrl-C would reach either, unlike a command typed in a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
