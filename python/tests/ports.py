"""Ports for the servers the tests start (moto, Prometheus, torchrun's
rendezvous) and for addresses that must have no listener.

A port is taken below the kernel's ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range), which the kernel never hands out for
a bind to port 0 or an outgoing connection. A port from that range, checked
free and closed again, could be taken by any connection before the server
binds it; one below it only by another explicit bind. Each pytest-xdist worker
draws from its own block, so two workers never pick the same port. A port is
checked free by binding it, and not handed out twice by one process.
"""

from __future__ import annotations

import os
import random
import socket

HOST = "127.0.0.1"
LOWEST = 10000  # below: ports that well-known services use
BLOCKS = 8      # xdist workers share the range in this many blocks
_given: set[int] = set()


def _ephemeral_start() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _block() -> range:
    top = _ephemeral_start()
    if top - LOWEST < BLOCKS * 100:
        return range(0)  # no room below the ephemeral range
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) % BLOCKS if worker.isdigit() else 0
    size = (top - LOWEST) // BLOCKS
    return range(LOWEST + index * size, LOWEST + (index + 1) * size)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now and that this
    process has not been given before."""
    block = _block()
    if block:
        start = random.randrange(len(block))
        for i in range(len(block)):  # bounded: one pass over the block
            port = block[(start + i) % len(block)]
            if port not in _given and _bindable(port):
                _given.add(port)
                return port
    with socket.socket() as s:  # no port left below the range: let the kernel choose
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    _given.add(port)
    return port
