"""The raw material of an explanation: what the deciding code saw and answered, heard as an observer
(`topologymanager.observer`) of an in-memory fork of the node.

For each hint call of the memory manager the recorder keeps the state the policy read (machine
state, the blocks it could regenerate from, pod-level assignments, re-usable memory) and its
answer, or why it answered without looking (`skipped`); for each Allocate and AllocatePod, the
machine state around it, the blocks after it and its error; for each merge of the topology
manager, every provider's hints, which provider gave each map (the `hints_given` events of the
merge, in registration order; maps no event announced come from the hand-written hints' slot,
registered last) and the result. For the CPU manager: the free (shared pool minus reserved) and
re-usable CPUs and the CPUs the container (or pod) already held at each hint call, and the same
around each Allocate with the CPUs it ended with; for the device manager: the available, re-usable
and held devices per hint call, and around each Allocate the devices in use before and the devices
held after. Nothing of the managers is wrapped or replaced: the recorder reads the node's public
readers when an event arrives.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Optional, Sequence

from kubeinputs.pod import Container, Pod
from memorymanager.node.simulated_node import POD_SCOPE, SimulatedNode
from cpumanager.policy_static import StaticPolicy as CPUStaticPolicy
from kubeinputs.cpuset import CPUSet
from memorymanager.observer import MEMORY_MANAGER
from memorymanager.policy_static import StaticPolicy
from memorymanager.reusable_memory import ReusableMemory
from state.state import StateReader
from state.types import Block, ContainerMemoryAssignments, NUMANodeMap, PodMemoryAssignments
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import CPU_MANAGER, DEVICE_MANAGER, Observer

# The label of hint maps no provider event announced: the hand-written hints' slot.
HAND_WRITTEN = "hand-written"


@dataclass
class HintCall:
    """One hint call of the memory manager, with what it saw; `skipped` is the policy's reason when it
    answered without looking for a placement (`memorymanager.observer`)."""

    target: str
    pod_uid: str
    container: Optional[Container]
    machine_state: NUMANodeMap
    assignments: ContainerMemoryAssignments  # the blocks the call could regenerate from: {pod uid: {container: blocks}}
    pod_assignments: PodMemoryAssignments
    reusable: ReusableMemory
    result: ProviderHints
    skipped: Optional[str] = None


@dataclass
class AllocateCall:
    """One Allocate (or AllocatePod) of the memory manager, with the state around it."""

    target: str
    container: Optional[Container]
    before: NUMANodeMap
    after: Optional[NUMANodeMap] = None
    reusable_before: Optional[ReusableMemory] = None
    error: str = ""
    blocks: Optional[list[Block]] = None  # the container's (or pod's) blocks right after the call
    skipped: Optional[str] = None


@dataclass
class MergeCall:
    """One topology manager merge: every provider's hints, who gave each (observer provider names, or
    HAND_WRITTEN), and the result."""

    target: str
    providers_hints: list[ProviderHints]
    best: TopologyHint
    admit: bool
    providers: Optional[list[str]] = None  # observer provider names, one per map


@dataclass
class CPUHintCall:
    """One hint call of the CPU manager with what it read: the free CPUs (shared pool minus reserved), the
    pod's re-usable CPUs, the CPUs already held (per container of the target; pod scope: every container)."""

    target: str
    container: Optional[Container]
    available: CPUSet
    reusable: CPUSet
    held: dict[str, CPUSet]
    result: ProviderHints
    skipped: Optional[str] = None


@dataclass
class CPUAllocateCall:
    """One Allocate (AllocatePod) of the CPU manager: the free, re-usable and held CPUs before, the
    container's CPUs after (pod scope: per container), the error, why it was skipped."""

    target: str
    container: Optional[Container]
    available: CPUSet
    reusable: CPUSet
    held_before: Optional[CPUSet]
    after: dict[str, CPUSet]
    error: Optional[BaseException] = None
    skipped: Optional[str] = None


@dataclass
class DeviceHintCall:
    """One hint call of the device manager: per resource the available (healthy, free) devices, the pod's
    re-usable ones and those the target already holds."""

    target: str
    container: Optional[Container]
    available: dict[str, set[str]]
    reusable: dict[str, set[str]]
    held: dict[str, set[str]]
    result: ProviderHints


