"""serve with the node in its own process (issue 27): the same answers as in-process, readers that
never wait for a control request, a bounded control queue, and stopping at once with nothing of
an abandoned request applied.

Control requests are held deterministically by stopping the node process (SIGSTOP), never by
timing; no test asserts a time.
"""
from __future__ import annotations

import json
import os
import signal
import threading
import urllib.request

import grpc
import pytest

from memorymanager.server.protos.control import control_pb2 as ctl
from tests.server.serving import pod, serving


def _metrics(server) -> str:
    host, port = server.metrics.address
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as page:
        return page.read().decode()


def _script(c) -> list:
    """A mixed sequence of control requests; their answers, as comparable values."""
    out = []
    for text in (pod("a"), pod("b", memory="3Gi", sidecar="proxy", init="setup"), pod("huge", memory="40Gi"),
                 pod("c", hugepages="512Mi")):
        answer = c.admit(text)
        out.append((answer.admitted, answer.reason, [(p.container, list(p.numa_nodes), dict(p.memory))
                                                     for p in answer.placements]))
    out.append(c.control.WouldAdmit(ctl.AdmitRequest(pod=pod("w", memory="2Gi"))).SerializeToString())
    out.append(c.get("huge").SerializeToString())  # refused at admission: Get still answers it
    c.control.Remove(ctl.RemoveRequest(pod="huge", namespace="default"))  # deleted: Get forgets it
    with pytest.raises(grpc.RpcError) as err:
        c.get("huge")
    out.append((err.value.code(), err.value.details()))
    c.control.Remove(ctl.RemoveRequest(pod="a"))
    c.control.Remove(ctl.RemoveRequest(pod="b", container="app"))
    out.append(c.control.Hints(ctl.HintsRequest(pod=pod("h"))).SerializeToString())
    out.append(c.control.Explain(ctl.ExplainRequest(pod=pod("e", memory="2Gi"), format="json")).explanation)
    with pytest.raises(grpc.RpcError) as err:  # kubelet refuses to start: PodResources answers UNAVAILABLE then
        c.control.Restart(ctl.RestartRequest(kubelet=json.dumps({"memoryManagerPolicy": "Bogus"})))
    out.append((err.value.code(), err.value.details()))
    for call in (c.list, c.list_alpha, c.allocatable, lambda: c.get("c")):
        with pytest.raises(grpc.RpcError) as err:
            call()
        out.append((err.value.code(), err.value.details()))
    with pytest.raises(grpc.RpcError) as err:
        c.admit(pod("refused-while-down"))
    out.append((err.value.code(), err.value.details()))
    c.control.Restart(ctl.RestartRequest(kubelet=json.dumps({"memoryManagerPolicy": "Static",
                                                             "topologyManagerPolicy": "restricted"})))
    out.append(c.admit(pod("d")).admitted)
    for call in (lambda: c.control.Remove(ctl.RemoveRequest(pod="ghost")), lambda: c.admit("{bad")):
        with pytest.raises(grpc.RpcError) as err:
            call()
        out.append((err.value.code(), err.value.details()))
    out.append(c.list().SerializeToString())
    out.append(c.list_alpha().SerializeToString())
    out.append(c.allocatable().SerializeToString())
    out.append(c.get("c").SerializeToString())
    out.append(c.control.ListPods(ctl.ListPodsRequest()).SerializeToString())
    out.append(c.control.MachineState(ctl.MachineStateRequest()).SerializeToString())
    return out


def _untimed(page: str) -> list[str]:
    """A metrics page without the admission-duration buckets and sum (whole milliseconds measured: they
    differ from run to run); its count stays."""
    timed = ("kubelet_topology_manager_admission_duration_ms_bucket", "kubelet_topology_manager_admission_duration_ms_sum")
    return [line for line in page.splitlines() if not line.startswith(timed)]


def test_the_node_process_answers_as_the_node_in_process(tmp_path):
    answers, pages, files = {}, {}, {}
    for isolate in (False, True):
        folder = tmp_path / str(isolate)
        with serving(folder, isolate=isolate, pods_file=True, metrics=True) as (server, c):
            answers[isolate] = _script(c)
            pages[isolate] = _metrics(server)
        state = folder / "state"
        files[isolate] = {name: (state / name).read_bytes() for name in sorted(os.listdir(state))}
    assert answers[True] == answers[False]
    assert _untimed(pages[True]) == _untimed(pages[False])
    assert files[True] == files[False]  # the checkpoint and the pod list, byte for byte


def _node_part(page: str) -> list[str]:
    """A metrics page without the PodResources series (counted where PodResources is served)."""
    return [line for line in page.splitlines() if "kubelet_pod_resources_endpoint_" not in line]


def _stopped(server):
    """Stop the node process (and any fork of it): control requests then wait, as behind a costly one."""
    os.killpg(server.node_process.pid, signal.SIGSTOP)


