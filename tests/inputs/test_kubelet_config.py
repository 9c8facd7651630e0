"""KubeletConfiguration fields: parsing, defaults, overrides, validation texts, node allocatable reservation."""
import textwrap

import pytest

from kubeinputs.errors import InputError
from kubeinputs.kubelet_config import (DEFAULT_EVICTION_HARD, KubeletConfig, KubeletConfigError, MemoryReservation,
                                          hard_eviction_thresholds, load_kubelet_config_file, node_allocatable_reservation,
                                          parse_kubelet_config, validate_kubelet_configuration)
from kubeinputs.machine import parse_machine_info
from kubeinputs.quantity import BINARY_SI, DECIMAL_SI, parse_quantity

GI = 1 << 30
MACHINE = parse_machine_info({"num_cores": 8, "memory_capacity": 16 * GI, "topology": [
    {"node_id": 0, "memory": 8 * GI, "hugepages": [{"page_size": 1048576, "num_pages": 2}, {"page_size": 2048, "num_pages": 512}]},
    {"node_id": 1, "memory": 8 * GI, "hugepages": [{"page_size": 1048576, "num_pages": 0}, {"page_size": 2048, "num_pages": 512}]},
]})


def test_defaults():
    cfg = parse_kubelet_config({})
    assert cfg == KubeletConfig()
    assert cfg.memory_manager_policy == "None"
    assert cfg.topology_manager_policy == "none" and cfg.topology_manager_scope == "container"
    assert cfg.eviction_hard == {"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
                                 "imagefs.available": "15%", "imagefs.inodesFree": "5%"}
    assert cfg.reserved_memory == [] and cfg.system_reserved == {} and cfg.feature_gates == {}


def test_all_fields():
    cfg = parse_kubelet_config({
        "memoryManagerPolicy": "Static",
        "memoryManagerPolicyOptions": {"memory-drift-tolerance": "128Mi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi", "hugepages-2Mi": "2Mi"}},
                           {"numaNode": 1, "limits": {"memory": 1073741824}}],
        "systemReserved": {"memory": "500Mi", "cpu": "500m"},
        "kubeReserved": {"memory": "400Mi"},
        "evictionHard": {"memory.available": "200Mi"},
        "topologyManagerPolicy": "single-numa-node",
        "topologyManagerScope": "pod",
        "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"},
        "featureGates": {"TopologyManagerPolicyAlphaOptions": True},
    })
    assert cfg.memory_manager_policy == "Static"
    assert cfg.memory_manager_policy_options == {"memory-drift-tolerance": "128Mi"}
    assert cfg.reserved_memory == [MemoryReservation(0, {"memory": parse_quantity("1Gi"), "hugepages-2Mi": parse_quantity("2Mi")}),
                                   MemoryReservation(1, {"memory": parse_quantity("1Gi")})]
    assert {k: str(v) for k, v in cfg.system_reserved.items()} == {"memory": "500Mi", "cpu": "500m"}
    assert cfg.eviction_hard == {"memory.available": "200Mi"}  # a user map replaces the default one
    assert (cfg.topology_manager_policy, cfg.topology_manager_scope) == ("single-numa-node", "pod")
    assert cfg.topology_manager_policy_options == {"prefer-closest-numa-nodes": "true"}
    assert cfg.feature_gates == {"TopologyManagerPolicyAlphaOptions": True}


def test_empty_strings_take_kubelet_defaults():
    cfg = parse_kubelet_config({"memoryManagerPolicy": "", "topologyManagerPolicy": "", "topologyManagerScope": ""})
    assert (cfg.memory_manager_policy, cfg.topology_manager_policy, cfg.topology_manager_scope) == ("None", "none", "container")


