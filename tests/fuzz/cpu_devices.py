"""The CPU and device managers' inputs under fuzz (format 1.2): `cpu_manager_state` and
`kubelet_internal_checkpoint` bytes, the node's device declarations, and scenarios of a node with the
static CPU manager, its options and device plugins.

Each reader takes one generated value; each strategy yields `(value, must_refuse)` as in readers.py.
`must_refuse` marks a declaration the reader must refuse (a device ID written twice, a NUMA node the
machine lacks, a negative or fractional device request).
"""
from __future__ import annotations

import copy
from typing import Any, Callable

from hypothesis import strategies as st

from tests.fuzz.readers import read_scenario as read_scenario_file
from tests.fuzz.strategies import _dump, mutated

SEED_CPU_CHECKPOINT = ('{"policyName":"static","defaultCpuSet":"0,3-7","checksum":0,"data":"{\\"policyName\\":\\"static\\",'
                       '\\"defaultCpuSet\\":\\"0,3-7\\",\\"entries\\":{\\"p1\\":{\\"c1\\":\\"1-2\\"}}}","dataChecksum":1}')
SEED_DEVICE_CHECKPOINT = ('{"Data":{"PodDeviceEntries":[{"PodUID":"p1","ContainerName":"c","ResourceName":"nvidia.com/gpu",'
                          '"DeviceIDs":{"0":["g0"]},"AllocResp":"CgA="}],"RegisteredDevices":{"nvidia.com/gpu":["g0","g1"]}},'
                          '"Checksum":1}')
SEED_DEVICES = {"nvidia.com/gpu": [{"id": "g0", "numaNodes": [0]}, {"id": "g1", "numaNodes": [1], "healthy": False}],
                "example.com/vf": [{"id": "vf0"}]}
# 2 NUMA nodes of 2 cores x 2 threads: node 0 holds CPUs 0,1,4,5, node 1 CPUs 2,3,6,7
MACHINE = {"num_cores": 8, "memory_capacity": 8 << 30, "topology": [
    {"node_id": n, "memory": 4 << 30, "distances": [10, 20] if n == 0 else [20, 10],
     "cores": [{"core_id": c, "thread_ids": [c, c + 4], "socket_id": 0} for c in (2 * n, 2 * n + 1)]}
    for n in range(2)]}
