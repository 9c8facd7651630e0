"""kubelet's scope_test.go, scope_container_test.go, scope_pod_test.go and the admission
behaviour of the three scopes, translated; pods are small stand-ins (duck-typed)."""

import pytest

from topologymanager.admission import PodAdmitResult, get_pod_admit_result
from kubeinputs.features import POD_LEVEL_RESOURCE_MANAGERS_GATE, FeatureGates
from topologymanager.hint import TopologyHint
from topologymanager.policy_best_effort import BestEffortPolicy
from topologymanager.policy_none import NonePolicy
from topologymanager.policy_restricted import RestrictedPolicy
from topologymanager.policy_single_numa_node import SingleNumaNodePolicy
from kubeinputs.pod import is_pod_level_resources_set
from topologymanager.scope_container import ContainerScope
from topologymanager.scope_none import NoneScope
from topologymanager.scope_pod import PodScope

from tests.helpers.topology import TWO, Container, N, P, Pod, Resources


def pod(uid="uid1", app=("c1",), init=(), resources=None):
    return Pod(uid, [Container(n) for n in app], [Container(n) for n in init], resources)


class Provider:
    """A hint provider that records every call into a shared log; `hints` maps container name -> answer."""

    def __init__(self, name, log, hints=None, pod_hints=None, fail_on=None, error=None):
        self.name, self.log = name, log
        self.hints = hints if hints is not None else {}
        self.pod_hints = pod_hints
        self.fail_on = fail_on
        self.error = error or RuntimeError(f"{name} is out of memory")

    def get_topology_hints(self, pod, container):
        self.log.append((self.name, "hints", container.name))
        return self.hints.get(container.name)  # container name -> provider map; missing = nil map

    def get_pod_topology_hints(self, pod):
        self.log.append((self.name, "pod_hints"))
        return self.pod_hints

    def allocate(self, pod, container):
        self.log.append((self.name, "allocate", container.name))
        if self.fail_on == container.name:
            raise self.error


class PodProvider(Provider):
    """A provider that can allocate a whole pod (KEP-5526)."""

    def allocate_pod(self, pod):
        self.log.append((self.name, "allocate_pod"))
        if self.fail_on == "pod":
            raise self.error


class MockPolicy(NonePolicy):
    """Records the provider maps it is asked to merge."""

    def __init__(self):
        self.seen = []

    def merge(self, providers_hints):
        self.seen.append(list(providers_hints))
        return TopologyHint(), True


# --- store and bookkeeping (scope_test.go) ------------------------------------------------------

@pytest.mark.parametrize("scope_cls", [ContainerScope, PodScope])
def test_get_affinity_on_empty_store_is_zero_hint(scope_cls):
    scope = scope_cls(BestEffortPolicy(TWO))
    assert scope.get_affinity("uid", "c") == TopologyHint(None, False)
    assert NoneScope().get_affinity("uid", "c") == TopologyHint()


def test_add_container_records_id():
    scope = ContainerScope(BestEffortPolicy(TWO))
    p = pod()
    scope.add_container(p, p.containers[0], "id1")
    assert scope.container_map == {"id1": ("uid1", "c1")}


def test_remove_container_drops_hint_and_pod_entry():
    scope = ContainerScope(BestEffortPolicy(TWO))
    p = pod(app=("c1", "c2"))
    for c, cid in zip(p.containers, ("id1", "id2")):
        scope.set_topology_hint("uid1", c.name, P(0))
        scope.add_container(p, c, cid)
    scope.remove_container("id1")
    assert scope.container_map == {"id2": ("uid1", "c2")}
    assert scope.pod_topology_hints == {"uid1": {"c2": P(0)}}
    scope.remove_container("id2")
    assert scope.container_map == {} and scope.pod_topology_hints == {}
    scope.remove_container("id2")  # unknown ID: no error
    scope.remove_container("never-seen")