def test_eviction_hard_empty_map_means_no_thresholds_and_merge_restores_defaults():
    assert parse_kubelet_config({"evictionHard": {}}).eviction_hard == {}
    assert parse_kubelet_config({"evictionHard": None}).eviction_hard == DEFAULT_EVICTION_HARD
    merged = parse_kubelet_config({"evictionHard": {"memory.available": "1Gi"}, "mergeDefaultEvictionSettings": True})
    assert merged.eviction_hard == {**DEFAULT_EVICTION_HARD, "memory.available": "1Gi"}
    unmerged = parse_kubelet_config({"mergeDefaultEvictionSettings": False}, base=merged)
    assert unmerged.eviction_hard == {"memory.available": "1Gi"}
    built = KubeletConfig(eviction_hard={"memory.available": "300Mi"})
    assert parse_kubelet_config({"topologyManagerPolicy": "restricted"}, base=built).eviction_hard == {"memory.available": "300Mi"}
    replaced = parse_kubelet_config({"evictionHard": {"memory.available": "2Gi"}}, base=merged)
    assert replaced.eviction_hard == {**DEFAULT_EVICTION_HARD, "memory.available": "2Gi"}


def test_override_keeps_the_base():
    base = parse_kubelet_config({"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    new = parse_kubelet_config({"topologyManagerPolicy": "restricted"}, "restart.kubelet", base=base)
    assert new.memory_manager_policy == "Static" and len(new.reserved_memory) == 1
    assert new.topology_manager_policy == "restricted"
    assert base.topology_manager_policy == "none"  # the base is not changed
    new.reserved_memory.append(MemoryReservation(1, {}))
    assert len(base.reserved_memory) == 1


@pytest.mark.parametrize("doc,where,reason", [
    ({"reservedMemoy": []}, "k.reservedMemoy", 'unknown key; did you mean "reservedMemory"?'),
    ({"topologyManagerPolice": "none"}, "k.topologyManagerPolice", 'unknown key; did you mean "topologyManagerPolicy"?'),
    ({"cpuManagerReconcilePeriod": "5s"}, "k.cpuManagerReconcilePeriod", "a KubeletConfiguration field this "
     "simulator does not model; give a whole document (apiVersion and kind) to have such fields ignored"),
    ({"cpuManagerPolicyOption": {}}, "k.cpuManagerPolicyOption", 'unknown key; did you mean "cpuManagerPolicyOptions"?'),
    ({"zzz": 1}, "k.zzz", "unknown key"),
    ({"reservedMemory": {"numaNode": 0}}, "k.reservedMemory", "expected a list, got map"),
    ({"reservedMemory": [{"numaNode": 0, "limits": ["memory"]}]}, "k.reservedMemory[0].limits", "expected a map, got list"),
    ({"reservedMemory": [{"numa": 0}]}, "k.reservedMemory[0].numa", 'unknown key; did you mean "numaNode"?'),
    ({"reservedMemory": [{"numaNode": "0"}]}, "k.reservedMemory[0].numaNode", "expected an integer, got string '0'"),
    ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1 Gi"}}]}, "k.reservedMemory[0].limits.memory",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ({"systemReserved": {"memory": "1gb"}}, "k.systemReserved.memory",
     'failed to parse quantity "1gb" for "memory" resource: quantities must match the regular expression '
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ({"systemReserved": {"memory": 1073741824}}, "k.systemReserved.memory",
     "expected a string, got integer; reservation values are strings; quote it"),
    ({"systemReserved": ["memory=1Gi"]}, "k.systemReserved", "expected a map, got list"),
    ({"evictionHard": {"memory.available": 100}}, "k.evictionHard.memory.available",
     "expected a string, got integer; eviction threshold values are strings; quote it"),
    ({"topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": True}}, "k.topologyManagerPolicyOptions.prefer-closest-numa-nodes",
     "expected a string, got boolean; policy option values are strings; quote it"),
    ({"featureGates": {"MemoryManager": "true"}}, "k.featureGates.MemoryManager",
     "expected a boolean (true or false), got string 'true'"),
    ({"memoryManagerPolicy": ["Static"]}, "k.memoryManagerPolicy", "expected a string, got list"),
    ({"mergeDefaultEvictionSettings": "yes"}, "k.mergeDefaultEvictionSettings", "expected a boolean (true or false), got string 'yes'"),
    ("Static", "k", "expected a map of KubeletConfiguration fields, got string"),
    ({"apiVersion": "kubelet.config.k8s.io/v1", "kind": "KubeletConfiguration"}, "k.apiVersion",
     "expected \"kubelet.config.k8s.io/v1beta1\", got 'kubelet.config.k8s.io/v1'"),
])
def test_shape_errors(doc, where, reason):
    with pytest.raises(InputError) as err:
        parse_kubelet_config(doc, "k")
    assert (err.value.where, err.value.reason) == (where, reason)


FILE = textwrap.dedent("""
    apiVersion: kubelet.config.k8s.io/v1beta1
    kind: KubeletConfiguration
    address: 0.0.0.0
    authentication: {anonymous: {enabled: false}}
    cgroupDriver: systemd
    cpuManagerPolicy: static
    memoryManagerPolicy: Static
    reservedMemory:
    - numaNode: 0
      limits: {memory: 1124Mi}
    systemReserved: {memory: 1Gi, cpu: 500m}
    topologyManagerPolicy: best-effort
""")


def test_file_form_ignores_other_fields(tmp_path):
    path = tmp_path / "kubelet.yaml"
    path.write_text(FILE)
    cfg = load_kubelet_config_file(path)
    assert cfg.memory_manager_policy == "Static" and cfg.topology_manager_policy == "best-effort"
    assert str(cfg.reserved_memory[0].limits["memory"]) == "1124Mi"
    assert {k: str(v) for k, v in node_allocatable_reservation(cfg, MACHINE).items()} == {"cpu": "500m", "memory": "1124Mi"}
    # the same document inline is read the same way
    import yaml
    assert parse_kubelet_config(yaml.safe_load(FILE)) == cfg


def test_file_errors(tmp_path):
    path = tmp_path / "kubelet.yaml"
    path.write_text("kind: Pod\n")
    with pytest.raises(InputError) as err:
        load_kubelet_config_file(path)
    assert str(err.value) == f"{path}: apiVersion: expected \"kubelet.config.k8s.io/v1beta1\", got None"
    path.write_text(FILE.replace("limits: {memory: 1124Mi}", "limits: {memory: lots}"))
    with pytest.raises(InputError) as err:
        load_kubelet_config_file(path)
    assert (err.value.file, err.value.where) == (str(path), "reservedMemory[0].limits.memory")


# -- validation -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("doc,expected", [
    ({}, []),
    ({"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}, []),
    ({"topologyManagerPolicy": "best_effort"},
     ['invalid configuration: topologyManagerPolicy (--topology-manager-policy) "best_effort" must be one of: '
      '["none" "best-effort" "restricted" "single-numa-node"]']),
    ({"topologyManagerScope": "node"},
     ['invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be one of: "container", or "pod"']),
    ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi", "hugepages-2Mi": "2Mi"}}]}, []),
    ({"reservedMemory": [{"numaNode": 1, "limits": {"cpu": "1"}}]},
     ['invalid configuration: the limit type "cpu" for NUMA node 1 is not supported, only '
      '[memory hugepages-<HugePageSize>] is accepted']),
    ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "0"}}]},
     ['invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "memory"']),
    ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}, {"numaNode": 0, "limits": {"memory": "2Gi"}}]},
     ['invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and resource "memory"']),
    ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}, {"numaNode": 1, "limits": {"memory": "1Gi"}}]}, []),
    ({"topologyManagerPolicy": "x", "reservedMemory": [{"numaNode": 2, "limits": {"storage": "0"}}]},
     ['invalid configuration: topologyManagerPolicy (--topology-manager-policy) "x" must be one of: '
      '["none" "best-effort" "restricted" "single-numa-node"]',
      'invalid configuration: the limit type "storage" for NUMA node 2 is not supported, only '
      '[memory hugepages-<HugePageSize>] is accepted',
      'invalid configuration: reserved memory may not be zero for NUMA node 2 and resource "storage"']),
    # a bad feature gate stops validation with that one message
    ({"featureGates": {"NoSuchGate": True}, "topologyManagerPolicy": "x"}, ["unrecognized feature gate: NoSuchGate"]),
    ({"featureGates": {"MemoryManager": False}},
     ["cannot set feature gate MemoryManager to false, feature is locked to true"]),
])
def test_validate(doc, expected):
    assert validate_kubelet_configuration(parse_kubelet_config(doc)) == expected


