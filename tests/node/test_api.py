"""The public API (`import memorymanager`): Node, Admission, Placement, the input forms,
would_admit leaving the node untouched, and clean errors for bad input."""
from __future__ import annotations

import json
import os

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memorymanager
from memorymanager import Admission, InputError, KubeletStartError, Node, NodeError, Placement, TopologyHint
from tests.helpers.paths import FIXTURES

GI = 1 << 30
MI = 1 << 20
STATIC = {
    "memoryManagerPolicy": "Static",
    "topologyManagerPolicy": "single-numa-node",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
}


def manifest(name: str, memory: str = "1Gi", containers: tuple[str, ...] = ("app",), cpu: str = "1", **extra) -> dict:
    """A Guaranteed pod with one container per name, each limited to `memory` (and extra resources)."""
    limits = {"cpu": cpu, "memory": memory, **extra}
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": c, "resources": {"limits": dict(limits)}} for c in containers]},
    }


def two_node(kubelet: dict = STATIC, **kw) -> Node:
    return Node(memorymanager.synthetic_machine(2, 4 * GI, hugepages_2mi=512), kubelet, **kw)


def test_front_door_exports_exactly_its_all():
    for name in memorymanager.__all__:
        assert hasattr(memorymanager, name), name
    assert {"Node", "Admission", "Placement", "Error", "InputError", "KubeletStartError"} <= set(memorymanager.__all__)


def test_one_exception_hierarchy():
    from memorymanager.policy import MemoryManagerError

    for cls in (memorymanager.InputError, memorymanager.NodeError, memorymanager.KubeletStartError, MemoryManagerError,
                memorymanager.BoundedWorkError):
        assert issubclass(cls, memorymanager.Error)


def test_admit_reports_placement_memory_and_cpuset_mems():
    node = two_node()
    answer = node.admit(manifest("web", "1Gi", **{"hugepages-2Mi": "4Mi"}))
    assert answer == Admission(True, "", "", {
        "app": Placement((0,), True, {"memory": GI, "hugepages-2Mi": 4 * MI}, "0"),
    })


def test_a_group_of_two_nodes_gives_a_range_cpuset():
    node = two_node({**STATIC, "topologyManagerPolicy": "best-effort"})
    placed = node.admit(manifest("big", "5Gi")).placements["app"]
    assert placed.numa_nodes == (0, 1)
    assert placed.cpuset_mems == "0-1"
    assert placed.memory == {"memory": 5 * GI}


def test_refusal_has_kubelet_reason_and_no_placements():
    answer = two_node().admit(manifest("big", "5Gi"))  # 3Gi of memory per node besides 1Gi of hugepages
    assert not answer.admitted
    assert answer.reason == "TopologyAffinityError"
    assert answer.message == "Resources cannot be allocated with Topology locality"
    assert answer.placements == {}


def test_a_container_the_memory_manager_skips_has_no_memory_and_no_cpuset_mems():
    burstable = {"metadata": {"name": "b"}, "spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": "1Gi"}}}]}}
    placed = two_node().admit(burstable).placements["app"]
    assert placed.memory == {} and placed.cpuset_mems == ""


def test_pod_as_yaml_text_json_text_file_and_dict_agree(tmp_path):
    doc = manifest("web")
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(doc))
    forms = [doc, yaml.safe_dump(doc), json.dumps(doc), str(path), path]
    answers = {repr(two_node().admit(form)) for form in forms}
    assert len(answers) == 1


def test_machine_and_kubelet_from_files(tmp_path):
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text(yaml.safe_dump({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **STATIC}))
    node = Node(FIXTURES / "machines" / "two-nodes.json", kubelet)
    assert node.admit(manifest("web")).placements["app"].numa_nodes == (0,)
    assert sorted(node.free()) == [0, 1]


def test_from_host_reads_a_sysfs_tree():
    node = Node.from_host({"memoryManagerPolicy": "None"}, sysfs_root=FIXTURES / "sysfs" / "two-nodes-hugepages")
    assert [n.node_id for n in node.machine.topology] == [0, 1]


def test_would_admit_leaves_state_checkpoint_and_affinity_untouched(tmp_path):
    node = two_node(state_dir=tmp_path)
    node.admit(manifest("first", "2Gi"))
    checkpoint = tmp_path / "memory_manager_state"
    before_bytes = checkpoint.read_bytes()
    before_state = node.machine_state()
    before_affinity = node.simulated_node.topology_manager.get_affinity("second", "app")
    answer = node.would_admit(manifest("second", "3Gi"))
    assert answer.admitted and answer.placements["app"].numa_nodes == (1,)
    assert checkpoint.read_bytes() == before_bytes
    assert node.machine_state() == before_state
    assert node.simulated_node.topology_manager.get_affinity("second", "app") == before_affinity
    assert node.pods() == ["first"]
    assert node.admit(manifest("second", "3Gi")) == answer


