"""The public Python API: a node you build from a machine and a kubelet configuration, then
ask what kubelet would do with a pod.

`Node` wraps the simulated node (`memorymanager.node.simulated_node.SimulatedNode`): the
same code that runs the conformance scenarios decides here. Inputs are what a user has at
hand (a cadvisor machine dict or file, this host's sysfs, a KubeletConfiguration dict or file,
a v1 Pod as a dict, YAML text or a file); answers are small frozen dataclasses and plain
dicts of ints, never the managers' internal objects.

`would_admit` answers on a throw-away copy of the node whose state lives in memory only, so
the node itself (its state, checkpoint file and topology affinity store) is untouched.
"""
from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence, Union

from kubeinputs.devices import DeclaredDevices, Device, load_devices_file, parse_devices
from kubeinputs.errors import InputError, brief, describe, echo, expect_map, expect_str, index_path, join_path, type_name
from kubeinputs.kubelet_config import KubeletConfig, load_kubelet_config_file, parse_kubelet_config
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.machine import MachineInfo, load_machine_info, parse_machine_info
from kubeinputs.pod import DEFAULT_NAMESPACE, Pod, load_pod_file, load_pod_files, parse_pod, parse_pods
from kubeinputs.reader import load_text, load_yaml_documents
from kubeinputs.sysfs import read_machine_info
from kubeinputs.validation import container_resource_name_error
from memorymanager.node.answers import Admission, Placement, admission_of, placements_of  # noqa: F401 (Placement: the API's)
from memorymanager.node.simulated_node import FixedHintProvider, KubeletStartError, NodeError, SimulatedNode
from state.types import Block, MemoryTable, NUMANodeState, clone_machine_state
from topologymanager.bitmask import MAX_BITS
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.hint_provider import ProviderHints
from topologymanager.manager import MERGE_FUNCTIONS

if TYPE_CHECKING:  # the what-if searches are imported when first asked for
    from memorymanager.node.whatif import LargestFit, NodeHeadroom
    from memorymanager.node.whatif_cpu import CPUFit

# The types callers pass in.
PodInput = Union[Mapping[str, object], str, Path, Pod]
MachineInput = Union[Mapping[str, object], str, Path, MachineInfo]
KubeletInput = Union[Mapping[str, object], str, Path, KubeletConfig, None]
DevicesInput = Union[Mapping[str, Sequence[Union[Mapping[str, object], Device]]], str, Path, None]
HintInput = Union[TopologyHint, Mapping[str, object], tuple]
ResourceHintsInput = Mapping[str, Optional[Sequence[HintInput]]]
HintsInput = Union[Mapping[str, Optional[ResourceHintsInput]], ResourceHintsInput, None]

# The types callers get back.
HintMap = Optional[dict[str, Optional[Union[list[TopologyHint], HintFamily]]]]
BytesByNode = dict[int, dict[str, int]]



# ----- reading the caller's inputs --------------------------------------------------------------------
#
# The front door: every public call checks its arguments before anything runs, and a wrong type,
# value or path is an InputError naming the argument (`state_dir: expected a folder path or None,
# got integer 5`). Documents (machines, configurations, pods) are then read by the same parsers
# as the files. One rule is the API's own: a Python None where a value is read (a pod's name,
# UID, containers, resources and quantities; a configuration field) is refused, where YAML's
# `null` in a file keeps Kubernetes' meaning (empty, or zero): in Python code it is a value not
# set, and reading it as zero would place a pod silently as if it asked for nothing.

MAX_TEXT = 1 << 20  # characters of a pod given as text (more is a file's job: max-file-bytes)


def _is_path(value: object) -> bool:
    """A Path, or a one-line string naming an existing file."""
    if isinstance(value, Path):
        return True
    return isinstance(value, str) and "\n" not in value and "\0" not in value and os.path.isfile(value)


def _not_a_file(value: str, where: str) -> InputError:
    """Why the one-line string `value` is no file to read."""
    shown = brief(value)
    if "\0" in value:
        return InputError(where, f"not a file path: it contains a NUL character: {shown}")
    if os.path.isdir(value):
        return InputError(where, f"{shown} is a folder, not a file")
    if os.path.lexists(value):
        return InputError(where, f"{shown} is not a regular file: not read")
    return InputError(where, f"no such file: {shown}")


