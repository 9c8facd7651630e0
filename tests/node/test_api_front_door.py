"""The Python API's front door (issue 20): every public call checks its arguments and raises
`memorymanager.InputError` naming the one that is wrong, before anything runs; none hangs, none
ends in a bare Python exception, none is silently accepted. (The generated calls are the fuzz
surface `api`, tests/fuzz/surfaces.py, run by tests/fuzz/test_fuzz_readers.py.)"""
from __future__ import annotations

import itertools
import os

import pytest

import memorymanager
from tests.fuzz.harness import budget

STATIC = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
MACHINE = memorymanager.synthetic_machine(2, 8 << 30)


def pod(**limits: object) -> dict:
    base: dict = {"cpu": "1", "memory": "1Gi"}
    base.update(limits)
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app", "resources": {"limits": base}}]}}


@pytest.fixture(scope="module")
def node() -> memorymanager.Node:
    n = memorymanager.Node(MACHINE, STATIC)
    n.start()
    return n


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


# (call, the argument the error must name, a piece of the reason); the comments say what each did before
CALLS = {
    # bare Python exceptions
    "admit_on(pod, 5)": (lambda n: n.admit_on(pod(), 5), "numa_nodes", "expected a map"),  # AttributeError
    "adopt(None)": (lambda n: n.adopt(None), "pods", "expected a list of pods"),  # TypeError
    "Node(state_dir=deep list)": (lambda n: memorymanager.Node(MACHINE, STATIC, state_dir=nested(100_000)),
                                  "state_dir", "expected a folder path"),  # RecursionError
    "Node(merge=[])": (lambda n: memorymanager.Node(MACHINE, STATIC, merge=[]), "merge", "expected one of"),  # TypeError
    "synthetic_machine('a', 5)": (lambda n: memorymanager.synthetic_machine("a", 5), "numa_nodes", "expected an integer"),
    "memory_blocks(None, 'app')": (lambda n: n.memory_blocks(None, "app"), "pod_uid", "expected a string"),
    "remove('p', container=5)": (lambda n: n.remove("p", container=5), "container", "expected a container name"),
    "hints with range(10**12)": (lambda n: n.would_admit(pod(), {"app": {"cpu": [(range(10 ** 12), True)]}}),
                                 "hints.app.cpu[0].numaAffinity", "expected a list of NUMA ids"),  # hang
    "hints with a generator": (lambda n: memorymanager.Node(MACHINE, {**STATIC, "topologyManagerScope": "pod"}).would_admit(
        pod(), {"cpu": [(itertools.count(), True)]}), "hints.cpu[0].numaAffinity", "expected a list of NUMA ids"),  # hang
    "largest_admissible(5)": (lambda n: n.largest_admissible(5), "pod", "expected a v1 Pod manifest"),
    "largest_admissible with range hints": (lambda n: n.largest_admissible(pod(), {"app": {"cpu": [(range(10 ** 12), True)]}}),
                                            "hints.app.cpu[0].numaAffinity", "expected a list of NUMA ids"),
    # silently accepted
    "Node(state_dir=5)": (lambda n: memorymanager.Node(MACHINE, STATIC, state_dir=5), "state_dir", "got integer 5"),
    "Node(machine=None)": (lambda n: memorymanager.Node(None, STATIC), "machine", "got null"),
    "restart(topologyManagerPolicy=None)": (lambda n: n.restart(topologyManagerPolicy=None),
                                            "restart.topologyManagerPolicy", "got None"),
    "Node(kubelet={...: None})": (lambda n: memorymanager.Node(MACHINE, {**STATIC, "topologyManagerScope": None}),
                                  "kubelet.topologyManagerScope", "got None"),
    "memory None": (lambda n: n.would_admit(pod(memory=None)), "pod.spec.containers[0].resources.limits.memory", "got None"),
    "cpu None": (lambda n: n.would_admit(pod(cpu=None)), "pod.spec.containers[0].resources.limits.cpu", "got None"),
    "largest_admissible memory None": (lambda n: n.largest_admissible(pod(memory=None)),
                                       "pod.spec.containers[0].resources.limits.memory", "got None"),
    "limits None": (lambda n: n.would_admit({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": None}}]}}), "pod.spec.containers[0].resources.limits", "got None"),
    "uid None": (lambda n: n.admit({"metadata": {"name": "p", "uid": None}, "spec": {"containers": [{"name": "app"}]}}),
                 "pod.metadata.uid", "got None"),
    "admit_on an unknown container": (lambda n: n.admit_on(pod(), {"nope": [0]}), "numa_nodes.nope", "no container"),
    "admit_on a NUMA node the machine lacks": (lambda n: n.admit_on(pod(), {"app": [5]}), "numa_nodes.app",
                                               "no NUMA node 5 on this machine"),
    "admit_on no NUMA node": (lambda n: n.admit_on(pod(), {"app": []}), "numa_nodes.app", "at least one NUMA id"),
    "synthetic_machine(2, -5)": (lambda n: memorymanager.synthetic_machine(2, -5), "memory_per_node", "must be >= 0"),
    "synthetic_machine(2, 1<<64)": (lambda n: memorymanager.synthetic_machine(2, 1 << 64), "memory_per_node", "must be <="),
    "synthetic_machine(hugepages_2mi=-1)": (lambda n: memorymanager.synthetic_machine(2, 1 << 30, hugepages_2mi=-1),
                                            "hugepages_2mi", "must be >= 0"),
    # a hang
    "synthetic_machine(10**6, ...)": (lambda n: memorymanager.synthetic_machine(10 ** 6, 1 << 30), "numa_nodes",
                                      "must be <= 64"),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_a_wrong_argument_is_an_input_error_naming_it(node, call) -> None:
    fn, where, reason = CALLS[call]
    with pytest.raises(memorymanager.InputError) as caught, budget(20):  # a hang fails, not waits
        fn(node)
    assert caught.value.where == where, str(caught.value)
    assert reason in caught.value.reason, str(caught.value)
    assert node.pods() == []  # nothing was admitted on the way


def test_paths_are_checked(tmp_path) -> None:
    afile = tmp_path / "a-file"
    afile.write_text("")
    for kwargs, text in (({"state_dir": str(afile)}, "is not a folder"), ({"state_dir": ""}, "an empty string"),
                         ({"state_dir": "a\0b"}, "NUL character")):
        with pytest.raises(memorymanager.InputError, match=text):
            memorymanager.Node(MACHINE, STATIC, **kwargs)
    with pytest.raises(memorymanager.InputError, match="is a folder, not a file"):
        memorymanager.Node(str(tmp_path), STATIC)
    with pytest.raises(memorymanager.InputError, match="sysfs_root: .* is not a folder"):
        memorymanager.Node.from_host(STATIC, sysfs_root=str(afile))
    node = memorymanager.Node(MACHINE, STATIC, state_dir=tmp_path / "state")  # a Path is a path
    node.admit(pod())
    assert os.path.exists(tmp_path / "state" / "memory_manager_state")


def test_yaml_null_keeps_kubernetes_meaning(node) -> None:
    """The None rule is the Python API's own: in YAML or JSON text, null reads as Kubernetes reads it."""
    answer = node.would_admit("metadata: {name: p}\nspec:\n  containers:\n  - name: app\n"
                              "    resources: {limits: {cpu: '1', memory: null}}\n")
    assert answer.admitted and answer.placements["app"].memory == {}


def test_valid_calls_still_answer(node) -> None:
    answer = node.admit_on(pod(), {"app": (1,)})
    assert answer.admitted and answer.placements["app"].cpuset_mems == "1"  # the memory on the given node
    node.remove("p")
    assert memorymanager.synthetic_machine(64, 1 << 30, hugepages_1gi=1, cores_per_node=1).num_cores == 64
