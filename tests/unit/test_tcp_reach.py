"""Tests of the TCP reach check: port specs, the master's listener and the others' connects,
on real sockets of this machine."""
from __future__ import annotations

import errno
import socket
import threading
import time
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.module_utils import tcp_reach
from ansible_collections.ascendops.gr00t.plugins.module_utils.hccn import format_ranges, parse_ranges
from ansible_collections.ascendops.gr00t.plugins.module_utils.tcp_reach import (
    backoff, connect, listen, parse_ports, retried)
from ansible_collections.ascendops.gr00t.plugins.modules import tcp_reach as tcp_reach_module
from modrun import run_module


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


def test_a_listener_that_starts_late_is_reached() -> None:
    """The master's listener binds its ports 1.5 s after the connects begin, as on a busy node."""
    ports = free_ports(2)
    result: dict = {}

    def late_listener() -> None:
        time.sleep(1.5)
        result.update(listen(ports, 1, 20))

    listener = threading.Thread(target=late_listener)
    listener.start()
    reached = connect("127.0.0.1", ports, 2, retry_for=15)
    listener.join(25)
    assert reached["ok"] and reached["code"] == "ok" and reached["failed_ports"] == [], reached
    # It did wait for the listener: the first connects were refused.
    assert 1.0 <= reached["elapsed"] < 15, reached
    assert result["ok"] and result["counts"] == dict.fromkeys(ports, 1), result


def late_server(port: int, delay: float, accepted: list, seconds: float) -> threading.Thread:
    """A server on `port` that binds after `delay` s and records every connection for `seconds`."""
    def serve() -> None:
        time.sleep(delay)
        with socket.socket() as srv:
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("127.0.0.1", port))
            srv.listen(8)
            srv.settimeout(0.1)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                try:
                    conn, dummy_addr = srv.accept()
                except socket.timeout:
                    continue
                accepted.append(port)
                conn.close()

    thread = threading.Thread(target=serve)
    thread.start()
    return thread


def test_a_port_that_connects_is_not_tried_again() -> None:
    """The first port listens from the start, the second 1 s later: only the second is retried."""
    early, late = free_ports(2)
    accepted: list = []
    servers = [late_server(early, 0, accepted, 4), late_server(late, 1.0, accepted, 4)]
    time.sleep(0.3)
    reached = connect("127.0.0.1", [early, late], 2, retry_for=10)
    for server in servers:
        server.join(10)
    assert reached["ok"], reached
    assert reached["elapsed"] >= 0.5, reached
    assert sorted(accepted) == sorted([early, late]), accepted


def test_a_closed_port_fails_after_the_deadline() -> None:
    ports = free_ports(2)
    start = time.monotonic()
    result = connect("127.0.0.1", ports, 2, retry_for=1.5)
    took = time.monotonic() - start
    assert not result["ok"] and result["code"] == "unreachable"
    assert [entry.split(" ", 1)[0] for entry in result["failed_ports"]] == [str(port) for port in sorted(ports)]
    assert all("Connection refused" in entry for entry in result["failed_ports"]), result
    assert "Connection refused" in result["msg"]
    # It kept trying until the deadline, and stopped there (backoff at most 1 s).
    assert 1.5 <= took < 3.0, took


def test_no_retry_without_a_window() -> None:
    ports = free_ports(1)
    start = time.monotonic()
    result = connect("127.0.0.1", ports, 2)
    assert result["code"] == "unreachable" and time.monotonic() - start < 0.5


def test_retries_of_a_port_that_times_out_stop_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dropped SYN: each connect waits its whole timeout, and none waits past the deadline."""
    waits: list = []

    def times_out(address: str, port: int, timeout: float) -> OSError:
        waits.append(timeout)
        time.sleep(timeout)
        return socket.timeout("timed out")

    monkeypatch.setattr(tcp_reach, "connect_once", times_out)
    start = time.monotonic()
    result = connect("10.0.0.1", [29500], 1.5, retry_for=2.0)
    took = time.monotonic() - start
    assert result["failed_ports"] == ["29500 (timed out)"]
    # The first try waits its whole timeout; the retry after it only what is left of the window.
    assert len(waits) == 2 and waits[0] == 1.5 and 0 < waits[1] <= 0.5, waits
    assert 2.0 <= took < 2.4, took


def test_an_error_that_waiting_cannot_mend_is_reported_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list = []

    def no_route(address: str, port: int, timeout: float) -> OSError:
        calls.append(port)
        return OSError(errno.EHOSTUNREACH, "No route to host")

    monkeypatch.setattr(tcp_reach, "connect_once", no_route)
    result = connect("10.0.0.1", [29500, 29501], 1, retry_for=30)
    assert calls == [29500, 29501]
    assert result["failed_ports"][0] == "29500 ([Errno %d] No route to host)" % errno.EHOSTUNREACH


def test_which_errors_are_retried_and_how_long_between() -> None:
    assert retried(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"))
    assert retried(socket.timeout("timed out")) and retried(TimeoutError(errno.ETIMEDOUT, "timed out"))
    assert not retried(OSError(errno.ENETUNREACH, "Network is unreachable"))
    assert not retried(socket.gaierror(-2, "Name or service not known"))
    assert [backoff(attempt) for attempt in range(1, 7)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]


def test_the_module_passes_the_retry_window(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    ports = free_ports(1)
    result = run_module(tcp_reach_module.main, monkeypatch, capsys,
                        {"mode": "connect", "address": "127.0.0.1", "ports": [str(ports[0])],
                         "timeout": 1, "retry_for": 1})
    assert result["changed"] is False and result["code"] == "unreachable"
    assert result["elapsed"] >= 1.0 and "Connection refused" in result["msg"], result