def test_hints_injected_per_container_steer_the_merge():
    node = two_node({**STATIC, "topologyManagerPolicy": "restricted"})
    cpu_on_node_1 = {"app": {"cpu": [{"numaAffinity": [1], "preferred": True}]}}
    assert node.admit(manifest("web"), hints=cpu_on_node_1).placements["app"].numa_nodes == (1,)
    as_objects = {"app": {"cpu": [TopologyHint.of([0], True)]}}
    assert node.admit(manifest("web2"), hints=as_objects).placements["app"].numa_nodes == (0,)
    as_pairs = {"app": {"cpu": [([1], True)]}}
    assert node.admit(manifest("web3"), hints=as_pairs).placements["app"].numa_nodes == (1,)


def test_hints_in_pod_scope_form():
    node = two_node({**STATIC, "topologyManagerPolicy": "restricted", "topologyManagerScope": "pod"})
    answer = node.admit(manifest("web"), hints={"cpu": [{"numaAffinity": [1], "preferred": True}]})
    assert answer.placements["app"].numa_nodes == (1,)


def test_no_alignment_possible_with_injected_hints_is_refused():
    node = two_node({**STATIC, "topologyManagerPolicy": "restricted"})
    answer = node.admit(manifest("web", "5Gi"), hints={"app": {"cpu": [{"numaAffinity": [0], "preferred": True}]}})
    assert not answer.admitted and answer.reason == "TopologyAffinityError"


def test_node_hints_are_the_memory_managers():
    hints = two_node().hints(manifest("web", "1Gi"))
    assert hints == {"app": {"memory": [TopologyHint.of([0], True), TopologyHint.of([1], True), TopologyHint.of([0, 1], False)]}}


def test_remove_by_name_by_manifest_and_one_container():
    node = two_node()
    full = node.free()
    node.admit(manifest("a", containers=("x", "y")))
    node.remove("a", container="x")
    assert node.free() != full
    node.remove(manifest("a", containers=("x", "y")))
    assert node.free() == full
    assert node.pods() == []


@pytest.mark.parametrize("call, needle", [
    (lambda n: n.remove("ghost"), "no pod 'ghost'"),
    (lambda n: n.remove("a", container="nope"), "has no container 'nope'"),
])
def test_remove_errors_name_the_pod(call, needle):
    node = two_node()
    node.admit(manifest("a"))
    with pytest.raises(NodeError, match=needle):
        call(node)


@pytest.mark.parametrize("pod, where", [
    ("no-such-file.yaml", "pod"),
    ({"metadata": {"name": "x"}}, "pod.spec"),
    ({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "a", "resourcez": {}}]}}, "pod.spec.containers[0]"),
    ("a: b\nc: [", "pod"),
])
def test_bad_pods_are_input_errors_naming_the_path(pod, where):
    with pytest.raises(InputError) as caught:
        two_node().admit(pod)
    assert str(caught.value).startswith(where)


@pytest.mark.parametrize("hints, where, scope", [
    ({"nosuch": {"cpu": []}}, "hints.nosuch", "container"),
    ({"app": {"cpu": [{"numaAffinity": [64], "preferred": True}]}}, "hints.app.cpu[0].numaAffinity[0]", "container"),
    ({"app": {"cpu": [{"numaAffinity": [0]}]}}, "hints.app.cpu[0]", "container"),
    ({"app": {"cpu": "x"}}, "hints.app.cpu", "container"),
    ({"cpu": [{"numaAffinity": [0], "preferred": "yes"}]}, "hints.cpu[0].preferred", "pod"),
])
def test_bad_hints_are_input_errors_naming_the_path(hints, where, scope):
    with pytest.raises(InputError) as caught:
        two_node({**STATIC, "topologyManagerScope": scope}).admit(manifest("web"), hints=hints)
    assert str(caught.value).startswith(where), str(caught.value)


CPU_ON_1 = [{"numaAffinity": [1], "preferred": True}]


@pytest.mark.parametrize("scope, hints, where, expected", [
    ("container", {"cpu": CPU_ON_1}, "hints.cpu", "{CONTAINER: {RESOURCE: [HINT, ...]}}"),
    ("container", {"app": CPU_ON_1}, "hints.app", "{CONTAINER: {RESOURCE: [HINT, ...]}}"),
    ("pod", {"app": {"cpu": CPU_ON_1}}, "hints.app", "{RESOURCE: [HINT, ...]}"),
    ("pod", {"app": CPU_ON_1}, "hints.app", "{RESOURCE: [HINT, ...]}"),
])
@pytest.mark.parametrize("call", ["admit", "would_admit"])
def test_hints_in_the_other_scopes_shape_are_refused_naming_the_expected_one(scope, hints, where, expected, call):
    """Hints kubelet would never ask for (the other scope's shape, a list where a map belongs) are an
    error, never an answer as if no hints were given."""
    node = two_node({**STATIC, "topologyManagerPolicy": "restricted", "topologyManagerScope": scope})
    with pytest.raises(InputError) as caught:
        getattr(node, call)(manifest("web", "3Gi"), hints=hints)
    assert caught.value.where == where
    assert expected in caught.value.reason and repr(scope) in caught.value.reason
    assert node.pods() == []


