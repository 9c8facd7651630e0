"""Parity cases for the static policy taken from kubelet v1.37's policy_static_test.go tables that
test_policy_static.py did not already hold: the 288-CPU four-way-SMT machine, the options-insensitive
cases under full-pcpus-only, Start, RemoveContainer, init-container CPU reuse, allocateCPUs with a NUMA
mask, and an explicit reserved list. Machines and expected CPU sets are kubelet's; names are ours."""
import pytest

from kubeinputs.cpuset import CPUSet
from topologymanager import bitmask
from cpumanager.errors import CPUManagerError
from cpumanager.policy_static import SMTAlignmentError, new_policy_static
from kubeinputs.features import FeatureGates
from tests.cpumanager import topologies as t
from tests.cpumanager.helpers import FakeStore, make_pod, pod_of, state_with


def s(text):
    return CPUSet.parse(text)


def policy(topo, reserved=0, specific="", options=None):
    return new_policy_static(topo(), reserved, s(specific), FakeStore(), options or {},
                             FeatureGates.from_config({"CPUManagerPolicyAlphaOptions": True}))


QUAD_ALL = t.quad_socket_cpus()
QUAD_SOCKET_0 = t.quad_socket_cpus(0)
QUAD_SOCKET_1 = t.quad_socket_cpus(1)


def minus(a, b):
    return str(s(a).difference(s(b)))


FULL = {"full-pcpus-only": "true"}

# the cases kubelet runs both with no options and with full-pcpus-only: the answer must not change
# (name, topology, reserved, default pool, CPUs held by another container, request, limit, expected; "" = shared)
INSENSITIVE = [
    ("two CPUs take one whole core of a single socket", t.single_socket_ht, 1, "0,1,4,5", "2,3,6,7", "2", "2", "1,5"),
    ("six CPUs take the one free socket", t.dual_socket_ht, 1, "0-1,3-11", "2", "6", "6", "1,3,5,7,9,11"),
    ("six CPUs take three whole cores", t.dual_socket_ht, 1, "0,2-4,6-11", "1,5", "6", "6", "2-4,8-10"),
    ("four CPUs take the free socket, no SMT", t.dual_socket_no_ht, 1, "0,1,3-7", "", "4", "4", "4-7"),
    ("four CPUs take four cores, no SMT", t.dual_socket_no_ht, 1, "0,1,3,6,7", "4,5", "4", "4", "1,3,6,7"),
    ("eight CPUs take a socket and a core", t.dual_socket_ht, 1, "0-1,3-11", "2", "8", "8", "1,3-5,7,9-11"),
    ("a Burstable container stays shared", t.single_socket_ht, 1, "0-7", "", "1", "2", ""),
    ("a fractional Guaranteed container stays shared", t.single_socket_ht, 1, "0-7", "", "977m", "977m", ""),
    ("72 CPUs take the one whole socket of the four-way machine", t.quad_socket_four_way_ht, 0,
     minus(QUAD_ALL, "3-7,11"), "3-7,11", "72", "72", QUAD_SOCKET_0),
    ("12 CPUs take the three whole cores spread over three sockets", t.quad_socket_four_way_ht, 0,
     "1,2,9,11-13,23,25,35,38,48,51,53,54,61,113,173,233", minus(QUAD_ALL, "1,2,9,11-13,23,25,35,38,48,51,53,54,61,"
                                                                     "113,173,233"),
     "12", "12", "1,11,13,23,25,35,38,48,53,113,173,233"),
    ("76 CPUs take a whole socket and the one other whole core", t.quad_socket_four_way_ht, 0,
     str(s(QUAD_SOCKET_1).union(s("10,22,34,47,53,61,108,115,173,181,228,235")))
     , minus(QUAD_ALL, str(s(QUAD_SOCKET_1).union(s("10,22,34,47,53,61,108,115,173,181,228,235")))),
     "76", "76", str(s(QUAD_SOCKET_1).union(s("10,22,34,47")))),
]


