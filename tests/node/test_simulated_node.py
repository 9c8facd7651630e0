"""The simulated node (memorymanager.node.simulated_node.SimulatedNode): start, admission, active pods, removal, restart."""
import os

import pytest

from memorymanager.node.simulated_node import (
    FixedHintProvider,
    SimulatedNode,
    KubeletStartError,
    NodeError,
    aggregate_errors,
)
from kubeinputs.kubelet_config import parse_kubelet_config
from kubeinputs.machine import parse_machine_info
from kubeinputs.pod import parse_pod
from topologymanager.hint import TopologyHint

GI = 1 << 30
MI = 1 << 20
MACHINE = parse_machine_info(
    {
        "num_cores": 2,
        "memory_capacity": 8 * GI,
        "topology": [
            {"node_id": 0, "memory": 4 * GI, "cores": [{"core_id": 0, "thread_ids": [0], "socket_id": 0}]},
            {"node_id": 1, "memory": 4 * GI, "cores": [{"core_id": 1, "thread_ids": [1], "socket_id": 1}]},
        ],
    },
    "machine",
)
STATIC = {
    "memoryManagerPolicy": "Static",
    "topologyManagerPolicy": "best-effort",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
}


def pod(name, *containers, init=(), memory="1Gi"):
    spec = {"containers": [{"name": c, "resources": {"limits": {"cpu": "1", "memory": memory}}} for c in containers]}
    if init:
        spec["initContainers"] = [{"name": c, "resources": {"limits": {"cpu": "1", "memory": memory}}} for c in init]
    return parse_pod({"metadata": {"name": name}, "spec": spec}, "pod")


def node(tmp_path, kubelet=STATIC, **kw):
    n = SimulatedNode(MACHINE, parse_kubelet_config(kubelet, "kubelet"), str(tmp_path), **kw)
    n.start()
    return n


def free(n, numa=0):
    return n.state().get_machine_state()[numa].memory_map["memory"].free


def test_aggregate_errors_text():
    assert aggregate_errors(["a"]) == "a"
    assert aggregate_errors(["a", "b"]) == "[a, b]"


@pytest.mark.parametrize(
    "kubelet, message",
    [
        ({"featureGates": {"NoSuchGate": True}},
         "failed to set feature gates from initial flags-based config: unrecognized feature gate: NoSuchGate"),
        ({"topologyManagerPolicy": "bogus", "topologyManagerScope": "bogus"},
         "failed to validate kubelet configuration, error: [invalid configuration: topologyManagerPolicy"),
        ({"memoryManagerPolicy": "Dynamic"}, 'unknown policy: "Dynamic"'),
        ({"memoryManagerPolicy": "Static"},
         'the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature'),
    ],
)
def test_start_errors_carry_kubelet_text(tmp_path, kubelet, message):
    n = SimulatedNode(MACHINE, parse_kubelet_config(kubelet, "kubelet"), str(tmp_path))
    with pytest.raises(KubeletStartError) as info:
        n.start()
    assert message in str(info.value)
    assert not n.running and n.start_error == str(info.value)
    with pytest.raises(NodeError, match=r"the node is not running \(start failed: "):
        n.admit(pod("p", "c"))


def test_a_memory_manager_start_failure_is_wrapped_as_kubelet_does(tmp_path):
    (tmp_path / "memory_manager_state").write_text("{")
    n = SimulatedNode(MACHINE, parse_kubelet_config(STATIC, "kubelet"), str(tmp_path))
    with pytest.raises(KubeletStartError) as info:
        n.start()
    text = str(info.value)
    assert text.startswith("start memory manager error: could not restore state from checkpoint: ")
    assert "unexpected end of JSON input" in text


def test_active_pods_follow_admissions_and_removals(tmp_path):
    n = node(tmp_path)
    seen = []

    class Spy(FixedHintProvider):
        def get_topology_hints(self, p, c):
            seen.append(sorted(x.uid for x in n.active_pods()))
            return None

    a, b = pod("a", "c"), pod("b", "c", memory="100Gi")
    assert n.admit(a, Spy()).admit
    assert seen == [["a"]]  # the pod being admitted is active during its admission
    # b does not fit anywhere: Allocate fails, the pod is rejected and is not active afterwards
    outcome = n.admit(b, Spy())
    assert not outcome.admit and outcome.reason == "UnexpectedAdmissionError"
    assert seen[-1] == ["a", "b"]
    assert [p.uid for p in n.active_pods()] == ["a"]
    n.remove(a, "c")  # one container: the pod stays active
    assert [p.uid for p in n.active_pods()] == ["a"]
    n.remove(a)  # the whole pod
    assert n.active_pods() == []