@dataclass
class DeviceAllocateCall:
    """One Allocate of the device manager: devices in use and re-usable before, the container's devices
    after (resource -> IDs), the error."""

    target: str
    container: Optional[Container]
    in_use_before: dict[str, set[str]]
    reusable: dict[str, set[str]]
    held_before: dict[str, set[str]]
    after: dict[str, set[str]]
    error: Optional[BaseException] = None


def _target(container: Optional[Container]) -> str:
    """A container's name, or `pod` for a pod-level call."""
    return POD_SCOPE if container is None else container.name


def _held(state: StateReader, pod: Pod, container: Optional[Container]) -> ContainerMemoryAssignments:
    """The assignments a hint call can regenerate from, `{pod uid: {container: blocks}}`: the container's
    own (container scope) or the pod's (pod scope); never the whole node's, whose copy per call made a
    pod of n containers cost O(n^2)."""
    names = [container.name] if container is not None else [c.name for c in pod.all_containers()]
    held = {}
    for name in names:
        blocks = state.get_memory_blocks(pod.uid, name)
        if blocks is not None:
            held[name] = blocks
    return {pod.uid: held} if held else {}


def _copy_hints(providers_hints: Sequence[ProviderHints]) -> list[ProviderHints]:
    """The providers' hint maps with their own lists (a hint family is read-only: shared, never listed)."""
    return [None if h is None else {r: (None if lst is None else lst if isinstance(lst, HintFamily) else list(lst))
                                    for r, lst in h.items()}
            for h in providers_hints]


