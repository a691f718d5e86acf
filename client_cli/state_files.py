"""The files this machine keeps in its state folder (its players, seats and tournament
places): several terminals change them, one at a time, and each is written whole."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pathlib
from collections.abc import Iterator

__all__ = ["one_writer", "write_whole"]


@contextlib.contextmanager
def one_writer(path: pathlib.Path) -> Iterator[None]:
    """Hold `path` while it is read, changed and written back: another terminal of this
    machine doing the same waits, so that neither change is lost. OSError where the
    folder cannot be made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f"{path.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # dropped when the file closes, however it ends
        yield


def write_whole(path: pathlib.Path, text: str) -> None:
    """Write `text` to a file of this process's own, readable by the user only, then put
    it in place: a reader sees the old file or the new one, never a part of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    tmp.replace(path)
