"""Taps on an in-memory fork of a node: they pass every call through to the memory manager or the
topology manager policy and record what was seen and answered (the raw material of explain)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from memorymanager.node.simulated_node import POD_SCOPE
from memorymanager.reusable_memory import ReusableMemory
from state.types import NUMANodeMap
from topologymanager.hint_family import HintFamily
from topologymanager.hint import TopologyHint

@dataclass
class HintCall:
    """One hint call of the memory manager, with what it saw."""

    target: str
    pod_uid: str
    container: Any
    machine_state: NUMANodeMap
    assignments: dict  # the blocks the call could regenerate from: {pod uid: {container: blocks}}
    pod_assignments: dict
    reusable: ReusableMemory
    result: Any


@dataclass
class AllocateCall:
    """One Allocate (or AllocatePod) of the memory manager, with the state around it."""

    target: str
    container: Any
    before: NUMANodeMap
    after: Optional[NUMANodeMap] = None
    reusable_before: Optional[ReusableMemory] = None
    error: str = ""
    blocks: Optional[list] = None  # the container's (or pod's) blocks right after the call


@dataclass
class MergeCall:
    """One topology manager merge: every provider's hints and the result."""

    providers_hints: list
    best: TopologyHint
    admit: bool


class ManagerTap:
    """Stands for the memory manager; passes every call through and records what it saw."""

    def __init__(self, inner: Any) -> None:
        """Wrap the real object."""
        self.inner = inner
        self.hint_calls: list[HintCall] = []
        self.allocate_calls: list[AllocateCall] = []

    def _reusable_copy(self) -> ReusableMemory:
        """The Static policy's re-usable memory as it is now (empty for other policies)."""
        reusable = getattr(self.inner.policy, "reusable", None)
        return ReusableMemory(copy.deepcopy(reusable.by_pod) if reusable is not None else {})

    def _record_hints(self, pod: Any, target: str, container: Any, call) -> Any:
        """Run a hint call and record the state, re-usable memory and answer it saw."""
        self.inner.remove_stale_state()  # what the call does first; doing it twice changes nothing
        state = self.inner.state()
        seen = HintCall(target, pod.uid, container, state.get_machine_state(), self._held(state, pod, container),
                         state.get_pod_memory_assignments(), self._reusable_copy(), None)
        seen.result = call()
        self.hint_calls.append(seen)
        return seen.result

    @staticmethod
    def _held(state: Any, pod: Any, container: Any) -> dict:
        """The assignments a hint call can regenerate from, `{pod uid: {container: blocks}}`: the
        container's own (container scope) or the pod's (pod scope); never the whole node's, whose
        copy per call made a pod of n containers cost O(n^2)."""
        names = [container.name] if container is not None else [c.name for c in pod.all_containers()]
        held = {}
        for name in names:
            blocks = state.get_memory_blocks(pod.uid, name)
            if blocks is not None:
                held[name] = blocks
        return {pod.uid: held} if held else {}

    def get_topology_hints(self, pod: Any, container: Any) -> Any:
        """The manager's container hints (recorded)."""
        return self._record_hints(pod, container.name, container, lambda: self.inner.get_topology_hints(pod, container))

    def get_pod_topology_hints(self, pod: Any) -> Any:
        """The manager's pod hints (recorded)."""
        return self._record_hints(pod, POD_SCOPE, None, lambda: self.inner.get_pod_topology_hints(pod))

    def _record_allocate(self, pod: Any, target: str, container: Any, call) -> None:
        """Run an Allocate and record the machine state and re-usable memory around it."""
        self.inner.remove_stale_state()
        seen = AllocateCall(target, container, self.inner.state().get_machine_state(),
                             reusable_before=self._reusable_copy())
        self.allocate_calls.append(seen)
        try:
            call()
        except Exception as exc:
            seen.error = str(exc)
            raise
        finally:
            state = self.inner.state()
            seen.after = state.get_machine_state()
            seen.blocks = (state.get_memory_blocks(pod.uid, container.name) if container is not None
                           else state.get_pod_memory_blocks(pod.uid))

    def allocate(self, pod: Any, container: Any) -> None:
        """The manager's Allocate (recorded)."""
        self._record_allocate(pod, container.name, container, lambda: self.inner.allocate(pod, container))

    def allocate_pod(self, pod: Any) -> None:
        """The manager's AllocatePod (recorded)."""
        self._record_allocate(pod, POD_SCOPE, None, lambda: self.inner.allocate_pod(pod))

    def __getattr__(self, name: str) -> Any:
        """Everything else is the wrapped object's."""
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


class PolicyTap:
    """Stands for the topology manager policy; records every merge."""

    def __init__(self, inner: Any) -> None:
        """Wrap the real object."""
        self.inner = inner
        self.calls: list[MergeCall] = []

    @property
    def name(self) -> str:
        """The policy's name."""
        return self.inner.name

    def merge(self, providers_hints: Sequence[Any]) -> tuple[TopologyHint, bool]:
        """The policy's merge (recorded, with a copy of the hints it was given)."""
        given = [None if h is None else {r: (None if l is None else l if isinstance(l, HintFamily) else list(l))
                                         for r, l in h.items()}
                 for h in providers_hints]  # a hint family is read-only: shared, never listed
        best, admit = self.inner.merge(providers_hints)
        self.calls.append(MergeCall(given, best, admit))
        return best, admit

    def __getattr__(self, name: str) -> Any:
        """Everything else is the wrapped object's."""
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
