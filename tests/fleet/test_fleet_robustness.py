"""Fleet under bad input and at scale (issues 18 and 20): trace times that would misorder events,
duplicate keys and deep nesting refused through the one strict reader; what is not a trace file;
a progress bar only on a terminal; a scheduler that cannot serve fails within its timeout; Dask
leaves nothing in $TMPDIR; a placement scan skips the part of the fleet that refused the shape."""
from __future__ import annotations

import io
import json
import os
import socket
import threading

import pytest

from memorymanager.cli.app import main
from memorymanager.fleet.report import ProgressBar
from memorymanager.fleet.simulate import Simulation
from memorymanager.fleet.spec import load_fleet
from memorymanager.fleet.trace import load_trace

FLEETS = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "fleets")
BOUND = os.path.join(FLEETS, "bound.yaml")
HEAD = """
nodes:
- name: a
  count: 2
  machine: {numaNodes: 2, memoryPerNode: 4Gi}
  kubelet: {memoryManagerPolicy: Static, topologyManagerPolicy: single-numa-node,
            reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]}
trace: t.jsonl
"""
POD = '{"metadata": {"name": "%s"}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}'


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def fleet(tmp_path, trace: str, head: str = HEAD) -> str:
    (tmp_path / "t.jsonl").write_text(trace)
    (tmp_path / "fleet.yaml").write_text(head)
    return str(tmp_path / "fleet.yaml")


@pytest.mark.parametrize("time, reason", [
    ("NaN", "NaN is not a JSON value"),
    ("Infinity", "Infinity is not a JSON value"),
    ("-Infinity", "-Infinity is not a JSON value"),
    ("1e400", "time: expected a finite number"),
    ("-1e400", "time: expected a finite number"),
    ("9" * 5000, "number has 5,000 characters"),
    ("9" * 300, "time: must be within -2^53 and 2^53"),
    ("1e300", "time: must be within -2^53 and 2^53"),
])
def test_a_time_that_would_misorder_the_events_is_refused(tmp_path, time, reason):
    # was: NaN replayed `late` before `early`; the others leaked OverflowError / ValueError
    trace = (f'{{"time": 5, "add": {POD % "late"}}}\n'
             f'{{"time": {time}, "add": {POD % "odd"}}}\n'
             f'{{"time": 1, "add": {POD % "early"}}}\n')
    code, out, err = run_cli("fleet", fleet(tmp_path, trace), "--no-progress")
    assert code == 2 and out == ""
    assert "t.jsonl:2" in err and reason in err and "Traceback" not in err, err


def test_events_keep_time_order(tmp_path):
    trace = f'{{"time": 5, "add": {POD % "late"}}}\n{{"time": 1.5, "add": {POD % "early"}}}\n'
    spec = load_fleet(fleet(tmp_path, trace))
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    assert [e.key for e in events] == ["default/early", "default/late"]


@pytest.mark.parametrize("line, reason", [
    ('{"time": 1, "time": 2, "add": %s}' % (POD % "p"), "found duplicate key 'time'"),
    ('{"time": 1, "add": {"metadata": {"name": "p", "name": "q"}, "spec": {"containers": [{"name": "c"}]}}}',
     "found duplicate key 'name'"),
    ('{"time": 1, "add": %s}' % ("[" * 3000 + "]" * 3000), "nested too deeply"),
    ('{"time": 1, "add": %s}' % ("[" * 100000 + "]" * 100000), "nested too deeply"),
    ('{"time": 1, "add": %s}' % ("[" * 150 + "]" * 150), "nested deeper than 100 levels, the max_depth limit"),
])
def test_trace_lines_go_through_the_strict_reader(tmp_path, line, reason):
    # was: duplicate keys accepted (the last won); deep nesting a RecursionError printed as the message
    code, _, err = run_cli("fleet", fleet(tmp_path, line + "\n"), "--no-progress")
    assert code == 2 and reason in err and "RecursionError" not in err and "t.jsonl:1" in err, err


def test_what_is_not_a_trace_file_is_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo.jsonl")
    code, _, err = run_cli("fleet", fleet(tmp_path, "", HEAD.replace("t.jsonl", "fifo.jsonl")), "--no-progress")
    assert code == 2 and "fifo.jsonl" in err and "not a regular file" in err
    os.symlink("/dev/zero", tmp_path / "zero.jsonl")
    code, _, err = run_cli("fleet", fleet(tmp_path, "", HEAD.replace("t.jsonl", "zero.jsonl")), "--no-progress")
    assert code == 2 and "zero.jsonl" in err and "not a regular file" in err


