"""Device hints as a hint family: generateDeviceTopologyHints when 17 or more NUMA nodes host the devices.

kubelet v1.37 walks every mask of D, the NUMA nodes hosting the resource's devices (#138244): 2^|D|
masks. When every device sits on one NUMA node the kept masks have the shape
`topologymanager.hint_family` searches without a list:

* a mask M is kept when every re-usable device with topology sits on a node of M (its node is
  "forced") and the available devices on M's nodes, plus the re-usable ones, reach the request;
* so a mask of two or more nodes is kept when the available devices on the nodes of D *outside*
  M add up to at most (available on D) - (request - re-usable) and no forced node is outside M:
  weights per node (available devices, 1 if forced) against the capacity (that slack, 0);
* the kept single nodes are listed one by one;
* preferred = as few nodes as the narrowest mask all registered devices could fill: the k nodes
  holding the most devices (kubelet starts from the machine's node count, which only matters when
  no mask can hold the request).

Worked example: 20 nodes, one GPU on each of nodes 0-19, two free (on nodes 3 and 7), a request
for 2: kubelet keeps every mask containing {3, 7} (2^18 of them); {3, 7} is preferred (no node holds
two GPUs, so no mask narrower than two nodes could ever hold the request), the wider ones are not:

>>> from devicemanager.plugin_devices import PluginDevices
>>> from kubeinputs.devices import Device
>>> plugins = PluginDevices()
>>> plugins.update("x.io/gpu", [Device(f"g{n}", (n,)) for n in range(20)])
>>> fam = family_device_hints(plugins, range(20), "x.io/gpu", {"g3", "g7"}, set(), 2)
>>> from itertools import islice
>>> list(islice(fam, 3)), fam.count(), fam.best_hint()
([TopologyHint([3, 7], preferred=True), TopologyHint([0, 3, 7], preferred=False), TopologyHint([1, 3, 7], preferred=False)], 262144, TopologyHint([3, 7], preferred=True))

A device reported on two or more NUMA nodes breaks the additive shape: `family_device_hints` then
returns None and the caller lists the masks where that finishes (up to 20 device NUMA nodes) or
refuses (BoundedWorkError).
"""
from __future__ import annotations

from typing import Iterable, Optional, Union

from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily

from devicemanager.plugin_devices import PluginDevices

# From this many device NUMA nodes on the hints are a family (as the memory manager's from 17 machine nodes).
FAMILY_MIN_NODES = 17


class DeviceHintFamily(HintFamily):
    """The device manager's hints for one resource and request (real NUMA ids)."""


def _single_node(numa_nodes: Optional[tuple[int, ...]], machine: set[int]) -> Optional[int]:
    """The one machine NUMA node of a device's topology (None: no topology, or none on the machine)."""
    nodes = [n for n in numa_nodes or () if n in machine]
    return nodes[0] if nodes else None


def preferred_width(counts: Iterable[int], request: int, machine_size: int) -> int:
    """kubelet's minAffinitySize for devices on one node each: the fewest nodes whose device counts reach the
    request (one node when the request is 0 or less), never more than the machine's node count."""
    if request <= 0:
        return min(1, machine_size)
    total = 0
    for width, count in enumerate(sorted(counts, reverse=True), 1):
        total += count
        if total >= request:
            return min(width, machine_size)
    return machine_size


def family_device_hints(plugins: PluginDevices, machine_nodes: Iterable[int], resource: str,
                        available: Iterable[str], reusable: Iterable[str],
                        request: int) -> Union[DeviceHintFamily, list[TopologyHint], None]:
    """generateDeviceTopologyHints as a family ([] when it keeps no mask); None when some device of the
    resource reports two or more NUMA nodes (no family shape)."""
    machine_list = list(machine_nodes)
    machine = set(machine_list)
    devices = plugins.all_devices.get(resource, {})
    if any(d.numa_nodes and len([n for n in d.numa_nodes if n in machine]) > 1 for d in devices.values()):
        return None
    device_nodes = plugins.device_numa_nodes(resource, machine_list)
    universe = sum(1 << n for n in device_nodes)

    per_node: dict[int, int] = {}
    for device in devices.values():
        node = _single_node(device.numa_nodes, machine)
        if node is not None:
            per_node[node] = per_node.get(node, 0) + 1
    width = preferred_width(per_node.values(), request, len(machine_list))

    forced: set[int] = set()
    reused = 0
    for device_id in reusable:
        device = plugins.device(resource, device_id)
        if device is None or device.numa_nodes is None:
            continue
        node = _single_node(device.numa_nodes, machine)
        if node is None:
            return []  # it touches no mask of D: every mask is dropped
        forced.add(node)
        reused += 1
    need = request - reused

    free: dict[int, int] = {n: 0 for n in device_nodes}
    for device_id in available:
        device = plugins.device(resource, device_id)
        node = None if device is None else _single_node(device.numa_nodes, machine)
        if node is not None:
            free[node] += 1
    slack = sum(free.values()) - need
    if slack < 0:
        return []
    explicit = [1 << n for n in device_nodes if free[n] >= need and forced <= {n}]
    weights = {n: (free[n], 1 if n in forced else 0) for n in device_nodes}
    family = DeviceHintFamily(sum(1 << n for n in machine_list), explicit, universe, weights, (slack, 0), width)
    return family if family else []
