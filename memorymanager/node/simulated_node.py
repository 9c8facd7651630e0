"""A simulated node: the parts of the kubelet that drive the topology manager and its hint providers.

`SimulatedNode` does what kubelet's container manager (cm/container_manager_linux.go) does around
the managers, in kubelet's order: start (feature gates, configuration validation, the reserved
CPUs, topology manager, then device manager, CPU manager and memory manager, each registered as a
hint provider as it is created; then CPU manager, memory manager and device manager Start), pod
admission followed by container creation (CPU manager, memory manager, then topology manager
`AddContainer`), container removal (the same order; the device manager has no RemoveContainer: it
frees the devices of pods that are no longer active), and restarts from the three checkpoint files
(`memory_manager_state`, `cpu_manager_state`, `device-plugins/kubelet_internal_checkpoint`). It keeps
the list of active pods the managers ask for when they drop stale state.
"""
from __future__ import annotations

import copy
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from typing import ContextManager, Iterable, Mapping, Optional, Sequence

from cpumanager.manager import Manager as CPUManager
from cpumanager.manager import new_manager as new_cpu_manager
from cpumanager.policy import POLICY_NONE as CPU_POLICY_NONE
from cpumanager.reserved_cpus import get_reserved_cpus
from devicemanager.constants import CHECKPOINT_DIR as DEVICE_CHECKPOINT_DIR
from devicemanager.constants import CHECKPOINT_FILE_NAME as DEVICE_CHECKPOINT_FILE_NAME
from devicemanager.manager import Manager as DeviceManager
from devicemanager.manager import new_manager as new_device_manager
from kubeinputs.errors import Error, InputError
from kubeinputs.devices import DeclaredDevices, Device
from kubeinputs.features import FeatureGates
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from state.checkpoint_manager import FileOps
from state.state import StateReader
from state.types import Block
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.hint_provider import HintProvider, ProviderHints
from topologymanager.manager import Manager as TopologyManager
from topologymanager.manager import new_manager as new_topology_manager
from topologymanager.merge import MergeFn
from topologymanager.observer import CPU_MANAGER, DEVICE_MANAGER, MEMORY_MANAGER, Observer, ObserverList

from kubeinputs.kubelet_config import KubeletConfig, node_allocatable_reservation, validate_kubelet_configuration
from kubeinputs.machine import MachineInfo
from kubeinputs.pod import Container, Pod, identity_conflict
from kubeinputs.goformat import go_quote
from memorymanager.policy import POLICY_NONE, POLICY_STATIC
from memorymanager.node.reservation import reserved_memory_hint
from memorymanager.manager import Manager as MemoryManager
from memorymanager.manager import new_manager as new_memory_manager

POD_SCOPE = "pod"


class NodeError(Error):
    """An operation the node cannot do (not running, unknown pod); str() is the reason."""


class KubeletStartError(NodeError):
    """The kubelet refused to start; str() is kubelet's message (with kubelet's wrapping).

    `hint` is an explanation for people, never part of the message: for a reservedMemory
    total that is not Node Allocatable's reservation, the numbers that must agree.
    """

    hint: Optional[str] = None


def policy_name_hint(error: BaseException, config: KubeletConfig) -> Optional[str]:
    """For kubelet's `unknown policy: "static"`: the memory manager policies it knows, spelled as it
    spells them (the names are case-sensitive)."""
    name = config.memory_manager_policy
    if name in (POLICY_NONE, POLICY_STATIC) or f"unknown policy: {go_quote(name)}" not in str(error):
        return None
    return (f"hint: memoryManagerPolicy is {go_quote(name)}; kubelet's memory manager policies are "
            f"{go_quote(POLICY_NONE)} and {go_quote(POLICY_STATIC)}, spelled exactly so")


