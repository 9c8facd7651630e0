"""The device manager's part of an explanation: the node's devices (NUMA nodes, health, who holds
them), its hints per resource and NUMA mask (over the NUMA nodes hosting the resource's devices:
free devices touching the mask, fits, preferred = the narrowest width any registered devices could
fill), and which devices Allocate picked and why (re-used, aligned to the merged hint, not aligned,
without topology), recomputed from the recorded state and checked against the manager's answer."""
from __future__ import annotations

from itertools import islice
from typing import Optional

from devicemanager.allocation import filter_by_affinity
from devicemanager.device_state import DeviceState
from devicemanager.hint_family import FAMILY_MIN_NODES
from devicemanager.requests import container_device_request, pod_device_request
from kubeinputs.pod import Pod
from memorymanager.explain.model import (DeviceAllocation, DeviceHintsPart, DeviceInfo, DeviceInventory,
                                         DeviceMaskRow, DevicePick)
from memorymanager.explain.recorder import DeviceAllocateCall, DeviceHintCall
from memorymanager.node.render import hint_to_obj
from memorymanager.node.simulated_node import SimulatedNode
from topologymanager import bitmask
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily

FULL_TABLE_NODES = 4
MAX_ROWS = 32
FAMILY_HINTS_SHOWN = 12


def _device_infos(state: DeviceState, resource: str, available: set[str], reusable: set[str],
                  held: set[str]) -> list[DeviceInfo]:
    """The resource's devices in the plugin's order, then devices known only as allocated (checkpoint)."""
    plugins = state.plugins
    rows = []
    declared = plugins.all_devices.get(resource, {})
    for device_id, device in declared.items():
        healthy = device_id in plugins.healthy.get(resource, set())
        if device_id in held:
            status = "held"
        elif device_id in reusable:
            status = "re-usable"
        elif not healthy:
            status = "unhealthy"
        elif device_id in available:
            status = "free"
        else:
            status = "in use"
        rows.append(DeviceInfo(device_id, list(device.numa_nodes) if device.numa_nodes else None, healthy, status))
    for device_id in sorted(state.allocated.get(resource, set()) - set(declared)):
        pod_uid, container = state.pod_devices.pod_and_container_of(device_id)
        recorded = ((state.pod_devices.get_container_devices(pod_uid, container) or {}).get(resource) or {}).get(
            device_id) if pod_uid else None
        rows.append(DeviceInfo(device_id, list(recorded) if recorded else None, False,
                               "held" if device_id in held else "in use (no plugin)"))
    return rows


def device_inventory(node: SimulatedNode) -> list[DeviceInventory]:
    """Every device resource of the node: registered by a plugin, or named only by the checkpoint's entries."""
    dm = node.device_manager
    if dm is None:
        return []
    state = dm.state()
    resources = sorted(set(state.plugins.all_devices) | {r for r, ids in state.allocated.items() if ids})
    return [DeviceInventory(r, _device_infos(state, r, state.available(r), set(), set()),
                            r in state.plugins.all_devices) for r in resources]


def _hint_dicts(hints: object) -> Optional[list[dict]]:
    """A resource's hints as dicts (a family: its first hints); None for no preference."""
    if hints is None:
        return None
    if isinstance(hints, HintFamily):
        return [hint_to_obj(h) for h in islice(hints, FAMILY_HINTS_SHOWN)]
    return [hint_to_obj(h) for h in hints]


def _mask_rows(state: DeviceState, machine_nodes: list[int], resource: str, available: set[str],
               reusable: set[str], request: int) -> tuple[int, list[DeviceMaskRow], list[dict]]:
    """(the narrowest width, a row per mask over the device NUMA nodes, the hints they give)."""
    plugins = state.plugins
    nodes = plugins.device_numa_nodes(resource, machine_nodes)
    devices = plugins.all_devices.get(resource, {})

    def mask_of(device_id: str) -> int:
        device = plugins.device(resource, device_id)
        return bitmask.new_bitmask(*[n for n in (device.numa_nodes or ()) if n in nodes]) if device else 0

    all_masks = [mask_of(d) for d in devices]
    free_masks = [mask_of(d) for d in available]
    forced = [mask_of(d) for d in reusable if plugins.device(resource, d) is not None
              and plugins.device(resource, d).numa_nodes is not None]
    masks = list(bitmask.iterate_bit_masks(nodes))
    min_affinity = next((m.bit_count() for m in masks if sum(1 for d in all_masks if d & m) >= request),
                        len(machine_nodes))
    need = request - len(forced)
    rows, hints = [], []
    for m in masks:
        registered = sum(1 for d in all_masks if d & m)
        free = sum(1 for d in free_masks if d & m)
        inside = all(m & f for f in forced)
        fits = inside and free >= need
        preferred = fits and m.bit_count() == min_affinity
        if not inside:
            verdict = "a re-usable device lies outside the mask"
        elif not fits:
            verdict = f"too few free devices: {free} of {need}"
        else:
            verdict = "hint, preferred" if preferred else f"hint, not preferred (wider than {min_affinity} node(s))"
        rows.append(DeviceMaskRow(bitmask.get_bits(m), registered, free, inside, fits, fits, preferred, verdict))
        if fits:
            hints.append(hint_to_obj(TopologyHint(m, preferred)))
    return min_affinity, rows, hints


