"""The raw material of an explanation: what the deciding code saw and answered, heard as an observer
(`topologymanager.observer`) of an in-memory fork of the node.

For each hint call of the memory manager the recorder keeps the state the policy read (machine
state, the blocks it could regenerate from, pod-level assignments, re-usable memory) and its
answer, or why it answered without looking (`skipped`); for each Allocate and AllocatePod, the
machine state around it, the blocks after it and its error; for each merge of the topology
manager, every provider's hints and the result. Nothing of the managers is wrapped or replaced:
the recorder reads the node's public readers when an event arrives.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Optional, Sequence

from kubeinputs.pod import Container, Pod
from memorymanager.node.simulated_node import POD_SCOPE, SimulatedNode
from memorymanager.observer import MEMORY_MANAGER
from memorymanager.policy_static import StaticPolicy
from memorymanager.reusable_memory import ReusableMemory
from state.state import StateReader
from state.types import Block, ContainerMemoryAssignments, NUMANodeMap, PodMemoryAssignments
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import Observer


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
    """One topology manager merge: every provider's hints and the result."""

    target: str
    providers_hints: list[ProviderHints]
    best: TopologyHint
    admit: bool


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
        self._skipped: Optional[str] = None  # the policy's reason in the call under way

    def _reusable(self) -> ReusableMemory:
        """The Static policy's re-usable memory as it is now (empty for other policies)."""
        policy = self.node.memory_manager.policy
        return ReusableMemory(copy.deepcopy(policy.reusable.by_pod) if isinstance(policy, StaticPolicy) else {})

    def skipped(self, provider: str, pod: Pod, container: Optional[Container], why: str) -> None:
        """Remember why the memory manager's call under way places nothing."""
        if provider == MEMORY_MANAGER:
            self._skipped = why

    def hints_given(self, provider: str, pod: Pod, container: Optional[Container], hints: ProviderHints) -> None:
        """A memory manager hint call, with the state it read (hint calls change no state)."""
        if provider != MEMORY_MANAGER:
            return
        state = self.node.memory_manager.state()
        self.hint_calls.append(HintCall(_target(container), pod.uid, container, state.get_machine_state(),
                                        _held(state, pod, container), state.get_pod_memory_assignments(),
                                        self._reusable(), hints, self._skipped))
        self._skipped = None

    def allocation_started(self, provider: str, pod: Pod, container: Optional[Container]) -> None:
        """An Allocate begins: the machine state and re-usable memory before it."""
        if provider != MEMORY_MANAGER:
            return
        self._skipped = None
        self.allocate_calls.append(AllocateCall(_target(container), container,
                                                self.node.memory_manager.state().get_machine_state(),
                                                reusable_before=self._reusable()))

    def allocation_done(self, provider: str, pod: Pod, container: Optional[Container],
                        error: Optional[BaseException]) -> None:
        """The Allocate ended: its error, the machine state and the blocks after it."""
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
        """One merge of the topology manager, with a copy of the hints it was given."""
        self.merge_calls.append(MergeCall(_target(container), _copy_hints(providers_hints), best, admit))