def test_a_container_without_preference_is_container_scope_hints():
    node = two_node({**STATIC, "topologyManagerPolicy": "restricted"})
    answer = node.admit(manifest("web", containers=("a", "b")), hints={"a": None, "b": {"cpu": CPU_ON_1}})
    assert answer.placements["a"].numa_nodes == (0,) and answer.placements["b"].numa_nodes == (1,)
    with pytest.raises(InputError, match="the pod-scope shape"):
        node.admit(manifest("web2"), hints={"cpu": None})


def test_pods_of_one_name_in_two_namespaces_are_two_pods():
    node = two_node()
    full = node.free()
    prod, staging = manifest("db", "2Gi"), manifest("db", "2Gi")
    prod["metadata"]["namespace"], staging["metadata"]["namespace"] = "prod", "staging"
    assert node.admit(prod).placements["app"].numa_nodes == (0,)
    assert node.admit(staging).placements["app"].numa_nodes == (1,)  # node 0 has no 2Gi left
    assert [(p.namespace, p.name, p.uid) for p in node.active_pods()] == [
        ("prod", "db", "prod/db"), ("staging", "db", "staging/db")]
    assert set(node.simulated_node.state().get_memory_assignments()) == {"prod/db", "staging/db"}
    with pytest.raises(InputError, match="namespaces prod, staging"):
        node.remove("db")  # which one: the namespace decides
    node.remove("db", namespace="staging")
    assert [(p.namespace, p.uid) for p in node.active_pods()] == [("prod", "prod/db")]
    assert node.free()[1] == full[1] and node.free()[0] != full[0]


def test_a_uid_arriving_again_with_another_name_or_namespace_is_an_error():
    node = two_node()
    first = manifest("db")
    first["metadata"].update(uid="u-1", namespace="prod")
    node.admit(first)
    for meta in ({"name": "db", "namespace": "staging"}, {"name": "other", "namespace": "prod"}):
        again = manifest("x")
        again["metadata"] = {**meta, "uid": "u-1"}
        with pytest.raises(InputError, match="already the UID of pod prod/db") as caught:
            node.admit(again)
        assert caught.value.where == "metadata.uid"
        with pytest.raises(InputError, match="already the UID"):
            node.hints(again)
    assert node.admit(first).admitted  # the same pod again is the same pod
    assert [p.name for p in node.active_pods()] == ["db"]


def test_a_start_error_is_kubelets_text_raised_by_every_call():
    node = two_node({"memoryManagerPolicy": "Static"})
    with pytest.raises(KubeletStartError, match="determined by Node Allocatable feature"):
        node.admit(manifest("web"))
    with pytest.raises(KubeletStartError):
        node.free()


def test_restart_with_overrides_keeps_state_from_the_checkpoint(tmp_path):
    node = two_node({**STATIC, "topologyManagerPolicy": "best-effort"}, state_dir=tmp_path)
    node.admit(manifest("web", "2Gi"))
    before = node.machine_state()
    node.restart(topologyManagerPolicy="restricted")
    assert node.kubelet.topology_manager_policy == "restricted"
    assert node.machine_state() == before
    with pytest.raises(InputError):
        node.restart(noSuchField=1)


def test_allocatable_is_per_node_and_resource():
    alloc = two_node().allocatable()
    assert alloc[0]["memory"] == 3 * GI - 100 * MI  # 1Gi of each node is 2Mi hugepages
    assert alloc[1]["memory"] == 3 * GI
    assert alloc[0]["hugepages-2Mi"] == 512 * 2 * MI


def test_an_unknown_merge_is_an_input_error():
    with pytest.raises(InputError, match="merge"):
        two_node(merge="quick")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["admit", "remove"]), st.integers(0, 5), st.sampled_from(["512Mi", "1Gi", "3Gi", "5Gi"])), max_size=12),
       st.sampled_from(["single-numa-node", "best-effort", "restricted"]))
def test_would_admit_predicts_admit_exactly(ops, policy):
    """For any sequence, would_admit's answer equals the admit that follows, and changes nothing."""
    node = two_node({**STATIC, "topologyManagerPolicy": policy})
    for op, i, memory in ops:
        name = f"p{i}"
        if op == "remove":
            if name in node.pods():
                node.remove(name)
            continue
        if name in node.pods():
            continue
        state = node.machine_state()
        predicted = node.would_admit(manifest(name, memory))
        assert node.machine_state() == state
        assert node.admit(manifest(name, memory)) == predicted
