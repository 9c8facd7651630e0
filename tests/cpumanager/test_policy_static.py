"""The static policy: Allocate, RemoveContainer, validateState, reserved CPUs, pod hints and KEP-5526
(tables shaped like kubelet's policy_static_test.go, on the same machine layouts)."""
import pytest

from kubeinputs.cpuset import CPUSet
from kubeinputs.features import FeatureGates
from topologymanager.hint import TopologyHint
from cpumanager.errors import CPUManagerError
from cpumanager.policy_static import EmptyPodSharedPoolError, SMTAlignmentError, new_policy_static
from cpumanager.state.state_mem import MemoryState
from tests.cpumanager import topologies as t
from tests.cpumanager.helpers import FakeStore, make_pod, pod_of, state_with


def s(text):
    return CPUSet.parse(text)


def policy(topo, reserved=1, specific="", options=None, hint=None, gates=None, store=None):
    return new_policy_static(topo(), reserved, s(specific), store or FakeStore(hint), options or {},
                             FeatureGates.from_config(gates or {}))


FULL = {"full-pcpus-only": "true"}

ALLOCATE = [  # (name, topology, reserved, specific, options, default, assignments, request, limit, expected or error)
    ("one core, single socket HT", t.single_socket_ht, 1, "", None, "0,1,4,5", {"c100": "2,3,6,7"}, "2000m", "2000m", "1,5"),
    ("one core, single socket HT, full-pcpus-only", t.single_socket_ht, 1, "", FULL, "0,1,4,5", {"c100": "2,3,6,7"},
     "2000m", "2000m", "1,5"),
    ("one socket, dual socket HT", t.dual_socket_ht, 1, "", None, "0-1,3-11", {"c100": "2"}, "6000m", "6000m",
     "1,3,5,7,9,11"),
    ("three cores, dual socket HT", t.dual_socket_ht, 1, "", None, "0,2-4,6-11", {"c100": "1,5"}, "6000m", "6000m",
     "2-4,8-10"),
    ("one socket, dual socket no HT", t.dual_socket_no_ht, 1, "", None, "0,1,3-7", {"c100": ""}, "4000m", "4000m", "4-7"),
    ("four cores, dual socket no HT", t.dual_socket_no_ht, 1, "", None, "0,1,3,6,7", {"c100": "4,5"}, "4000m",
     "4000m", "1,3,6,7"),
    ("one socket and one core", t.dual_socket_ht, 1, "", None, "0-1,3-11", {"c100": "2"}, "8000m", "8000m",
     "1,3-5,7,9-11"),
    ("not Guaranteed: shared pool", t.single_socket_ht, 1, "", None, "0-7", {}, "1000m", "2000m", ""),
    ("non-integral CPU: shared pool", t.single_socket_ht, 1, "", None, "0-7", {}, "977m", "977m", ""),
    ("one CPU: the sibling of the reserved CPU", t.single_socket_ht, 1, "", None, "0-7", {}, "1000m", "1000m", "4"),
    ("more than free", t.single_socket_ht, 1, "", None, "0-7", {}, "8000m", "8000m",
     "not enough cpus available to satisfy request: requested=8, available=7"),
    ("more than free, dual socket", t.dual_socket_ht, 1, "", None, "0,4-11", {"c100": "1-3"}, "10000m", "10000m",
     "not enough cpus available to satisfy request: requested=10, available=8"),
    ("more than free, single socket", t.single_socket_ht, 1, "", None, "0,7", {"c100": "1-6"}, "2000m", "2000m",
     "not enough cpus available to satisfy request: requested=2, available=1"),
    ("full-pcpus-only: one CPU is not a core", t.single_socket_ht, 1, "", FULL, "0-7", {}, "1000m", "1000m",
     "SMT Alignment Error: requested 1 cpus not multiple cpus per core = 2"),
    ("full-pcpus-only: reserved siblings are not free whole cores", t.dual_socket_ht, 2, "1,6", FULL,
     "0,2-5,7-11", {}, "10000m", "10000m",
     "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 8, requested CPUs = 10, "
     "CPUs per core = 2"),
    ("full-pcpus-only: automatic reservation takes a whole core", t.dual_socket_ht, 2, "", FULL, "1-5,7-11", {},
     "10000m", "10000m", "1-5,7-11"),
    ("full-pcpus-only: a whole reserved core", t.dual_socket_ht, 2, "0,6", FULL, "1-5,7-11", {}, "10000m", "10000m",
     "1-5,7-11"),
]


