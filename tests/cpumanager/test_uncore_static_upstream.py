"""Parity cases from kubelet v1.37's TestStaticPolicyAddWithUncoreAlignment: full-pcpus-only with
prefer-align-cpus-by-uncorecache, every container of a pod allocated in turn, judged by the uncore caches the pod
ends up on (or its exact CPUs). The machines are rebuilt in topologies.py from what the cases state about them."""
import pytest

from kubeinputs.cpuset import CPUSet
from kubeinputs.features import FeatureGates
from cpumanager.policy_static import new_policy_static
from tests.cpumanager import topologies as t
from tests.cpumanager.helpers import FakeStore, pod_of, state_with

OPTIONS = {"full-pcpus-only": "true", "prefer-align-cpus-by-uncorecache": "true"}


def s(text):
    return CPUSet.parse(text)


def caches(topo, *ids):
    return topo.details().cpus_in_uncore_caches(*ids)


EPYC_RESERVED = "0,1,96,97,192,193,288,289"  # 4 CPUs of cache 0, 4 of cache 12

# (name, machine, reserved, CPUs taken before (or cache ids when a tuple), container CPUs, expected caches or CPUs)
CASES = [
    ("one container filling a cache", t.epyc_dual_socket_smt_uncore, EPYC_RESERVED, (0, 12), ["16"], "1"),
    ("app then sidecar fit one cache", t.epyc_dual_socket_smt_uncore, EPYC_RESERVED, (0, 12), ["12", "2"], "1"),
    ("sidecar then app fit one cache", t.epyc_dual_socket_smt_uncore, EPYC_RESERVED, (0, 12), ["2", "12"], "1"),
    ("app and three sidecars fit one cache", t.epyc_dual_socket_smt_uncore, EPYC_RESERVED, (0, 12),
     ["10", "2", "2", "2"], "1"),
    ("app and sidecar spill over two caches", t.epyc_dual_socket_smt_uncore, EPYC_RESERVED, "", ["12", "2"], "0-1"),
    ("a cache's worth on small caches", t.small_single_socket_smt_uncore, "0,1,64,65", "", ["8"], "1"),
    ("more than a cache, one cache taken: two caches", t.small_single_socket_smt_uncore, "0,1,64,65", (1,), ["12"],
     "0,2"),
    ("three caches' worth among taken caches", t.small_single_socket_no_smt_uncore_of_4, "0-3", (2, 3, 5), ["12"],
     "1,4,6"),
    ("two containers in the partly reserved cache", t.small_dual_socket_no_smt_uncore, "0,1,32,33", (1,),
     ["4", "2"], "0"),
    ("two containers over two caches", t.small_dual_socket_no_smt_uncore, "0,1,32,33", (1,), ["4", "4"], "0,2"),
    ("two containers fit the partly used caches", t.large_single_socket_smt_uncore, "0,1,128,129", "8,9,136,137",
     ["12", "12"], "0-1"),
    ("two containers do not fit the partly used caches", t.large_single_socket_smt_uncore, "0,1,128,129",
     "8,9,136,137", ["14", "14"], "2-3"),
    ("a NUMA node's worth takes the whole next NUMA node", t.dual_socket_nps2_no_smt_uncore, "0-3", "", ["48"],
     "6-11"),
    ("a cache's worth on an ARM split-cache part", t.large_single_socket_no_smt_uncore, "0-3", "", ["8"], "1"),
    ("one monolithic cache, fragmented: packed as without the option", t.single_socket_no_smt_monolithic_uncore,
     "0,1", "6-9,12-15,18-19", ["12"], "cpus:2-5,10-11,16-17,20-23"),
    ("every cache partly used: best effort over two", t.small_single_socket_no_smt_uncore, "0-3",
     "8-11,16-19,24-27", ["8"], "0-1"),
]