def test_admission_adds_containers_and_records_memory_manager_hints(tmp_path):
    n = node(tmp_path)
    p = pod("p", "app", init=["init"])
    outcome = n.admit(p)
    assert outcome.admit
    assert set(outcome.hints) == {"init", "app"}
    assert outcome.hints["app"]["memory"][0] == TopologyHint.of([0], True)
    # AddContainer of the app container released the finished init container's blocks
    assert n.memory_manager.get_memory("p", "init") is None
    assert n.memory_manager.get_memory("p", "app")[0].numa_affinity == [0]
    assert n.topology_manager.get_affinity("p", "app") == TopologyHint.of([0], True)


def test_injected_provider_counts_for_one_admission_only(tmp_path):
    n = node(tmp_path, {"topologyManagerPolicy": "restricted"})
    cpu_on_1 = FixedHintProvider({"c": {"cpu": [TopologyHint.of([1], True)]}})
    assert n.admit(pod("a", "c"), cpu_on_1).admit
    assert n.topology_manager.get_affinity("a", "c") == TopologyHint.of([1], True)
    assert n.admit(pod("b", "c")).admit
    assert n.topology_manager.get_affinity("b", "c") == TopologyHint.of([0, 1], True)
    impossible = FixedHintProvider({"c": {"cpu": []}})
    outcome = n.admit(pod("c", "c"), impossible)
    assert (outcome.admit, outcome.reason) == (False, "TopologyAffinityError")


def test_fixed_provider_answers_copies_and_nil_for_unknown_containers():
    hints = {"cpu": [TopologyHint.of([0], True)], "dev": None}
    provider = FixedHintProvider({"c": hints}, pod={"cpu": []})
    c = pod("p", "c").containers[0]
    got = provider.get_topology_hints(None, c)
    assert got == hints and got is not hints
    got["cpu"].append(TopologyHint())
    assert provider.get_topology_hints(None, c) == hints
    assert provider.get_topology_hints(None, pod("p", "other").containers[0]) is None
    assert provider.get_pod_topology_hints(None) == {"cpu": []}
    assert provider.allocate(None, c) is None


def test_an_admission_reports_the_memory_managers_hints_as_the_topology_manager_received_them(tmp_path):
    n = node(tmp_path)
    outcome = n.admit(pod("p", "a", "b"))
    assert list(outcome.hints) == ["a", "b"]
    assert outcome.hints["a"]["memory"][0] == TopologyHint.of([0], True)
    n.topology_hints(pod("q", "c"))  # a hint query outside an admission is not an admission's
    assert list(outcome.hints) == ["a", "b"]
    pod_scope = node(tmp_path / "pod", {**STATIC, "topologyManagerScope": "pod"})
    assert list(pod_scope.admit(pod("p", "a", "b")).hints) == ["pod"]


def test_observers_hear_the_managers_in_kubelets_order(tmp_path):
    from topologymanager.observer import Observer

    class Heard(Observer):
        def __init__(self):
            self.events = []

        def kubelet_started(self, node):
            self.events.append("start")

        def admission_started(self, p):
            self.events.append("admit")

        def hints_given(self, provider, p, c, hints):
            self.events.append(f"hints {provider} {c.name}")

        def hints_merged(self, p, c, providers_hints, best, admit):
            self.events.append(f"merged {c.name} {best.nodes()} {admit}")

        def allocation_started(self, provider, p, c):
            self.events.append(f"allocate {c.name}")

        def skipped(self, provider, p, c, why):
            self.events.append(f"skipped {c.name}: {why}")

        def pinning_requested(self, provider, p, c):
            self.events.append(f"pin {c.name}")

        def allocation_done(self, provider, p, c, error):
            self.events.append(f"done {c.name} {error}")

        def admission_done(self, p, result):
            self.events.append(f"admitted {result.admit}")

    heard = Heard()
    n = SimulatedNode(MACHINE, parse_kubelet_config(STATIC, "kubelet"), str(tmp_path), observers=[heard])
    n.start()
    n.admit(pod("p", "app"))
    assert heard.events == ["start", "admit", "hints memory app", "merged app [0] True", "allocate app", "pin app",
                            "done app None", "admitted True"]
    heard.events.clear()
    besteffort = parse_pod({"metadata": {"name": "be"}, "spec": {"containers": [{"name": "c"}]}}, "pod")
    n.admit(besteffort)
    assert heard.events == ["admit", "skipped c: pod QoS is not guaranteed", "hints memory c", "merged c [0, 1] True",
                            "allocate c", "skipped c: pod QoS is not guaranteed", "done c None", "admitted True"]


