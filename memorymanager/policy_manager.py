"""What kubelet's memory manager and CPU manager share around their policy (memory_manager.go and
cpu_manager.go repeat it): the state store (the checkpoint, or memory only), the container map, the
active pods whose absence makes state stale, the policy's hint and Allocate calls reported to the
observer, and the shape of a policy and of the None policy that pins nothing.

Each manager names itself (`PROVIDER`), builds its store (`_new_state`, `_in_memory_copy`), words its
not-started error (`_not_started`) and says what its start computes once (`_started`); its
container calls and readers are its own (they differ: the memory manager releases finished init
containers at AddContainer, the CPU manager at RemoveContainer).
"""
from __future__ import annotations

from typing import Callable, ContextManager, Generic, Mapping, Optional, Protocol, Sequence, TypeVar, Union

from kubeinputs.features import FeatureGates
from kubeinputs.pod import Container, Pod
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import NO_OBSERVER, Observer

from memorymanager.container_map import ContainerMap

ActivePodsFunc = Callable[[], Sequence[Pod]]
S = TypeVar("S")  # the manager's state store


class Policy(Protocol[S]):
    """What kubelet's memory and CPU manager policies have in common, over an explicit state store (each
    manager's Policy adds its allocatable reader)."""

    def name(self) -> str:
        """The policy type name."""

    def start(self, state: S) -> None:
        """Validate (and possibly initialise) the restored state; raise to refuse the start."""

    def allocate(self, state: S, pod: Pod, container: Container) -> None:
        """Pin for one container (idempotent); raise to refuse the pod."""

    def allocate_pod(self, state: S, pod: Pod) -> None:
        """Pin for a whole pod (pod-level resource managers); raise to refuse."""

    def remove_container(self, state: S, pod_uid: str, container_name: str) -> None:
        """Release a container (idempotent)."""

    def get_topology_hints(self, state: S, pod: Pod, container: Container) -> ProviderHints:
        """NUMA hints for one container."""

    def get_pod_topology_hints(self, state: S, pod: Pod) -> ProviderHints:
        """NUMA hints for the whole pod."""


class NoOpPolicy:
    """kubelet's `none` policy of either manager: every call does nothing, every hint map is nil (no
    preference). Each manager's names itself and says what it makes allocatable (nothing)."""

    def start(self, state: object) -> None:
        """Nothing to validate."""

    def allocate(self, state: object, pod: Pod, container: Container) -> None:
        """Nothing is pinned."""

    def allocate_pod(self, state: object, pod: Pod) -> None:
        """Nothing is pinned."""

    def remove_container(self, state: object, pod_uid: str, container_name: str) -> None:
        """Nothing to release."""

    def get_topology_hints(self, state: object, pod: Pod, container: Container) -> ProviderHints:
        """No preference (nil)."""
        return None

    def get_pod_topology_hints(self, state: object, pod: Pod) -> ProviderHints:
        """No preference (nil)."""
        return None


