"""B17: serve under a costly client (issue 27). One `memorymanager serve` process; 8 client processes
on its socket: client 0 sends, in a loop, the requests that used to stall the server (refused by
the work budget now) and the largest ones the budget takes, while 7 clients admit, remove, List,
Get and scrape `/metrics`. Rows: the p50 and p99 latencies of the 7 clients' List and metrics
calls, and how long SIGTERM takes to end serve while a request of the budget's largest kind runs.

Not a test: nothing asserts a time. Target: p99 of List and metrics under 100 ms on a 2-core
machine; SIGTERM within 2 s.
"""
from __future__ import annotations

import tempfile
import threading
import time

import grpc

from benchmarks.timing import Row
from memorymanager.server.protos.control import control_pb2 as ctl
from memorymanager.server.protos.control import control_pb2_grpc as ctl_grpc
from tests.load.load import big_pod, run_load, start_serve, stop_serve


def _sigterm_while_costly(rounds: int) -> list[float]:
    """Seconds from SIGTERM to the end of serve, each while a WouldAdmit of 1,000 init containers runs."""
    times = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            proc, sock, _, _ = start_serve(tmp)
            channel = grpc.insecure_channel("unix:" + sock)
            control = ctl_grpc.NodeControlStub(channel)
            control.Admit(ctl.AdmitRequest(pod=big_pod("warm")), timeout=60)  # the node is up and answering

            def costly() -> None:
                try:
                    control.WouldAdmit(ctl.AdmitRequest(pod=big_pod("costly", 1, 1000)), timeout=60)
                except grpc.RpcError:
                    pass

            worker = threading.Thread(target=costly)
            worker.start()
            time.sleep(0.5)  # a benchmark, not a test: the request is well under way by now
            times.append(stop_serve(proc))
            worker.join()
            channel.close()
    return times


def run(seconds: float = 30.0, rounds: int = 3) -> list[Row]:
    """The latency rows of one load run and the SIGTERM row (median of `rounds`)."""
    import statistics

    with tempfile.TemporaryDirectory() as tmp:
        tally, summary = run_load(tmp, seconds, 8, costly=True, processes=True)
    rows = []
    note = (f"{seconds:.0f} s, {summary['requests']:,} calls, {summary['errors']} errors, "
            f"{tally.counts['admit 1,000 init containers']} costly admissions")
    for kind in ("list", "metrics"):
        p = summary["latency"][kind]
        rows.append(Row("B17", f"{kind} by 7 clients, one client sending costly requests", "p50",
                        p["p50"], "ms", f"{p['n']:,} calls; {note}"))
        rows.append(Row("B17", f"{kind} by 7 clients, one client sending costly requests", "p99",
                        p["p99"], "ms", f"max {p['max']:.0f} ms"))
    stops = _sigterm_while_costly(rounds)
    rows.append(Row("B17", "SIGTERM while WouldAdmit of 1,000 init containers runs", "until serve ended",
                    statistics.median(stops), "s", f"slowest {max(stops):.2f} s of {rounds}"))
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