def test_hints_in_each_scope_allocate_nothing(tmp_path):
    n = node(tmp_path)
    p = pod("p", "app", init=["init"], memory="2Gi")
    by_container = n.topology_hints(p)
    assert list(by_container) == ["init", "app"]
    assert n.state().get_memory_assignments() == {}
    pod_scope = node(tmp_path / "pod", {**STATIC, "topologyManagerScope": "pod"})
    assert list(pod_scope.topology_hints(p)) == ["pod"]


def test_restart_keeps_admitted_pods_and_their_container_ids(tmp_path):
    n = node(tmp_path)
    p = pod("p", "c")
    assert n.admit(p).admit
    before = free(n)
    assert before == 4 * GI - 100 * MI - GI
    n.restart()
    assert os.path.exists(tmp_path / "memory_manager_state")
    assert n.memory_manager.get_memory("p", "c")[0].size == GI
    # the topology manager keeps no state across restarts
    assert n.topology_manager.get_affinity("p", "c") == TopologyHint()
    # the memory manager knows the container ID again (initial containers), so removal frees memory
    n.remove(p, "c")
    assert free(n) == 4 * GI - 100 * MI


def test_restart_with_a_new_configuration(tmp_path):
    n = node(tmp_path)
    with pytest.raises(KubeletStartError, match='configured policy "None" differs from state checkpoint policy "Static"'):
        n.restart(parse_kubelet_config({"memoryManagerPolicy": "None"}, "kubelet"))
    assert not n.running
    n.restart(parse_kubelet_config(STATIC, "kubelet"))
    assert n.running and n.start_error is None


def test_unknown_container_ids_are_ignored(tmp_path):
    n = node(tmp_path)
    kept = pod("kept", "c")
    assert n.admit(kept).admit
    before = (n.state().get_machine_state(), n.state().get_memory_assignments(), n.active_pods())
    n.remove_container_ids(["ghost/c", "kept/nope"])
    n.remove(pod("never", "c"))
    assert (n.state().get_machine_state(), n.state().get_memory_assignments(), n.active_pods()) == before
    assert n.topology_manager.get_affinity("kept", "c").nodes() == [0]


def test_reserved_memory_start_error_carries_a_hint_beside_kubelets_message():
    cfg = parse_kubelet_config({"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 1, "limits": {
        "memory": "50Mi"}}, {"numaNode": 0, "limits": {"memory": "100Mi"}}], "evictionHard": {"memory.available": "200Mi"}})
    node = SimulatedNode(MACHINE, cfg, None)
    with pytest.raises(KubeletStartError) as info:
        node.start()
    assert str(info.value) == ('the total amount "150Mi" of type "memory" is not equal to the value "200Mi" '
                               'determined by Node Allocatable feature')
    assert info.value.hint == node.start_hint == (
        "hint: reservedMemory of type memory, summed over the NUMA nodes, must equal the Node Allocatable "
        "reservation: reservedMemory total 150Mi (157286400 bytes) != systemReserved 0 + kubeReserved 0 + "
        "evictionHard memory.available 200Mi = 200Mi (209715200 bytes)")
    node.restart(parse_kubelet_config(STATIC))
    assert node.running and node.start_hint is None


# ----- write-behind checkpoint (a throwaway folder: written before the next start reads it) -----

CHECKPOINT = "memory_manager_state"


def checkpoint_bytes(folder):
    with open(os.path.join(folder, CHECKPOINT), "rb") as fh:
        return fh.read()