@pytest.mark.parametrize("name,topo,reserved,specific,options,default,assignments,req,lim,expected", ALLOCATE,
                         ids=[c[0] for c in ALLOCATE])
def test_allocate(name, topo, reserved, specific, options, default, assignments, req, lim, expected):
    p = policy(topo, reserved, specific, options)
    state = state_with(default, {"fakePod": assignments} if assignments else {})
    pod = make_pod("fakePod", "fake-container-3", req, lim)
    if expected and not expected[0].isdigit():
        with pytest.raises(CPUManagerError) as err:
            p.allocate(state, pod, pod.containers[0])
        assert str(err.value) == expected
        assert state.get_cpu_set("fakePod", "fake-container-3") is None
        assert str(state.get_default_cpu_set()) == str(s(default))
        return
    p.allocate(state, pod, pod.containers[0])
    got = state.get_cpu_set("fakePod", "fake-container-3")
    if expected == "":
        assert got is None and str(state.get_default_cpu_set()) == str(s(default))
    else:
        assert got == s(expected)
        assert state.get_default_cpu_set() == s(default).difference(s(expected))


def test_smt_alignment_error_carries_kubelets_reason():
    err = SMTAlignmentError(3, 2)
    assert err.error_type == "SMTAlignmentError" and err.type() == "SMTAlignmentError"


def test_allocate_keeps_an_existing_assignment():
    p = policy(t.single_socket_ht)
    state = state_with("0,1,4,5", {"fakePod": {"fake-container-3": "2,3,6,7"}})
    pod = make_pod("fakePod", "fake-container-3", "4000m", "4000m")
    p.allocate(state, pod, pod.containers[0])
    assert str(state.get_cpu_set("fakePod", "fake-container-3")) == "2-3,6-7"


@pytest.mark.parametrize("align,expected", [("true", "2,11"), ("false", "2,21")])
def test_align_by_socket_widens_the_hint_to_its_sockets(align, expected):
    p = policy(t.dual_socket_multi_numa_ht, options={"align-by-socket": align},
               hint=TopologyHint.of([0, 2], True), gates={"CPUManagerPolicyAlphaOptions": True})
    state = state_with("2,11,21,22")
    pod = make_pod("fakePod", "fake-container-2", "2000m", "2000m")
    p.allocate(state, pod, pod.containers[0])
    assert state.get_cpu_set("fakePod", "fake-container-2") == s(expected)


def test_the_hint_decides_the_numa_node():
    p = policy(t.dual_socket_ht, hint=TopologyHint.of([1], True))
    state = state_with("0-11")
    pod = make_pod("p", "c", "2", "2")
    p.allocate(state, pod, pod.containers[0])
    assert str(state.get_cpu_set("p", "c")) == "1,7"


def test_init_container_cpus_are_reused_and_sidecars_are_not():
    p = policy(t.single_socket_ht)
    state = state_with("0-7")
    pod = pod_of("p", [("app", "2")], init=[("init", "2", False), ("side", "2", True)])
    for c in [*pod.init_containers, *pod.containers]:
        p.allocate(state, pod, c)
    init, side, app = (state.get_cpu_set("p", n) for n in ("init", "side", "app"))
    # the sidecar starts after the finished init container and takes its CPUs; being restartable, its CPUs
    # leave the reusable set, so the app container gets CPUs of its own
    assert side == init == s("1,5") and app == s("2,6")
    assert state.get_default_cpu_set() == s("0-7").difference(side).difference(app)
    # removing the init container keeps the CPUs the sidecar still holds
    p.remove_container(state, "p", "init")
    assert state.get_default_cpu_set() == s("0-7").difference(app).difference(side)
    p.remove_container(state, "p", "app")
    p.remove_container(state, "p", "app")  # idempotent
    p.remove_container(state, "p", "side")
    assert state.get_default_cpu_set() == s("0-7") and state.get_cpu_assignments() == {}


