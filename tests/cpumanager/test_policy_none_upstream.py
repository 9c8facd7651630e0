"""Parity cases from kubelet's policy_none_test.go: the none policy's name, its no-op Allocate and
RemoveContainer, no allocatable CPUs, and its refusal of options."""
import pytest

from kubeinputs.cpuset import CPUSet
from cpumanager.errors import CPUManagerError
from cpumanager.policy_none import new_policy_none
from tests.cpumanager.helpers import make_pod, state_with


def test_name():
    assert new_policy_none().name() == "none"


def test_allocate_and_remove_change_nothing():
    p = new_policy_none()
    state = state_with("1-7")
    pod = make_pod("fakePod", "fake-container", "1000m", "1000m")
    p.allocate(state, pod, pod.containers[0])
    p.remove_container(state, "fakePod", "fake-container")
    assert state.get_default_cpu_set() == CPUSet.parse("1-7") and state.get_cpu_assignments() == {}


def test_no_allocatable_cpus():
    assert new_policy_none().get_allocatable_cpus(state_with("0-7")).is_empty()


@pytest.mark.parametrize("options,fails", [(None, False), ({}, False), ({"foo": "bar"}, True)],
                         ids=["no options", "empty options", "any option"])
def test_options(options, fails):
    if fails:
        with pytest.raises(CPUManagerError):
            new_policy_none(options)
    else:
        new_policy_none(options)
