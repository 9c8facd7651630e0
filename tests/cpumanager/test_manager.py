"""The CPU manager (cpu_manager.go): NewManager's errors, reserved CPUs from the kubelet configuration,
the container lifecycle, stale state, restart from the checkpoint (cpu_manager_test.go's shapes)."""
from __future__ import annotations

import pytest

from kubeinputs.cpuset import CPUSet
from kubeinputs.features import FeatureGates
from kubeinputs.kubelet_config import node_allocatable_reservation, parse_kubelet_config, \
    validate_kubelet_configuration
from kubeinputs.quantity import parse_quantity
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import HintProvider
from topologymanager.observer import Observer
from cpumanager.errors import CPUManagerError
from cpumanager.manager import new_manager
from cpumanager.policy_static import SMTAlignmentError
from cpumanager.reserved_cpus import get_reserved_cpus
from cpumanager.state.state_checkpoint import CPUStateError
from tests.cpumanager.helpers import FakeStore, cadvisor_core, cadvisor_machine, dual_socket_ht_machine, pod_of


def s(text):
    return CPUSet.parse(text)


def cpu(text):
    return {"cpu": parse_quantity(text)}


def manager(policy="static", options=None, reserved="1", specific="", state_dir=None, gates=None, store=None,
            machine=None):
    return new_manager(policy, options or {}, machine or dual_socket_ht_machine(), s(specific),
                       cpu(reserved) if reserved is not None else {}, state_dir, store or FakeStore(),
                       FeatureGates.from_config(gates or {}))


# --- NewManager --------------------------------------------------------------------------------------------

NEW_MANAGER_ERRORS = [
    ("unknown policy", dict(policy="Static"), 'unknown policy: "Static"'),
    ("none with options", dict(policy="none", options={"full-pcpus-only": "true"}),
     "new none policy error: None policy: received unsupported options=map[full-pcpus-only:true]"),
    ("static without a cpu reservation", dict(reserved=None),
     "[cpumanager] unable to determine reserved CPU resources for static policy"),
    ("static with a zero cpu reservation", dict(reserved="0"),
     "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero"),
    ("unknown option", dict(options={"bogus": "true"}),
     'new static policy error: unknown CPU Manager Policy option: "bogus"'),
    ("alpha option with the alpha gate off", dict(options={"align-by-socket": "true"}),
     'new static policy error: CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" '
     "provided"),
    ("bad option value", dict(options={"full-pcpus-only": "maybe"}),
     'new static policy error: bad value for option "full-pcpus-only": strconv.ParseBool: parsing "maybe": '
     "invalid syntax"),
    ("no CPUs in the machine", dict(machine=cadvisor_machine({0: []}, 0, 1)), "could not detect number of cpus"),
]


@pytest.mark.parametrize("name,kwargs,message", NEW_MANAGER_ERRORS, ids=[c[0] for c in NEW_MANAGER_ERRORS])
def test_new_manager_errors(name, kwargs, message):
    with pytest.raises(CPUManagerError) as err:
        manager(**kwargs)
    assert str(err.value) == message


@pytest.mark.parametrize("reserved,expected_count", [("1", 1), ("1500m", 2), ("100m", 1), ("4", 4)])
def test_reserved_count_is_the_ceiling(reserved, expected_count):
    m = manager(reserved=reserved)
    m.start(lambda: [])
    assert m.reserved_cpus().size() == expected_count
    assert m.get_allocatable_cpus() == m.get_all_cpus().difference(m.reserved_cpus())


def test_the_none_policy_starts_on_a_machine_without_cpus():
    """A deliberate difference: kubelet discovers the CPUs for every policy and refuses a machine reporting none,
    which no real node does; a hand-written machine without CPUs (enough for the memory manager, as scenario files
    before format 1.2 have them) starts with the none policy, which reads nothing of the topology."""
    m = manager(policy="none", machine=cadvisor_machine({0: []}, 0, 1))
    m.start(lambda: [])
    assert m.get_all_cpus().is_empty() and m.get_default_cpu_set().is_empty()