def device_checkpoint_warnings(device_manager: DeviceManager) -> list[str]:
    """What the device manager restored as kubelet does, without a word, that a person should know: an
    unreadable checkpoint (kubelet continues with no allocation), entries naming devices or NUMA nodes the
    node does not have (kubelet restores them), entries whose plugin answer cannot be decoded (skipped).
    The file is named as kubelet's root names it (`device-plugins/kubelet_internal_checkpoint`)."""
    file = f"{DEVICE_CHECKPOINT_DIR}/{DEVICE_CHECKPOINT_FILE_NAME}"
    lines = []
    error = device_manager.checkpoint_error
    if error is not None:
        where = ": ".join(part for part in (error.where, error.reason) if part)
        lines.append(f"warning: {file} was not restored (kubelet continues without it): {where}")
    for problem in device_manager.checkpoint_problems:
        lines.append(f"warning: {file}: {problem.where}: {problem.reason} (kubelet restores the entry as it is)")
    for entry, reason in device_manager.skipped_entries:
        lines.append(f"warning: {file}: the entry of {entry.pod_uid}/{entry.container_name} ({entry.resource_name}) "
                     f"is skipped as kubelet skips it: {reason}")
    return lines


def container_id(pod: Pod, container_name: str) -> str:
    """The container ID the simulated runtime gives a container: `<pod uid>/<container name>`."""
    return f"{pod.uid}/{container_name}"


def aggregate_errors(messages: list[str]) -> str:
    """Kubernetes' error aggregate text: the message alone, or `[a, b, ...]` for several."""
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(messages) + "]"


def _copy_hints(hints: ProviderHints) -> ProviderHints:
    """A copy whose lists a caller may change without touching ours (hints are immutable; a hint
    family, read-only, is shared)."""
    if hints is None:
        return None
    return {res: (None if lst is None else lst if isinstance(lst, HintFamily) else list(lst))
            for res, lst in hints.items()}


def combined_hints(answers: Iterable[ProviderHints]) -> ProviderHints:
    """Several providers' answers for one container (or the pod) as one map by resource, in registration
    order. The providers' resources never overlap (device resources, `cpu`, memory and hugepages). A
    provider's nil or empty map adds nothing; the last answer (the memory manager's) is the base, so a node
    whose other providers have no opinion reports exactly the memory manager's answer (nil stays nil)."""
    answers = list(answers)
    base = answers[-1] if answers else None
    extra: dict = {}
    for answer in answers[:-1]:
        if answer:
            extra.update(answer)
    if not extra:
        return base
    return {**extra, **(base or {})}


class FixedHintProvider:
    """A hint provider with fixed answers, standing for the CPU or device manager.

    `containers` maps a container name to its hints (a name left out: nil map, i.e.
    no preference); `pod` is the answer in pod scope. Allocation always succeeds and
    reserves nothing.
    """

    def __init__(self, containers: Optional[dict[str, ProviderHints]] = None, pod: ProviderHints = None):
        self.containers = dict(containers or {})
        self.pod = pod

    @property
    def pod_scoped(self) -> bool:
        """Whether the hints are given for the pod scope only (pod hints, none per container)."""
        return self.pod is not None and not self.containers

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """The fixed hints of `container` (None when it has none)."""
        return _copy_hints(self.containers.get(container.name))

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """The fixed pod-scope hints."""
        return _copy_hints(self.pod)

    def allocate(self, pod: Pod, container: Container) -> None:
        """Nothing to allocate."""

    def allocate_pod(self, pod: Pod) -> None:
        """Nothing to allocate."""


class _AdmissionHints(Observer):
    """The modelled providers' hints of the admission under way, as the topology manager received them
    (`AdmitOutcome.hints`): per container, or under `pod` in pod scope, one map by resource."""

    def __init__(self) -> None:
        self.admitting = False
        self.recorded: dict[str, dict[str, ProviderHints]] = {}  # provider -> key -> its hints

    def start(self) -> None:
        """An admission begins: forget the last one's hints."""
        self.recorded, self.admitting = {}, True

    def hints_given(self, provider: str, pod: Pod, container: Optional[Container], hints: ProviderHints) -> None:
        """Keep a copy of each provider's hints while an admission runs."""
        if self.admitting:
            key = POD_SCOPE if container is None else container.name
            self.recorded.setdefault(provider, {})[key] = _copy_hints(hints)

    def combined(self) -> dict[str, ProviderHints]:
        """Every provider's hints by container (or `pod`): the memory manager's keys first, then the
        others' in registration order (devices, CPU); see `combined_hints`."""
        order = [self.recorded.get(p, {}) for p in (DEVICE_MANAGER, CPU_MANAGER, MEMORY_MANAGER)]
        keys = list(order[-1])
        for answers in order[:-1]:
            keys.extend(k for k in answers if k not in keys)
        return {key: combined_hints(answers.get(key) for answers in order) for key in keys}


