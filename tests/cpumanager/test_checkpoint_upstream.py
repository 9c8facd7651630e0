"""Parity cases from kubelet v1.37's state_checkpoint_test.go not in test_checkpoint.py: the v2 restore errors for an
unparsable shared pool or assignment, storing and reading back, the set/get/delete helpers, and clearing.
Contents and checksums are kubelet's; names are ours. A v2 file is migrated to v4 before it is parsed, so the
shared-pool error has v4's wording ("default CPU set"; the pre-v4 loaders wrote "default cpu set")."""
import pytest

from kubeinputs.cpuset import CPUSet
from cpumanager.state.state_checkpoint import CPUStateError, new_checkpoint_state

NAME = "cpumanager_checkpoint_test"


def s(text):
    return CPUSet.parse(text)


@pytest.mark.parametrize("content,error", [
    ('{"policyName": "none", "defaultCPUSet": "1.3", "entries": {}, "checksum": 3021697696}',
     'could not parse default CPU set "1.3": strconv.Atoi: parsing "1.3": invalid syntax'),
    ('{"policyName": "none", "defaultCPUSet": "1-3", "entries": {"pod": {"container1": "4-6", "container2": "asd"}}, '
     '"checksum": 962272150}',
     'could not parse cpuset "asd" for container "container2" in pod "pod": strconv.Atoi: parsing "asd": invalid syntax'),
], ids=["v2: unparsable shared pool", "v2: unparsable assignment"])
def test_restore_unparsable_v2(tmp_path, content, error):
    (tmp_path / NAME).write_text(content)
    with pytest.raises(CPUStateError) as err:
        new_checkpoint_state(str(tmp_path), NAME, "none")
    assert str(err.value).startswith("could not restore state from checkpoint: " + error)


@pytest.mark.parametrize("default,assignments", [
    ("1-3", {}),
    ("", {"pod": {"container1": "1,5,8"}}),
], ids=["the shared pool", "an assignment"])
def test_store_and_read_back(tmp_path, default, assignments):
    first = new_checkpoint_state(str(tmp_path), NAME, "none")
    first.set_default_cpu_set(s(default))
    first.set_cpu_assignments({p: {c: s(v) for c, v in cs.items()} for p, cs in assignments.items()})
    second = new_checkpoint_state(str(tmp_path), NAME, "none")
    assert second.get_default_cpu_set() == s(default)
    assert second.get_cpu_assignments() == {p: {c: s(v) for c, v in cs.items()} for p, cs in assignments.items()}


@pytest.mark.parametrize("assignments", [
    {"c1": "0-1"}, {"c1": "0-1", "c2": "2-5"}, {"c1": ""},
], ids=["one container", "two containers", "a container without CPUs"])
def test_set_get_delete(tmp_path, assignments):
    state = new_checkpoint_state(str(tmp_path), NAME, "none")
    state.set_default_cpu_set(s("0-8"))
    for container, cpus in assignments.items():
        state.set_cpu_set("pod", container, s(cpus))
        assert state.get_cpu_set("pod", container) == s(cpus)
        state.delete("pod", container)
        assert state.get_cpu_set("pod", container) is None
    assert new_checkpoint_state(str(tmp_path), NAME, "none").get_cpu_assignments() == {}


def test_clear_leaves_nothing(tmp_path):
    state = new_checkpoint_state(str(tmp_path), NAME, "none")
    state.set_default_cpu_set(s("1,5,10"))
    state.set_cpu_assignments({"pod": {"container1": s("1,4")}})
    state.clear_state()
    assert state.get_default_cpu_set().is_empty() and state.get_cpu_set("pod", "container1") is None