# -- node allocatable reservation -------------------------------------------------------------------------------
def reservation(doc):
    return {k: str(v) for k, v in node_allocatable_reservation(parse_kubelet_config(doc), MACHINE).items()}


@pytest.mark.parametrize("doc,expected", [
    ({}, {"memory": "100Mi"}),
    ({"systemReserved": {"memory": "1Gi"}}, {"memory": "1124Mi"}),
    ({"systemReserved": {"memory": "1Gi"}, "kubeReserved": {"memory": "512Mi"}}, {"memory": "1636Mi"}),
    ({"systemReserved": {"memory": "1G"}}, {"memory": "1104857600"}),
    ({"kubeReserved": {"memory": "1G"}, "evictionHard": {}}, {"memory": "1G"}),
    ({"evictionHard": {"memory.available": "1Gi"}, "systemReserved": {"cpu": "500m", "pid": "100"}},
     {"cpu": "500m", "memory": "1Gi"}),
    ({"evictionHard": {}}, {}),
    ({"evictionHard": {"memory.available": "0%"}}, {}),
    ({"evictionHard": {"nodefs.available": "10%"}}, {}),
    ({"systemReserved": {"memory": "0"}, "evictionHard": {}}, {}),
    ({"systemReserved": {"ephemeral-storage": "1Gi"}, "evictionHard": {}}, {"ephemeral-storage": "1Gi"}),
    # a percentage is taken of memory capacity (16Gi) in float32, truncated
    ({"evictionHard": {"memory.available": "5%"}}, {"memory": "858993472"}),
    ({"evictionHard": {"memory.available": "50%"}}, {"memory": "8Gi"}),
])
def test_node_allocatable_reservation(doc, expected):
    assert reservation(doc) == expected