class _SwitchableProvider:
    """The slot for a step's injected hints, registered after the memory manager.

    It is registered with the topology manager the first time a step injects hints
    (the topology manager has no way to unregister a provider). Outside such an
    admission it answers like a provider with no opinion at all (nil maps): kubelet's
    merge turns that into one `{any NUMA node, preferred}` hint, which changes no result.
    """

    def __init__(self) -> None:
        self.current: Optional[HintProvider] = None

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """The current injected provider's container hints, else no preference."""
        return self.current.get_topology_hints(pod, container) if self.current else None

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """The current injected provider's pod hints, else no preference."""
        return self.current.get_pod_topology_hints(pod) if self.current else None

    def allocate(self, pod: Pod, container: Container) -> None:
        """The current injected provider's Allocate, if any."""
        if self.current:
            self.current.allocate(pod, container)

    def allocate_pod(self, pod: Pod) -> None:
        """The current injected provider's AllocatePod, if any."""
        if self.current and hasattr(self.current, "allocate_pod"):
            self.current.allocate_pod(pod)


@dataclass
class AdmitOutcome:
    """An admission: kubelet's PodAdmitResult plus the memory manager's hints during it."""

    admit: bool
    reason: str = ""
    message: str = ""
    hints: dict[str, ProviderHints] = field(default_factory=dict)
    # regular init containers' blocks once the pod is admitted, before its containers are created (when
    # the later containers' creation releases them): what they held while they ran
    init_blocks: dict[str, Optional[list[Block]]] = field(default_factory=dict)


class _HeldWrites:
    """A context held open across calls (the memory manager's deferred_writes() under write_behind).
    A copy of the node (an in-memory fork) holds nothing: its state is not the file's."""

    def __init__(self) -> None:
        self._stack = ExitStack()

    def hold(self, context: ContextManager[object]) -> None:
        """Enter `context` until release()."""
        self._stack.enter_context(context)

    def release(self) -> None:
        """Leave every held context (the deferred writes happen now)."""
        self._stack.close()

    def __deepcopy__(self, memo: dict) -> "_HeldWrites":
        return _HeldWrites()


class _BothDeferred:
    """Two deferred_writes() contexts as one (entered in order, left in reverse); cheaper than an ExitStack on
    the admission path."""

    __slots__ = ("first", "second")

    def __init__(self, first: ContextManager[object], second: ContextManager[object]) -> None:
        self.first, self.second = first, second

    def __enter__(self) -> "_BothDeferred":
        self.first.__enter__()
        try:
            self.second.__enter__()
        except BaseException:
            self.first.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.second.__exit__(*exc)
        finally:
            self.first.__exit__(*exc)