def test_remove_container_keeps_hint_of_restarted_container():
    scope = ContainerScope(BestEffortPolicy(TWO))
    p = pod()
    scope.set_topology_hint("uid1", "c1", P(1))
    scope.add_container(p, p.containers[0], "old")
    scope.add_container(p, p.containers[0], "new")
    scope.remove_container("old")
    assert scope.get_affinity("uid1", "c1") == P(1)
    scope.remove_container("new")
    assert scope.get_affinity("uid1", "c1") == TopologyHint()


def test_add_hint_provider_appends():
    scope = ContainerScope(NonePolicy())
    for i in range(3):
        scope.add_hint_provider(Provider(str(i), []))
    assert [p.name for p in scope.hint_providers] == ["0", "1", "2"]


# --- accumulateProvidersHints / calculateAffinity -------------------------------------------------

@pytest.mark.parametrize(
    "answers",
    [[], [{"r": [P(0)]}], [None, {}], [{"a": [P(0)]}, None, {"b": None}]],
)
def test_container_scope_passes_each_providers_map_to_merge(answers):
    log = []
    policy = MockPolicy()
    scope = ContainerScope(policy)
    for i, answer in enumerate(answers):
        prov = Provider(str(i), log)
        prov.get_topology_hints = (lambda a: lambda pod, c: a)(answer)
        scope.add_hint_provider(prov)
    p = pod()
    assert scope.accumulate_providers_hints(p, p.containers[0]) == answers
    scope.calculate_affinity(p, p.containers[0])
    assert policy.seen == [answers]


@pytest.mark.parametrize("answers", [[], [{"r": [P(0)]}], [None, {}]])
def test_pod_scope_passes_each_providers_pod_map_to_merge(answers):
    policy = MockPolicy()
    scope = PodScope(policy)
    for i, answer in enumerate(answers):
        scope.add_hint_provider(Provider(str(i), [], pod_hints=answer))
    p = pod()
    assert scope.accumulate_providers_hints(p) == answers
    scope.calculate_affinity(p)
    assert policy.seen == [answers]


# --- container scope admission -------------------------------------------------------------------

def test_container_scope_order_init_then_app_hints_merge_store_allocate():
    log = []
    scope = ContainerScope(BestEffortPolicy(TWO))
    scope.add_hint_provider(Provider("a", log, hints={"i1": {"cpu": [P(1)]}, "c1": {"cpu": [P(0)]}}))
    scope.add_hint_provider(Provider("b", log))
    p = pod(app=("c1",), init=("i1",))
    assert scope.admit(p) == PodAdmitResult(True)
    assert log == [
        ("a", "hints", "i1"), ("b", "hints", "i1"), ("a", "allocate", "i1"), ("b", "allocate", "i1"),
        ("a", "hints", "c1"), ("b", "hints", "c1"), ("a", "allocate", "c1"), ("b", "allocate", "c1"),
    ]
    assert scope.get_affinity("uid1", "i1") == P(1)
    assert scope.get_affinity("uid1", "c1") == P(0)


def test_container_scope_rejection_keeps_earlier_containers():
    log = []
    scope = ContainerScope(RestrictedPolicy(TWO))
    scope.add_hint_provider(Provider("a", log, hints={"c1": {"cpu": [P(0)]}, "c2": {"cpu": [N(0, 1)]}}))
    p = pod(app=("c1", "c2", "c3"))
    result = scope.admit(p)
    assert result == PodAdmitResult(False, "TopologyAffinityError", "Resources cannot be allocated with Topology locality")
    assert scope.get_affinity("uid1", "c1") == P(0)  # not rolled back
    assert scope.get_affinity("uid1", "c2") == TopologyHint()
    assert ("a", "allocate", "c1") in log and ("a", "allocate", "c2") not in log
    assert ("a", "hints", "c3") not in log


