"""Loopback ports: free ones for the servers the tests start, and whether one is listened on."""

import os
import random
import socket
from collections import deque
from pathlib import Path

__all__ = ["free_port", "free_ports_in_a_row", "port_open", "port_range"]

# The ports handed out lately by this process: a port is free until its server binds it,
# so two picks in a row (a cluster's node and its bus port) could otherwise be the same.
_GIVEN: deque[int] = deque(maxlen=512)


def free_port() -> int:
    """A port free to listen on, below the ephemeral range: one the kernel hands out for
    port 0 is an ephemeral one, which any outgoing connection (the test's own Redis
    clients) may take before the server binds it ("address already in use")."""
    return free_ports_in_a_row(1)


def port_open(port: int) -> bool:
    """Whether something listens on the loopback `port`."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def free_ports_in_a_row(n: int) -> int:
    """The first of `n` consecutive ports free to listen on (for a script that takes
    BASE..BASE+n-1), below the ephemeral range: a port from free_port() is an ephemeral
    one, and the one after it may be taken by any client's outgoing connection before the
    script binds it ("address already in use" on BASE+1)."""
    low, high = port_range()
    rng = random.Random()
    while True:
        base = rng.randrange(low, max(low + 1, high - n))
        ports = range(base, base + n)
        if not any(port in _GIVEN for port in ports) and all(map(_bindable, ports)):
            _GIVEN.extend(ports)
            return base


def port_range() -> tuple[int, int]:
    """The ports this process picks from: from 10000 to the ephemeral range, and under
    pytest-xdist this worker's share of them alone. Two workers picking at random from the
    same range sometimes picked the same port at the same moment, before either bound it:
    one test then spoke to the other worker's server."""
    ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    low, high = 10000, ephemeral
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1 and worker.startswith("gw") and worker[2:].isdigit():
        share = (high - low) // workers
        low += int(worker[2:]) * share
        high = low + share
    return low, high


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