def test_a_line_past_max_file_bytes_is_refused(tmp_path):
    code, _, err = run_cli("fleet", fleet(tmp_path, f'{{"time": 0, "add": {POD % "p"}}}\n' + " " * 2000 + "\n"),
                           "--no-progress", "--limit", "max-file-bytes=1000")
    assert code == 2 and "t.jsonl:2: line is longer than 1,000 bytes, the max_file_bytes limit" in err


def test_progress_bar_shows_rate_and_eta_only_when_asked():
    out = io.StringIO()
    bar = ProgressBar(1000, True, out)
    bar(250)
    bar(750)
    bar.close()
    text = out.getvalue()
    assert "1,000/1,000 events" in text and "/s" in text and "ETA 0:00" in text and text.endswith("\n")
    assert ProgressBar(1000, True, io.StringIO()).line(10.0).endswith("ETA ?")
    half = ProgressBar(1000, True, io.StringIO())
    half.done = 500
    assert "50/s  ETA 0:10" in half.line(10.0)
    silent = io.StringIO()
    bar = ProgressBar(1000, False, silent)
    bar(1000)
    bar.close()
    assert silent.getvalue() == ""


def test_the_command_draws_the_bars_on_request_only(capsys):
    assert run_cli("fleet", BOUND)[0] == 0  # stderr is no terminal here
    assert capsys.readouterr().err == ""
    assert run_cli("fleet", BOUND, "--progress")[0] == 0
    err = capsys.readouterr().err
    assert "MiB/s" in err and "40/40 events" in err and "ETA" in err


def _garbage_peer() -> tuple[str, socket.socket]:
    """A TCP server that answers every connection with bytes that are no Dask message."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" + b"\xff" * 64)

    threading.Thread(target=serve, daemon=True).start()
    return f"tcp://127.0.0.1:{server.getsockname()[1]}", server


def test_a_scheduler_that_cannot_serve_fails_within_its_timeout():
    pytest.importorskip("distributed")
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there now
    code, _, err = run_cli("fleet", BOUND, "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
                           "--scheduler-timeout", "1", "--no-progress")
    assert code == 2 and f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port} within 1 s" in err
    address, server = _garbage_peer()
    try:
        code, _, err = run_cli("fleet", BOUND, "--engine", "dask", "--scheduler", address,
                               "--scheduler-timeout", "2", "--no-progress")
    finally:
        server.close()
    assert code == 2 and f"cannot reach the Dask scheduler at {address}" in err and "Traceback" not in err, err
    code, _, err = run_cli("fleet", BOUND, "--engine", "dask", "--scheduler", "nonsense", "--no-progress")
    assert code == 2 and "not a scheduler address" in err  # was: `ValueError: missing port number`


def test_a_scheduler_without_workers_is_named():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://", dashboard_address=":0",
                                  silence_logs=40) as empty:
        code, _, err = run_cli("fleet", BOUND, "--engine", "dask", "--scheduler", empty.scheduler_address,
                               "--scheduler-timeout", "1", "--no-progress")
    assert code == 2 and "has no worker (none joined within 1 s)" in err, err


def test_dask_leaves_nothing_in_tmpdir(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code, _, err = run_cli("fleet", BOUND, "--engine", "dask", "--workers", "1", "--threads", "--no-progress")
    assert code == 0, err
    assert os.listdir(tmp_path) == []  # was: dask-scratch-space/global.lock and purge.lock


def test_a_fleet_order_scan_skips_the_nodes_that_refused_the_shape(tmp_path):
    """60 nodes each take two 3Gi pods (one per NUMA node), in fleet order: with the scan starting
    at the first node that may take the shape, each event asks about one or two nodes, not about
    every full node before it (numa-aware was 6x first-fit on a filling fleet)."""
    head = HEAD.replace("count: 2", "count: 60")
    trace = "".join(json.dumps({"time": i, "add": {"metadata": {"name": f"p{i}"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "3Gi"}}}]}}}) + "\n" for i in range(130))
    for placement in ("first-fit", "numa-aware"):
        spec = load_fleet(fleet(tmp_path, trace, head + f"placement: {placement}\n"))
        events = load_trace(spec.trace, spec.templates, spec.node_names())
        simulation = Simulation(spec, spec.variants[0])
        result = simulation.run(events)
        assert sum(n.admitted for n in result.nodes) == 120 and result.unschedulable == 10
        assert simulation.examined <= 2 * len(events), (placement, simulation.examined)  # was ~3,700