def test_container_scope_allocate_error_is_unexpected_admission_error():
    log = []
    scope = ContainerScope(BestEffortPolicy(TWO))
    scope.add_hint_provider(Provider("a", log, fail_on="c1"))
    scope.add_hint_provider(Provider("b", log))
    result = scope.admit(pod())
    assert result.admit is False
    assert result.reason == "UnexpectedAdmissionError"
    assert result.message == "Allocate failed due to a is out of memory, which is unexpected"
    assert ("b", "allocate", "c1") not in log  # first error stops the loop
    assert scope.get_affinity("uid1", "c1") == TopologyHint(0b11, True)  # stored before allocate


class TypedError(Exception):
    error_type = "UnexpectedAdmissionError"


class MethodTypedError(Exception):
    def type(self):
        return "CustomReason"


@pytest.mark.parametrize(
    "error, reason, message",
    [
        (TypedError("[memorymanager] failed to allocate"), "UnexpectedAdmissionError", "[memorymanager] failed to allocate"),
        (MethodTypedError("nope"), "CustomReason", "nope"),
        (ValueError("plain"), "UnexpectedAdmissionError", "Allocate failed due to plain, which is unexpected"),
    ],
)
def test_allocate_errors_with_a_type_keep_their_reason(error, reason, message):
    scope = ContainerScope(BestEffortPolicy(TWO))
    scope.add_hint_provider(Provider("a", [], fail_on="c1", error=error))
    result = scope.admit(pod())
    assert (result.admit, result.reason, result.message) == (False, reason, message)
    assert result.error is error


def test_get_pod_admit_result_follows_explicit_cause():
    try:
        try:
            raise MethodTypedError("inner")
        except MethodTypedError as inner:
            raise RuntimeError("outer") from inner
    except RuntimeError as outer:
        err = outer
    assert get_pod_admit_result(err) == PodAdmitResult(False, "CustomReason", "inner")
    assert get_pod_admit_result(None) == PodAdmitResult(True)


# --- pod scope admission -----------------------------------------------------------------------

def test_pod_scope_one_merge_same_hint_for_every_container():
    log = []
    scope = PodScope(BestEffortPolicy(TWO))
    scope.add_hint_provider(Provider("a", log, pod_hints={"cpu": [P(1), N(0, 1)]}))
    p = pod(app=("c1", "c2"), init=("i1",))
    assert scope.admit(p).admit
    assert [scope.get_affinity("uid1", c) for c in ("i1", "c1", "c2")] == [P(1)] * 3
    assert log == [("a", "pod_hints"), ("a", "allocate", "i1"), ("a", "allocate", "c1"), ("a", "allocate", "c2")]


def test_pod_scope_rejection_stores_nothing():
    log = []
    scope = PodScope(SingleNumaNodePolicy(TWO))
    scope.add_hint_provider(Provider("a", log, pod_hints={"cpu": [N(0, 1)]}))
    result = scope.admit(pod())
    assert (result.admit, result.reason) == (False, "TopologyAffinityError")
    assert scope.pod_topology_hints == {} and log == [("a", "pod_hints")]


def test_pod_scope_allocate_error():
    scope = PodScope(BestEffortPolicy(TWO))
    scope.add_hint_provider(Provider("a", [], fail_on="c2"))
    result = scope.admit(pod(app=("c1", "c2", "c3")))
    assert result.reason == "UnexpectedAdmissionError"
    assert scope.get_affinity("uid1", "c2") == TopologyHint(0b11, True)
    assert scope.get_affinity("uid1", "c3") == TopologyHint()


GATE_ON = FeatureGates.from_config({POD_LEVEL_RESOURCE_MANAGERS_GATE: True})