def test_write_behind_defers_writes_until_the_next_start_reads_the_file(tmp_path):
    eager_dir, lazy_dir = tmp_path / "eager", tmp_path / "lazy"
    eager = node(eager_dir)
    lazy = SimulatedNode(MACHINE, parse_kubelet_config(STATIC, "kubelet"), str(lazy_dir))
    lazy.write_behind = True
    lazy.start()
    fresh = checkpoint_bytes(lazy_dir)
    assert fresh == checkpoint_bytes(eager_dir)  # restore writes the missing file at once
    for n in (eager, lazy):
        assert n.admit(pod("a", "app")).admit
        assert n.admit(pod("b", "app", init=("init",), memory="2Gi")).admit
        n.remove(pod("a", "app"))
    assert checkpoint_bytes(lazy_dir) == fresh  # nothing written yet
    assert checkpoint_bytes(eager_dir) != fresh
    assert lazy.state().get_memory_assignments() == eager.state().get_memory_assignments()
    for n in (eager, lazy):
        n.restart()
    assert checkpoint_bytes(lazy_dir) == checkpoint_bytes(eager_dir)  # written before the restart read it
    assert lazy.state().get_machine_state() == eager.state().get_machine_state()
    assert lazy.state().get_memory_assignments() == eager.state().get_memory_assignments()
    for n in (eager, lazy):
        n.remove(pod("b", "app", init=("init",), memory="2Gi"))
    lazy.flush_checkpoint()
    assert checkpoint_bytes(lazy_dir) == checkpoint_bytes(eager_dir)
    assert lazy.admit(pod("c", "app")).admit  # still deferring after a flush
    assert checkpoint_bytes(lazy_dir) == checkpoint_bytes(eager_dir)


def test_write_behind_survives_a_failed_restart(tmp_path):
    lazy = SimulatedNode(MACHINE, parse_kubelet_config(STATIC, "kubelet"), str(tmp_path))
    lazy.write_behind = True
    lazy.start()
    assert lazy.admit(pod("a", "app")).admit
    with pytest.raises(KubeletStartError):
        lazy.restart(parse_kubelet_config({**STATIC, "memoryManagerPolicy": "None"}, "kubelet"))
    assert b'"a":{"app":' in checkpoint_bytes(tmp_path)  # the admission reached the file before the start
    lazy.restart(parse_kubelet_config(STATIC, "kubelet"))
    assert lazy.state().get_memory_blocks("a", "app") is not None


def test_an_in_memory_fork_of_a_write_behind_node_leaves_its_writes_alone(tmp_path):
    lazy = SimulatedNode(MACHINE, parse_kubelet_config(STATIC, "kubelet"), str(tmp_path))
    lazy.write_behind = True
    lazy.start()
    fresh = checkpoint_bytes(tmp_path)
    assert lazy.admit(pod("a", "app")).admit
    trial = lazy.fork()
    assert trial.admit(pod("b", "app")).admit
    trial.flush_checkpoint()
    assert sorted(lazy.state().get_memory_assignments()) == ["a"]
    assert checkpoint_bytes(tmp_path) == fresh  # neither the fork nor its flush wrote the original's file
    lazy.flush_checkpoint()
    assert b'"a":{"app":' in checkpoint_bytes(tmp_path) and b'"b"' not in checkpoint_bytes(tmp_path)


def test_a_fork_has_its_own_observers_state_and_affinity(tmp_path):
    from topologymanager.observer import Observer

    class Count(Observer):
        def __init__(self):
            self.admissions = 0

        def admission_started(self, p):
            self.admissions += 1

    mine, theirs = Count(), Count()
    n = SimulatedNode(MACHINE, parse_kubelet_config(STATIC, "kubelet"), str(tmp_path), observers=[mine])
    n.start()
    assert n.admit(pod("a", "app")).admit
    trial = n.fork([theirs])
    assert trial.admit(pod("b", "app")).admit and trial.admit(pod("c", "app")).admit
    assert (mine.admissions, theirs.admissions) == (1, 2)
    assert sorted(n.state().get_memory_assignments()) == ["a"] and n.is_active("a") and not n.is_active("b")
    assert n.topology_manager.get_affinity("b", "app").nodes() is None  # the fork's stored hints are its own
    assert trial.state_dir is None and b'"b"' not in checkpoint_bytes(tmp_path)


def test_pinned_hints_hold_for_one_admission(tmp_path):
    n = node(tmp_path)
    assert n.admit(pod("p", "app"), pinned={"app": TopologyHint.of([1], True)}).admit
    assert n.state().get_memory_blocks("p", "app")[0].numa_affinity == [1]
    assert n.topology_manager.get_affinity("p", "app").nodes() == [0]  # the topology manager's own hint stays
    assert n.admit(pod("q", "app")).admit
    assert n.state().get_memory_blocks("q", "app")[0].numa_affinity == [0]  # no pin any more
