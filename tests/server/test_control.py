"""The node-control service over a real socket: answers like the Python API, clear statuses for
bad input, and a consistent node under 8 concurrent clients."""
from __future__ import annotations

import io
import json
import random
import threading

import grpc
import pytest

import memorymanager.cli.app as cli
from memorymanager.server.protos.control import control_pb2 as ctl
from tests.server.serving import Clients, memory_of, pod, serving


def test_admit_answers_as_the_python_api(tmp_path):
    with serving(tmp_path) as (server, c):
        text = pod("db", memory="8Gi", hugepages="512Mi")
        expected = server.host.node.would_admit(text)
        got = c.control.WouldAdmit(ctl.AdmitRequest(pod=text))
        assert got.admitted and list(c.control.ListPods(ctl.ListPodsRequest()).pods) == []
        got = c.admit(text)
        (placement,) = got.placements
        want = expected.placements["app"]
        assert (placement.container, tuple(placement.numa_nodes), placement.preferred, dict(placement.memory),
                placement.cpuset_mems) == ("app", want.numa_nodes, want.preferred, dict(want.memory), want.cpuset_mems)
        (ref,) = c.control.ListPods(ctl.ListPodsRequest()).pods
        assert (ref.name, ref.namespace) == ("db", "default")


def test_refusal_is_an_answer_with_kubelets_reason(tmp_path):
    with serving(tmp_path) as (_, c):
        got = c.admit(pod("huge", memory="20Gi"))  # fits only across both nodes
        assert not got.admitted and got.reason == "TopologyAffinityError" and list(got.placements) == []
        assert got.message


def test_hints_and_injected_hints(tmp_path):
    kubelet = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "restricted",
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
    with serving(tmp_path, kubelet) as (_, c):
        hints = c.control.Hints(ctl.HintsRequest(pod=pod("p"))).containers
        (app,) = hints
        (memory,) = app.resources
        assert [(list(h.numa_nodes), h.preferred) for h in memory.hints] == [([0], True), ([1], True), ([0, 1], False)]
        extra = json.dumps({"app": {"cpu": [{"numaAffinity": [1], "preferred": True}]}})
        got = c.admit(pod("p"), hints=extra)
        assert list(got.placements[0].numa_nodes) == [1]


def test_a_json_null_in_a_request_keeps_its_kubernetes_meaning(tmp_path):
    """The Python API refuses a Python None where it reads a value; a request's JSON `null` is a
    document's null, read as the API server and kubelet read it (here: no memory limit)."""
    doc = {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": "1", "memory": None}}}]}}
    with serving(tmp_path) as (_, c):
        got = c.control.WouldAdmit(ctl.AdmitRequest(pod=json.dumps(doc)))
        assert got.admitted and dict(got.placements[0].memory) == {}
        (app,) = c.control.Hints(ctl.HintsRequest(pod=json.dumps(doc))).containers
        assert app.container == "app"
        assert c.admit(json.dumps(doc)).admitted


@pytest.mark.parametrize("text, code, words", [
    ("", grpc.StatusCode.INVALID_ARGUMENT, "pod: empty"),
    ("{not json", grpc.StatusCode.INVALID_ARGUMENT, "pod"),
    ("/etc/passwd", grpc.StatusCode.INVALID_ARGUMENT, "pod"),
    (json.dumps({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "a", "resourcez": {}}]}}),
     grpc.StatusCode.INVALID_ARGUMENT, 'pod.spec.containers[0].resourcez: unknown key; did you mean "resources"?'),
])
def test_bad_pods_get_invalid_argument_naming_the_problem(tmp_path, text, code, words):
    with serving(tmp_path) as (_, c):
        with pytest.raises(grpc.RpcError) as err:
            c.admit(text)
        assert err.value.code() == code and words in err.value.details()
        assert c.admit(pod("ok")).admitted  # still serving


