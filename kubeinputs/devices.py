"""Device plugins' devices as a node declares them, and the API server's rule for device requests.

A node's device plugins register with kubelet and report their devices (ListAndWatch): per
extended resource (`nvidia.com/gpu`) a list of devices, each with an ID, a health and an
optional topology (the NUMA nodes it is attached to). The scenario format (1.2) and the node
API declare them the same way:

    devices:
      nvidia.com/gpu:
        - {id: gpu0, numaNodes: [0]}
        - {id: gpu1, numaNodes: [1], healthy: false}
        - {id: gpu2}                  # no topology

`parse_devices` reads that map strictly: an unknown key, a resource name a device plugin could
not register (kubelet: `the ResourceName "x" is invalid`), an ID written twice for one resource,
a NUMA node the machine lacks or a value of the wrong type is an InputError naming its path.
`numaNodes` omitted, null or empty means the device reports no topology; `healthy` defaults to
true. Declaration order is kept: it is the order the plugin lists its devices in.

>>> devs = parse_devices({"nvidia.com/gpu": [{"id": "gpu0", "numaNodes": [0]}, {"id": "gpu1"}]}, numa_nodes=[0, 1])
>>> devs["nvidia.com/gpu"][0], devs["nvidia.com/gpu"][1].numa_nodes
(Device(id='gpu0', numa_nodes=(0,), healthy=True), None)

`integer_resource_error` is the API server's check that an extended resource is asked for in
whole units, with its text (the Pod reader applies it to every container's limits and requests): the field error prints the Quantity struct with Go's `%#v`
(`nvidia.com/gpu: 500m` -> `Invalid value: resource.Quantity{i:resource.int64Amount{value:500,
scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}: must be an
integer`); negative quantities are refused by the Pod reader already.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Union

from kubeinputs.errors import (InputError, brief, check_keys, expect_bool, expect_list, expect_map, expect_str,
                               index_path, join_path, show_int, type_name)
from kubeinputs.goformat import go_quote
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.quantity import Quantity
from kubeinputs.reader import parse_file
from kubeinputs.validation import is_extended_resource_name

if TYPE_CHECKING:  # only in annotations: pathlib is slow to import
    from pathlib import Path

DEVICE_KEYS = frozenset({"id", "numaNodes", "healthy"})
# kubelet's bitmasks hold NUMA ids 0-63
MAX_NUMA_ID = 63


@dataclass(frozen=True)
class Device:
    """One device as its plugin reports it (pluginapi.Device): ID, NUMA nodes (None: no topology), health."""

    id: str
    numa_nodes: Optional[tuple[int, ...]] = None
    healthy: bool = True


DeclaredDevices = dict[str, tuple[Device, ...]]
"""Resource name -> its devices, in the order the plugin lists them."""


def resource_name_error(name: str) -> Optional[str]:
    """Why a device plugin could not register under `name` (kubelet accepts extended resource names only)."""
    if is_extended_resource_name(name):
        return None
    return (f"the ResourceName {go_quote(name)} is invalid: a device plugin registers an extended resource name "
            "(a domain-prefixed name outside kubernetes.io/, such as \"nvidia.com/gpu\")")


def _parse_numa_nodes(value: Any, where: str, machine_nodes: Optional[frozenset[int]]) -> Optional[tuple[int, ...]]:
    """A device's `numaNodes`: distinct NUMA ids of the machine; omitted, null or empty -> None (no topology)."""
    items = expect_list(value, where, "a list of NUMA node ids")
    seen: dict[int, int] = {}
    for i, item in enumerate(items):
        path = index_path(where, i)
        if isinstance(item, bool) or not isinstance(item, int):
            raise InputError(path, f"expected a NUMA node id (an integer), got {type_name(item)} {brief(item)}")
        if item < 0 or item > MAX_NUMA_ID:
            raise InputError(path, f"NUMA node id must be in 0-{MAX_NUMA_ID}, got {show_int(item)}")
        if machine_nodes is not None and item not in machine_nodes:
            known = ", ".join(str(n) for n in sorted(machine_nodes)) or "none"
            raise InputError(path, f"NUMA node {item} is not on this machine (its NUMA nodes: {known})")
        if item in seen:
            raise InputError(path, f"NUMA node {item} is listed twice (also [{seen[item]}])")
        seen[item] = i
    return tuple(items) if items else None


def _parse_device(value: Any, where: str, machine_nodes: Optional[frozenset[int]]) -> Device:
    """One `{id, numaNodes, healthy}` map."""
    raw = expect_map(value, where, "a map (a device: {id, numaNodes, healthy})")
    check_keys(raw, where, DEVICE_KEYS, required=("id",))
    device_id = expect_str(raw["id"], join_path(where, "id"))
    if not device_id:
        raise InputError(join_path(where, "id"), "must be a non-empty string")
    numa = _parse_numa_nodes(raw.get("numaNodes"), join_path(where, "numaNodes"), machine_nodes)
    healthy = True if raw.get("healthy") is None else expect_bool(raw["healthy"], join_path(where, "healthy"))
    return Device(device_id, numa, healthy)


