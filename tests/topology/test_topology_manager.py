"""kubelet's topology_manager_test.go (NewManager, scopes, AddHintProvider, Admit), translated."""
from dataclasses import dataclass, field
from typing import Optional

import pytest

from topologymanager.admission import PodAdmitResult
from topologymanager.bitmask import new_bitmask
from topologymanager.errors import PolicyOptionsError, TopologyManagerError
from kubeinputs.features import POD_LEVEL_RESOURCE_MANAGERS_GATE, FeatureGates
from topologymanager.hint import TopologyHint
from topologymanager.manager import Manager, new_manager
from topologymanager.reference_merge import reference_merge_hints


@dataclass
class Node:
    node_id: int
    distances: Optional[list] = None


@dataclass
class Container:
    name: str


@dataclass
class Pod:
    uid: str
    containers: list = field(default_factory=list)
    init_containers: list = field(default_factory=list)
    resources: object = None


def P(*nodes):
    return TopologyHint(new_bitmask(*nodes), True)


def N(*nodes):
    return TopologyHint(new_bitmask(*nodes), False)


def machine(n, distances=True):
    return [Node(i, [10 if i == j else 20 for j in range(n)] if distances else None) for i in range(n)]


class MockProvider:
    """Returns the same map for containers and pods; allocation always succeeds."""

    def __init__(self, hints=None):
        self.hints = hints
        self.allocated = []

    def get_topology_hints(self, pod, container):
        return self.hints

    def get_pod_topology_hints(self, pod):
        return self.hints

    def allocate(self, pod, container):
        self.allocated.append(container.name)


@pytest.mark.parametrize("policy", ["none", "best-effort", "restricted", "single-numa-node"])
def test_new_manager_policies(policy):
    mgr = new_manager(machine(2), policy, "container", {})
    assert isinstance(mgr, Manager)
    assert mgr.get_policy().name == policy
    assert mgr.scope_name == ("none" if policy == "none" else "container")


@pytest.mark.parametrize(
    "policy, options, topology, message",
    [
        ("unknown", {}, machine(2), 'unknown policy: "unknown"'),
        ("best-effort", {"unknown-option": "true"}, machine(2), 'unknown Topology Manager Policy option: "unknown-option"'),
        ("restricted", {"unknown-option": "true"}, machine(2), 'unknown Topology Manager Policy option: "unknown-option"'),
        ("best-effort", {"prefer-closest-numa-nodes": "true"}, [Node(0)],
         "cannot discover NUMA topology: error getting NUMA distances from cadvisor"),
        ("best-effort", {}, machine(9), "unsupported on machines with more than 8 NUMA Nodes"),
        ("single-numa-node", {"max-allowable-numa-nodes": "10"}, machine(11),
         "unsupported on machines with more than 10 NUMA Nodes"),
    ],
)
def test_new_manager_errors(policy, options, topology, message):
    with pytest.raises(TopologyManagerError) as err:
        new_manager(topology, policy, "container", options)
    assert str(err.value) == message


def test_check_order():
    # options before NUMA info, NUMA count before the policy name, policy name before scope
    with pytest.raises(PolicyOptionsError):
        new_manager([Node(0)], "bogus", "bogus", {"prefer-closest-numa-nodes": "maybe"})
    with pytest.raises(TopologyManagerError, match="distances"):
        new_manager([Node(0)], "bogus", "bogus", {"prefer-closest-numa-nodes": "true"})
    with pytest.raises(TopologyManagerError, match="more than 8 NUMA Nodes"):
        new_manager(machine(9), "bogus", "bogus", {})
    with pytest.raises(TopologyManagerError, match='unknown policy: "bogus"'):
        new_manager(machine(2), "bogus", "bogus", {})
    with pytest.raises(TopologyManagerError, match='unknown scope: "bogus"'):
        new_manager(machine(2), "best-effort", "bogus", {})


def test_none_policy_skips_options_numa_and_limit():
    mgr = new_manager(machine(12, distances=False), "none", "bogus", {"unknown": "x", "prefer-closest-numa-nodes": "?"})
    assert mgr.scope_name == "none"
    assert mgr.get_policy().name == "none"
    assert mgr.numa_info is None


def test_max_allowable_numa_nodes_raises_the_limit():
    mgr = new_manager(machine(9), "best-effort", "pod", {"max-allowable-numa-nodes": "9"})
    assert mgr.numa_info.nodes == list(range(9)) and mgr.policy_options.max_allowable_numa_nodes == 9


