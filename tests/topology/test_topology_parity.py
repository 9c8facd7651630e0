"""Parity checks of the topology manager's admission results against kubelet v1.36+/v1.37
(pkg/kubelet/cm/admission/errors.go GetPodAdmitResult, the KEP-5526 pod-level paths of
scope_pod.go / scope_container.go). Pods are small duck-typed stand-ins."""
import pytest

from topologymanager.admission import (
    CPU_MANAGER_POD_LEVEL_RESOURCES_ERROR,
    ERROR_REASON_UNEXPECTED,
    ERROR_TOPOLOGY_AFFINITY,
    MEMORY_MANAGER_POD_LEVEL_RESOURCES_ERROR,
    POD_LEVEL_RESOURCES_INCOMPATIBLE,
    AggregateError,
    PodLevelTopologyAffinityError,
    get_pod_admit_result,
)
from topologymanager.bitmask import new_bitmask
from kubeinputs.features import POD_LEVEL_RESOURCE_MANAGERS_GATE, FeatureGates
from topologymanager.hint import TopologyHint
from topologymanager.policy_restricted import RestrictedPolicy
from topologymanager.scope_container import ContainerScope
from topologymanager.scope_pod import PodScope

from tests.helpers.topology import TWO, Container, Pod, Resources


class Typed(Exception):
    """An admission error declaring its reason (Go: Error() + Type())."""

    def __init__(self, message, reason):
        super().__init__(message)
        self.error_type = reason


def warn_cpu(msg="cpu policy ignores pod-level resources"):
    return Typed(msg, CPU_MANAGER_POD_LEVEL_RESOURCES_ERROR)


def warn_mem(msg="memory policy ignores pod-level resources"):
    return Typed(msg, MEMORY_MANAGER_POD_LEVEL_RESOURCES_ERROR)


# --- GetPodAdmitResult (admission/errors.go, v1.36+) ------------------------------------------

def test_nil_error_admits():
    r = get_pod_admit_result(None)
    assert (r.admit, r.reason, r.message) == (True, "", "")


@pytest.mark.parametrize(
    "err",
    [warn_mem(), warn_cpu(), AggregateError([warn_cpu(), warn_mem()]), AggregateError([warn_mem()])],
    ids=["memory", "cpu", "aggregate-both", "aggregate-one"],
)
def test_only_pod_level_warnings_admit_with_reason(err):
    r = get_pod_admit_result(err)
    assert r.admit is True
    assert r.reason == POD_LEVEL_RESOURCES_INCOMPATIBLE == "PodLevelResourcesIncompatible"
    assert r.message == ""
    assert all(admission_type(w) in (CPU_MANAGER_POD_LEVEL_RESOURCES_ERROR, MEMORY_MANAGER_POD_LEVEL_RESOURCES_ERROR)
               for w in r.errors)
    assert len(r.errors) == (len(err.errors) if isinstance(err, AggregateError) else 1)


def admission_type(e):
    return getattr(e, "error_type", None)


def test_wrapped_pod_level_warning_found_through_cause_chain():
    try:
        try:
            raise warn_mem()
        except Typed as inner:
            raise RuntimeError("allocate pod") from inner
    except RuntimeError as outer:
        err = outer
    r = get_pod_admit_result(err)
    assert (r.admit, r.reason) == (True, POD_LEVEL_RESOURCES_INCOMPATIBLE)


def test_first_other_error_decides_and_warnings_are_dropped():
    err = AggregateError([warn_cpu(), Typed("SMT Alignment Error: x", "SMTAlignmentError"), ValueError("boom")])
    r = get_pod_admit_result(err)
    assert (r.admit, r.reason, r.message) == (False, "SMTAlignmentError", "SMT Alignment Error: x")


def test_first_other_error_untyped_is_unexpected_with_its_own_text():
    err = AggregateError([warn_mem(), ValueError("boom"), Typed("t", "X")])
    r = get_pod_admit_result(err)
    assert (r.admit, r.reason) == (False, ERROR_REASON_UNEXPECTED)
    assert r.message == "Allocate failed due to boom, which is unexpected"


def test_aggregate_text_is_kubernetes_aggregate_form():
    assert str(AggregateError([ValueError("a")])) == "a"
    assert str(AggregateError([ValueError("a"), ValueError("b")])) == "[a, b]"


def test_plain_error_unchanged():
    r = get_pod_admit_result(ValueError("no memory"))
    assert (r.admit, r.reason, r.message) == (False, ERROR_REASON_UNEXPECTED,
                                              "Allocate failed due to no memory, which is unexpected")


# --- PodLevelTopologyAffinityError ------------------------------------------------------------

def test_pod_level_topology_affinity_error_text_and_reason():
    assert str(PodLevelTopologyAffinityError("x y")) == "Pod Scope x y"
    assert str(PodLevelTopologyAffinityError()) == "Pod Scope Resources cannot be allocated with Topology locality"
    r = get_pod_admit_result(PodLevelTopologyAffinityError("x"))
    assert (r.admit, r.reason, r.message) == (False, ERROR_TOPOLOGY_AFFINITY, "Pod Scope x")


# --- scopes with pod-level resources ---------------------------------------------------------

class Provider:
    """Always the same non-preferred {0,1} hint; records calls."""

    def __init__(self):
        self.calls = []

    def get_topology_hints(self, pod, container):
        self.calls.append(("hints", container.name))
        return {"cpu": [TopologyHint(new_bitmask(0, 1), False)]}

    def get_pod_topology_hints(self, pod):
        self.calls.append(("pod_hints",))
        return {"cpu": [TopologyHint(new_bitmask(0, 1), False)]}

    def allocate(self, pod, container):
        self.calls.append(("allocate", container.name))

    def allocate_pod(self, pod):
        self.calls.append(("allocate_pod",))


GATE_ON = FeatureGates({POD_LEVEL_RESOURCE_MANAGERS_GATE: True})
POD_LEVEL = Resources(requests={"cpu": "2"}, limits={"cpu": "2"})


@pytest.mark.parametrize(
    "scope_cls, gates, resources, message",
    [
        (PodScope, GATE_ON, POD_LEVEL,
         "Pod Scope pod with pod-level resources failed admission under pod-scope topology manager"),
        (PodScope, FeatureGates(), POD_LEVEL, "Resources cannot be allocated with Topology locality"),
        (PodScope, GATE_ON, None, "Resources cannot be allocated with Topology locality"),
        # Container scope keeps the plain rejection: no released upstream copy has a
        # pod-level message there (only a third-party port does).
        (ContainerScope, GATE_ON, POD_LEVEL, "Resources cannot be allocated with Topology locality"),
        (ContainerScope, FeatureGates(), POD_LEVEL, "Resources cannot be allocated with Topology locality"),
        (ContainerScope, GATE_ON, Resources(requests={"example.com/gpu": "1"}),
         "Resources cannot be allocated with Topology locality"),
    ],
)
def test_rejection_message_by_scope_and_pod_level_path(scope_cls, gates, resources, message):
    scope = scope_cls(RestrictedPolicy(TWO), gates)
    provider = Provider()
    scope.add_hint_provider(provider)
    p = Pod("u", [Container("c1"), Container("c2")], resources=resources)
    r = scope.admit(p)
    assert (r.admit, r.reason, r.message) == (False, ERROR_TOPOLOGY_AFFINITY, message)
    assert scope.pod_topology_hints == {}
    assert not any(c[0].startswith("allocate") for c in provider.calls)
