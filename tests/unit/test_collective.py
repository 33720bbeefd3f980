"""Tests of the collective check's helpers: bandwidth, torchrun's command line, each node's
result from its ranks' records, the processes it leaves, and the group's verdict."""
from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter.train import FilterModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.collective import (
    REACH,
    WORKER,
    bus_bandwidth_gbps,
    culprits,
    marked_pids,
    node_result,
    read_rank_records,
    refused_by,
    stage_counts,
    summarize,
    torchrun_argv,
)


def done(rank: int, world: int = 4, seconds: float = 0.01, correct: bool = True) -> dict:
    return {"rank": rank, "local_rank": rank % 2, "world_size": world, "stage": "done", "backend": "gloo",
            "bytes": 4 * 2 ** 20, "seconds": seconds, "correct": correct, "value": float(world)}


def passed(**extra) -> dict:
    return dict(node_result(0, False, [done(0), done(1)], 2, "", 60), **extra)


def test_bus_bandwidth_counts_what_each_link_carries() -> None:
    # 1 GB in 1 s on 8 ranks: algorithm bandwidth 1 GB/s, bus bandwidth 2 * 7/8 of it.
    assert bus_bandwidth_gbps(10 ** 9, 1.0, 8) == pytest.approx(1.75)
    assert bus_bandwidth_gbps(10 ** 9, 1.0, 1) == 0.0
    assert bus_bandwidth_gbps(10 ** 9, 0.0, 8) == 0.0


def test_torchrun_line_is_the_launch_scripts_with_no_restarts() -> None:
    argv = torchrun_argv("/env/bin/python", "/tmp/x/rank.py", ["/tmp/x/out", 4.0, 5], 3, 2, "10.0.0.1", 29500, 8)
    assert argv[:3] == ["/env/bin/python", "-m", "torch.distributed.run"]
    assert "--nnodes=3" in argv and "--node_rank=2" in argv and "--nproc_per_node=8" in argv
    assert "--master_addr=10.0.0.1" in argv and "--master_port=29500" in argv and "--max_restarts=0" in argv
    assert argv[-4:] == ["/tmp/x/rank.py", "/tmp/x/out", "4.0", "5"]


def test_worker_is_valid_python_and_writes_each_stage() -> None:
    compile(WORKER, "collective_rank.py", "exec")
    for stage in ("started", "joined", "done"):
        assert '"%s"' % stage in WORKER or "stage=\"%s\"" % stage in WORKER


def test_the_probe_names_the_ports_that_refuse() -> None:
    probe: dict = {}
    exec(compile(REACH, "reach", "exec"), probe)
    open_port = probe["serve"]()
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed_port = free.getsockname()[1]
    peers = {1: "127.0.0.1:%d" % open_port, 2: "127.0.0.1:%d" % closed_port, 3: "127.0.0.1:%d" % open_port}
    assert probe["unreached"](peers, 2) == [[2, "127.0.0.1:%d" % closed_port, "Connection refused"]]
    assert probe["own_addr"]("127.0.0.1") == "127.0.0.1"


def test_records_are_read_by_rank_and_partial_files_skipped(tmp_path: Path) -> None:
    (tmp_path / "rank-10.json").write_text(json.dumps(done(10)))
    (tmp_path / "rank-2.json").write_text(json.dumps(done(2)))
    (tmp_path / "rank-3.json").write_text("{not json")
    (tmp_path / ".rank-4.json").write_text(json.dumps(done(4)))
    assert [r["rank"] for r in read_rank_records(str(tmp_path))] == [2, 10]


def test_a_node_passes_when_every_rank_got_the_world_size() -> None:
    result = passed()
    assert result["ok"] and result["joined"]
    assert result["stages"] == ["done", "done"]
    assert result["busbw_gbps"] == pytest.approx(bus_bandwidth_gbps(4 * 2 ** 20, 0.01, 4), abs=1e-3)


def test_a_result_has_no_key_ansible_reads_for_itself() -> None:
    # A true "unreachable" makes Ansible drop the host as lost; "skipped" marks a task skipped.
    record = dict(done(0), unreached_peers=[[2, "10.0.0.3:4242", "Connection refused"]])
    result = node_result(1, False, [record, done(1)], 2, "", 60)
    assert result["unreached_peers"] == [[2, "10.0.0.3:4242", "Connection refused"]]
    assert not {"unreachable", "skipped", "failed", "changed"} & set(result)


def test_a_wrong_sum_fails_the_node() -> None:
    result = node_result(0, False, [done(0), done(1, correct=False)], 2, "", 60)
    assert not result["ok"]
    assert "not the world size 4" in result["reason"]