class PolicyManager(Generic[S]):
    """The shared part of the memory and CPU managers (see the module). Build a manager with its
    `new_manager`, then `start` it before anything else."""

    PROVIDER = ""  # the manager's name in observer events

    def __init__(self, policy: Policy[S], state_dir: Optional[str], feature_gates: FeatureGates,
                 observer: Observer = NO_OBSERVER) -> None:
        self.policy = policy
        self.state_dir = state_dir
        self.file_ops = None  # the checkpoint's FileOps (None: the durable default); set before start
        self.feature_gates = feature_gates
        self.observer = observer
        self.container_map = ContainerMap()
        self._state: Optional[S] = None
        self._active_pods: Optional[ActivePodsFunc] = None
        # optional: a value that changes whenever the active pods may have changed (the simulated node
        # gives one); with it remove_stale_state skips the walk while nothing can have become stale
        self._active_pods_version: Optional[Callable[[], tuple]] = None
        self._clean_for: Optional[tuple] = None

    # ----- what each manager says -----

    def _new_state(self) -> S:
        """The checkpoint-backed store, or an in-memory one when there is no state directory."""
        raise NotImplementedError

    def _in_memory_copy(self, state: S) -> S:
        """`state`'s content in an in-memory store (the same store when it is one already)."""
        raise NotImplementedError

    def _not_started(self) -> Exception:
        """The error of a call before start."""
        raise NotImplementedError

    def _started(self, state: S) -> None:
        """What start computes once, after the policy validated the state."""

    # ----- lifecycle ----------------------------------------------------------------------------

    def start(
        self,
        active_pods: ActivePodsFunc,
        initial_containers: Union[ContainerMap, Mapping[str, tuple[str, str]], None] = None,
        active_pods_version: Optional[Callable[[], tuple]] = None,
    ) -> None:
        """Restore the state, start the policy (validateState), then what the manager computes once.
        Raises the store's and the policy's errors unchanged."""
        self._active_pods = active_pods
        self._active_pods_version = active_pods_version
        self._clean_for = None
        if isinstance(initial_containers, ContainerMap):
            self.container_map = initial_containers
        else:
            self.container_map = ContainerMap(dict(initial_containers or {}))
        self._state = self._new_state()
        self.policy.start(self._state)
        self._started(self._state)

    def _started_state(self) -> S:
        """The state store; using the manager before start is an error."""
        if self._state is None:
            raise self._not_started()
        return self._state

    def keep_in_memory(self) -> None:
        """From now on nothing of this manager reaches a file: its state is held in memory only, and a
        later start begins from an empty state (a copy of a node, `SimulatedNode.fork`). Cost: O(state)
        when the state was the checkpoint's, else O(1)."""
        self.state_dir = None
        if self._state is not None:
            self._state = self._in_memory_copy(self._state)

    # ----- stale state --------------------------------------------------------------------------

    def _policy_remove_container_by_ref(self, pod_uid: str, container_name: str) -> None:
        """Release a container in the policy and forget its ID."""
        self.policy.remove_container(self._started_state(), pod_uid, container_name)
        self.container_map.remove_by_container_ref(pod_uid, container_name)

    def remove_stale_state(self) -> None:
        """Drop the state of every (pod, container) that is not part of an active pod: the stored ones
        first, then the container map (kubelet's order; sources are always ready here).

        kubelet does this at the start of Allocate, AllocatePod and the hint calls. Pods are walked in
        sorted order where Go's map order is random. Cost: O(a + s log s) for a active containers and s
        stored ones (nothing stored is copied), plus the removals; with an `active_pods_version` the walk
        is skipped while the active pods cannot have changed (a pod of n containers would make it O(n^2)).
        """
        state = self._started_state()
        # After a pass every stored container belongs to an active pod, and until the active pods
        # change only their containers are allocated: nothing can be stale.
        version = self._active_pods_version() if self._active_pods_version is not None else None
        clean = self._clean_for
        if version is not None and clean is not None and clean[0] == version[0] and clean[1] is version[1]:
            return
        self._clean_for = version
        pods = {pod.uid: pod for pod in (self._active_pods() if self._active_pods is not None else [])}
        # like kubelet, the last pod listed under a UID counts
        active = {(uid, c.name) for uid, pod in pods.items() for c in (*pod.init_containers, *pod.containers)}
        for ref in state.assigned_containers():  # type: ignore[attr-defined]
            if ref not in active:
                self._policy_remove_container_by_ref(*ref)
        for _container_id, ref in self.container_map.items():  # a snapshot: removal is safe
            if ref not in active:
                self._policy_remove_container_by_ref(*ref)

    # ----- hint provider ------------------------------------------------------------------------

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """Container-scope hints (after dropping stale state), reported to the observer."""
        self.remove_stale_state()
        hints = self.policy.get_topology_hints(self._started_state(), pod, container)
        self.observer.hints_given(self.PROVIDER, pod, container, hints)
        return hints

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """Pod-scope hints (after dropping stale state), reported to the observer."""
        self.remove_stale_state()
        hints = self.policy.get_pod_topology_hints(self._started_state(), pod)
        self.observer.hints_given(self.PROVIDER, pod, None, hints)
        return hints

    def allocate(self, pod: Pod, container: Container) -> None:
        """Allocate for a container at admission (after dropping stale state); raises to refuse the pod."""
        self.remove_stale_state()
        self._allocate(pod, container, lambda state: self.policy.allocate(state, pod, container))

    def allocate_pod(self, pod: Pod) -> None:
        """AllocatePod for a whole pod (PodLevelResourceManagers); raises to refuse the pod."""
        self.remove_stale_state()
        self._allocate(pod, None, lambda state: self.policy.allocate_pod(state, pod))

    def _allocate(self, pod: Pod, container: Optional[Container], call: Callable[[S], None]) -> None:
        """One Allocate or AllocatePod of the policy, its start and end reported to the observer."""
        state = self._started_state()
        self.observer.allocation_started(self.PROVIDER, pod, container)
        try:
            call(state)
        except Exception as err:
            self.observer.allocation_done(self.PROVIDER, pod, container, err)
            raise
        self.observer.allocation_done(self.PROVIDER, pod, container, None)

    # ----- readers ------------------------------------------------------------------------------

    def deferred_writes(self) -> ContextManager[object]:
        """A context in which the checkpoint is written once at the end instead of after every change
        (the store's deferred_writes; in memory, nothing to defer)."""
        return self._started_state().deferred_writes()  # type: ignore[attr-defined]

    def policy_name(self) -> str:
        """The active policy's name."""
        return self.policy.name()