def test_the_manager_is_a_hint_provider():
    assert isinstance(manager(), HintProvider)


# --- reserved CPUs from the kubelet configuration ------------------------------------------------------------

def test_reserved_system_cpus_override_the_cpu_reservation():
    machine = dual_socket_ht_machine()
    cfg = parse_kubelet_config({"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,6",
                                "systemReserved": {"cpu": "500m"}, "kubeReserved": {"cpu": "3"}})
    assert validate_kubelet_configuration(cfg) == []
    specific = get_reserved_cpus(machine, cfg.reserved_system_cpus)
    reservation = node_allocatable_reservation(cfg, machine)
    assert str(reservation["cpu"]) == "2"
    m = new_manager(cfg.cpu_manager_policy, cfg.cpu_manager_policy_options, machine, specific, reservation, None,
                    FakeStore(), FeatureGates())
    m.start(lambda: [])
    assert m.reserved_cpus() == s("0,6") and m.get_default_cpu_set() == s("0-11")


def test_system_and_kube_reserved_add_up():
    machine = dual_socket_ht_machine()
    cfg = parse_kubelet_config({"cpuManagerPolicy": "static", "systemReserved": {"cpu": "500m"},
                                "kubeReserved": {"cpu": "1200m"}})
    m = new_manager("static", {}, machine, CPUSet(), node_allocatable_reservation(cfg, machine), None, FakeStore(),
                    FeatureGates())
    m.start(lambda: [])
    assert m.reserved_cpus() == s("0,6")  # ceil(1.7) = 2: a whole core, taken as takeByTopology would


@pytest.mark.parametrize("text,message", [
    ("0-20", "reserved-cpus: 0-20 is not a subset of online-cpus: 0-11"),
    ("3-1", 'unable to parse reserved-cpus list: invalid range "3-1" (3 > 1)'),
])
def test_get_reserved_cpus_errors(text, message):
    with pytest.raises(CPUManagerError) as err:
        get_reserved_cpus(dual_socket_ht_machine(), text)
    assert str(err.value) == message


def test_reserved_system_cpus_parse_error_in_validation():
    cfg = parse_kubelet_config({"reservedSystemCPUs": "a-b"})
    assert validate_kubelet_configuration(cfg) == [
        'invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) a-b, error: strconv.Atoi: '
        'parsing "a": invalid syntax']


