"""The fake memory manager (fake_memory_manager.go) and the package's exported names."""
from __future__ import annotations

import inspect

import pytest

from memorymanager import fake_memory_manager, manager, policy, policy_none, policy_static
from memorymanager.fake_memory_manager import FakeManager, new_fake_manager
from memorymanager.manager import Manager
from memorymanager.policy_none import NonePolicy
from state.state import StateReader
from topologymanager.hint_provider import HintProvider

from tests.helpers.memory import REQ_GUARANTEED, get_pod

POD = get_pod("pod", "app", REQ_GUARANTEED)
APP = POD.containers[0]

# (call, arguments, expected answer): every call answers what kubelet's fake answers
CALLS = [
    ("start", (lambda: [POD],), None),
    ("start", (lambda: [POD], {"id": ("pod", "app")}), None),
    ("get_topology_hints", (POD, APP), {}),
    ("get_pod_topology_hints", (POD,), {}),
    ("allocate", (POD, APP), None),
    ("allocate_pod", (POD,), None),
    ("add_container", (POD, APP, "id"), None),
    ("remove_container", ("id",), None),
    ("remove_container", ("unknown",), None),
    ("get_memory_numa_nodes", (POD, APP), None),
    ("get_allocatable_memory", (), []),
    ("get_memory", ("pod", "app"), []),
    ("get_pod_memory", ("pod",), []),
    ("policy_name", (), "None"),
]


@pytest.mark.parametrize("call, args, expected", CALLS, ids=[f"{c[0]}{len(c[1])}" for c in CALLS])
def test_every_call_is_a_no_op_or_an_empty_answer(call, args, expected) -> None:
    fake = new_fake_manager()
    assert getattr(fake, call)(*args) == expected
    view = fake.state()
    assert isinstance(view, StateReader)
    assert view.get_machine_state() == {} and view.get_memory_assignments() == {}
    assert view.get_pod_memory_assignments() == {} and view.get_memory_blocks("pod", "app") is None


def test_calls_before_start_and_in_any_order_change_nothing() -> None:
    fake = new_fake_manager()
    for call, args, expected in reversed(CALLS):
        assert getattr(fake, call)(*args) == expected
    assert fake.get_topology_hints(POD, APP) == {} and fake.get_memory("pod", "app") == []


def test_the_fake_answers_fresh_values_and_uses_the_none_policy() -> None:
    fake = new_fake_manager()
    fake.get_topology_hints(POD, APP)["memory"] = []
    fake.get_allocatable_memory().append(None)
    assert fake.get_topology_hints(POD, APP) == {} and fake.get_allocatable_memory() == []
    assert isinstance(fake.policy, NonePolicy)
    assert isinstance(fake, HintProvider)


def test_the_fake_has_the_managers_public_calls() -> None:
    def public(cls) -> set[str]:
        return {name for name, _ in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}

    # remove_stale_state is kubelet's unexported removeStaleState, which the fake does not have
    assert public(Manager) - {"remove_stale_state"} == public(FakeManager)


@pytest.mark.parametrize(
    "module, name",
    [
        (manager, "ActivePodsFunc"),
        (manager, "Manager"),
        (manager, "new_manager"),
        (policy, "Policy"),
        (policy_none, "new_policy_none"),
        (policy_static, "new_policy_static"),
        (fake_memory_manager, "new_fake_manager"),
    ],
    ids=["ActivePodsFunc", "Manager", "NewManager", "Policy", "NewPolicyNone", "NewPolicyStatic", "NewFakeManager"],
)
def test_every_exported_kubelet_name_has_its_counterpart(module, name) -> None:
    assert hasattr(module, name)


def test_new_policy_none_is_the_none_policy() -> None:
    none = policy_none.new_policy_none()
    assert isinstance(none, NonePolicy) and none.name() == "None"