def _continued(server):
    os.killpg(server.node_process.pid, signal.SIGCONT)


def _in_background(fn) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def run() -> None:
        try:
            result["value"] = fn()
        except grpc.RpcError as exc:
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def _wait_for_slots(server, taken: int) -> None:
    """Wait until `taken` control requests wait or run (a condition, not a time)."""
    while server.node_process.slots.taken < taken:
        threading.Event().wait(0.01)


def test_readers_answer_while_control_requests_wait_and_the_queue_is_bounded(tmp_path):
    with serving(tmp_path, isolate=True, pods_file=True, metrics=True) as (server, c):
        assert c.admit(pod("before")).admitted
        page = _metrics(server)
        _stopped(server)
        try:
            waiting = [_in_background(lambda i=i: c.admit(pod(f"p{i}"))) for i in range(8)]
            _wait_for_slots(server, 8)
            # PodResources and metrics answer from the last snapshot while 8 requests wait
            assert [p.name for p in c.list().pod_resources] == ["before"]
            assert [p.name for p in c.list_alpha().pod_resources] == ["before"]
            assert c.get("before").pod_resources.name == "before"
            # the node's part of the page is the last one; the PodResources calls are counted as served
            now = _metrics(server)
            assert _node_part(now) == _node_part(page)
            assert 'kubelet_pod_resources_endpoint_requests_list{server_api_version="v1"} 1' in now
            assert 'kubelet_pod_resources_endpoint_requests_total{server_api_version="v1alpha1"} 1' in now
            assert 'kubelet_pod_resources_endpoint_requests_get{server_api_version="v1"} 1' in now
            with pytest.raises(grpc.RpcError) as err:  # the 9th is refused, naming the limit
                c.control.ListPods(ctl.ListPodsRequest(), timeout=10)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "max-control-queue" in err.value.details()
        finally:
            _continued(server)
        for thread, result in waiting:
            thread.join()
            assert result["value"].admitted
        listed = [p.name for p in c.list().pod_resources]  # the 8 in their arrival order, after "before"
        assert listed[0] == "before" and sorted(listed[1:]) == [f"p{i}" for i in range(8)]
        assert 'kubelet_topology_manager_admission_requests_total 9' in _metrics(server)


def test_stopping_abandons_what_runs_and_applies_nothing_of_it(tmp_path):
    state = tmp_path / "state"
    with serving(tmp_path, isolate=True, pods_file=True) as (server, c):
        assert c.admit(pod("kept")).admitted
        before = {name: (state / name).read_bytes() for name in ("memory_manager_state", "served_pods.json")}
        _stopped(server)
        running = _in_background(lambda: c.admit(pod("abandoned")))
        queued = _in_background(lambda: c.control.Remove(ctl.RemoveRequest(pod="kept")))
        _wait_for_slots(server, 2)
        server.node_process.shutdown()  # what SIGTERM does first (the stopped node is killed too)
        for thread, result in (running, queued):
            thread.join()
            assert result["error"].code() == grpc.StatusCode.UNAVAILABLE
            assert "nothing of it was applied" in result["error"].details()
        with pytest.raises(grpc.RpcError) as err:
            c.control.ListPods(ctl.ListPodsRequest(), timeout=10)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert [p.name for p in c.list().pod_resources] == ["kept"]  # readers still answer until the end
        with pytest.raises(ProcessLookupError):
            os.killpg(server.node_process.pid, 0)  # no node process or fork is left
    after = {name: (state / name).read_bytes() for name in ("memory_manager_state", "served_pods.json")}
    assert after == before


@pytest.mark.parametrize("method", ["Admit", "WouldAdmit", "Explain"])
def test_large_pods_within_the_budget_are_answered_on_a_fork(tmp_path, method):
    inits = [{"name": f"i{k}", "resources": {"limits": {"cpu": "1", "memory": "64Ki"}}} for k in range(120)]
    apps = [{"name": f"a{k}", "resources": {"limits": {"cpu": "1", "memory": "64Ki"}}} for k in range(40)]
    text = json.dumps({"metadata": {"name": "big"}, "spec": {"initContainers": inits, "containers": apps}})
    with serving(tmp_path, isolate=True, pods_file=True) as (server, c):
        if method == "Explain":
            answer = c.control.Explain(ctl.ExplainRequest(pod=text))
            assert "big" in answer.explanation
        else:
            answer = getattr(c.control, method)(ctl.AdmitRequest(pod=text))
            assert answer.admitted and len(answer.placements) == 160
        listed = [p.name for p in c.list().pod_resources]
        assert listed == (["big"] if method == "Admit" else [])
        assert c.admit(pod("next")).admitted  # the node process (moved to the fork, for Admit) serves on