def run_allocate(p, default, held, req, lim, expected):
    state = state_with(default, {"fakePod": {"fake-container-100": held}} if held else {})
    pod = make_pod("fakePod", "fake-container-5", req, lim)
    if expected and not expected[0].isdigit():
        with pytest.raises(CPUManagerError) as err:
            p.allocate(state, pod, pod.containers[0])
        assert str(err.value) == expected
        assert state.get_cpu_set("fakePod", "fake-container-5") is None
        return err.value
    p.allocate(state, pod, pod.containers[0])
    got = state.get_cpu_set("fakePod", "fake-container-5")
    if expected == "":
        assert got is None and state.get_default_cpu_set() == s(default)
        return None
    assert got == s(expected)
    assert got.intersection(state.get_default_cpu_set()).is_empty()
    return None


@pytest.mark.parametrize("options", [None, FULL], ids=["no options", "full-pcpus-only"])
@pytest.mark.parametrize("name,topo,reserved,default,held,req,lim,expected", INSENSITIVE,
                         ids=[c[0] for c in INSENSITIVE])
def test_allocate_whatever_the_options(options, name, topo, reserved, default, held, req, lim, expected):
    run_allocate(policy(topo, reserved, options=options), default, held, req, lim, expected)


QUAD_PARTIAL = "10,11,37,52,53,55,67"

DEFAULT_ONLY = [  # (name, topology, reserved, options, default pool, held, request, expected or error)
    ("only partial cores left: take their CPUs", t.quad_socket_four_way_ht, 0, None, "10,11,52,53,67",
     minus(QUAD_ALL, QUAD_PARTIAL), "5", "10-11,52-53,67"),
    ("76 CPUs when 7 are free", t.quad_socket_four_way_ht, 0, None, QUAD_PARTIAL, minus(QUAD_ALL, QUAD_PARTIAL), "76",
     "not enough cpus available to satisfy request: requested=76, available=7"),
    ("full-pcpus-only: 15 CPUs on four-thread cores", t.quad_socket_four_way_ht, 8, FULL, QUAD_ALL, "", "15",
     "SMT Alignment Error: requested 15 cpus not multiple cpus per core = 4"),
]


@pytest.mark.parametrize("name,topo,reserved,options,default,held,req,expected", DEFAULT_ONLY,
                         ids=[c[0] for c in DEFAULT_ONLY])
def test_allocate_quad_socket(name, topo, reserved, options, default, held, req, expected):
    p = policy(topo, reserved, options=options)
    err = run_allocate(p, default, held, req, req, expected)
    if options:
        assert isinstance(err, SMTAlignmentError)


START = [  # (name, reserved, specific, options, default, assignments, expected pool or error)
    ("a consistent state is kept", 0, "", None, "1-11", {"fakePod": {"0": "0"}}, "1-11"),
    ("an empty state gets every CPU", 1, "", None, "", {}, "0-11"),
    ("strict: the reserved CPU still in the pool is named", 2, "", {"strict-cpu-reservation": "true"}, "0-1", {},
     'some of strictly reserved cpus: "0" are present in defaultCpuSet: "0-1"'),
    ("an assignment overlapping the pool", 0, "", None, "2-11", {"fakePod": {"0": "0-2"}},
     'pod: fakePod, container: 0 cpuset: "0-2" overlaps with default cpuset "2-11"'),
    ("strict: an assignment overlapping the pool", 0, "", {"strict-cpu-reservation": "true"}, "2-11",
     {"fakePod": {"0": "0-2"}}, 'pod: fakePod, container: 0 cpuset: "0-2" overlaps with default cpuset "2-11"'),
    ("the state names a CPU past the machine", 0, "", None, "5-12", {"fakePod": {"0": "0-2", "1": "3-4"}},
     'current set of available CPUs "0-11" doesn\'t match with CPUs in state "0-12"'),
    ("the state lacks a CPU of the machine", 0, "", None, "5-10", {"fakePod": {"0": "0-2", "1": "3-4"}},
     'current set of available CPUs "0-11" doesn\'t match with CPUs in state "0-10"'),
    # kubelet's TestStaticPolicyStartWithResvList
    ("reserved list: an empty state gets every CPU", 2, "0,1", None, "", {}, "0-11"),
    ("reserved list, strict: an empty state gets all but the reserved", 2, "0,1", {"strict-cpu-reservation": "true"},
     "", {}, "2-11"),
    ("reserved list: reserved CPUs missing from the pool", 2, "0,1", None, "2-5", {},
     'not all reserved cpus: "0-1" are present in defaultCpuSet: "2-5"'),
    ("reserved list, strict: reserved CPUs in the pool", 2, "0,1", {"strict-cpu-reservation": "true"}, "0-5", {},
     'some of strictly reserved cpus: "0-1" are present in defaultCpuSet: "0-5"'),
]