def _check_path(value: object, where: str, what: str) -> Optional[str]:
    """A str or os.PathLike path as a string (None stays None), else an InputError naming `where`."""
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise InputError(where, f"expected {what}, got {describe(value)}")
    if not value or "\0" in value:
        raise InputError(where, f"expected {what}, got {'an empty string' if not value else 'a path with a NUL character'}")
    return value


def _refuse_none_fields(doc: Mapping[str, object], where: str) -> None:
    """A Python None as a top-level field of a configuration map: refused (see above)."""
    for key, value in doc.items():
        if value is None:
            raise InputError(join_path(where, str(key)), "got None; leave the field out for kubelet's default (the API refuses None as a value)")


def _refuse_none_in_pod(doc: Mapping[str, object], where: str) -> None:
    """A Python None where the managers read a pod value: refused (see above). Only the places that
    have the right type are walked; any other wrong type is for the pod parser to name."""
    def value(parent: Mapping[str, object], key: str, path: str) -> object:
        item = parent.get(key)
        if key in parent and item is None:
            raise InputError(join_path(path, key), "got None; leave the key out for none (the API refuses None as a value)")
        return item

    def resources(res: object, path: str) -> None:
        if not isinstance(res, Mapping):
            return
        for key in ("requests", "limits"):
            amounts = value(res, key, path)
            if isinstance(amounts, Mapping):
                for name in amounts:
                    value(amounts, name, join_path(path, key))

    meta = value(doc, "metadata", where)
    if isinstance(meta, Mapping):
        for key in ("name", "uid", "namespace"):
            value(meta, key, join_path(where, "metadata"))
    spec = value(doc, "spec", where)
    if not isinstance(spec, Mapping):
        return
    spec_path = join_path(where, "spec")
    resources(value(spec, "resources", spec_path), join_path(spec_path, "resources"))
    for key in ("initContainers", "containers"):
        containers = value(spec, key, spec_path)
        if not isinstance(containers, (list, tuple)):
            continue
        for i, container in enumerate(containers):
            path = index_path(join_path(spec_path, key), i)
            if container is None:
                raise InputError(path, "got None: expected a container")
            if isinstance(container, Mapping):
                value(container, "name", path)
                resources(value(container, "resources", path), join_path(path, "resources"))


def read_machine(machine: MachineInput, limits: Limits = DEFAULT_LIMITS) -> MachineInfo:
    """A cadvisor MachineInfo from a dict, a JSON/YAML file path, or a MachineInfo."""
    if isinstance(machine, MachineInfo):
        return machine
    if _is_path(machine):
        return load_machine_info(str(machine), limits)
    if isinstance(machine, str):
        raise _not_a_file(machine, "machine")
    if not isinstance(machine, Mapping):
        raise InputError("machine", f"expected a cadvisor MachineInfo map, a file path or a MachineInfo, got {describe(machine)}")
    return parse_machine_info(dict(expect_map(machine, "machine", "a cadvisor MachineInfo map or a file path")), "machine")


def read_kubelet(kubelet: KubeletInput, limits: Limits = DEFAULT_LIMITS) -> KubeletConfig:
    """A KubeletConfiguration from field names (a dict), a file path, a KubeletConfig, or None (defaults)."""
    if isinstance(kubelet, KubeletConfig):
        return copy.deepcopy(kubelet)
    if kubelet is None:
        return parse_kubelet_config({}, "kubelet")
    if _is_path(kubelet):
        return load_kubelet_config_file(str(kubelet), limits=limits)
    if isinstance(kubelet, str):
        raise _not_a_file(kubelet, "kubelet")
    if not isinstance(kubelet, Mapping):
        raise InputError("kubelet", "expected a map of KubeletConfiguration fields, a file path, a KubeletConfig "
                                    f"or None, got {describe(kubelet)}")
    fields = dict(expect_map(kubelet, "kubelet", "a map of KubeletConfiguration fields"))
    _refuse_none_fields(fields, "kubelet")
    return parse_kubelet_config(fields, "kubelet", limits=limits)