def test_bad_hints_unknown_pods_and_bad_restarts(tmp_path):
    with serving(tmp_path) as (_, c):
        with pytest.raises(grpc.RpcError) as err:
            c.admit(pod("p"), hints=json.dumps({"nosuch": {"cpu": []}}))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "hints.nosuch" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:
            c.control.Remove(ctl.RemoveRequest(pod="ghost"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND and "ghost" in err.value.details()
        c.admit(pod("p"))
        with pytest.raises(grpc.RpcError) as err:
            c.control.Remove(ctl.RemoveRequest(pod="p", container="nope"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND and "nope" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:  # a wrong value is kubelet's start error, not a bad request
            c.control.Restart(ctl.RestartRequest(kubelet="topologyManagerPolicy: sideways"))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "sideways" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:  # a wrong shape is
            c.control.Restart(ctl.RestartRequest(kubelet="topologyManagerPolicy: [sideways]"))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_eight_clients_admitting_and_removing_500_pods_leave_a_consistent_node(tmp_path):
    with serving(tmp_path, nodes=4) as (server, c):
        names = [f"p{i}" for i in range(500)]
        errors: list[BaseException] = []
        kept: list[str] = []
        lock = threading.Lock()

        def worker(index: int) -> None:
            clients = Clients(server.socket_path)
            rng = random.Random(index)
            try:
                for name in names[index::8]:
                    answer = clients.admit(pod(name, memory=f"{rng.choice([256, 512, 1024])}Mi"))
                    if answer.admitted and rng.random() < 0.7:
                        clients.control.Remove(ctl.RemoveRequest(pod=name))
                    elif answer.admitted:
                        with lock:
                            kept.append(name)
            except BaseException as exc:  # reported below
                errors.append(exc)
            finally:
                clients.channel.close()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)  # a hang guard only
        assert not errors and not any(t.is_alive() for t in threads)
        node = server.host.node
        # PodResources agrees with the node: the kept pods, their blocks
        listing = c.list()
        assert sorted(p.name for p in listing.pod_resources) == sorted(kept)
        reserved_by_blocks: dict[tuple[int, str], int] = {}
        for p in listing.pod_resources:
            for container in p.containers:
                for kind, size, numa in memory_of(container):
                    assert len(numa) == 1  # single-numa-node
                    reserved_by_blocks[(numa[0], kind)] = reserved_by_blocks.get((numa[0], kind), 0) + size
        # memory is conserved: free + reserved = allocatable, reserved = the blocks
        for numa, state in node.machine_state().items():
            for kind, table in state.memory_map.items():
                assert table.free + table.reserved == table.allocatable
                assert table.reserved == reserved_by_blocks.get((numa, kind), 0)
        # the checkpoint verifies as kubelet would load it
        out = io.StringIO()
        code = cli.main(["checkpoint", "verify", str(tmp_path / "state" / "memory_manager_state"), "--policy", "Static"],
                        out=out, err=io.StringIO())
        assert code == 0, out.getvalue()


def test_pod_scope_hints_and_pod_level_alignment_metrics(tmp_path):
    kubelet = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
               "topologyManagerScope": "pod", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
    with serving(tmp_path, kubelet) as (server, c):
        (entry,) = c.control.Hints(ctl.HintsRequest(pod=pod("p", sidecar="proxy"))).containers
        assert entry.container == "pod"
        assert c.admit(pod("wide", memory="20Gi")).reason == "TopologyAffinityError"  # only [0, 1] fits
        assert c.admit(pod("p", sidecar="proxy")).admitted
        counts = server.host.metrics.snapshot()
        assert counts.aligned == {("container", "numa_node"): 0, ("pod", "numa_node"): 1}
        assert counts.aligned_failures == {("container", "numa_node"): 0, ("pod", "numa_node"): 1}
        assert (counts.admission_requests, counts.admission_errors) == (2, 1)


def test_remove_needs_a_pod_reference(tmp_path):
    with serving(tmp_path) as (_, c):
        with pytest.raises(grpc.RpcError) as err:
            c.control.Remove(ctl.RemoveRequest(pod=""))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert err.value.details() == "pod: expected the name or UID of an admitted pod"


def test_explain_over_the_wire_equals_explain_in_process_and_changes_nothing(tmp_path):
    from memorymanager.explain.build import explain_pod
    from memorymanager.explain.text import explanation_lines
    from memorymanager.node.api import read_pod

    with serving(tmp_path) as (server, c):
        c.admit(pod("first", memory="4Gi"))
        text = pod("huge", memory="20Gi")
        state = server.host.node.machine_state()
        got = c.control.Explain(ctl.ExplainRequest(pod=text)).explanation
        local = explain_pod(server.host.node.simulated_node, read_pod(text))
        assert got == "\n".join(explanation_lines(local)) + "\n"
        assert "UnexpectedAdmissionError" in got  # node 0 holds single-NUMA memory: no group may form
        assert server.host.node.machine_state() == state
        doc = json.loads(c.control.Explain(ctl.ExplainRequest(pod=text, format="json")).explanation)
        assert doc["explanation"]["decision"]["admitted"] is False
        assert doc["schema_version"]
        with pytest.raises(grpc.RpcError) as caught:
            c.control.Explain(ctl.ExplainRequest(pod=text, format="svg"))
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "format" in caught.value.details()


def test_pods_of_one_name_in_two_namespaces_over_the_wire(tmp_path):
    with serving(tmp_path) as (_, c):
        assert list(c.admit(pod("db", memory="12Gi", namespace="prod")).placements[0].numa_nodes) == [0]
        assert list(c.admit(pod("db", memory="12Gi", namespace="staging")).placements[0].numa_nodes) == [1]
        refs = [(p.namespace, p.name, p.uid) for p in c.control.ListPods(ctl.ListPodsRequest()).pods]
        assert refs == [("prod", "db", "prod/db"), ("staging", "db", "staging/db")]
        assert [(p.namespace, p.name) for p in c.list().pod_resources] == [("prod", "db"), ("staging", "db")]
        assert memory_of(c.get("db", "staging").pod_resources.containers[0]) == [("memory", 12 << 30, [1])]
        with pytest.raises(grpc.RpcError) as err:  # which db: the namespace decides
            c.control.Remove(ctl.RemoveRequest(pod="db"))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "namespaces prod, staging" in err.value.details()
        c.control.Remove(ctl.RemoveRequest(pod="db", namespace="staging"))
        assert [(p.namespace, p.name) for p in c.list().pod_resources] == [("prod", "db")]
        with pytest.raises(grpc.RpcError) as err:
            c.control.Remove(ctl.RemoveRequest(pod="db", namespace="nowhere"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND and "nowhere/db" in err.value.details()


def test_hints_in_the_other_scopes_shape_are_invalid_argument(tmp_path):
    with serving(tmp_path) as (_, c):
        for request in (lambda h: c.admit(pod("p"), hints=h),
                        lambda h: c.control.Explain(ctl.ExplainRequest(pod=pod("p"), hints=h))):
            with pytest.raises(grpc.RpcError) as err:
                request(json.dumps({"cpu": [{"numaAffinity": [1], "preferred": True}]}))
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "hints.cpu: the node's topologyManagerScope is 'container'" in err.value.details()
            assert "{CONTAINER: {RESOURCE: [HINT, ...]}}" in err.value.details()
        assert list(c.control.ListPods(ctl.ListPodsRequest()).pods) == []