def test_a_timeout_reports_how_far_each_rank_got() -> None:
    records = [{"rank": 0, "stage": "joined", "world_size": 4}]
    result = node_result(-15, True, records, 2, "", 60)
    assert not result["ok"] and not result["joined"]
    assert result["stages"] == ["joined", "absent"]
    assert result["reason"] == "no result within 60 s; rank stages: joined, absent"


def test_a_rank_error_is_the_message() -> None:
    records = [{"rank": 0, "stage": "started", "error": "RuntimeError: Connection refused [10.0.0.3]:4242"}]
    result = node_result(1, False, records, 1, "line\n", 60)
    assert result["reason"] == "RuntimeError: Connection refused [10.0.0.3]:4242"


def test_torchrun_failing_before_any_rank_names_its_last_line() -> None:
    result = node_result(1, False, [], 2, "starting\nRuntimeError: store unreachable\n", 60)
    assert result["stages"] == ["absent", "absent"]
    assert result["reason"].endswith("RuntimeError: store unreachable")


def test_stage_counts_put_the_furthest_stage_first() -> None:
    assert stage_counts(["done"] * 8) == "8 done"
    assert stage_counts(["absent", "joined", "absent"]) == "1 joined 2 absent"
    assert stage_counts([]) == "-"


def test_marked_processes_are_found_by_their_token(tmp_path: Path) -> None:
    for pid, argv in ((11, ["python", "rank.py", "tok-1"]), (12, ["sleep", "5"]), (13, ["x", "tok-10"])):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    (tmp_path / "14").mkdir()
    (tmp_path / "self").mkdir()
    assert marked_pids("tok-1", str(tmp_path)) == [11]


def failed_run(msg: str, joined: bool = False, timed_out: bool = False, errors: list | None = None) -> dict:
    return {"ok": False, "joined": joined, "timed_out": timed_out, "stages": [], "errors": errors or [],
            "output_tail": [], "reason": msg}


def test_culprits_are_the_nodes_that_did_not_join_while_others_did() -> None:
    results = {"n1": failed_run("x", joined=True, timed_out=True), "n2": failed_run("y", joined=True, timed_out=True),
               "n3": failed_run("z")}
    assert culprits(results, {}) == ["n3"]


def test_culprits_are_the_nodes_the_errors_name() -> None:
    err = ["RuntimeError: Connection refused to [10.0.0.3]:40123"]
    results = {"n1": failed_run("a", errors=err), "n2": failed_run("b", errors=err), "n3": failed_run("c")}
    addrs = {"n1": "10.0.0.1", "n2": "10.0.0.2", "n3": "10.0.0.3", "n4": "10.0.0.30"}
    assert culprits(results, addrs) == ["n3"]


def test_culprits_are_the_nodes_none_of_whose_ranks_joined() -> None:
    # The closed node (n3): its ranks never join; n2's ranks joined and failed on n1, which
    # joined with one rank and failed on n3. The errors name n3 and n1 once each.
    results = {"n1": dict(failed_run("a", errors=["Connection closed by peer [10.0.0.3]:46762"]),
                          stages=["joined", "started"]),
               "n2": dict(failed_run("b", joined=True, errors=["Read error [10.0.0.1]:8088: reset by peer"]),
                          stages=["joined", "joined"]),
               "n3": dict(failed_run("c", errors=["pair.cc:144] no error"]), stages=["started", "started"])}
    assert culprits(results, {"n1": "10.0.0.1", "n2": "10.0.0.2", "n3": "10.0.0.3"}) == ["n3"]


def test_culprits_are_the_nodes_the_others_could_not_connect_to() -> None:
    # The closed node (n3) and n2 both failed before joining (n2's ranks broke on n3's pairs);
    # n1 and n2 could not connect to n3, n3 reached both.
    refused = [[2, "10.0.0.3:41235", "Connection refused"]]
    results = {"n1": dict(failed_run("a", errors=["Connection closed by peer [10.0.0.1]:27015"]),
                          stages=["joined", "started"], unreached_peers=refused),
               "n2": dict(failed_run("b", errors=["Connection closed by peer [10.0.0.3]:63126"]),
                          stages=["started", "started"], unreached_peers=refused),
               "n3": dict(failed_run("c", errors=["pair.cc:144] no error"]), stages=["started", "started"])}
    addrs = {"n1": "10.0.0.1", "n2": "10.0.0.2", "n3": "10.0.0.3"}
    assert refused_by(results) == {"n3": [["n1", "Connection refused"], ["n2", "Connection refused"]]}
    assert culprits(results, addrs) == ["n3"]
    summary = summarize(list(results), list(results.values()), list(addrs.values()))
    assert summary["culprits"] == ["n3"]
    assert "the other nodes could not connect to it: n1 (Connection refused), n2 (Connection refused)" in summary["msg"]
    # Without the probe's word (ranks of an older check), the stages alone blame both.
    assert culprits({h: dict(r, unreached_peers=[]) for h, r in results.items()}, addrs) == ["n2", "n3"]