def read_devices(devices: DevicesInput, machine: MachineInfo, limits: Limits = DEFAULT_LIMITS) -> DeclaredDevices:
    """The node's device plugins: `{resource: [{"id", "numaNodes", "healthy"} or Device, ...]}`, a YAML/JSON
    file of that map, or None (no device plugin). NUMA nodes must be the machine's."""
    numa_nodes = [n.node_id for n in machine.topology]
    if devices is None:
        return {}
    if _is_path(devices):
        return load_devices_file(str(devices), numa_nodes=numa_nodes, limits=limits)
    if isinstance(devices, str):
        raise _not_a_file(devices, "devices")
    if not isinstance(devices, Mapping):
        raise InputError("devices", "expected a map of resource name to a list of devices, a file path or None, "
                                    f"got {describe(devices)}")
    doc: dict[str, object] = {}
    for resource, items in devices.items():
        where = join_path("devices", str(resource))
        if items is None:
            raise InputError(where, "got None; expected a list of devices (leave the resource out for none)")
        if not isinstance(items, (list, tuple)):
            raise InputError(where, f"expected a list of devices, got {describe(items)}")
        listed: list[object] = []
        for i, item in enumerate(items):
            if isinstance(item, Device):
                item = {"id": item.id, **({"numaNodes": list(item.numa_nodes)} if item.numa_nodes else {}),
                        "healthy": item.healthy}
            elif isinstance(item, Mapping):
                _refuse_none_fields(item, index_path(where, i))
                item = dict(item)
            listed.append(item)
        doc[resource] = listed
    return parse_devices(doc, "devices", numa_nodes=numa_nodes)


def read_pod(pod: PodInput, where: str = "pod", limits: Limits = DEFAULT_LIMITS) -> Pod:
    """A v1 Pod from a dict, YAML/JSON text, a file path, or a parsed Pod."""
    if isinstance(pod, Pod):
        return pod
    if _is_path(pod):
        return load_pod_file(str(pod), limits=limits)
    if isinstance(pod, str):
        if "\n" not in pod and not pod.lstrip().startswith(("{", "metadata", "apiVersion", "kind", "spec")) \
                and ":" not in pod:
            raise _not_a_file(pod, where)
        if len(pod) > MAX_TEXT:
            raise InputError(where, f"a manifest of {len(pod):,} characters; at most {MAX_TEXT:,} are read as text "
                                    "(give a file instead)")
        doc = load_text(pod, where, limits=limits)
        if not isinstance(doc, dict):
            raise InputError(where, "neither an existing file nor a v1 Pod manifest (YAML or JSON)")
        return parse_pod(doc, where, limits=limits)
    if not isinstance(pod, Mapping):
        raise InputError(where, f"expected a v1 Pod manifest (a map or YAML/JSON text), a file path or a Pod, "
                                f"got {describe(pod)}")
    doc = dict(expect_map(pod, where, "a v1 Pod manifest"))
    _refuse_none_in_pod(doc, where)
    return parse_pod(doc, where, limits=limits)


def read_pods(pods: Union[PodInput, Sequence[PodInput]], limits: Limits = DEFAULT_LIMITS) -> list[Pod]:
    """Pods where a list is taken: a file or YAML text of several documents (`---` between them, one
    pod each), a `kind: List` of pods (kubectl get pods -o yaml), or a list of pod inputs."""
    if isinstance(pods, Pod):
        return [pods]
    if _is_path(pods):
        return load_pod_files(str(pods), limits=limits)
    if isinstance(pods, str):
        if "\n" not in pods and ":" not in pods and not pods.lstrip().startswith(("{", "[", "---")):
            raise _not_a_file(pods, "pods")
        if len(pods) > MAX_TEXT:
            raise InputError("pods", f"manifests of {len(pods):,} characters; at most {MAX_TEXT:,} are read as text "
                                     "(give a file instead)")
        return parse_pods(load_yaml_documents(pods, "pods", limits), "pods", limits=limits)
    if isinstance(pods, Mapping):
        doc = dict(pods)
        _refuse_none_in_pod(doc, "pods")
        return parse_pods([doc], "pods", limits=limits)
    if isinstance(pods, (list, tuple)):
        return [read_pod(item, index_path("pods", i), limits) for i, item in enumerate(pods)]
    raise InputError("pods", f"expected a list of pods, a file or YAML text of pods, or one pod manifest (a map), "
                             f"got {describe(pods)}")