def parse_devices(doc: Any, where: str = "devices", *, numa_nodes: Optional[Iterable[int]] = None) -> DeclaredDevices:
    """The `devices` map as {resource: devices}; `numa_nodes` (the machine's NUMA ids) bounds `numaNodes`.

    Raises InputError naming the bad path. null is an empty map (no device plugins)."""
    raw = expect_map(doc, where, "a map (resource name -> list of devices)")
    machine_nodes = None if numa_nodes is None else frozenset(numa_nodes)
    result: DeclaredDevices = {}
    for resource, items in raw.items():
        path = join_path(where, resource)
        problem = resource_name_error(resource)
        if problem is not None:
            raise InputError(path, problem)
        devices = []
        first: dict[str, int] = {}
        for i, item in enumerate(expect_list(items, path, "a list of devices")):
            device = _parse_device(item, index_path(path, i), machine_nodes)
            if device.id in first:
                raise InputError(join_path(index_path(path, i), "id"),
                                 f"duplicate device id {go_quote(device.id)} (also [{first[device.id]}])")
            first[device.id] = i
            devices.append(device)
        result[resource] = tuple(devices)
    return result


def load_devices_file(path: Union[str, "Path"], *, numa_nodes: Optional[Iterable[int]] = None,
                      limits: Limits = DEFAULT_LIMITS) -> DeclaredDevices:
    """Read a devices file (YAML or JSON, the `devices` map at its top); errors name the file."""
    return parse_file(path, lambda doc: parse_devices(doc, "", numa_nodes=numa_nodes), limits)


def device_to_obj(device: Device) -> dict[str, Any]:
    """A device in the declaration's own shape (numaNodes and healthy written only when set)."""
    obj: dict[str, Any] = {"id": device.id}
    if device.numa_nodes is not None:
        obj["numaNodes"] = list(device.numa_nodes)
    if not device.healthy:
        obj["healthy"] = False
    return obj


def devices_to_obj(devices: Mapping[str, Iterable[Device]]) -> dict[str, list[dict[str, Any]]]:
    """The declaration's shape of a {resource: devices} map (what parse_devices reads back)."""
    return {resource: [device_to_obj(d) for d in items] for resource, items in devices.items()}


# -- the API server's rule for extended resource quantities ---------------------------------------------------
# Go's divideByScaleInt64 gives up past 18 decimal places (everything is remainder then).
_MAX_INT64_PLACES = 18


def _round_up_to_milli(quantity: Any) -> tuple[int, int, str]:
    """SetDefaults_ResourceList's RoundUp(-3) of an int64-form quantity: (value, scale, cached string), the
    cache cleared when the value changes (as Go's RoundUp does)."""
    value, scale, cached = quantity.unscaled, quantity.exp10, quantity.cached or ""
    if scale >= -3:
        return value, scale, cached
    places = -3 - scale
    if places >= _MAX_INT64_PLACES:
        quotient, remainder = 0, value
    else:
        divisor = 10 ** places
        quotient, remainder = int(value / divisor), value - int(value / divisor) * divisor  # Go truncates
    return quotient + (1 if remainder > 0 else 0), -3, ""


def go_quantity_value(quantity: Quantity) -> str:
    """How a field error prints a resource.Quantity: Go's `%#v` of the struct (its String method has a
    pointer receiver, so the value is no fmt.Stringer), after the API server's rounding to thousandths.

    A big-decimal quantity holds a pointer whose address Go prints; a fixed stand-in address is shown."""
    fmt = go_quote(quantity.format)
    if quantity.is_dec:
        return ('resource.Quantity{i:resource.int64Amount{value:0, scale:0}, '
                'd:resource.infDecAmount{Dec:(*inf.Dec)(0xc000010000)}, s:"", Format:' + fmt + "}")
    value, scale, cached = _round_up_to_milli(quantity)
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, "
            f"d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{go_quote(cached)}, Format:{fmt}}}")


def _milli_value_ceil(quantity: Quantity) -> int:
    """Go's Quantity.MilliValue() for a non-negative quantity: the value in thousandths, rounded up."""
    unscaled, exp10 = quantity.unscaled, quantity.exp10
    shift = exp10 + 3
    if shift >= 0:
        return unscaled * 10 ** shift
    places = -shift
    if places > len(str(abs(unscaled))) + 1:  # far below one thousandth (1e-999999999 is a quantity)
        return 1 if unscaled > 0 else 0
    return -((-unscaled) // 10 ** places)


def integer_resource_error(name: str, quantity: Quantity) -> Optional[str]:
    """ValidateResourceQuantityValue's integer rule: an extended resource's quantity must be a whole number
    (checked as the API server does, on the value in thousandths rounded up), with the API server's text
    (`Invalid value: resource.Quantity{...}: must be an integer`). None when it is fine."""
    if not is_extended_resource_name(name) or quantity.sign() < 0:
        return None
    if _milli_value_ceil(quantity) % 1000 != 0:
        return f"Invalid value: {go_quantity_value(quantity)}: must be an integer"
    return None