def build_device_hints_parts(node: SimulatedNode, pod: Pod, call: DeviceHintCall) -> list[DeviceHintsPart]:
    """One part per device resource the container (or pod) asks for, recomputed mask by mask."""
    dm = node.device_manager
    state = dm.state()
    requests = (container_device_request(state, call.container) if call.container is not None
                else pod_device_request(state, pod))
    parts = []
    for resource, request in sorted(requests.items()):
        available = call.available.get(resource, set())
        reusable = call.reusable.get(resource, set()) if call.container is not None else set()
        held = call.held.get(resource, set())
        returned = (call.result or {}).get(resource)
        part = DeviceHintsPart(call.target, resource, request, "calculated", "",
                               state.plugins.device_numa_nodes(resource, dm.numa_nodes),
                               _device_infos(state, resource, available, reusable, held), hints=_hint_dicts(returned))
        if not state.plugins.has_topology_alignment(resource):
            part.path = "no-topology"
            part.note = ("no registered device of it reports a NUMA node" if state.plugins.is_registered(resource)
                         else "no device plugin registered it (known from the checkpoint only)") + ": no preference"
            parts.append(part)
            continue
        if held:
            part.path = "regenerated"
            if len(held) != request:
                part.note = f"it already holds {len(held)} device(s) but asks for {request}: no placement possible"
                parts.append(part)
                continue
            part.note = "it already holds " + ", ".join(sorted(held)) + ": the hints are those of these devices"
            available, reusable = held, set()
        elif len(available | reusable) < request:
            part.path = "too-few"
            part.note = (f"{len(available)} free" + (f" and {len(reusable)} re-usable" if reusable else "")
                         + f" device(s), {request} asked: no placement possible")
            parts.append(part)
            continue
        else:
            part.note = (f"{request} of {len(available)} free device(s)"
                         + (f", re-using {', '.join(sorted(reusable))}" if reusable else ""))
        k = len(part.device_nodes)
        if k >= FAMILY_MIN_NODES or isinstance(returned, HintFamily):
            part.note += f"; devices on {k} NUMA nodes: too many masks to list"
            parts.append(part)
            continue
        min_affinity, rows, hints = _mask_rows(state, dm.numa_nodes, resource, available, reusable, request)
        part.min_affinity_size, part.total_masks = min_affinity, len(rows)
        part.consistent = hints == part.hints
        if k <= FULL_TABLE_NODES:
            part.masks = rows
        else:
            part.masks = [r for r in rows if len(r.nodes) <= min_affinity][:MAX_ROWS]
            for r in rows:
                if not any(r is s for s in part.masks):
                    kind = "hint" if r.hint else "fails"
                    part.omitted[kind] = part.omitted.get(kind, 0) + 1
        parts.append(part)
    return parts


def build_device_allocations(node: SimulatedNode, pod: Pod, call: DeviceAllocateCall) -> list[DeviceAllocation]:
    """Per device resource of one Allocate: the devices it picked, each with why."""
    dm = node.device_manager
    state = dm.state()
    container = call.container
    hint = node.topology_manager.get_affinity(pod.uid, container.name)
    affinity = None if hint.numa_node_affinity is None else bitmask.get_bits(hint.numa_node_affinity)
    parts = []
    for resource, request in sorted(container_device_request(state, container).items()):
        part = DeviceAllocation(call.target, resource, request, affinity)
        before = call.held_before.get(resource, set())
        after = call.after.get(resource, set())
        if call.error is not None and not after - before:
            part.error = str(call.error)
        free_before = (state.plugins.healthy.get(resource, set()) - call.in_use_before.get(resource, set()))
        aligned, unaligned, _ = filter_by_affinity(state, resource, hint, free_before)
        for device_id in state.plugins.ordered(resource, after):
            device = state.plugins.device(resource, device_id)
            nodes = list(device.numa_nodes) if device is not None and device.numa_nodes else None
            if device_id in before:
                why = "already held"
            elif device_id in call.reusable.get(resource, set()):
                why = "re-used from a finished init container"
            elif device_id in aligned:
                why = "aligned: on the merged hint's NUMA nodes"
            elif device_id in unaligned:
                why = "not aligned: too few free devices on the merged hint's NUMA nodes"
            else:
                why = "no topology (taken after aligned and unaligned devices)" if affinity is not None \
                    else "any device: no NUMA affinity to follow"
            part.picks.append(DevicePick(device_id, nodes, why))
        parts.append(part)
    return parts