def _read_hint(value: HintInput, where: str) -> TopologyHint:
    """A TopologyHint, `{numaAffinity: [ids] | None, preferred: bool}`, or `(ids | None, preferred)`."""
    if isinstance(value, TopologyHint):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        nodes, preferred = value
    elif isinstance(value, Mapping):
        unknown = set(value) - {"numaAffinity", "preferred"}
        if unknown or "preferred" not in value or "numaAffinity" not in value:
            raise InputError(where, "expected a hint {numaAffinity, preferred}")
        nodes, preferred = value["numaAffinity"], value["preferred"]
    else:
        raise InputError(where, f"expected a TopologyHint, a map or a (nodes, preferred) pair, got {type_name(value)}")
    if not isinstance(preferred, bool):
        raise InputError(join_path(where, "preferred"), f"expected a boolean, got {type_name(preferred)}")
    if nodes is None:
        return TopologyHint.of(None, preferred)
    return TopologyHint.of(_numa_ids(nodes, join_path(where, "numaAffinity")), preferred)


def _numa_ids(value: object, where: str) -> list[int]:
    """A list or tuple of NUMA ids (0 to 63), else an InputError; any other iterable (a range, a
    generator) is refused rather than walked, as it may never end."""
    if not isinstance(value, (list, tuple)):
        raise InputError(where, f"expected a list of NUMA ids, got {describe(value)}")
    for j, bit in enumerate(value):
        if isinstance(bit, bool) or not isinstance(bit, int) or not 0 <= bit < MAX_BITS:
            raise InputError(index_path(where, j), f"expected a NUMA id from 0 to 63, got {describe(bit)}")
    return list(value)


def _read_resource_hints(value: Optional[ResourceHintsInput], where: str) -> ProviderHints:
    """`{resource: [hint, ...] | None}` or None (no preference at all)."""
    if value is None:
        return None
    value = expect_map(value, where, "a map of resource name to hints")
    hints: dict[str, Optional[list[TopologyHint]]] = {}
    for resource, items in value.items():
        rwhere = join_path(where, str(resource))
        if items is None:
            hints[str(resource)] = None
        elif isinstance(items, (list, tuple)):
            hints[str(resource)] = [_read_hint(h, index_path(rwhere, j)) for j, h in enumerate(items)]
        else:
            raise InputError(rwhere, f"expected a list of hints, got {type_name(items)}")
    return hints


CONTAINER_SCOPE_SHAPE = "{CONTAINER: {RESOURCE: [HINT, ...]}}"
POD_SCOPE_SHAPE = "{RESOURCE: [HINT, ...]}"


def hints_shape_error(scope: str, where: str, names: Sequence[str], other_shape: str) -> InputError:
    """The error of hints written in the other scope's shape: it names the shape `scope` expects."""
    expected = POD_SCOPE_SHAPE if scope == "pod" else CONTAINER_SCOPE_SHAPE
    return InputError(where, f"the node's topologyManagerScope is {scope!r}: expected hints shaped {expected}, "
                             f"got {other_shape} (the pod's containers: {', '.join(names)})")


def hint_provider(pod: Pod, hints: HintsInput, scope: str) -> Optional[FixedHintProvider]:
    """Other providers' hints as one fixed hint provider, consulted after the memory manager.

    `scope` is the node's topologyManagerScope, which decides the one shape taken: container scope
    `{container: {resource: [hint, ...]}}` (a container left out has no preference); pod scope
    `{resource: [hint, ...]}`. Hints in the other scope's shape are refused (InputError naming the
    expected shape): kubelet would never ask for them, so they would change nothing.
    """
    if hints is None:
        return None
    hints = expect_map(hints, "hints", "a map of container name to resource hints, or of resource name to hints")
    names = [c.name for c in pod.all_containers()]
    if scope == "pod":
        containers_named = [str(k) for k, v in hints.items() if isinstance(v, Mapping) or (
            str(k) in names and container_resource_name_error(str(k)) is not None)]
        if containers_named:
            raise hints_shape_error(scope, join_path("hints", containers_named[0]), names,
                                    "hints for a container (the container-scope shape)")
        return FixedHintProvider({}, _read_resource_hints(hints, "hints"))
    pod_shaped = [str(k) for k, v in hints.items() if isinstance(v, (list, tuple)) or (v is None and k not in names)]
    if pod_shaped:  # a container's None is its nil map (no preference); a resource's None is the pod shape
        key = pod_shaped[0]
        got = (f"a list of hints for container {key!r} (a list where a map of resource to hints belongs)"
               if key in names else "resource hints for the whole pod (the pod-scope shape)")
        raise hints_shape_error(scope, join_path("hints", key), names, got)
    containers: dict[str, ProviderHints] = {}
    for name, resource_hints in hints.items():
        if name not in names:
            raise InputError(join_path("hints", str(name)), f"the pod has no container of this name (it has {echo(', '.join(names))})")
        containers[name] = _read_resource_hints(resource_hints, join_path("hints", name))
    return FixedHintProvider(containers, None)


