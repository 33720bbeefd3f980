# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Whether ports of a master are free and reachable from the other nodes: the master
listens for a bounded time and counts connections, the others connect, and try a refused port
again until a deadline, so a listener that starts late is still reached."""
from __future__ import annotations

import selectors
import socket
import time
from typing import Any, Iterable

from ansible_collections.ascendops.gr00t.plugins.module_utils.hccn import format_ranges, parse_ranges


def parse_ports(specs: Iterable[Any]) -> list[int]:
    """'29500', '60000-60031', 29500 or '29500,60000-60031' -> sorted unique ports."""
    spans = parse_ranges(",".join(str(spec) for spec in specs))
    for low, high in spans:
        if not 1 <= low <= high <= 65535:
            raise ValueError("port range %d-%d is not within 1-65535, low to high" % (low, high))
    return [port for low, high in spans for port in range(low, high + 1)]


def listen(ports: list[int], peers: int, seconds: float) -> dict:
    """Bind every port (SO_REUSEADDR, as torchrun's store and HCCL bind, so TIME_WAIT sockets
    of a stopped run do not count as taken), accept until each port saw `peers` connections or
    the time is up, then close everything. A peer closes first, so no socket of ours lingers."""
    sel = selectors.DefaultSelector()
    servers = []
    counts = dict.fromkeys(ports, 0)
    try:
        for port in ports:
            srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            servers.append(srv)
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                srv.bind(("0.0.0.0", port))
            except OSError as exc:
                return {"ok": False, "code": "in_use", "counts": counts,
                        "msg": "port %d cannot be bound: %s" % (port, exc)}
            srv.listen(max(peers, 1) + 8)
            srv.setblocking(False)
            sel.register(srv, selectors.EVENT_READ, port)
        deadline = time.monotonic() + seconds
        while min(counts.values(), default=peers) < peers and time.monotonic() < deadline:
            for key, dummy in sel.select(max(deadline - time.monotonic(), 0)):
                try:
                    conn, dummy_addr = key.fileobj.accept()
                except OSError:
                    # The peer gave up before the accept (or another wakeup took it): not counted.
                    continue
                conn.settimeout(max(min(2.0, deadline - time.monotonic()), 0.1))
                try:
                    conn.recv(1)
                except OSError:
                    pass
                conn.close()
                counts[key.data] += 1
    finally:
        sel.close()
        for srv in servers:
            srv.close()
    missing = [port for port in ports if counts[port] < peers]
    if missing:
        return {"ok": False, "code": "missing", "counts": counts,
                "msg": "port(s) with fewer than %d connection(s) after %g s: %s" % (
                    peers, seconds, format_ranges(parse_ranges(",".join(map(str, missing)))))}
    return {"ok": True, "code": "ok", "counts": counts,
            "msg": "%d port(s) free and reached by %d node(s)" % (len(ports), peers)}


def retried(exc: OSError) -> bool:
    """Whether a failed connect may mend by waiting: refused or timed out, as when the listener
    has not bound the port yet. No route or an unknown name does not mend by waiting."""
    return isinstance(exc, (ConnectionRefusedError, TimeoutError, socket.timeout))


def backoff(attempt: int) -> float:
    """Seconds before the `attempt`th retry (1, 2, ...): 0.1, 0.2, 0.4 ... at most 1."""
    return min(0.1 * 2 ** max(attempt - 1, 0), 1.0)


def connect_once(address: str, port: int, timeout: float) -> OSError | None:
    """One TCP connect to `address`:`port`, closed at once; the error, or None when it connected."""
    try:
        socket.create_connection((address, port), timeout).close()
    except OSError as exc:
        return exc
    return None


def sweep(address: str, ports: list[int], timeout: float, deadline: float | None = None) -> dict[int, OSError | None]:
    """One connect to each port: port -> error or None. With a deadline (time.monotonic()), a
    connect waits at most until it and none starts after it; a port not tried is left out."""
    outcome = {}
    for port in ports:
        wait = timeout if deadline is None else min(timeout, deadline - time.monotonic())
        if wait <= 0:
            break
        outcome[port] = connect_once(address, port, wait)
    return outcome


def connect(address: str, ports: list[int], timeout: float, retry_for: float = 0) -> dict:
    """A TCP connect to every port of `address`, closed at once. A port refused or timed out is
    tried again, with a short backoff, until `retry_for` seconds after the start: the listener
    may still be starting. Only the ports still failing then are reported, with the last error."""
    start = time.monotonic()
    deadline = start + retry_for
    errors = {port: exc for port, exc in sweep(address, ports, timeout).items() if exc is not None}
    attempt = 0
    while any(retried(exc) for exc in errors.values()) and time.monotonic() < deadline:
        attempt += 1
        time.sleep(max(min(backoff(attempt), deadline - time.monotonic()), 0))
        again = [port for port, exc in errors.items() if retried(exc)]
        for port, exc in sweep(address, again, timeout, deadline).items():
            if exc is None:
                del errors[port]
            else:
                errors[port] = exc
    elapsed = round(time.monotonic() - start, 3)
    failed = ["%d (%s)" % (port, errors[port]) for port in sorted(errors)]
    if failed:
        return {"ok": False, "code": "unreachable", "failed_ports": failed, "elapsed": elapsed,
                "msg": "; ".join(failed)}
    return {"ok": True, "code": "ok", "failed_ports": [], "elapsed": elapsed,
            "msg": "all %d port(s) reached" % len(ports)}