class ExplainRecorder(Observer):
    """Records the memory manager's calls and the topology manager's merges on `node` (see the module)."""

    def __init__(self, node: SimulatedNode) -> None:
        self.node = node
        self.hint_calls: list[HintCall] = []
        self.allocate_calls: list[AllocateCall] = []
        self.merge_calls: list[MergeCall] = []
        self.cpu_hint_calls: list[CPUHintCall] = []
        self.cpu_allocate_calls: list[CPUAllocateCall] = []
        self.device_hint_calls: list[DeviceHintCall] = []
        self.device_allocate_calls: list[DeviceAllocateCall] = []
        self._skipped: Optional[str] = None  # the policy's reason in the call under way
        self._cpu_skipped: Optional[str] = None  # the CPU manager's, likewise
        self._given: list[str] = []  # providers that gave hints since the last merge, in order

    # ----- the CPU and device managers' views (public readers only) -----

    def _cpu_free(self) -> CPUSet:
        """GetAvailableCPUs: the shared pool minus the reserved CPUs."""
        cm = self.node.cpu_manager
        return cm.get_default_cpu_set().difference(cm.reserved_cpus())

    def _cpu_reusable(self, pod: Pod) -> CPUSet:
        """The CPUs of the pod's finished init containers later containers may take (static policy)."""
        policy = self.node.cpu_manager.policy
        return policy.cpus_to_reuse.get(pod.uid, CPUSet()) if isinstance(policy, CPUStaticPolicy) else CPUSet()

    def _cpu_held(self, pod: Pod, container: Optional[Container]) -> dict[str, CPUSet]:
        """The exclusive CPUs the container (pod scope: each container of the pod) holds now."""
        names = [container.name] if container is not None else [c.name for c in pod.all_containers()]
        held = {}
        for name in names:
            cpus = self.node.cpu_manager.get_cpus(pod.uid, name)
            if cpus is not None:
                held[name] = cpus
        return held

    def _device_view(self, pod: Pod, container: Optional[Container]) -> tuple[dict, dict, dict]:
        """(available, re-usable, held) device IDs per registered or allocated resource, copied."""
        state = self.node.device_manager.state()
        resources = set(state.plugins.healthy) | set(state.allocated)
        available = {r: set(state.available(r)) for r in resources}
        reusable = {r: set(state.reusable(pod.uid, r)) for r in resources}
        held: dict[str, set[str]] = {}
        for r in resources:
            ids = (state.pod_devices.container_devices(pod.uid, container.name, r) if container is not None
                   else state.pod_devices.pod_devices(pod.uid, r))
            if ids:
                held[r] = set(ids)
        return available, reusable, held

    def _device_held(self, pod: Pod, container: Container) -> dict[str, set[str]]:
        """The container's devices per resource, now."""
        got = self.node.device_manager.get_devices(pod.uid, container.name) or {}
        return {r: set(ids) for r, ids in got.items()}

    def _reusable(self) -> ReusableMemory:
        """The Static policy's re-usable memory as it is now (empty for other policies)."""
        policy = self.node.memory_manager.policy
        return ReusableMemory(copy.deepcopy(policy.reusable.by_pod) if isinstance(policy, StaticPolicy) else {})

    def skipped(self, provider: str, pod: Pod, container: Optional[Container], why: str) -> None:
        """Remember why the memory (or CPU) manager's call under way places nothing."""
        if provider == MEMORY_MANAGER:
            self._skipped = why
        elif provider == CPU_MANAGER:
            self._cpu_skipped = why

    def hints_given(self, provider: str, pod: Pod, container: Optional[Container], hints: ProviderHints) -> None:
        """A provider's hint call, with the state it read (hint calls change no state)."""
        self._given.append(provider)
        if provider == CPU_MANAGER:
            self.cpu_hint_calls.append(CPUHintCall(_target(container), container, self._cpu_free(),
                                                   self._cpu_reusable(pod), self._cpu_held(pod, container),
                                                   _copy_hints([hints])[0], self._cpu_skipped))
            self._cpu_skipped = None
            return
        if provider == DEVICE_MANAGER:
            available, reusable, held = self._device_view(pod, container)
            self.device_hint_calls.append(DeviceHintCall(_target(container), container, available, reusable, held,
                                                         _copy_hints([hints])[0]))
            return
        if provider != MEMORY_MANAGER:
            return
        state = self.node.memory_manager.state()
        self.hint_calls.append(HintCall(_target(container), pod.uid, container, state.get_machine_state(),
                                        _held(state, pod, container), state.get_pod_memory_assignments(),
                                        self._reusable(), hints, self._skipped))
        self._skipped = None

    def allocation_started(self, provider: str, pod: Pod, container: Optional[Container]) -> None:
        """An Allocate begins: the machine state and re-usable memory (CPUs, devices) before it."""
        if provider == CPU_MANAGER:
            self._cpu_skipped = None
            held = self._cpu_held(pod, container).get(container.name) if container is not None else None
            self.cpu_allocate_calls.append(CPUAllocateCall(_target(container), container, self._cpu_free(),
                                                           self._cpu_reusable(pod), held, {}))
            return
        if provider == DEVICE_MANAGER:
            if container is None:
                return
            state = self.node.device_manager.state()
            _, reusable, _ = self._device_view(pod, container)
            self.device_allocate_calls.append(DeviceAllocateCall(
                _target(container), container, {r: set(ids) for r, ids in state.allocated.items()}, reusable,
                self._device_held(pod, container), {}))
            return
        if provider != MEMORY_MANAGER:
            return
        self._skipped = None
        self.allocate_calls.append(AllocateCall(_target(container), container,
                                                self.node.memory_manager.state().get_machine_state(),
                                                reusable_before=self._reusable()))

    def allocation_done(self, provider: str, pod: Pod, container: Optional[Container],
                        error: Optional[BaseException]) -> None:
        """The Allocate ended: its error, the machine state and the blocks (CPUs, devices) after it."""
        if provider == CPU_MANAGER:
            seen = self.cpu_allocate_calls[-1]
            seen.error, seen.skipped, self._cpu_skipped = error, self._cpu_skipped, None
            seen.after = self._cpu_held(pod, container)
            return
        if provider == DEVICE_MANAGER:
            if container is None or not self.device_allocate_calls:
                return
            seen = self.device_allocate_calls[-1]
            seen.error = error
            seen.after = self._device_held(pod, container)
            return
        if provider != MEMORY_MANAGER:
            return
        seen = self.allocate_calls[-1]
        state = self.node.memory_manager.state()
        seen.error = "" if error is None else str(error)
        seen.after = state.get_machine_state()
        seen.blocks = (state.get_memory_blocks(pod.uid, container.name) if container is not None
                       else state.get_pod_memory_blocks(pod.uid))
        seen.skipped, self._skipped = self._skipped, None

    def hints_merged(self, pod: Pod, container: Optional[Container], providers_hints: Sequence[ProviderHints],
                     best: TopologyHint, admit: bool) -> None:
        """One merge of the topology manager, with a copy of the hints it was given and who gave each map (the
        providers' events since the last merge, in registration order; the rest: the hand-written slot)."""
        given = self._given[-len(providers_hints):] if len(self._given) > len(providers_hints) else self._given
        names = list(given) + [HAND_WRITTEN] * (len(providers_hints) - len(given))
        self._given = []
        self.merge_calls.append(MergeCall(_target(container), _copy_hints(providers_hints), best, admit, names))
