"""Tests of the TCP reach check: port specs, the master's listener and the others' connects,
on real sockets of this machine."""
from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.module_utils.hccn import format_ranges, parse_ranges
from ansible_collections.ascendops.gr00t.plugins.module_utils.tcp_reach import connect, listen, parse_ports


def free_ports(count: int) -> list[int]:
    socks = [socket.socket() for dummy in range(count)]
    for sock in socks:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in socks]
    for sock in socks:
        sock.close()
    return ports


def test_port_specs_expand_and_compact() -> None:
    assert parse_ports(["29500", "60000-60003", 29500, "1,2"]) == [1, 2, 29500, 60000, 60001, 60002, 60003]
    assert format_ranges(parse_ranges("60003,60000,60001,60002,29500,7")) == "7,29500,60000-60003"
    for bad in ("0", "70000", "9-3", "x"):
        with pytest.raises(ValueError):
            parse_ports([bad])


def listening(ports: list[int]) -> set[int]:
    """Which of the ports a socket of this machine listens on (/proc/net/tcp, state 0A)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        port = int(fields[1].rsplit(":", 1)[1], 16)
        if fields[3] == "0A" and port in ports:
            found.add(port)
    return found


def test_every_port_reached_by_every_peer() -> None:
    ports = free_ports(2)
    result: dict = {}
    listener = threading.Thread(target=lambda: result.update(listen(ports, 2, 30)))
    listener.start()
    # Connect only once every port listens: a connect while the listener has bound the first port
    # but not the second would reach one port, count there, and fail (bounded: 10 s).
    deadline = time.monotonic() + 10
    while listening(ports) != set(ports) and time.monotonic() < deadline:
        time.sleep(0.02)
    reached = [connect("127.0.0.1", ports, 5) for dummy in range(2)]
    listener.join(40)
    assert all(attempt["ok"] for attempt in reached), (reached, result)
    assert result["ok"] and result["code"] == "ok" and all(n >= 2 for n in result["counts"].values())
    assert reached[0]["msg"] == "all 2 port(s) reached"


def test_a_port_too_few_peers_reached_is_named() -> None:
    ports = free_ports(1)
    result = listen(ports, 1, 0.3)
    assert not result["ok"] and result["code"] == "missing"
    assert str(ports[0]) in result["msg"]


def test_a_port_another_process_listens_on_is_in_use() -> None:
    holder = socket.socket()
    holder.bind(("0.0.0.0", 0))
    holder.listen()
    try:
        result = listen([holder.getsockname()[1]], 1, 1)
    finally:
        holder.close()
    assert result["code"] == "in_use" and "cannot be bound" in result["msg"]


def test_nothing_listens_after_the_check() -> None:
    ports = free_ports(1)
    listen(ports, 1, 0.2)
    assert connect("127.0.0.1", ports, 0.5)["code"] == "unreachable"