def test_a_probe_every_node_fails_blames_no_node_by_itself() -> None:
    # Every node refused by the others (a firewall that lets only the training's ports through):
    # the probe says nothing of one node, and the other rules decide.
    results = {"n1": dict(failed_run("a", joined=True, timed_out=True), unreached_peers=[[1, "b:2", "timed out"]]),
               "n2": dict(failed_run("b"), unreached_peers=[[0, "a:1", "timed out"]])}
    assert culprits(results, {}) == ["n2"]


def test_culprits_are_the_nodes_most_others_name() -> None:
    # The closed node (n3) names n2, which dropped it; n1 and n2 both name n3.
    to_n3 = ["RuntimeError: Gloo connectFullMesh failed with [pair.cc:534] Connection closed by peer [10.0.0.3]:7325"]
    results = {"n1": failed_run("a", errors=to_n3), "n2": failed_run("b", errors=to_n3),
               "n3": failed_run("c", errors=["Connection reset by peer [10.0.0.2]:29368"])}
    addrs = {"n1": "10.0.0.1", "n2": "10.0.0.2", "n3": "10.0.0.3"}
    assert culprits(results, addrs) == ["n3"]
    pair = {"n1": failed_run("a", errors=["peer [10.0.0.2]:1"]), "n2": failed_run("b", errors=["peer [10.0.0.1]:2"])}
    assert culprits(pair, {"n1": "10.0.0.1", "n2": "10.0.0.2"}) == ["n1", "n2"]


def test_culprits_are_the_nodes_that_failed_alone_while_the_others_waited() -> None:
    results = {"n1": failed_run("a", timed_out=True), "n2": failed_run("b", timed_out=True), "n3": failed_run("c")}
    assert culprits(results, {}) == ["n3"]
    everyone = {"n1": failed_run("a", timed_out=True), "n2": failed_run("b", timed_out=True)}
    assert culprits(everyone, {}) == ["n1", "n2"]


def test_a_passing_group_has_no_culprit_and_reports_time_and_bandwidth() -> None:
    summary = summarize(["n1", "n2"], [passed(), passed()], ["10.0.0.1", "10.0.0.2"])
    assert summary["report"].splitlines()[1].split()[3:5] == ["2", "done"]
    assert summary["ok"] and summary["culprits"] == []
    assert summary["msg"].startswith("collective check passed: 2 node(s), 4 rank(s), all-reduce 10.00 ms")
    assert summary["report"].splitlines()[1].split()[:3] == ["n1", "pass", "gloo"]


def test_a_node_that_never_ran_the_check_is_named() -> None:
    summary = summarize(["n1", "n2", "n3"], [passed(joined=True), passed(joined=True), ""], ["", "", ""])
    assert not summary["ok"]
    assert summary["culprits"] == ["n3"]
    assert "n3: did not run the check" in summary["msg"]
    assert "Fix:" in summary["msg"] and "train_cluster_check: false" in summary["msg"]


def test_an_unfinished_async_job_counts_as_timed_out() -> None:
    summary = summarize(["n1"], [{"finished": 0, "ansible_job_id": "1"}], ["10.0.0.1"])
    assert summary["failed"] == ["n1"] and "did not finish the check" in summary["msg"]


def test_the_filter_is_registered() -> None:
    assert "collective_summary" in FilterModule().filters()


def test_no_rank_anywhere_points_at_the_rendezvous() -> None:
    waited = node_result(124, True, [], 2, "", 60)
    summary = summarize(["n1", "n2"], [waited, waited], ["10.0.0.1", "10.0.0.2"])
    assert "never all met at the rendezvous" in summary["msg"]
    assert summary["report"].splitlines()[1].split()[:4] == ["n1", "FAIL", "-", "2"]


def test_result_file_holds_the_token_and_the_whole_result(tmp_path) -> None:
    from ansible_collections.ascendops.gr00t.plugins.modules import collective_check

    path = tmp_path / "collective.json"
    path.write_text('{"token": "earlier", "result": {"ok": true}}')
    collective_check.write_result(str(path), "run-1", {"ok": False, "reason": "rank 1 timed out"})
    assert json.loads(path.read_text()) == {"token": "run-1", "result": {"ok": False, "reason": "rank 1 timed out"}}
    # Replaced whole: no temporary file is left beside it.
    assert [p.name for p in tmp_path.iterdir()] == ["collective.json"]