@pytest.mark.parametrize("name,reserved,specific,options,default,assignments,expected", START, ids=[c[0] for c in START])
def test_start(name, reserved, specific, options, default, assignments, expected):
    p = policy(t.dual_socket_ht, reserved, specific, options)
    state = state_with(default, assignments)
    if not expected[0].isdigit():
        with pytest.raises(CPUManagerError) as err:
            p.start(state)
        assert str(err.value) == expected
        return
    p.start(state)
    assert state.get_default_cpu_set() == s(expected)


def test_a_reserved_list_must_match_the_reserved_count():
    with pytest.raises(CPUManagerError) as err:
        policy(t.dual_socket_ht, 1, "0,1")
    assert str(err.value) == "[cpumanager] unable to reserve the required amount of CPUs (size of 0-1 did not equal 1)"


REMOVE = [  # (name, assignments of fakePod, default, container removed, expected pool)
    ("one container's CPUs return", {"fake-container-1": "1-3"}, "4-7", "fake-container-1", "1-7"),
    ("returning to an empty pool", {"fake-container-1": "1-3", "fake-container-2": "4-7"}, "", "fake-container-1", "1-3"),
    ("one of two containers", {"fake-container-1": "1,3,5", "fake-container-2": "2,4"}, "6-7", "fake-container-1", "1,3,5-7"),
    ("an unknown container changes nothing", {"fake-container-1": "1,3,5"}, "2,4,6-7", "fake-container-2", "2,4,6-7"),
]


@pytest.mark.parametrize("name,assignments,default,container,expected", REMOVE, ids=[c[0] for c in REMOVE])
def test_remove_container(name, assignments, default, container, expected):
    p = policy(t.single_socket_ht)
    state = state_with(default, {"fakePod": assignments})
    p.remove_container(state, "fakePod", container)
    assert state.get_default_cpu_set() == s(expected)
    assert state.get_cpu_set("fakePod", container) is None


@pytest.mark.parametrize("sidecar,after_alloc,after_remove", [
    (False, "2-3,6-7", "1-3,5-7"),  # the app container reuses the finished init container's CPUs
    (True, "3,7", None),            # a sidecar keeps running: its CPUs are not reused
], ids=["a finished init container's CPUs are reused", "a sidecar's CPUs are not reused"])
def test_init_container_reuse(sidecar, after_alloc, after_remove):
    p = policy(t.single_socket_ht)
    state = state_with("0-7")
    pod = pod_of("pod", [("app-container-0", "2")], init=[("init-container-0", "4", sidecar)])
    for container in [*pod.init_containers, *pod.containers]:
        p.allocate(state, pod, container)
    assert state.get_default_cpu_set() == s(after_alloc)
    if after_remove is not None:
        p.remove_container(state, "pod", "init-container-0")
        assert state.get_default_cpu_set() == s(after_remove)
        assert state.get_cpu_set("pod", "init-container-0") is None


@pytest.mark.parametrize("want,numa,expected", [
    (2, None, "0,6"), (2, [0], "0,6"), (2, [1], "1,7"), (8, [0], "0-2,4,6-8,10"), (8, [1], "0-1,3,5-7,9,11"),
], ids=["two CPUs, no mask", "two CPUs on NUMA node 0", "two CPUs on NUMA node 1",
        "eight CPUs from NUMA node 0 then node 1", "eight CPUs from NUMA node 1 then node 0"])
def test_allocate_cpus_with_a_numa_mask(want, numa, expected):
    p = policy(t.dual_socket_ht)
    state = state_with("0-11")
    p.start(state)
    mask = None if numa is None else bitmask.new_bitmask(*numa)
    assert p.allocate_cpus(state, want, mask, CPUSet()).cpus == s(expected)