PREFER = {"prefer-align-cpus-by-uncorecache": "true"}
STRICT = {**OPTIONS, "strict-cpu-reservation": "true"}
SMALL_SMT_CPUS = "0-127"  # kubelet's two monolithic-cache cases start from the 128-CPU machine's pool

# (name, machine, reserved, options, shared pool before (None: every CPU), container CPUs, expected CPUs)
EXACT = [
    ("six CPUs on a monolithic cache: packed whole cores", t.dual_socket_snc_smt_monolithic_uncore, "0,1,120,121",
     OPTIONS, None, "6", "2-4,122-124"),
    ("five CPUs, no SMT: the next free cache", t.small_single_socket_no_smt_uncore, "0-3", OPTIONS, None, "5", "8-12"),
    ("three CPUs, SMT: the rest of the reserved CPUs' cache", t.small_single_socket_smt_uncore, "0,1,64,65",
     PREFER, None, "3", "2,3,66"),
    ("three CPUs where five are left in the cache", t.small_single_socket_smt_uncore, "0,1,64", PREFER, None, "3",
     "2,65,66"),
    ("four CPUs skip a cache with an odd number left", t.small_single_socket_smt_uncore, "0,1,64", PREFER, None,
     "4", "4,5,68,69"),
    ("eleven CPUs: a whole cache and part of the reserved one", t.small_single_socket_smt_uncore, "0,1,64", PREFER,
     None, "11", "2,4-7,65-66,68-71"),
    ("five CPUs on a monolithic SMT cache", t.dual_socket_snc_smt_monolithic_uncore, "0,1,120", PREFER,
     SMALL_SMT_CPUS, "5", "2,3,121-123"),
    ("four CPUs on a monolithic SMT cache: whole cores", t.dual_socket_snc_smt_monolithic_uncore, "0,1,120",
     PREFER, SMALL_SMT_CPUS, "4", "2,3,122,123"),
    ("strict reservation with split caches", t.small_single_socket_smt_uncore, "0,1,64,65", STRICT, None, "2",
     "2,66"),
    ("strict reservation with a monolithic cache", t.dual_socket_snc_smt_monolithic_uncore, "0,1,120,121", STRICT,
     None, "4", "2,3,122,123"),
]


@pytest.mark.parametrize("name,machine,reserved,options,pool,want,expected", EXACT, ids=[c[0] for c in EXACT])
def test_uncore_alignment_exact(name, machine, reserved, options, pool, want, expected):
    topo = machine()
    p = new_policy_static(topo, s(reserved).size(), s(reserved), FakeStore(), options, FeatureGates())
    default = topo.details().cpus() if pool is None else s(pool)
    state = state_with(str(default.difference(s(reserved))))
    pod = pod_of("uncore-pod", [("app-container-0", want)])
    p.allocate(state, pod, pod.containers[0])
    assert state.get_cpu_set("uncore-pod", "app-container-0") == s(expected)


@pytest.mark.parametrize("name,machine,reserved,taken,requests,expected", CASES, ids=[c[0] for c in CASES])
def test_uncore_alignment(name, machine, reserved, taken, requests, expected):
    topo = machine()
    taken_cpus = caches(topo, *taken) if isinstance(taken, tuple) else s(taken)
    p = new_policy_static(topo, s(reserved).size(), s(reserved), FakeStore(), OPTIONS, FeatureGates())
    state = state_with(str(topo.details().cpus().difference(taken_cpus).difference(s(reserved))))
    pod = pod_of("uncore-pod", [(f"app-container-{i}", r) for i, r in enumerate(requests)])
    for container in pod.containers:
        p.allocate(state, pod, container)
    held = [state.get_cpu_set("uncore-pod", c.name) for c in pod.containers]
    assert all(h is not None for h in held)
    if expected.startswith("cpus:"):
        assert held[0] == s(expected[5:])
        return
    got = sorted({topo.cpu_details[cpu].uncore_cache_id for h in held for cpu in h})
    assert got == list(s(expected))