# ----- the node --------------------------------------------------------------------------------------


class Node:
    """One simulated kubelet node: machine, kubelet configuration, optional checkpoint folder.

    The node starts on first use (or call `start()` to see a start error early); a start
    error is raised as `KubeletStartError` with kubelet's text by every later call.
    """

    def __init__(
        self,
        machine: MachineInput,
        kubelet: KubeletInput = None,
        *,
        state_dir: Union[str, Path, None] = None,
        merge: str = "fast",
        limits: Limits = DEFAULT_LIMITS,
        devices: DevicesInput = None,
    ) -> None:
        if not isinstance(merge, str) or merge not in MERGE_FUNCTIONS:
            raise InputError("merge", f"expected one of: {', '.join(MERGE_FUNCTIONS)}, got {describe(merge)}")
        folder = _check_path(state_dir, "state_dir", "a folder path or None")
        if folder is not None and os.path.lexists(folder) and not os.path.isdir(folder):
            raise InputError("state_dir", f"{brief(folder)} is not a folder")
        if not isinstance(limits, Limits):
            raise InputError("limits", f"expected a kubeinputs.limits.Limits, got {describe(limits)}")
        info = read_machine(machine, limits)
        self._node = SimulatedNode(info, read_kubelet(kubelet, limits), folder, MERGE_FUNCTIONS[merge],
                                   limits=limits, devices=read_devices(devices, info, limits))
        self._started = False

    @classmethod
    def from_host(
        cls, kubelet: KubeletInput = None, *, sysfs_root: Union[str, Path] = "/sys",
        state_dir: Union[str, Path, None] = None, devices: DevicesInput = None,
    ) -> "Node":
        """A node with this host's NUMA and CPU topology, read from sysfs as cadvisor reads it.
        Cost: one read of the sysfs tree (a few small files per NUMA node and CPU)."""
        root = _check_path(sysfs_root, "sysfs_root", "a folder path")
        if root is None or not os.path.isdir(root):
            raise InputError("sysfs_root", f"expected a folder path, got {describe(sysfs_root)}"
                             if root is None else f"{brief(root)} is not a folder")
        return cls(read_machine_info(root), kubelet, state_dir=state_dir, devices=devices)

    @classmethod
    def over(cls, node: SimulatedNode) -> "Node":
        """The API over a simulated node someone else built and started (the node a scenario run leaves):
        using it starts nothing again. Cost: O(1)."""
        if not isinstance(node, SimulatedNode):
            raise InputError("node", f"expected a SimulatedNode, got {describe(node)}")
        api = cls.__new__(cls)
        api._node = node
        api._started = True
        return api

    # ----- lifecycle -----

    @property
    def simulated_node(self) -> SimulatedNode:
        """The simulated node underneath, for the layers built on this API (servers, explain). Cost: O(1)."""
        return self._node

    @property
    def machine(self) -> MachineInfo:
        """The node's machine info. Cost: O(1)."""
        return self._node.machine

    @property
    def limits(self) -> Limits:
        """The work limits of the node's readers (its pods, configuration overrides, checkpoint). Cost: O(1)."""
        return self._node.limits

    @property
    def kubelet(self) -> KubeletConfig:
        """The node's kubelet configuration. Cost: O(1)."""
        return self._node.config

    def start(self) -> None:
        """Start kubelet's managers (restoring the checkpoint, if any); raises KubeletStartError.
        Cost: O(state): the checkpoint read, decoded and checked against the machine (validateState)."""
        self._started = True
        self._node.start()

    def restart(self, **overrides: object) -> None:
        """Restart kubelet, optionally with changed KubeletConfiguration fields (their field names:
        `restart(topologyManagerPolicy="restricted")`) laid over the configuration of the last start
        that succeeded (a failed start's fields are not kept); state comes back from the checkpoint.
        Cost: as `start`."""
        _refuse_none_fields(overrides, "restart")
        base = self._node.started_config or self._node.config  # a failed start leaves nothing to build on
        config = parse_kubelet_config(dict(overrides), "restart", base=base, limits=self._node.limits) if overrides \
            else base
        self._started = True
        self._node.restart(config)

    def _running(self) -> SimulatedNode:
        """The started node (starting it on first use)."""
        if not self._started:
            self._started = True
            self._node.start()
        if not self._node.running:
            error = KubeletStartError(self._node.start_error or "the node is not running")
            error.hint = self._node.start_hint
            raise error
        return self._node

    # ----- pods -----

    def admit(self, pod: PodInput, hints: HintsInput = None) -> Admission:
        """Admit a pod as kubelet does (topology manager admission, then container creation).
        Cost: per container, every provider's hints and their merge, O(2^n x resources) for n NUMA
        nodes (a hint family, searched, from 17), then Allocate; one checkpoint write, O(assigned
        containers)."""
        node = self._running()
        parsed = read_pod(pod, limits=self._node.limits)
        return admission_of(node, parsed, node.admit(parsed, hint_provider(parsed, hints, node.config.topology_manager_scope)))

    def would_admit(self, pod: PodInput, hints: HintsInput = None) -> Admission:
        """The answer `admit` would give, without changing this node.
        Cost: as `admit`, on a copy of the node (O(state + pods) to copy); nothing is written."""
        node = self._running()
        parsed = read_pod(pod, limits=self._node.limits)
        trial = node.fork()
        return admission_of(trial, parsed, trial.admit(parsed, hint_provider(parsed, hints, node.config.topology_manager_scope)))

    def hints(self, pod: PodInput) -> dict[str, HintMap]:
        """Every hint provider's topology hints by resource (the device manager's per device resource, the CPU
        manager's `cpu`, the memory manager's memory and hugepages): per container (init, then app), or
        `{"pod": ...}` in pod scope. Cost: the hint calls of an admission, O(containers x 2^n x resources)
        for n NUMA nodes; nothing changes."""
        node = self._running()
        hints = node.topology_hints(read_pod(pod, limits=node.limits))
        return {key: _copy_hint_map(value) for key, value in hints.items()}

    def remove(self, pod: PodInput, container: Optional[str] = None, *, namespace: Optional[str] = None) -> None:
        """Remove every container of an admitted pod (by name, UID or manifest), or one container;
        `namespace` picks the pod of that name in that namespace (a pod refused at admission is
        removed from the node's pods as kubelet deletes it). Cost: one release per container of the
        pod and one checkpoint write (O(assigned containers)); a pod given by name is found in O(pods)."""
        if container is not None and not isinstance(container, str):
            raise InputError("container", f"expected a container name or None, got {describe(container)}")
        node = self._running()
        found = find_admitted(node, pod, namespace)
        if container is not None and found.find_container(container) is None:
            raise NodeError(f"pod {found.name!r} has no container {container!r}")
        node.remove(found, container)

    def pods(self) -> list[str]:
        """The names of the active pods, in admission order. Cost: O(active pods)."""
        return [p.name for p in self._running().active_pods()]

    # ----- readers -----

    def machine_state(self) -> dict[int, NUMANodeState]:
        """A copy of the memory manager's machine state (per NUMA node: memory tables, cells, assignments).
        Cost: O(NUMA nodes x resources) (a copy)."""
        return dict(clone_machine_state(self._running().state().get_machine_state()))

    def free(self) -> BytesByNode:
        """Free bytes per NUMA node and resource. Cost: O(NUMA nodes x resources)."""
        return _by_node(self.machine_state(), lambda table: table.free)

    def allocatable(self) -> BytesByNode:
        """Allocatable bytes per NUMA node and resource (the memory manager's GetAllocatableMemory).
        Cost: O(NUMA nodes x resources)."""
        result: BytesByNode = {}
        for block in self._running().memory_manager.get_allocatable_memory() or []:
            for numa in block.numa_affinity or []:
                result.setdefault(numa, {})[block.type] = block.size
        return result

    # ----- what-ifs (memorymanager.node.whatif) -----

    def headroom(self) -> dict[int, "NodeHeadroom"]:
        """Per NUMA node the room left: free and allocatable bytes per resource, the NUMA group the node
        belongs to and its free bytes, and whether a single-NUMA request can use the node alone.
        Cost: O(NUMA nodes x resources)."""
        from memorymanager.node.whatif import headroom

        return headroom(self._running())

    def largest_admissible(self, pod: PodInput, hints: HintsInput = None) -> Optional["LargestFit"]:
        """The largest request of the pod's shape (every memory and hugepages request scaled by one factor,
        rounded down to whole MiB or pages) this node admits now, with its admission and the next larger
        request (checked: refused); None when no size is admitted. Changes nothing.

        Raises NodeError when the memory manager pins none of the pod's memory (policy None, a pod that is
        not Guaranteed, no memory request): its size then never decides admission. Cost: at most
        `memorymanager.node.whatif.MAX_CHECKS` admissions on in-memory copies of the node (each a few
        milliseconds on a small node, O(state) to copy)."""
        from memorymanager.node.whatif import largest_admissible, unpinned_reason

        node = self._running()
        parsed = read_pod(pod, limits=self._node.limits)
        extra = hint_provider(parsed, hints, node.config.topology_manager_scope)
        reason = unpinned_reason(node, parsed)
        if reason:
            raise NodeError(f"pod {parsed.name!r}: {reason}, so no size of it is refused for memory")
        return largest_admissible(node, parsed, extra)[0]

    def largest_cpu_request(self, pod: PodInput, container: Optional[str] = None,
                            hints: HintsInput = None) -> Optional["CPUFit"]:
        """The largest exclusive CPU request of one container (`container`, else the one asking the most) this
        node admits now, counted down from one below its request (in whole cores under `full-pcpus-only`),
        with its admission and the next larger count (checked: refused); None when no smaller count is
        admitted. Changes nothing.

        Raises NodeError when no container of the pod asks for exclusive CPUs (the static policy pins only a
        Guaranteed container's integral `cpu`). Cost: at most `memorymanager.node.whatif.MAX_CHECKS` admissions
        on in-memory copies of the node."""
        from memorymanager.node.whatif_cpu import NO_EXCLUSIVE_CPUS, largest_cpu_request

        node = self._running()
        parsed = read_pod(pod, limits=self._node.limits)
        extra = hint_provider(parsed, hints, node.config.topology_manager_scope)
        if container is not None and container not in {c.name for c in parsed.all_containers()}:
            raise NodeError(f"pod {parsed.name!r} has no container {container!r}")
        fit, _, why = largest_cpu_request(node, parsed, container, extra)
        if fit is None and why == NO_EXCLUSIVE_CPUS:
            raise NodeError(f"pod {parsed.name!r}: {why}, so no CPU count of it is refused")
        return fit

    # ----- readers for the layers built on this API (PodResources server, metrics, NRT) -----

    def active_pods(self) -> list[Pod]:
        """The active pods as parsed Pods (namespace, UID, init and app containers), in admission
        order; kubelet's PodResources server lists these. Treat them as read-only. Cost: O(active pods)."""
        return list(self._running().active_pods())

    def is_active(self, uid: str) -> bool:
        """Whether a pod of this UID is active on the node (admitted, not removed since). Cost: O(1)."""
        expect_str(uid, "uid")
        return self._running().is_active(uid)

    def memory_blocks(self, pod_uid: str, container: str) -> list[Block]:
        """Copies of the memory manager's blocks of one container (its GetMemory), in state order;
        empty when it has none. Cost: O(the container's blocks)."""
        expect_str(pod_uid, "pod_uid")
        expect_str(container, "container")
        blocks = self._running().memory_manager.get_memory(pod_uid, container) or []
        return [Block(list(b.numa_affinity or []), b.type, b.size) for b in blocks]

    def pod_memory_blocks(self, pod_uid: str) -> list[Block]:
        """Copies of a pod's pod-level blocks (PodLevelResourceManagers); usually empty.
        Cost: O(the pod's blocks)."""
        expect_str(pod_uid, "pod_uid")
        blocks = self._running().memory_manager.get_pod_memory(pod_uid) or []
        return [Block(list(b.numa_affinity or []), b.type, b.size) for b in blocks]

    def allocatable_blocks(self) -> list[Block]:
        """The memory manager's GetAllocatableMemory blocks, computed once at start (empty under
        the None policy). Cost: O(NUMA nodes x resources)."""
        return list(self._running().memory_manager.get_allocatable_memory() or [])

    # ----- for the resource-manager backend (memorymanager.resmgr) -----

    def adopt(self, pods: Union[PodInput, Sequence[PodInput]]) -> None:
        """Take pods a restarted kubelet is already running as active, without admitting them.

        After a restart the memory manager's state comes back from the checkpoint, but its
        stale-state cleanup (run before every hint or allocation) drops whatever belongs to no
        active pod. Adopting every running pod first, all at once, keeps their restored
        assignments; nothing is placed anew. A container that has no assignment keeps none
        (a later `admit` of its pod places it). `pods` is a list of pods, or a file or YAML text of
        several (`read_pods`).

        Cost: O(pods + their containers); nothing is placed or written."""
        self._running().assume_running(read_pods(pods, self._node.limits))

    def admit_on(self, pod: PodInput, numa_nodes: Mapping[str, Sequence[int]]) -> Admission:
        """Admit a pod whose containers' memory must go on given NUMA nodes (container -> ids).

        The topology manager admits the pod as usual, but the memory manager's Static policy
        reads the given mask as the stored affinity of those containers: this is how memory
        the scheduler already placed (a DRA claim on one NUMA node) is reserved by kubelet's
        own Allocate in the same machine state. kubelet's rules still apply to that mask (a
        mask too small is widened, one that would mix single- and cross-NUMA groups is
        refused); the caller checks `Placement.cpuset_mems` and `memory` against what it asked.

        Cost: as `admit`."""
        parsed = read_pod(pod, limits=self._node.limits)
        pinned = _pinned_hints(parsed, numa_nodes, self._node.machine)
        node = self._running()
        outcome = node.admit(parsed, None, pinned)
        placements = placements_of(node, parsed) if outcome.admit else {}
        return Admission(outcome.admit, outcome.reason, outcome.message, placements)