@pytest.mark.parametrize("scope, expected", [("container", "container"), ("pod", "pod")])
def test_manager_scope(scope, expected):
    assert new_manager(None, "best-effort", scope, None).scope_name == expected


def test_add_hint_provider():
    mgr = new_manager(machine(2), "best-effort", "container")
    for _ in range(3):
        mgr.add_hint_provider(MockProvider())
    assert len(mgr.scope.hint_providers) == 3


def pod_one_container():
    return Pod("uid", [Container("c")])


TEST_ADMIT = [
    ("none policy, no providers", "none", [], True),
    ("single-numa-node, provider without hints", "single-numa-node", [MockProvider()], True),
    ("restricted, provider without hints", "restricted", [MockProvider()], True),
    ("best-effort, preferred affinity", "best-effort", [MockProvider({"resource": [P(0), N(0, 1)]})], True),
    ("best-effort, several preferred", "best-effort", [MockProvider({"resource": [P(0), P(1), N(0, 1)]})], True),
    ("best-effort, no preferred", "best-effort", [MockProvider({"resource": [N(0, 1)]})], True),
    ("restricted, preferred affinity", "restricted", [MockProvider({"resource": [P(0), N(0, 1)]})], True),
    ("restricted, several preferred", "restricted", [MockProvider({"resource": [P(0), P(1), N(0, 1)]})], True),
    ("restricted, no preferred", "restricted", [MockProvider({"resource": [N(0, 1)]})], False),
]


@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize("name, policy, providers, expected", TEST_ADMIT, ids=[c[0] for c in TEST_ADMIT])
def test_admit(scope, name, policy, providers, expected):
    mgr = new_manager(machine(2), policy, scope, {})
    for p in providers:
        mgr.add_hint_provider(p)
    result = mgr.admit(pod_one_container())
    assert result.admit is expected
    if not expected:
        assert result == PodAdmitResult(False, "TopologyAffinityError", "Resources cannot be allocated with Topology locality")


def test_affinity_lifecycle_through_manager():
    mgr = new_manager(machine(2), "restricted", "container", {})
    mgr.add_hint_provider(MockProvider({"memory": [P(1), N(0, 1)]}))
    p = Pod("uid", [Container("a"), Container("b")])
    assert mgr.admit(p).admit
    for c in p.containers:
        mgr.add_container(p, c, f"uid/{c.name}")
    assert mgr.get_affinity("uid", "a") == P(1)
    mgr.remove_container("uid/a")
    mgr.remove_container("uid/a")  # idempotent
    assert mgr.get_affinity("uid", "a") == TopologyHint()
    assert mgr.get_affinity("uid", "b") == P(1)


def test_merge_fn_is_passed_to_the_policy():
    mgr = new_manager(machine(2), "single-numa-node", "container", {}, merge_fn=reference_merge_hints)
    assert mgr.get_policy().merge_fn is reference_merge_hints


def test_prefer_closest_manager_end_to_end():
    topo = [Node(0, [10, 11, 20, 20]), Node(1, [11, 10, 20, 20]), Node(2, [20, 20, 10, 12]), Node(3, [20, 20, 12, 10])]
    mgr = new_manager(topo, "best-effort", "pod", {"prefer-closest-numa-nodes": "true"})
    # two-node placements only: {0,1} is closest, {2,3} next; without the option {0,1} wins anyway,
    # so offer {0,2}, {2,3} and {1,3} (numerically {0,2}=5 is lowest, {2,3} is closest)
    mgr.add_hint_provider(MockProvider({"memory": [P(0, 2), P(2, 3), P(1, 3)]}))
    assert mgr.admit(Pod("u", [Container("c")])).admit
    assert mgr.get_affinity("u", "c") == P(2, 3)
    plain = new_manager(topo, "best-effort", "pod", {})
    plain.add_hint_provider(MockProvider({"memory": [P(0, 2), P(2, 3), P(1, 3)]}))
    plain.admit(Pod("u", [Container("c")]))
    assert plain.get_affinity("u", "c") == P(0, 2)


def test_pod_level_gate_reaches_the_scope():
    gates = FeatureGates.from_config({POD_LEVEL_RESOURCE_MANAGERS_GATE: True})
    mgr = new_manager(machine(2), "best-effort", "pod", {}, gates)
    assert mgr.scope.feature_gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE)