RESERVED_LIST = [  # (name, reserved count, reserved list, default, held, request, expected or error)
    ("more CPUs than left outside the reserved one", 1, "0", "0-7", "", "8",
     "not enough cpus available to satisfy request: requested=8, available=7"),
    ("one CPU: the sibling of a reserved CPU", 2, "0,1", "0-7", "", "1", "4"),
    ("two CPUs: the siblings of the reserved CPUs", 2, "0,1", "0,1,4,5", "2,3,6,7", "2", "4,5"),
]


@pytest.mark.parametrize("name,reserved,specific,default,held,req,expected", RESERVED_LIST,
                         ids=[c[0] for c in RESERVED_LIST])
def test_allocate_with_a_reserved_list(name, reserved, specific, default, held, req, expected):
    run_allocate(policy(t.single_socket_ht, reserved, specific), default, held, req, req, expected)


@pytest.mark.parametrize("err,expected", [
    (SMTAlignmentError(15, 4), "SMT Alignment Error: requested 15 cpus not multiple cpus per core = 4"),
    (SMTAlignmentError(4, 2, 0), "SMT Alignment Error: requested 4 cpus not multiple cpus per core = 2"),
    (SMTAlignmentError(4, 2, 0, True), "SMT Alignment Error: not enough free physical CPUs: available physical "
                                       "CPUs = 0, requested CPUs = 4, CPUs per core = 2"),
], ids=["not a multiple of the core", "no physical CPUs but not flagged", "no physical CPUs, flagged"])
def test_smt_alignment_error_text(err, expected):
    assert str(err) == expected


# kubelet's TestCPUManagerAddWithInitContainers: each init container, then each app container, allocated in turn
# on the single-socket machine with nothing reserved; "" = the container stays in the shared pool.
INIT_CONTAINERS = [  # (name, init containers' CPUs, app containers' CPUs, expected init sets, expected app sets)
    ("a fractional init container stays shared", ["100m"], ["4"], [""], ["0,1,4,5"]),
    ("init and app containers of equal size share the CPUs", ["4"], ["4"], ["0,1,4,5"], ["0,1,4,5"]),
    ("a larger init container: the app takes part of it", ["6"], ["4"], ["0-2,4-6"], ["0,1,4,5"]),
    ("a smaller init container: the app takes it and more", ["2"], ["4"], ["0,4"], ["0,1,4,5"]),
    ("two equal init containers and an equal app", ["2", "2"], ["2"], ["0,4", "0,4"], ["0,4"]),
    ("two init containers larger than the app", ["4", "4"], ["2"], ["0,1,4,5", "0,1,4,5"], ["0,4"]),
    ("two init containers smaller than the app", ["2", "2"], ["4"], ["0,4", "0,4"], ["0,1,4,5"]),
    ("growing init containers, then a larger app", ["2", "4"], ["6"], ["0,4", "0,1,4,5"], ["0-2,4-6"]),
    ("two app containers split the init containers' CPUs", ["2", "4"], ["2", "2"], ["0,4", "0,1,4,5"],
     ["0,4", "1,5"]),
]


@pytest.mark.parametrize("name,init,app,exp_init,exp_app", INIT_CONTAINERS, ids=[c[0] for c in INIT_CONTAINERS])
def test_allocate_with_init_containers(name, init, app, exp_init, exp_app):
    p = policy(t.single_socket_ht)
    state = state_with("0-7")
    pod = pod_of("pod", [(f"app-{i}", c) for i, c in enumerate(app)],
                 init=[(f"init-{i}", c, False) for i, c in enumerate(init)])
    held = CPUSet()
    for container, expected in zip([*pod.init_containers, *pod.containers], [*exp_init, *exp_app]):
        p.allocate(state, pod, container)
        got = state.get_cpu_set("pod", container.name)
        assert (got is None) if expected == "" else (got == s(expected)), container.name
        held = held.union(got or CPUSet())
    assert state.get_default_cpu_set() == s("0-7").difference(held)
