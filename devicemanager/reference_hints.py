"""The reference device hints: kubelet v1.37's generateDeviceTopologyHints written as its plain loop.

`reference_generate_device_topology_hints` walks every non-empty mask of the NUMA nodes that host
the resource's devices (IterateBitMasks order) and, per mask, counts devices one by one, exactly as
kubelet does. It is the oracle of the production `topology_hints.generate_device_topology_hints`
(tables and lists built by subset sums, families on 17+ device NUMA nodes) in differential tests.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from topologymanager.bitmask import any_set, iterate_bit_masks
from topologymanager.hint import TopologyHint

from devicemanager.plugin_devices import PluginDevices


def reference_generate_device_topology_hints(plugins: PluginDevices, machine_nodes: Sequence[int], resource: str,
                                             available: Iterable[str], reusable: Iterable[str],
                                             request: int) -> list[TopologyHint]:
    """Every mask of the device NUMA nodes where the re-usable devices all touch the mask and enough
    available plus re-usable devices do; preferred = as few nodes as the narrowest mask any registered
    devices could fill (starting from the machine's node count)."""
    available, reusable = list(available), list(reusable)
    devices = plugins.all_devices.get(resource, {})
    min_affinity_size = len(machine_nodes)
    masks = []
    for mask in iterate_bit_masks(plugins.device_numa_nodes(resource, machine_nodes)):
        in_mask = sum(1 for d in devices.values() if any_set(mask, d.numa_nodes or ()))
        if in_mask >= request and mask.bit_count() < min_affinity_size:
            min_affinity_size = mask.bit_count()
        matching = 0
        covered = True
        for device_id in reusable:
            device = plugins.device(resource, device_id)
            if device is None or device.numa_nodes is None:
                continue
            if not any_set(mask, device.numa_nodes):
                covered = False
                break
            matching += 1
        if not covered:
            continue
        for device_id in available:
            device = plugins.device(resource, device_id)
            if device is not None and any_set(mask, device.numa_nodes or ()):
                matching += 1
        if matching >= request:
            masks.append(mask)
    return [TopologyHint(m, m.bit_count() == min_affinity_size) for m in masks]