class SimulatedNode:
    """One node: machine info, configuration, the checkpoint folder, and the managers.

    `state_dir` is the folder of `memory_manager_state`; None keeps the memory manager's
    state in memory only, so that a restart begins from an empty state. `observers` hear
    what the managers decide (`topologymanager.observer`), and every (re)start; `limits` are
    the readers' (a checkpoint is read up to max_checkpoint_bytes).
    """

    def __init__(
        self,
        machine: MachineInfo,
        config: KubeletConfig,
        state_dir: Optional[str],
        merge_fn: Optional[MergeFn] = None,
        observers: Sequence[Observer] = (),
        limits: Limits = DEFAULT_LIMITS,
        devices: Optional[Mapping[str, Iterable[Device]]] = None,
    ):
        self.machine = machine
        self.config = config
        self.state_dir = state_dir
        self.merge_fn = merge_fn
        self.limits = limits  # the readers' limits (the checkpoint is read up to max_checkpoint_bytes)
        # the device plugins that register with kubelet at start: resource -> devices, in the plugin's order
        self.devices: DeclaredDevices = {r: tuple(ds) for r, ds in (devices or {}).items()}
        # the checkpoint's FileOps: None is durable (FileOps(limits)); NoSyncFileOps for a throwaway folder
        self.file_ops: Optional[FileOps] = None
        # True (a throwaway folder nothing else reads): the checkpoint is written when it is about to be
        # read again (the next start) or at flush_checkpoint(), not after every change; set before start
        self.write_behind = False
        self._held_writes = _HeldWrites()  # the memory manager's deferred_writes() while write_behind holds them
        self.topology_manager: Optional[TopologyManager] = None  # the managers: None until start()
        self.memory_manager: Optional[MemoryManager] = None
        self.cpu_manager: Optional[CPUManager] = None
        self.device_manager: Optional[DeviceManager] = None
        self.start_error: Optional[str] = None
        # what the last start restored without a word, as kubelet does, but a person should know (a device
        # checkpoint naming a device the node lacks, or one kubelet could not read): lines for reports
        self.start_warnings: list[str] = []
        self.start_hint: Optional[str] = None  # KubeletStartError.hint of the last failed start
        self.started_config: Optional[KubeletConfig] = None  # the configuration of the last start that succeeded
        self._hints = _AdmissionHints()
        self._observers = ObserverList([self._hints, *observers])  # the one observer every manager reports to
        self._extra = _SwitchableProvider()
        self._extra_registered = False
        self._admitted: dict[str, Pod] = {}  # uid -> pod, admission order
        self._admitted_version = 0  # bumped on every change of _admitted (see active_pods_version)
        self._known: dict[str, Pod] = {}  # every pod ever admitted (for removal by name)
        self._refused: dict[str, Pod] = {}  # uid -> pod refused at admission, not admitted or removed since
        self._containers: dict[str, tuple[str, str]] = {}  # container ID -> (pod uid, name)
        self._current: Optional[Pod] = None

    # ----- lifecycle -----

    @property
    def running(self) -> bool:
        """Whether the managers exist (the last start succeeded)."""
        return self.memory_manager is not None

    def start(self) -> None:
        """Create the managers and restore state, as the kubelet does at start; raises KubeletStartError."""
        self._held_writes.release()  # the old managers' last changes reach the file before it is read
        self._drop_managers()
        self.start_warnings = []
        self._extra_registered = False
        self._observers.kubelet_started(self)
        try:
            try:
                self._start()
            except KubeletStartError:
                self._drop_managers()
                raise
            except Exception as exc:  # any manager error is a refusal to start
                self._drop_managers()
                raise KubeletStartError(str(exc)) from exc
        except KubeletStartError as exc:
            exc.hint = reserved_memory_hint(exc, self.config, self.machine) or policy_name_hint(exc, self.config)
            self.start_error, self.start_hint = str(exc), exc.hint
            raise
        self.start_error = self.start_hint = None
        self.started_config = self.config
        if self.write_behind:
            self._hold_writes()

    def _drop_managers(self) -> None:
        """No managers (before a start, or after a failed one)."""
        self.topology_manager = self.memory_manager = self.cpu_manager = self.device_manager = None

    def _file_ops(self) -> FileOps:
        """The managers' checkpoint FileOps: the node's own, else durable writes reading within the limits."""
        return self.file_ops if self.file_ops is not None else FileOps(self.limits)

    def _hold_writes(self) -> None:
        """Hold the memory and CPU managers' checkpoint writes (write_behind) until released."""
        self._held_writes.hold(self.memory_manager.deferred_writes())
        self._held_writes.hold(self.cpu_manager.deferred_writes())

    def deferred_writes(self) -> ContextManager[object]:
        """A context in which the memory and CPU managers write their checkpoints once, at the end."""
        return _BothDeferred(self.memory_manager.deferred_writes(), self.cpu_manager.deferred_writes())

    def flush_checkpoint(self) -> None:
        """With write_behind: write the checkpoints now if anything changed since they were last written
        (the files are then the ones kubelet leaves after the same calls), and keep deferring after it."""
        self._held_writes.release()
        if self.write_behind and self.running:
            self._hold_writes()

    def end_write_behind(self) -> None:
        """With write_behind: write the checkpoint now if anything changed, and defer no more. The
        runner calls it before it removes its throwaway folder: a write still held would otherwise
        land when the held context is collected, recreating the folder after its removal."""
        self.write_behind = False
        self._held_writes.release()

    def _start(self) -> None:
        """In kubelet's order: feature gates, configuration validation, the reserved CPUs
        (cmd/kubelet/app/server.go), the topology manager; the device, CPU and memory managers, each
        registered as a hint provider when created (NewContainerManager); then CPU manager, memory
        manager and device manager Start (containerManagerImpl.Start)."""
        cfg = self.config
        try:
            gates = FeatureGates.from_config(cfg.feature_gates)
        except ValueError as exc:
            raise KubeletStartError(f"failed to set feature gates from initial flags-based config: {exc}") from exc
        problems = validate_kubelet_configuration(cfg)
        if problems:
            raise KubeletStartError(
                f"failed to validate kubelet configuration, error: {aggregate_errors(list(problems))}"
            )
        reserved_cpus = get_reserved_cpus(self.machine, cfg.reserved_system_cpus)
        reservation = node_allocatable_reservation(cfg, self.machine)
        tm = new_topology_manager(
            self.machine.topology,
            cfg.topology_manager_policy,
            cfg.topology_manager_scope,
            dict(cfg.topology_manager_policy_options),
            gates,
            merge_fn=self.merge_fn,
            observer=self._observers,
        )
        # A provider that can only answer "no preference" (the CPU manager's none policy; a device manager with no
        # plugin and no checkpoint) is not registered: kubelet's merge reads its nil map as one {any NUMA node,
        # preferred} hint, which changes no merge, and its Allocate does nothing, so every answer is the same
        # while the topology manager (and what observes it) sees the providers of a node that pins memory only.
        dm = new_device_manager(self.machine, tm, self.state_dir, self.devices, observer=self._observers)
        dm.file_ops = self._file_ops()
        if dm.can_have_opinion():
            tm.add_hint_provider(dm)
        cm = new_cpu_manager(cfg.cpu_manager_policy, dict(cfg.cpu_manager_policy_options) or None, self.machine,
                             reserved_cpus, reservation, self.state_dir, tm, gates, observer=self._observers)
        cm.file_ops = self._file_ops()
        if cm.policy_name() != CPU_POLICY_NONE:
            tm.add_hint_provider(cm)
        mm = new_memory_manager(
            cfg.memory_manager_policy,
            self.machine,
            reservation,
            list(cfg.reserved_memory),
            self.state_dir,
            tm,
            policy_options=dict(cfg.memory_manager_policy_options) or None,
            feature_gates=gates,
            observer=self._observers,
        )
        mm.file_ops = self._file_ops()
        tm.add_hint_provider(mm)
        try:
            cm.start(self.active_pods, self._initial_containers(), self.active_pods_version)
        except Exception as exc:
            raise KubeletStartError(f"start cpu manager error: {exc}") from exc
        try:
            mm.start(self.active_pods, self._initial_containers(), self.active_pods_version)
        except Exception as exc:
            raise KubeletStartError(f"start memory manager error: {exc}") from exc
        dm.start(self.active_pods)
        self.start_warnings = device_checkpoint_warnings(dm)
        self.topology_manager, self.memory_manager = tm, mm
        self.cpu_manager, self.device_manager = cm, dm

    def _initial_containers(self) -> dict[str, tuple[str, str]]:
        """The runtime's containers for the memory manager's Start: container ID -> (pod UID, name).

        These are the containers created so far and not removed one by one; kubelet builds
        the same map from the container runtime when it starts.
        """
        return dict(self._containers)

    def restart(self, config: Optional[KubeletConfig] = None) -> None:
        """Kubelet restart: new managers from the same checkpoint folder, optionally a new config."""
        if config is not None:
            self.config = config
        self.start()

    def add_observer(self, observer: Observer) -> None:
        """Let `observer` hear the managers from the next event on (the current managers included)."""
        self._observers.add(observer)

    def fork(self, observers: Sequence[Observer] = ()) -> "SimulatedNode":
        """A copy of this running node whose state lives in memory only, heard by `observers` alone: what
        the copy does never reaches this node's state, checkpoint file, topology affinity store or
        observers. Cost: O(state + pods) (the managers' state, the admitted pods, the stored hints)."""
        self.require_running()
        hints = _AdmissionHints()
        memo = {id(self._hints): hints, id(self._observers): ObserverList([hints, *observers])}
        trial = copy.deepcopy(self, memo)
        trial.state_dir = None
        for manager in (trial.memory_manager, trial.cpu_manager, trial.device_manager):
            manager.keep_in_memory()
        return trial

    def require_running(self) -> None:
        """Raise NodeError (naming the start error, if any) unless the node is running."""
        if not self.running:
            why = f" (start failed: {self.start_error})" if self.start_error else ""
            raise NodeError(f"the node is not running{why}")

    # ----- pods -----

    def assume_running(self, pods: list[Pod]) -> None:
        """Pods already running on the node, taken as active without admitting them, with their
        containers created, as kubelet's pod sources and container runtime report them.

        Before start (a live node's checkpoint) the containers reach the memory manager through
        Start's initial containers; on a running node (after a restart) they are added to its
        container map directly. Either way no memory is placed anew.
        """
        for pod in pods:
            self.check_identity(pod)
            self._mark_admitted(pod)
            for container in pod.all_containers():
                cid = container_id(pod, container.name)
                self._containers[cid] = (pod.uid, container.name)
                if self.running:
                    self.cpu_manager.container_map.add(pod.uid, container.name, cid)
                    self.memory_manager.container_map.add(pod.uid, container.name, cid)

    def remove_stale_state(self) -> None:
        """Drop now, and store, the managers' state of every pod that is not active (kubelet does it at
        its next hint or Allocate call; a host that restores its pods calls it at start so that the
        checkpoints hold no pod its pod list lacks). The device manager frees such pods' devices (its
        checkpoint is rewritten at its next write, as in kubelet)."""
        self.require_running()
        with self.deferred_writes():
            self.cpu_manager.remove_stale_state()
            self.memory_manager.remove_stale_state()
        self.device_manager.update_allocated_devices()

    def active_pods_version(self) -> tuple:
        """(a counter bumped whenever the admitted pods change, the current pod): equal values mean
        equal active_pods()."""
        return (self._admitted_version, self._current)

    def active_pods(self) -> list[Pod]:
        """kubelet's activePods: admitted pods not removed, plus the pod of the current operation."""
        pods = [p for uid, p in self._admitted.items() if self._current is None or uid != self._current.uid]
        if self._current is not None:
            pods.append(self._current)
        return pods

    def find_pod(self, ref: str, namespace: Optional[str] = None) -> Optional[Pod]:
        """An admitted pod by UID, else by name (an active one first, else the most recent), else None;
        with `namespace`, only a pod of that namespace. A name alone that active pods of several
        namespaces have is an error (InputError naming them): the namespace decides."""
        known = self._known.get(ref)
        if known is not None and namespace in (None, known.namespace):
            return known
        named = [pod for pod in reversed(list(self._known.values()))
                 if pod.name == ref and namespace in (None, pod.namespace)]
        active = [pod for pod in named if pod.uid in self._admitted]
        namespaces = sorted({pod.namespace for pod in active})
        if len(namespaces) > 1:
            raise InputError("namespace", f"pods named {ref!r} were admitted in namespaces {', '.join(namespaces)}: "
                                          "give the namespace of the one meant")
        found = active or named  # an active pod first; a removed one (removing it again changes nothing)
        return found[0] if found else None

    def check_identity(self, pod: Pod) -> None:
        """Raise InputError when `pod`'s UID is already an active pod's of another name or namespace
        (kubelet keys every state by UID: two pods cannot share one)."""
        known = self._admitted.get(pod.uid)
        problem = identity_conflict(known, pod) if known is not None else None
        if problem is not None:
            raise InputError("metadata.uid", problem)

    def is_active(self, uid: str) -> bool:
        """Whether a pod of this UID is active (admitted and not removed). Cost: O(1)."""
        return uid in self._admitted

    def active_pod(self, uid: str) -> Optional[Pod]:
        """The active pod of this UID, else None. Cost: O(1)."""
        return self._admitted.get(uid)

    def refused_pods(self) -> list[Pod]:
        """The pods refused at admission and not admitted or removed since, latest refusal last."""
        return list(self._refused.values())

    def refused_pod(self, uid: str) -> Optional[Pod]:
        """The pod of this UID when it was refused at admission and not admitted or removed since."""
        return self._refused.get(uid)

    def get_pod_by_name(self, namespace: str, name: str) -> Optional[Pod]:
        """kubelet's pod manager lookup (GetPodByName): an active pod, else a pod refused at admission
        that has not been removed since (kubelet keeps a rejected pod, as Failed, until it is deleted)."""
        for pods in (self._admitted, self._refused):
            for pod in reversed(list(pods.values())):
                if pod.name == name and pod.namespace == namespace:
                    return pod
        return None

    def admit(self, pod: Pod, extra: Optional[FixedHintProvider] = None,
              pinned: Optional[Mapping[str, TopologyHint]] = None) -> AdmitOutcome:
        """Admission, then container creation for an admitted pod.

        `extra` is a hint provider for this admission only, consulted after the memory
        manager. `pinned` (container name -> hint) is the stored affinity the memory manager's
        policy reads for those containers in this admission, whatever the topology manager
        stored (`Node.admit_on`). The pod is active during the admission; it stays active only
        if admitted.
        """
        self.require_running()
        self.check_identity(pod)
        if extra is not None and not self._extra_registered:
            self.topology_manager.add_hint_provider(self._extra)
            self._extra_registered = True
        self._current = pod
        self._extra.current = extra
        self._hints.start()
        init_blocks: dict[str, Optional[list[Block]]] = {}
        try:
            pins = self.memory_manager.pinned_affinity(pod.uid, pinned) if pinned else nullcontext()
            with self.deferred_writes(), pins:
                result = self._admit(pod, init_blocks)
        finally:
            self._current = None
            self._extra.current = None
            self._hints.admitting = False
        return AdmitOutcome(result.admit, result.reason or "", result.message or "", self._hints.combined(),
                            init_blocks)

    def _mark_admitted(self, pod: Pod) -> None:
        """`pod` is active from now on, the latest of the admitted (and of the pods known by name)."""
        self._admitted.pop(pod.uid, None)
        self._admitted_version += 1
        self._admitted[pod.uid] = pod
        self._known.pop(pod.uid, None)
        self._known[pod.uid] = pod
        self._refused.pop(pod.uid, None)

    def _admit(self, pod: Pod, init_blocks: dict[str, Optional[list[Block]]]):
        """The admission proper (the checkpoint is written once, when it ends); `init_blocks` receives the
        regular init containers' blocks between admission and container creation."""
        result = self.topology_manager.admit(pod)
        if result.admit:
            for container in pod.init_containers:
                if not container.is_restartable:
                    init_blocks[container.name] = self.memory_manager.get_memory(pod.uid, container.name)
            self._mark_admitted(pod)
            for container in pod.all_containers():
                cid = container_id(pod, container.name)
                self.cpu_manager.add_container(pod, container, cid)
                self.memory_manager.add_container(pod, container, cid)
                self.topology_manager.add_container(pod, container, cid)
                self._containers[cid] = (pod.uid, container.name)
        else:
            self._admitted.pop(pod.uid, None)
            self._admitted_version += 1
            self._refused.pop(pod.uid, None)
            self._refused[pod.uid] = pod
        return result

    def topology_hints(self, pod: Pod) -> dict[str, ProviderHints]:
        """Every modelled provider's hints (device manager, CPU manager, memory manager, as the topology
        manager asks them) by resource: per container (init then app), or `{"pod": ...}` in pod scope."""
        self.require_running()
        self.check_identity(pod)
        self._current = pod
        providers = (self.device_manager, self.cpu_manager, self.memory_manager)
        try:
            with self.deferred_writes():  # dropping stale state rewrites the checkpoints
                if self.config.topology_manager_scope == POD_SCOPE:
                    return {POD_SCOPE: combined_hints([p.get_pod_topology_hints(pod) for p in providers])}
                return {c.name: combined_hints([p.get_topology_hints(pod, c) for p in providers])
                        for c in pod.all_containers()}
        finally:
            self._current = None

    def remove(self, pod: Pod, container_name: Optional[str] = None) -> None:
        """RemoveContainer for one container, or for every container of the pod (the pod stops being active)."""
        self.require_running()
        if container_name is not None:
            names = [container_name]
        else:
            names = [c.name for c in pod.all_containers()]
            self._admitted.pop(pod.uid, None)
            self._refused.pop(pod.uid, None)
            self._admitted_version += 1
        self.remove_container_ids([container_id(pod, name) for name in names])

    def remove_container_ids(self, ids: list[str]) -> None:
        """CPU manager, memory manager, then topology manager RemoveContainer for each ID (kubelet's
        PostStopContainer; unknown IDs change nothing)."""
        self.require_running()
        with self.deferred_writes():
            for cid in ids:
                self.cpu_manager.remove_container(cid)
                self.memory_manager.remove_container(cid)
                self.topology_manager.remove_container(cid)
                self._containers.pop(cid, None)

    # ----- readers -----

    def state(self) -> StateReader:
        """The memory manager's read-only state view."""
        self.require_running()
        return self.memory_manager.state()

