"""What kubelet's resource managers report as they decide: one observer protocol for the topology
manager and every hint provider (memory, CPU, devices), called where kubelet logs or counts.

The tools built on the managers (metrics, explain, the runner's report of an admission's hints)
learn what happened through this seam alone: they never wrap, subclass or swap a manager. An
observer subclasses `Observer` and overrides the events it wants; the others do nothing.

One admission in container scope, as the events arrive (pod scope: one merge for the pod, the
providers' events with `container` None for the pod-level calls):

    kubelet_started(node)                             a (re)start: new managers, counters from zero
    admission_started(pod)                            TopologyManagerAdmissionRequestsTotal
      per container:
        hints_given(provider, pod, container, hints)  each provider's answer, in registration order
        hints_merged(pod, container, hints, best, admit)        "Best TopologyHint"
        alignment(scope, NUMA_NODE, False)            ...AlignedComputeResourcesFailure (refused)
        per provider:
          allocation_started(provider, pod, container)
          skipped(provider, pod, container, why)      "... skipped": nothing to pin
          pinning_requested(provider, pod, container) {memory,cpu}_manager_pinning_requests_total
          pinning_failed(provider, pod, container, error)        ..._pinning_errors_total
          allocation_done(provider, pod, container, error)
        alignment(scope, NUMA_NODE, True)             ContainerAlignedComputeResources
    admission_done(pod, result)                       "Pod Admit Result"

A provider reports `skipped` also for the hint calls it answers without looking for a placement
(before its `hints_given`), with the same reasons. Events carry references, not copies: an
observer that keeps a hint map or a state copies what it keeps. Observers run inside the
managers' calls and must not change the managers.

`ObserverList` joins several observers into the one object the managers call; an event nobody
overrides costs one call of a function that does nothing.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from kubeinputs.pod import Container, Pod
from topologymanager.admission import PodAdmitResult
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints

# The providers' names in events (the `provider` argument).
MEMORY_MANAGER = "memory"
CPU_MANAGER = "cpu"
DEVICE_MANAGER = "devices"

# Alignment boundaries (`alignment`), kubelet's `boundary` label values.
NUMA_NODE = "numa_node"
PHYSICAL_CPU = "physical_cpu"
UNCORE_CACHE = "uncore_cache"

# Reasons (`skipped`) the memory and CPU managers share, as kubelet logs them.
# "... allocation skipped, pod is using pod-level resources which are not supported by the static ... policy"
POD_LEVEL_RESOURCES = "pod is using pod-level resources"
# "Container (Pod) already present in state, skipping"
ALREADY_PRESENT = "already present in state"


class Observer:
    """Every event a kubelet resource manager reports (see the module); each does nothing here."""

    # ----- kubelet -----

    def kubelet_started(self, node: object) -> None:
        """A kubelet (re)start: every manager is new, and so are kubelet's counters (`node` is what
        runs the managers: the simulated node)."""

    # ----- the topology manager (topology_manager.go, scope*.go) -----

    def admission_started(self, pod: Pod) -> None:
        """Admit was called (kubelet counts the admission request and starts its duration timer)."""

    def hints_merged(self, pod: Pod, container: Optional[Container], providers_hints: Sequence[ProviderHints],
                     best: TopologyHint, admit: bool) -> None:
        """The policy merged every provider's hints for a container (None: the pod, in pod scope)."""

    def alignment(self, scope: str, boundary: str, aligned: bool) -> None:
        """A container (scope `container`) or pod (`pod`) aligned at `boundary`, or refused for not being
        alignable: NUMA_NODE by the topology manager under a policy that guarantees alignment,
        PHYSICAL_CPU (full-pcpus-only) and UNCORE_CACHE by the CPU manager."""

    def admission_done(self, pod: Pod, result: PodAdmitResult) -> None:
        """Admit's answer."""

    # ----- every hint provider (`provider`: MEMORY_MANAGER, CPU_MANAGER, DEVICE_MANAGER) -----

    def hints_given(self, provider: str, pod: Pod, container: Optional[Container], hints: ProviderHints) -> None:
        """A provider's hints for a container (None: the pod's, in pod scope)."""

    def allocation_started(self, provider: str, pod: Pod, container: Optional[Container]) -> None:
        """Allocate (container None: AllocatePod) begins, stale state already dropped."""

    def skipped(self, provider: str, pod: Pod, container: Optional[Container], why: str) -> None:
        """The provider leaves the container (or pod) alone in this call; `why` is one of the provider's
        reasons (for the memory manager, `memorymanager.observer`)."""

    def pinning_requested(self, provider: str, pod: Pod, container: Optional[Container]) -> None:
        """An exclusive pinning is attempted (kubelet counts a pinning request)."""

    def pinning_failed(self, provider: str, pod: Pod, container: Optional[Container], error: BaseException) -> None:
        """That pinning failed (kubelet counts a pinning error); the error refuses the pod."""

    def allocation_done(self, provider: str, pod: Pod, container: Optional[Container],
                        error: Optional[BaseException]) -> None:
        """Allocate (AllocatePod) ended: None, or the error that refuses the pod."""


NO_OBSERVER = Observer()

EVENTS: tuple[str, ...] = tuple(name for name, value in vars(Observer).items()
                                if callable(value) and not name.startswith("_"))


def _nothing(*args: object) -> None:
    """An event nobody observes."""


class _Fan:
    """One event for several observers, in their order."""

    __slots__ = ("targets",)

    def __init__(self, targets: list[Callable[..., None]]) -> None:
        self.targets = targets

    def __call__(self, *args: object) -> None:
        for target in self.targets:
            target(*args)


class ObserverList(Observer):
    """Several observers as one: each event goes to the observers that override it, in their order.
    Cost per event: one call (no observer of it: a function that does nothing)."""

    def __init__(self, observers: Sequence[Observer] = ()) -> None:
        self.observers: tuple[Observer, ...] = ()
        for observer in observers:
            self.add(observer)
        if not self.observers:
            self._dispatch()

    def add(self, observer: Observer) -> None:
        """Observe with `observer` too (a list: with each of its observers), from the next event on."""
        if not isinstance(observer, Observer):
            raise TypeError(f"an observer subclasses topologymanager.observer.Observer, got {type(observer).__name__}")
        added = observer.observers if isinstance(observer, ObserverList) else (observer,)
        self.observers = (*self.observers, *added)
        self._dispatch()

    def _dispatch(self) -> None:
        """Bind every event to the observers that override it."""
        for name in EVENTS:
            base = getattr(Observer, name)
            targets = [getattr(o, name) for o in self.observers if getattr(type(o), name) is not base]
            setattr(self, name, _nothing if not targets else targets[0] if len(targets) == 1 else _Fan(targets))