SEED_SCENARIO = {
    "name": "fuzz 1.2", "machine": MACHINE,
    "kubelet": {"cpuManagerPolicy": "static", "systemReserved": {"cpu": "1"}, "topologyManagerPolicy": "best-effort",
                "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}},
    "devices": SEED_DEVICES,
    "steps": [{"admit": {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"}}}]}}},
        {"remove": {"pod": "p"}}, {"restart": {}}, {"check": {}}],
}
_CHECKPOINT_TARGETS = ['"0,3-7"', '"1-2"', '"static"', '"g0"', '"0"', '"CgA="', "1}", '"p1"']
_REPLACEMENTS = ["null", "1" + "0" * 2000, "-1", "[]", "{}", '"\\ud800"', '"0-99999999999"', '"7-3"', '"1,,2"',
                 '"\u00b2"', "[" * 300 + "]" * 300, '"!!"', "18446744073709551616"]


@st.composite
def _checkpoint(draw: Any, seed: str) -> bytes:
    """The seed checkpoint with a few values replaced, sometimes with bytes spliced in."""
    text = seed
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        target = draw(st.sampled_from(_CHECKPOINT_TARGETS))
        text = text.replace(target, draw(st.one_of(st.sampled_from(_REPLACEMENTS), st.text(max_size=6))), 1)
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        cut = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:cut] + draw(st.binary(max_size=6)) + data[cut:]
    return data


_CPUSETS = ["0,3-7", "1-2", "", "0-7", "0-99999999999", "7-3", "1,,2", "\u00b2", "-1", "1-2,1-2", "8-9", "0 ,1", "a"]
_IDS = ["g0", "g1", "g9", "", "\ud800", "g0\n", "x" * 300, "vf0"]


@st.composite
def checksummed_cpu_checkpoints(draw: Any) -> bytes:
    """A v4 checkpoint with the right checksum over odd content: the restore checks past the checksum."""
    from cpumanager.state.checkpoint import CheckpointData, CheckpointV4

    entries = {draw(st.sampled_from(["p1", "p2", ""])): {draw(st.sampled_from(["c1", "c2"])): draw(st.sampled_from(_CPUSETS))}
               for _ in range(draw(st.integers(min_value=0, max_value=3)))}
    data = CheckpointData(draw(st.sampled_from(["static", "none", "Static", ""])), draw(st.sampled_from(_CPUSETS)),
                          entries, {})
    return CheckpointV4(checkpoint_data=data).marshal_checkpoint()


@st.composite
def checksummed_device_checkpoints(draw: Any) -> bytes:
    """A device checkpoint with the right checksum over odd content: the checks against the node."""
    from devicemanager.checkpoint import DeviceCheckpointData, encode_checkpoint
    from devicemanager.pod_devices import CheckpointEntry

    entries = [CheckpointEntry(draw(st.sampled_from(["p1", "p2"])), "c",
                               draw(st.sampled_from(["nvidia.com/gpu", "example.com/vf", "other.com/x"])),
                               {draw(st.sampled_from([-1, 0, 1, 2, 63])): [draw(st.sampled_from(_IDS))]},
                               draw(st.sampled_from([b"", b"\x0a\x00", b"\xff\xff", None])))
               for _ in range(draw(st.integers(min_value=0, max_value=3)))]
    registered = {"nvidia.com/gpu": [draw(st.sampled_from(_IDS))]}
    return encode_checkpoint(DeviceCheckpointData(entries or None, registered))


def read_cpu_checkpoint(blob: bytes) -> Any:
    """cpu_manager_state bytes through kubelet's loader, the restore checks and the CPUs of a machine."""
    from cpumanager.policy_static import check_state_cpus
    from cpumanager.state.checkpoint import read_checkpoint
    from cpumanager.state.state_checkpoint import parse_loaded
    from kubeinputs.cpuset import CPUSet

    default, assignments = parse_loaded(read_checkpoint(blob), "static")
    if not default.is_empty():
        check_state_cpus(default, assignments, (), CPUSet.parse("0-7"))
    return default


def read_device_checkpoint(blob: bytes) -> Any:
    """kubelet_internal_checkpoint bytes through kubelet's loader and the checks against the seed devices."""
    from devicemanager.checkpoint import check_against_node, read_checkpoint
    from kubeinputs.devices import parse_devices

    data = read_checkpoint(blob)
    check_against_node(data, parse_devices(SEED_DEVICES, numa_nodes=[0, 1]), [0, 1])
    return data


def read_devices(doc: Any) -> Any:
    """A `devices` declaration for a two-node machine."""
    from kubeinputs.devices import parse_devices

    return parse_devices(doc, numa_nodes=[0, 1])


def read_scenario(doc: Any) -> Any:
    """A 1.2 scenario (CPU manager static, device plugins) through load_scenario and run_scenario."""
    return read_scenario_file((_dump(doc).encode("utf-8", "surrogatepass"), ".json"))


@st.composite
def refused_devices(draw: Any) -> Any:
    """A declaration breaking one rule: an ID written twice, a NUMA node the machine lacks."""
    doc = copy.deepcopy(SEED_DEVICES)
    if draw(st.booleans()):
        doc["nvidia.com/gpu"][1]["id"] = "g0"
    else:
        doc["nvidia.com/gpu"][0]["numaNodes"] = [draw(st.integers(min_value=2, max_value=63))]
    return doc


@st.composite
def refused_scenarios(draw: Any) -> Any:
    """A 1.2 scenario whose pod asks for a negative or fractional number of devices (the API server refuses)."""
    doc = copy.deepcopy(SEED_SCENARIO)
    limits = doc["steps"][0]["admit"]["spec"]["containers"][0]["resources"]["limits"]
    limits["nvidia.com/gpu"] = draw(st.sampled_from(["-1", "500m", "1.5", "0.001", "1001m", "-0.5"]))
    return doc


def cpu_devices() -> dict[str, tuple[Callable[[Any], Any], Any]]:
    """name -> (reader, strategy) of this module's surfaces."""
    return {
        "cpu-checkpoint": (read_cpu_checkpoint, st.tuples(st.one_of(
            _checkpoint(SEED_CPU_CHECKPOINT), checksummed_cpu_checkpoints(), checksummed_cpu_checkpoints(),
            st.binary(max_size=200)), st.just(False))),
        "device-checkpoint": (read_device_checkpoint, st.tuples(st.one_of(
            _checkpoint(SEED_DEVICE_CHECKPOINT), checksummed_device_checkpoints(), checksummed_device_checkpoints(),
            st.binary(max_size=200)), st.just(False))),
        "devices": (read_devices, st.one_of(st.tuples(mutated(SEED_DEVICES), st.just(False)),
                                            st.tuples(refused_devices(), st.just(True)))),
        "scenario-1.2": (read_scenario, st.one_of(st.tuples(mutated(SEED_SCENARIO, 3), st.just(False)),
                                                  st.tuples(refused_scenarios(), st.just(True)))),
    }