def test_cpu_manager_config_fields():
    cfg = parse_kubelet_config({"cpuManagerPolicy": "static", "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}})
    assert (cfg.cpu_manager_policy, cfg.cpu_manager_policy_options) == ("static", {"full-pcpus-only": "true"})
    assert parse_kubelet_config({}).cpu_manager_policy == "none"
    assert parse_kubelet_config({"cpuManagerPolicy": ""}).cpu_manager_policy == "none"


# --- lifecycle ------------------------------------------------------------------------------------------------

def test_lifecycle_allocate_add_remove(tmp_path):
    pods = []
    m = manager(state_dir=str(tmp_path), store=FakeStore(TopologyHint.of([1], True)))
    m.start(lambda: pods)
    pod = pod_of("p1", [("app", "4"), ("side", "500m")])
    pods.append(pod)
    app, side = pod.containers
    assert m.get_topology_hints(pod, side) is None  # not an integral request: shared pool
    hints = m.get_topology_hints(pod, app)["cpu"]
    assert hints[0] == TopologyHint.of([0], True) and TopologyHint.of([0, 1], False) in hints
    m.allocate(pod, app)
    m.allocate(pod, side)
    assert m.get_cpus("p1", "app") == s("1,3,7,9")  # NUMA node 1, whole cores
    assert m.get_cpus("p1", "side") is None and m.get_exclusive_cpus("p1", "side") == CPUSet()
    assert m.get_cpu_affinity("p1", "side") == m.get_default_cpu_set() == s("0,2,4-6,8,10-11")
    m.add_container(pod, app, "id-app")
    m.remove_container("id-unknown")  # not an error
    m.remove_container("id-app")
    m.remove_container("id-app")  # idempotent
    assert m.get_cpus("p1", "app") is None and m.get_default_cpu_set() == s("0-11")


def test_allocate_errors_reject():
    m = manager(options={"full-pcpus-only": "true"})
    m.start(lambda: [])
    with pytest.raises(SMTAlignmentError) as err:
        m.allocate(pod_of("p", [("c", "3")]), pod_of("p", [("c", "3")]).containers[0])
    assert str(err.value) == "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2"
    big = pod_of("q", [("c", "12")])
    with pytest.raises(CPUManagerError) as err:
        m.allocate(big, big.containers[0])
    assert str(err.value) == ("SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 10, "
                              "requested CPUs = 12, CPUs per core = 2")


def test_stale_state_is_removed_before_hints_and_allocation():
    pods = []
    m = manager()
    m.start(lambda: pods)
    gone = pod_of("gone", [("c", "2")])
    pods.append(gone)
    m.allocate(gone, gone.containers[0])
    m.add_container(gone, gone.containers[0], "id-gone")
    assert m.get_default_cpu_set().size() == 10
    pods.clear()
    fresh = pod_of("fresh", [("c", "10")])
    pods.append(fresh)
    m.allocate(fresh, fresh.containers[0])  # fits only once the gone pod's CPUs are back
    assert m.get_cpus("gone", "c") is None and m.get_cpus("fresh", "c").size() == 10
    assert list(m.container_map.items()) == []


def test_restart_from_the_checkpoint_changes_nothing(tmp_path):
    pods = [pod_of("p1", [("a", "2"), ("b", "4")]), pod_of("p2", [("c", "1")])]
    m = manager(state_dir=str(tmp_path))
    m.start(lambda: pods)
    for pod in pods:
        for c in pod.containers:
            m.allocate(pod, c)
    before = (m.get_default_cpu_set(), m.state().get_cpu_assignments())
    again = manager(state_dir=str(tmp_path))
    again.start(lambda: pods)
    assert (again.get_default_cpu_set(), again.state().get_cpu_assignments()) == before
    # and the next allocation is the one the first manager would have made
    extra = pod_of("p3", [("d", "2")])
    m.allocate(extra, extra.containers[0])
    again.allocate(extra, extra.containers[0])
    assert again.get_cpus("p3", "d") == m.get_cpus("p3", "d")


def test_restart_with_another_policy_fails(tmp_path):
    manager(state_dir=str(tmp_path)).start(lambda: [])
    with pytest.raises(CPUStateError) as err:
        manager(policy="none", state_dir=str(tmp_path)).start(lambda: [])
    assert str(err.value) == (
        'could not restore state from checkpoint: configured policy "none" differs from state checkpoint policy '
        f'"static", please drain this node and delete the CPU manager checkpoint file "{tmp_path}/cpu_manager_state"'
        " before restarting Kubelet")


def test_restart_on_a_smaller_machine_fails_validation(tmp_path):
    manager(state_dir=str(tmp_path)).start(lambda: [])
    small = cadvisor_machine({0: [cadvisor_core(c, [c, c + 4], 0) for c in range(4)]}, 8, 1)
    with pytest.raises(CPUManagerError) as err:
        manager(state_dir=str(tmp_path), machine=small).start(lambda: [])
    assert str(err.value) == 'current set of available CPUs "0-7" doesn\'t match with CPUs in state "0-11"'


def test_none_policy_keeps_everything_shared(tmp_path):
    m = manager(policy="none", reserved=None, state_dir=str(tmp_path))
    m.start(lambda: [])
    pod = pod_of("p", [("c", "2")])
    assert m.get_topology_hints(pod, pod.containers[0]) is None
    m.allocate(pod, pod.containers[0])
    assert m.get_cpus("p", "c") is None and m.get_allocatable_cpus() == CPUSet()
    assert m.get_default_cpu_set() == CPUSet() and m.get_all_cpus() == s("0-11")
    assert (tmp_path / "cpu_manager_state").exists()


def test_using_the_manager_before_start_is_an_error():
    with pytest.raises(CPUManagerError, match="not started"):
        manager().get_default_cpu_set()


# --- with the topology manager (what the wiring phase will do on the node) -----------------------------------

def _with_topology_manager(machine, policy, options=None, cpu_options=None):
    from topologymanager.manager import new_manager as new_topology_manager

    tm = new_topology_manager(machine.topology, policy, "container", options or {})
    pods = []
    cm = new_manager("static", cpu_options or {}, machine, CPUSet(), cpu("1"), None, tm, FeatureGates())
    cm.start(lambda: pods)
    tm.add_hint_provider(cm)
    return tm, cm, pods


def test_admission_through_the_topology_manager_pins_the_merged_numa_node():
    tm, cm, pods = _with_topology_manager(dual_socket_ht_machine(), "single-numa-node")
    first = pod_of("a", [("c", "4")])
    pods.append(first)
    assert tm.admit(first).admit
    assert tm.get_affinity("a", "c") == TopologyHint.of([0], True)
    assert cm.get_cpus("a", "c") == s("2,4,8,10")  # NUMA node 0 without the reserved core's CPU 0
    big = pod_of("b", [("c", "7")])  # more than any one NUMA node has free (node 1: 6)
    pods.append(big)
    refused = tm.admit(big)
    assert not refused.admit and refused.reason == "TopologyAffinityError"
    assert cm.get_cpus("b", "c") is None


def test_admission_on_64_numa_nodes_with_cpus_uses_the_family():
    machine = cadvisor_machine({n: [cadvisor_core(0, [n], n // 32)] for n in range(64)}, 64, 2, memory=1 << 30)
    tm, cm, pods = _with_topology_manager(machine, "best-effort", {"max-allowable-numa-nodes": "64"})
    pod = pod_of("p", [("c", "3")])
    pods.append(pod)
    assert tm.admit(pod).admit
    affinity = tm.get_affinity("p", "c")
    assert affinity.preferred and bin(affinity.numa_node_affinity).count("1") == 3
    assert cm.get_cpus("p", "c").size() == 3


class Heard(Observer):
    """An observer of the CPU manager, keeping what it is told."""

    def __init__(self):
        self.events = []

    def hints_given(self, provider, pod, container, hints):
        self.events.append(("hints", provider, container.name))

    def skipped(self, provider, pod, container, why):
        self.events.append(("skipped", container.name, why))

    def pinning_requested(self, provider, pod, container):
        self.events.append(("pin", container.name))

    def pinning_failed(self, provider, pod, container, error):
        self.events.append(("pin failed", container.name, type(error).__name__))

    def alignment(self, scope, boundary, aligned):
        self.events.append(("aligned", scope, boundary, aligned))

    def allocation_done(self, provider, pod, container, error):
        self.events.append(("done", provider, container.name, error is None))


def test_the_observer_hears_pinning_where_kubelet_counts_it():
    heard = Heard()
    m = new_manager("static", {"full-pcpus-only": "true"}, dual_socket_ht_machine(), CPUSet(), cpu("1"), None,
                    FakeStore(), FeatureGates.from_config({}), observer=heard)
    m.start(lambda: [])
    good, odd = pod_of("p", [("c", "2")]), pod_of("q", [("c", "3")])
    m.get_topology_hints(good, good.containers[0])
    m.allocate(good, good.containers[0])
    with pytest.raises(SMTAlignmentError):
        m.allocate(odd, odd.containers[0])
    shared = pod_of("r", [("c", "500m")])
    m.allocate(shared, shared.containers[0])
    assert heard.events == [
        ("hints", "cpu", "c"),
        ("pin", "c"), ("aligned", "container", "uncore_cache", True), ("aligned", "container", "physical_cpu", True),
        ("done", "cpu", "c", True),
        ("pin", "c"), ("pin failed", "c", "SMTAlignmentError"), ("aligned", "container", "physical_cpu", False),
        ("done", "cpu", "c", False),
        ("skipped", "c", "container belongs in the shared pool"), ("done", "cpu", "c", True),
    ]