@pytest.mark.parametrize(
    "scope_cls, gates, resources, expected_calls",
    [
        # TestAdmitWithPodLevelResources
        (PodScope, FeatureGates(), Resources(requests={"cpu": "2"}), {"pod_hints", "allocate"}),
        (PodScope, GATE_ON, Resources(requests={"cpu": "2"}), {"pod_hints", "allocate_pod"}),
        (ContainerScope, GATE_ON, Resources(requests={"cpu": "2"}), {"hints", "allocate"}),
        (ContainerScope, FeatureGates(), Resources(requests={"cpu": "2"}), {"hints", "allocate"}),
        # gate on but no (supported) pod-level resources: per-container allocation
        (PodScope, GATE_ON, None, {"pod_hints", "allocate"}),
        (PodScope, GATE_ON, Resources(), {"pod_hints", "allocate"}),
        (PodScope, GATE_ON, Resources(requests={"example.com/gpu": "1"}), {"pod_hints", "allocate"}),
        (PodScope, GATE_ON, Resources(limits={"hugepages-2Mi": "2Mi"}), {"pod_hints", "allocate_pod"}),
    ],
)
def test_pod_level_resource_managers(scope_cls, gates, resources, expected_calls):
    log = []
    scope = scope_cls(RestrictedPolicy(TWO), gates)
    scope.add_hint_provider(PodProvider("a", log, hints={"c1": {"resource": [P(0)]}}, pod_hints={"resource": [P(0)]}))
    assert scope.admit(pod(resources=resources)).admit
    assert {entry[1] for entry in log} == expected_calls
    assert scope.get_affinity("uid1", "c1") == P(0)


def test_pod_level_path_stores_all_then_allocates_pod_once_and_skips_providers_without_it():
    log = []
    scope = PodScope(BestEffortPolicy(TWO), GATE_ON)
    scope.add_hint_provider(Provider("plain", log, pod_hints=None))
    scope.add_hint_provider(PodProvider("podlevel", log, pod_hints={"memory": [P(1)]}))
    p = pod(app=("c1", "c2"), init=("i1",), resources=Resources(requests={"memory": "1Gi"}))
    assert scope.admit(p).admit
    assert log == [("plain", "pod_hints"), ("podlevel", "pod_hints"), ("podlevel", "allocate_pod")]
    assert [scope.get_affinity("uid1", c) for c in ("i1", "c1", "c2")] == [P(1)] * 3


def test_pod_level_allocate_pod_error():
    scope = PodScope(BestEffortPolicy(TWO), GATE_ON)
    scope.add_hint_provider(PodProvider("a", [], fail_on="pod"))
    result = scope.admit(pod(resources=Resources(requests={"memory": "1Gi"})))
    assert (result.admit, result.reason) == (False, "UnexpectedAdmissionError")
    assert scope.get_affinity("uid1", "c1") == TopologyHint(0b11, True)  # stored before AllocatePod


def test_is_pod_level_resources_set():
    assert not is_pod_level_resources_set(pod())
    assert not is_pod_level_resources_set(pod(resources=Resources()))
    assert not is_pod_level_resources_set(pod(resources=Resources(limits={"nvidia.com/gpu": 1})))
    assert is_pod_level_resources_set(pod(resources=Resources(limits={"memory": 1})))
    assert is_pod_level_resources_set(pod(resources=Resources(requests={"cpu": 1})))
    assert is_pod_level_resources_set(pod(resources=Resources(requests={"hugepages-1Gi": 1})))


# --- none scope ---------------------------------------------------------------------------------

def test_none_scope_allocates_only():
    log = []
    scope = NoneScope()
    scope.add_hint_provider(Provider("a", log, hints={"c1": {"cpu": [N(0)]}}))
    p = pod(app=("c1",), init=("i1",))
    assert scope.admit(p) == PodAdmitResult(True)
    assert log == [("a", "allocate", "i1"), ("a", "allocate", "c1")]
    assert scope.pod_topology_hints == {}
    assert scope.get_policy().name == "none"


def test_none_scope_allocate_error_rejects():
    scope = NoneScope()
    scope.add_hint_provider(Provider("a", [], fail_on="c1"))
    result = scope.admit(pod())
    assert (result.admit, result.reason) == (False, "UnexpectedAdmissionError")