def _pinned_hints(pod: Pod, numa_nodes: object, machine: MachineInfo) -> dict[str, TopologyHint]:
    """`admit_on`'s container -> NUMA ids as preferred hints; a container the pod lacks, an empty
    list or a NUMA node the machine lacks is an InputError naming it."""
    if not isinstance(numa_nodes, Mapping):
        raise InputError("numa_nodes", f"expected a map of container name to NUMA ids, got {describe(numa_nodes)}")
    names = [c.name for c in pod.all_containers()]
    present = {n.node_id for n in machine.topology}
    pinned: dict[str, TopologyHint] = {}
    for name, ids in numa_nodes.items():
        where = join_path("numa_nodes", str(name))
        if not isinstance(name, str) or name not in names:
            raise InputError(where, f"the pod has no container of this name (it has {echo(', '.join(names))})")
        nodes = _numa_ids(ids, where)
        if not nodes:
            raise InputError(where, "expected at least one NUMA id")
        missing = sorted(set(nodes) - present)
        if missing:
            raise InputError(where, f"no NUMA node {missing[0]} on this machine")
        pinned[name] = TopologyHint.of(sorted(set(nodes)), True)
    return pinned


def find_admitted(node: SimulatedNode, pod: PodInput, namespace: Optional[str] = None) -> Pod:
    """The pod `Node.remove` removes: an admitted pod named by UID or name (a one-line string that is not a
    file), or by its manifest; else a pod refused at admission and not removed since, by name (kubelet's
    pod manager still has it). Raises NodeError when there is none, InputError for a bad or ambiguous name."""
    if namespace is not None and (not isinstance(namespace, str) or not namespace):
        raise InputError("namespace", f"expected a namespace name, got {describe(namespace)}")
    if isinstance(pod, str) and "\n" not in pod and not _is_path(pod):
        found = node.find_pod(pod, namespace)
        name, label = pod, pod if namespace is None else f"{namespace}/{pod}"
    else:
        parsed = read_pod(pod, limits=node.limits)
        found, name, label = node.find_pod(parsed.uid, parsed.namespace), parsed.name, parsed.name
        namespace = parsed.namespace
    if found is None:
        found = node.get_pod_by_name(namespace or DEFAULT_NAMESPACE, name)
    if found is None:
        raise NodeError(f"no pod {brief(label)} was admitted on this node")
    return found


def _by_node(machine_state: Mapping[int, NUMANodeState], pick: Callable[[MemoryTable], int]) -> BytesByNode:
    """One number per NUMA node and resource, taken from each memory table."""
    return {
        numa: {resource: pick(table) for resource, table in (node.memory_map or {}).items() if table is not None}
        for numa, node in sorted(machine_state.items())
    }


def _copy_hint_map(hints: ProviderHints) -> HintMap:
    """A caller's own copy of a provider's hint map; a hint family (17+ NUMA nodes) is handed over
    as it is (read-only and lazy: len, iteration in kubelet's order, `in`, best_hint)."""
    if hints is None:
        return None
    return {res: (None if lst is None else lst if isinstance(lst, HintFamily) else list(lst))
            for res, lst in hints.items()}