def test_reservation_formats_follow_quantity_add():
    result = node_allocatable_reservation(parse_kubelet_config({"systemReserved": {"memory": "1Gi"}}), MACHINE)
    assert result["memory"].format == BINARY_SI and result["memory"].as_int64() == GI + 100 * (1 << 20)
    result = node_allocatable_reservation(parse_kubelet_config({"systemReserved": {"memory": "1G"}}), MACHINE)
    assert result["memory"].format == DECIMAL_SI


@pytest.mark.parametrize("doc,message", [
    ({"systemReserved": {"hugepages-2Mi": "2Mi"}}, '--system-reserved value failed to parse: cannot reserve "hugepages-2Mi" resource'),
    ({"kubeReserved": {"memory": "-1Gi"}}, '--kube-reserved value failed to parse: resource quantity for "memory" cannot be negative: -1Gi'),
    ({"evictionHard": {"memory.free": "1Gi"}}, "unsupported eviction signal memory.free"),
    ({"evictionHard": {"memory.available": "0"}}, "eviction threshold memory.available must be positive: 0"),
    ({"evictionHard": {"memory.available": "-1Mi"}}, "eviction threshold memory.available must be positive: -1Mi"),
    ({"evictionHard": {"memory.available": "150%"}}, "eviction percentage threshold memory.available must be <= 100%: 150%"),
    ({"evictionHard": {"memory.available": "-5%"}}, "eviction percentage threshold memory.available must be >= 0%: -5%"),
    ({"evictionHard": {"memory.available": "abc%"}}, 'strconv.ParseFloat: parsing "abc": invalid syntax'),
    ({"evictionHard": {"memory.available": "1gb"}},
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
])
def test_reservation_start_errors(doc, message):
    with pytest.raises(KubeletConfigError) as err:
        node_allocatable_reservation(parse_kubelet_config(doc), MACHINE)
    assert str(err.value) == message


def test_hard_eviction_thresholds():
    thresholds = hard_eviction_thresholds(DEFAULT_EVICTION_HARD)
    assert str(thresholds["memory.available"]) == "100Mi"
    assert abs(thresholds["nodefs.available"] - 0.1) < 1e-7
    assert "x" not in hard_eviction_thresholds({"imagefs.available": "100%"})


def test_one_table_of_gates_with_a_constant_each():
    from kubeinputs import features

    constants = {v for k, v in vars(features).items() if k.endswith("_GATE") and isinstance(v, str)}
    assert constants == set(features.KNOWN_FEATURE_GATES)
    assert {"PodLevelResourceManagers", "MemoryManagerDriftTolerance", "TopologyManagerPolicyAlphaOptions",
            "TopologyManagerPolicyBetaOptions", "PodLevelResources"} <= constants
