"""Who the client is: the address that per-client limits (rooms created, open connections)
count by.

A connection's peer is the client, unless the peer is one of `--trusted-proxies`: then the
client is the address that proxy put in `X-Forwarded-For`. Only what trusted proxies added is
read: the header is walked from its right end (the entry the nearest proxy added) over
entries that are themselves trusted proxies, and the first other entry is the client. Anything
to its left was written by the client and is never believed (the shipped HAProxy and nginx
configs go further and replace a client's header instead of appending to it).

A direct connection from this machine (a loopback peer without the header: the operator,
`make bench`, the tests) has no client address: it is not limited (unless the
`limit_loopback` setting says otherwise, for benches and tests of the limits). A client
that came through a proxy is limited whatever its address, loopback too: the proxy is the
public door.
"""

from __future__ import annotations

import ipaddress

from server.settings import TrustedProxies

__all__ = ["client_address"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_ENTRIES = 32  # X-Forwarded-For entries looked at: a longer chain is not a real one


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:10.0.0.1 is 10.0.0.1 (dual-stack sockets)
    return address


def _trusted(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, proxies: TrustedProxies
) -> bool:
    return any(address in network for network in proxies)


def client_address(
    peer: str | None,
    forwarded_for: str | None,
    proxies: TrustedProxies,
    *,
    limit_loopback: bool = False,
) -> str | None:
    """The client's address, or None for a direct connection from this machine (unless
    `limit_loopback`: the `limit_loopback` setting, for benches and tests of the limits)."""
    if peer is None:  # not a TCP socket (a Unix socket): this machine
        return None
    peer_address = _address(peer)
    if peer_address is None:
        return peer[:64]
    if not forwarded_for or not _trusted(peer_address, proxies):
        if peer_address.is_loopback and not limit_loopback:
            return None
        return str(peer_address)
    entries = forwarded_for.split(",")[-MAX_ENTRIES:]
    client = peer_address
    for entry in reversed(entries):
        address = _address(entry)
        if address is None:  # not what a proxy writes: the nearest sure address stands
            break
        client = address
        if not _trusted(address, proxies):
            break
    return str(client)
