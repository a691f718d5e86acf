"""Loopback ports: free ones for the servers the tests start, and whether one is listened on."""

import random
import socket
from pathlib import Path

__all__ = ["free_port", "free_ports_in_a_row", "port_open"]


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
    low, _ = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    rng = random.Random()
    while True:
        base = rng.randrange(10000, max(10001, low - n))
        if all(_bindable(base + i) for i in range(n)):
            return base


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
