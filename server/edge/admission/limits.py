"""Limits on what one client, or the whole process, may hold: open connections per client
address, and the process's own file descriptors."""

from __future__ import annotations

import logging
import resource

__all__ = ["ConnectionCount", "raise_descriptor_limit"]

log = logging.getLogger(__name__)


class ConnectionCount:
    """Open connections per address, at most `cap` each (0: no cap)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: dict[str, int] = {}

    def acquire(self, address: str) -> bool:
        """Count a new connection of `address`; False (and not counted) if over the cap."""
        held = self._open.get(address, 0)
        if self.cap and held >= self.cap:
            return False
        self._open[address] = held + 1
        return True

    def release(self, address: str) -> None:
        held = self._open.get(address, 0) - 1
        if held > 0:
            self._open[address] = held
        else:
            self._open.pop(address, None)  # the map holds only addresses with connections

    def held(self, address: str) -> int:
        return self._open.get(address, 0)


def raise_descriptor_limit() -> tuple[int, int]:
    """Raise this process's soft limit of open files to its hard limit: the common soft
    limit of 1,024 is one socket per descriptor, too few for a server of thousands of
    connections, and only a privileged process can go past the hard one. Returns (before,
    after) and says so in the log."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:  # e.g. macOS caps it below the hard limit
            log.warning("could not raise the open-files limit from %d to %d: %s", soft, target, exc)
            return soft, soft
        log.info("open-files limit raised from %d to %d (the hard limit)", soft, target)
        return soft, target
    log.info("open-files limit: %s", "unlimited" if soft == resource.RLIM_INFINITY else soft)
    return soft, soft