@pytest.mark.parametrize("name,options,specific,default,assignments,message", [
    ("empty default with assignments", None, "", "", {"p": {"c": "1"}}, "default cpuset cannot be empty"),
    ("an assignment overlaps the shared pool", None, "", "0-11", {"fakePod": {"0": "0-2"}},
     'pod: fakePod, container: 0 cpuset: "0-2" overlaps with default cpuset "0-11"'),
    ("reserved CPUs missing from the pool", None, "0,6", "0-1", {}, 'not all reserved cpus: "0,6" are present in defaultCpuSet: "0-1"'),
    ("strict: reserved CPUs in the pool", {"strict-cpu-reservation": "true"}, "0,6", "0-11", {},
     'some of strictly reserved cpus: "0,6" are present in defaultCpuSet: "0-11"'),
    ("pool and assignments do not cover the machine", None, "", "0-7", {}, 'current set of available CPUs "0-11" '
     'doesn\'t match with CPUs in state "0-7"'),
    ("a CPU the machine lacks", None, "", "0-12", {}, 'current set of available CPUs "0-11" doesn\'t match with CPUs '
     'in state "0-12"'),
])
def test_validate_state(name, options, specific, default, assignments, message):
    p = policy(t.dual_socket_ht, 2 if specific else 1, specific, options)
    with pytest.raises(CPUManagerError) as err:
        p.start(state_with(default, assignments))
    assert str(err.value) == message


@pytest.mark.parametrize("options,expected", [(None, "0-11"), ({"strict-cpu-reservation": "true"}, "1-5,7-11")])
def test_start_initialises_an_empty_state(options, expected):
    state = MemoryState()
    p = policy(t.dual_socket_ht, 2, "", options)
    p.start(state)
    assert str(state.get_default_cpu_set()) == expected and str(p.reserved_cpus) == "0,6"
    assert str(p.get_allocatable_cpus(state)) == "1-5,7-11"


@pytest.mark.parametrize("reserved,specific,message", [
    (13, "", "[cpumanager] unable to reserve the required amount of CPUs (size of  did not equal 13)"),
    (2, "1", "[cpumanager] unable to reserve the required amount of CPUs (size of 1 did not equal 2)"),
])
def test_reserved_cpu_errors(reserved, specific, message):
    with pytest.raises(CPUManagerError) as err:
        policy(t.dual_socket_ht, reserved, specific)
    assert str(err.value) == message


def test_reserved_cpus_come_from_the_lowest_cores():
    assert str(policy(t.dual_socket_multi_numa_ht, 3).reserved_cpus) == "0-1,40"
    p = policy(t.dual_socket_ht, 1, "7")
    assert str(p.reserved_cpus) == "7" and str(p.reserved_physical_cpus) == "1,7"


def test_container_hints_regenerate_from_held_cpus():
    p = policy(t.dual_socket_ht)
    state = state_with("0-11")
    state.set_cpu_set("p", "c", s("1,3"))
    pod = make_pod("p", "c", "2", "2")
    assert p.get_topology_hints(state, pod, pod.containers[0]) == {"cpu": [TopologyHint.of([1], True),
                                                                           TopologyHint.of([0, 1], False)]}
    other = make_pod("p", "c", "3", "3")
    assert p.get_topology_hints(state, other, other.containers[0]) == {"cpu": []}
    shared = make_pod("q", "c", "500m", "500m")
    assert p.get_topology_hints(state, shared, shared.containers[0]) is None


def test_pod_hints_use_the_pod_total_and_held_cpus():
    p = policy(t.dual_socket_ht)
    state = state_with("0-11")
    pod = pod_of("p", [("a", "2"), ("b", "3")], init=[("i", "4", False)])
    assert p.get_pod_topology_hints(state, pod) == {"cpu": [TopologyHint.of([0], True), TopologyHint.of([1], True),
                                                            TopologyHint.of([0, 1], False)]}
    state.set_cpu_set("p", "a", s("1,3"))
    state.set_default_cpu_set(s("0,2,4-11"))
    hints = p.get_pod_topology_hints(state, pod)["cpu"]
    assert hints == [TopologyHint.of([1], True), TopologyHint.of([0, 1], False)]


def test_pod_level_resources_are_skipped_unless_both_gates_are_on():
    pod = pod_of("p", [("a", "2")], pod_resources={"limits": {"cpu": "4", "memory": "2G"}})
    state = state_with("0-11")
    p = policy(t.dual_socket_ht)
    assert p.get_topology_hints(state, pod, pod.containers[0]) is None
    assert p.get_pod_topology_hints(state, pod) is None
    p.allocate(state, pod, pod.containers[0])
    assert state.get_cpu_assignments() == {}


def test_pod_level_allocation_kep_5526():
    gates = {"PodLevelResourceManagers": True}
    spec = {"metadata": {"name": "p", "uid": "p"}, "spec": {
        "resources": {"requests": {"cpu": "4", "memory": "4G"}, "limits": {"cpu": "4", "memory": "4G"}},
        "initContainers": [{"name": "side", "restartPolicy": "Always",
                            "resources": {"limits": {"cpu": "1", "memory": "1G"}}}],
        "containers": [{"name": "excl", "resources": {"limits": {"cpu": "2", "memory": "1G"}}},
                       {"name": "shared", "resources": {"requests": {"cpu": "100m", "memory": "100M"}}}]}}
    from kubeinputs.pod import parse_pod
    pod = parse_pod(spec)
    state = state_with("0-11")
    p = policy(t.dual_socket_ht, gates=gates, hint=TopologyHint.of([1], True))
    assert p.get_pod_topology_hints(state, pod)["cpu"][0] == TopologyHint.of([0], True)
    p.allocate_pod(state, pod)
    pod_cpus = state.get_pod_cpu_set("p")
    assert pod_cpus.size() == 4 and pod_cpus.is_subset_of(s("1,3,5,7,9,11"))
    side, excl, shared = (state.get_cpu_set("p", n) for n in ("side", "excl", "shared"))
    assert side.size() == 1 and excl.size() == 2 and shared == pod_cpus.difference(side).difference(excl)
    assert state.get_default_cpu_set() == s("0-11").difference(pod_cpus)
    for name in ("side", "excl"):
        p.remove_container(state, "p", name)
        assert state.get_pod_cpu_set("p") == pod_cpus  # kept until the last container goes
    p.remove_container(state, "p", "shared")
    assert state.get_pod_cpu_set("p") is None and state.get_default_cpu_set() == s("0-11")


def test_pod_level_budget_with_an_empty_shared_pool_is_refused():
    from kubeinputs.pod import parse_pod
    pod = parse_pod({"metadata": {"name": "p", "uid": "p"}, "spec": {
        "resources": {"requests": {"cpu": "2", "memory": "2G"}, "limits": {"cpu": "2", "memory": "2G"}},
        "containers": [{"name": "excl", "resources": {"limits": {"cpu": "2", "memory": "1G"}}},
                       {"name": "shared", "resources": {"requests": {"memory": "100M"}}}]}})  # no cpu: shared
    p = policy(t.dual_socket_ht, gates={"PodLevelResourceManagers": True})
    state = state_with("0-11")
    assert p.get_pod_topology_hints(state, pod) == {"cpu": []}
    with pytest.raises(EmptyPodSharedPoolError) as err:
        p.allocate_pod(state, pod)
    assert err.value.error_type == "EmptyPodSharedPoolError"
    assert str(err.value) == ("pod rejected, sum of exclusive container cpu requests equals pod budget, leaving no cpus "
                              "for shared containers")
