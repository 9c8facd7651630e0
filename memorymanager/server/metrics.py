"""Prometheus metrics of a simulated node: kubelet's own memory, CPU and topology manager, device plugin
and PodResources metrics, plus per-NUMA-node gauges no kubelet exports.

Kubelet's series (`kubelet_series.SERIES`: names, types, help texts with component-base's
`[ALPHA]` prefix, labels and buckets as kubelet registers them):

- `kubelet_memory_manager_pinning_requests_total` / `..._errors_total`: one per Allocate
  (or AllocatePod) call of the Static policy for a Guaranteed pod, an error when it failed;
- `kubelet_topology_manager_admission_requests_total` / `..._errors_total`: one per
  admission, an error per admission refused in the container or pod scope (kubelet's none scope,
  the topology manager's `none` policy, counts no error);
- `kubelet_cpu_manager_pinning_requests_total` / `..._errors_total`: the CPU manager's static
  policy's Allocate (AllocatePod) calls past its guards, an error when it failed; the gauges
  `kubelet_cpu_manager_shared_pool_size_millicores`, `..._exclusive_cpu_allocation_count` and
  `..._allocation_per_numa{numa_node}` read from the CPU manager's state when the page is built
  (`cpu_gauges`);
- `kubelet_device_plugin_registration_total{resource_name}`: each declared plugin registers once
  per (re)start;
- `kubelet_topology_manager_admission_duration_ms`: a histogram of whole milliseconds
  (kubelet observes `Milliseconds()`, an integer), buckets 0.05 * 2^k, k = 0..14;
- `kubelet_container_aligned_compute_resources_count` / `..._failure_count`, labels
  `scope` (container, pod) and `boundary`: `numa_node` counted only under the
  single-numa-node policy, per container (container scope) or per pod (pod scope);
  `physical_cpu` and `uncore_cache` (container scope) where the CPU manager counts them;
- `kubelet_pod_resources_endpoint_requests_total` (every PodResources call, label
  `server_api_version` v1 or v1alpha1), `..._requests_list`, `..._requests_get_allocatable`,
  `..._requests_get` (v1 calls of that method), `..._errors_list`, `..._errors_get_allocatable`,
  `..._errors_get` (v1 calls of that method that answered an error), as kubelet's v1 and
  v1alpha1 servers count them: a call the rate limit rejects never reaches them and is not
  counted; the `Get` series exist only with the `KubeletPodResourcesGet` gate on. Each label
  value appears once a call has used it (kubelet's counter vectors start empty).

Kubelet counts these inside its managers and servers. Here `KubeletMetrics` is an observer of
the node's managers (`topologymanager.observer`: the managers report where kubelet counts, and
the counting is done here), a copy of the node (`would_admit`'s trial, `SimulatedNode.fork`) has
observers of its own, and the PodResources servicers report each call to `KubeletMetrics` as
their observer. Counters belong to one kubelet process: a (re)start starts them again from
zero, as kubelet's do. `serve` builds the page from two parts (`NodeMetrics` + `metrics_page`): what the node
itself shows (the managers' counts, the per-NUMA gauges, the gates), built only when the node
changed, possibly in the node's own process; and the PodResources counts of the process that
serves PodResources, read at every scrape.

Our own gauges, modelled on nri-plugins' `mem.node.*` (labels `numa_node`, `resource`):
`memorymanager_numa_node_capacity_bytes`, `..._allocatable_bytes`, `..._reserved_bytes`
(assigned to containers), `..._free_bytes`, `..._system_reserved_bytes` and
`memorymanager_numa_node_containers` (containers with a block of that resource on the node).

The text exposition is written here (format 0.0.4, families sorted by name as client_golang
gathers them) rather than by prometheus-client's `generate_latest`, which would rename the
`_count` and `_list`-style counters to `..._total`; prometheus-client's parser reads it back
(the tests do).
"""
from __future__ import annotations

import http.server
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

from prometheus_client.core import Metric

from kubeinputs.cpuset import CPUSet
from kubeinputs.features import FeatureGateError, FeatureGates
from kubeinputs.pod import Container, Pod
from memorymanager.node.simulated_node import SimulatedNode
from memorymanager.server.kubelet_series import ADMISSION_DURATION_MS_BUCKETS, SERIES, series
from topologymanager.admission import PodAdmitResult
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import CPU_MANAGER, MEMORY_MANAGER, NUMA_NODE, PHYSICAL_CPU, UNCORE_CACHE, Observer

T = TypeVar("T")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DURATION_BUCKETS: tuple[float, ...] = ADMISSION_DURATION_MS_BUCKETS
SCOPES = ("container", "pod")
BOUNDARY_NUMA = NUMA_NODE
BOUNDARIES = (NUMA_NODE, PHYSICAL_CPU, UNCORE_CACHE)

# name -> (type, help) of kubelet's series this page shows (help texts as kubelet prints them).
KUBELET_METRICS: dict[str, tuple[str, str]] = {s.name: (s.type, s.help_text) for s in SERIES if s.exported}

POD_RESOURCES_TOTAL = "kubelet_pod_resources_endpoint_requests_total"
# v1 method -> (its requests series, its errors series); v1alpha1 calls count in the total only
POD_RESOURCES_V1_SERIES: dict[str, tuple[str, str]] = {
    "List": ("kubelet_pod_resources_endpoint_requests_list", "kubelet_pod_resources_endpoint_errors_list"),
    "GetAllocatableResources": ("kubelet_pod_resources_endpoint_requests_get_allocatable",
                                "kubelet_pod_resources_endpoint_errors_get_allocatable"),
    "Get": ("kubelet_pod_resources_endpoint_requests_get", "kubelet_pod_resources_endpoint_errors_get"),
}

NUMA_GAUGES: dict[str, str] = {
    "memorymanager_numa_node_capacity_bytes": "Memory of this type on the NUMA node (the memory manager's total).",
    "memorymanager_numa_node_allocatable_bytes": "Allocatable memory: capacity minus the reserved memory.",
    "memorymanager_numa_node_system_reserved_bytes": "Memory reserved for the system (reservedMemory).",
    "memorymanager_numa_node_reserved_bytes": "Memory the memory manager assigned to containers.",
    "memorymanager_numa_node_free_bytes": "Allocatable memory not assigned to any container.",
    "memorymanager_numa_node_containers": "Containers holding a block of this memory type on the NUMA node.",
}


def _numa_alignments() -> dict[tuple[str, str], int]:
    """The NUMA-node children of the alignment counters, at zero (both scopes)."""
    return {(s, BOUNDARY_NUMA): 0 for s in SCOPES}


@dataclass
class Counts:
    """The counter and histogram values of one kubelet process. The alignment counters are keyed
    (scope, boundary); the CPU manager's children appear once counted (or at zero, `cpu_gauges`)."""

    pinning_requests: int = 0
    pinning_errors: int = 0
    admission_requests: int = 0
    admission_errors: int = 0
    duration_buckets: list[int] = field(default_factory=lambda: [0] * len(DURATION_BUCKETS))  # not cumulative
    duration_sum: float = 0.0
    duration_count: int = 0
    aligned: dict[tuple[str, str], int] = field(default_factory=_numa_alignments)
    aligned_failures: dict[tuple[str, str], int] = field(default_factory=_numa_alignments)
    pod_resources: dict[tuple[str, str], int] = field(default_factory=dict)  # (series, server_api_version)
    cpu_pinning_requests: int = 0
    cpu_pinning_errors: int = 0


@dataclass(frozen=True)
class CPUGauges:
    """The CPU manager's gauges of a running node, read from its state, and the alignment children its
    static policy creates at zero when it starts (`physical_cpu` both ways, `uncore_cache` counted)."""

    shared_pool_millicores: int = 0
    exclusive_cpus: int = 0
    per_numa: tuple[tuple[int, int], ...] = ()  # (NUMA node, exclusive CPUs on it), nodes with some only
    static: bool = False


class KubeletMetrics(Observer):
    """Kubelet's memory and topology manager counters for one node: an observer of its managers (add it
    to the simulated node), and of the PodResources servicers."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.counts = Counts()
        self.node: Optional[SimulatedNode] = None  # the simulated node of the last (re)start heard
        self._clock = clock
        self._admission_started = 0.0
        self._merged = False  # the admission in progress merged hints (container or pod scope)
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Back to zero (a new kubelet process)."""
        with self._lock:
            self.counts = Counts()

    def snapshot(self) -> Counts:
        """A consistent copy of the values."""
        with self._lock:
            c = self.counts
            return Counts(c.pinning_requests, c.pinning_errors, c.admission_requests, c.admission_errors,
                          list(c.duration_buckets), c.duration_sum, c.duration_count,
                          dict(c.aligned), dict(c.aligned_failures), dict(c.pod_resources),
                          c.cpu_pinning_requests, c.cpu_pinning_errors)

    def observe_duration(self, milliseconds: float) -> None:
        """One admission's duration into the histogram."""
        with self._lock:
            c = self.counts
            for i, bound in enumerate(DURATION_BUCKETS):
                if milliseconds <= bound:
                    c.duration_buckets[i] += 1
                    break
            c.duration_sum += milliseconds
            c.duration_count += 1

    # ----- the PodResources servers' counts (the servicers' observer) -----

    def pod_resources_request(self, version: str, method: str) -> None:
        """A PodResources call the rate limit let through, as kubelet counts it on entry."""
        with self._lock:
            counts = self.counts.pod_resources
            keys = [POD_RESOURCES_TOTAL]
            if version == "v1" and method in POD_RESOURCES_V1_SERIES:
                keys.append(POD_RESOURCES_V1_SERIES[method][0])
            for name in keys:
                counts[(name, version)] = counts.get((name, version), 0) + 1

    def pod_resources_error(self, version: str, method: str) -> None:
        """That call answered an error."""
        if version != "v1" or method not in POD_RESOURCES_V1_SERIES:
            return
        with self._lock:
            key = (POD_RESOURCES_V1_SERIES[method][1], version)
            self.counts.pod_resources[key] = self.counts.pod_resources.get(key, 0) + 1

    def _add(self, name: str, key: Optional[tuple[str, str]] = None) -> None:
        with self._lock:
            if key is None:
                setattr(self.counts, name, getattr(self.counts, name) + 1)
            else:
                table = getattr(self.counts, name)
                table[key] = table.get(key, 0) + 1

    # ----- the managers' counts (an observer of the node's managers) -----

    def kubelet_started(self, node: object) -> None:
        """A new kubelet process: every counter from zero."""
        self.node = node if isinstance(node, SimulatedNode) else None
        self.reset()

    def admission_started(self, pod: Pod) -> None:
        """`topology_manager_admission_requests_total`, and the duration's start."""
        self._add("admission_requests")
        self._merged = False
        self._admission_started = self._clock()

    def hints_merged(self, pod: Pod, container: Optional[Container], providers_hints: Sequence[ProviderHints],
                     best: TopologyHint, admit: bool) -> None:
        """The admission runs in the container or pod scope (the `none` policy's scope merges nothing)."""
        self._merged = True

    def admission_done(self, pod: Pod, result: PodAdmitResult) -> None:
        """The admission's duration in whole milliseconds (Go's Duration.Milliseconds(): truncated), and
        `topology_manager_admission_errors_total` for a refusal in the container or pod scope: kubelet
        counts it in those scopes' Admit only (a refusal under the `none` policy is not counted)."""
        self.observe_duration(float(int((self._clock() - self._admission_started) * 1000)))
        if not result.admit and self._merged:
            self._add("admission_errors")

    def alignment(self, scope: str, boundary: str, aligned: bool) -> None:
        """`container_aligned_compute_resources_count` / `..._failure_count`, by scope and boundary
        (numa_node from the topology manager; physical_cpu and uncore_cache from the CPU manager)."""
        if scope in SCOPES and boundary in BOUNDARIES:
            self._add("aligned" if aligned else "aligned_failures", (scope, boundary))

    def pinning_requested(self, provider: str, pod: Pod, container: Optional[Container]) -> None:
        """`memory_manager_pinning_requests_total` or `cpu_manager_pinning_requests_total`."""
        if provider == MEMORY_MANAGER:
            self._add("pinning_requests")
        elif provider == CPU_MANAGER:
            self._add("cpu_pinning_requests")

    def pinning_failed(self, provider: str, pod: Pod, container: Optional[Container], error: BaseException) -> None:
        """`memory_manager_pinning_errors_total` or `cpu_manager_pinning_errors_total`."""
        if provider == MEMORY_MANAGER:
            self._add("pinning_errors")
        elif provider == CPU_MANAGER:
            self._add("cpu_pinning_errors")

    # ----- exposition -----

    def families(self, gates: FeatureGates = FeatureGates()) -> list[Metric]:
        """Kubelet's metric families with the current values; a series kubelet registers under
        a feature gate only when `gates` has it on."""
        return kubelet_families(self.snapshot(), gates)


def kubelet_families(c: Counts, gates: FeatureGates = FeatureGates(), cpu: CPUGauges = CPUGauges(),
                     device_plugins: Sequence[str] = ()) -> list[Metric]:
    """Kubelet's metric families with the values `c`, the CPU manager's gauges `cpu` and one registration
    of each device plugin (resource name) in `device_plugins`; a series kubelet registers under a feature
    gate only when `gates` has it on."""
    out: list[Metric] = []

    def counter(name: str, value: float, labels: Optional[list[dict[str, str]]] = None,
                values: Optional[list[float]] = None) -> None:
        kind, help_text = KUBELET_METRICS[name]
        metric = Metric(name, help_text, kind)
        metric.name = name  # keep kubelet's exact name (Metric strips `_total`)
        if labels is None:
            metric.add_sample(name, {}, value)
        else:
            for label, v in zip(labels, values or []):
                metric.add_sample(name, label, v)
        out.append(metric)

    counter("kubelet_memory_manager_pinning_requests_total", c.pinning_requests)
    counter("kubelet_memory_manager_pinning_errors_total", c.pinning_errors)
    counter("kubelet_topology_manager_admission_requests_total", c.admission_requests)
    counter("kubelet_topology_manager_admission_errors_total", c.admission_errors)
    out.append(_histogram("kubelet_topology_manager_admission_duration_ms", c))
    counter("kubelet_cpu_manager_pinning_requests_total", c.cpu_pinning_requests)
    counter("kubelet_cpu_manager_pinning_errors_total", c.cpu_pinning_errors)
    counter("kubelet_cpu_manager_shared_pool_size_millicores", cpu.shared_pool_millicores)
    counter("kubelet_cpu_manager_exclusive_cpu_allocation_count", cpu.exclusive_cpus)
    if cpu.per_numa:  # a gauge vector without children shows nothing
        counter("kubelet_cpu_manager_allocation_per_numa", 0, [{"numa_node": str(n)} for n, _ in cpu.per_numa],
                [count for _, count in cpu.per_numa])
    aligned, failures = dict(c.aligned), dict(c.aligned_failures)
    if cpu.static:  # the static policy's start creates these children at zero
        aligned.setdefault(("container", PHYSICAL_CPU), 0)
        aligned.setdefault(("container", UNCORE_CACHE), 0)
        failures.setdefault(("container", PHYSICAL_CPU), 0)
    for name, table in (("kubelet_container_aligned_compute_resources_count", aligned),
                        ("kubelet_container_aligned_compute_resources_failure_count", failures)):
        keys = sorted(table, key=lambda k: (BOUNDARIES.index(k[1]), SCOPES.index(k[0])))
        counter(name, 0, [{"scope": s, "boundary": b} for s, b in keys], [table[k] for k in keys])
    if device_plugins:
        counter("kubelet_device_plugin_registration_total", 0, [{"resource_name": r} for r in sorted(device_plugins)],
                [1] * len(device_plugins))
    for entry in SERIES:
        registered = not entry.gate or gates.enabled(entry.gate)
        if not entry.name.startswith("kubelet_pod_resources_endpoint_") or not registered:
            continue
        versions = sorted(v for (n, v) in c.pod_resources if n == entry.name)
        if versions:  # a counter vector without children shows nothing
            counter(entry.name, 0, [{"server_api_version": v} for v in versions],
                    [c.pod_resources[(entry.name, v)] for v in versions])
    return out


def _histogram(name: str, counts: Counts) -> Metric:
    """A histogram family with kubelet's buckets (cumulative counts, +Inf, sum, count)."""
    metric = Metric(name, series(name).help_text, "histogram")
    cumulative = 0
    for bound, in_bucket in zip(DURATION_BUCKETS, counts.duration_buckets):
        cumulative += in_bucket
        metric.add_sample(name + "_bucket", {"le": go_float(bound)}, cumulative)
    metric.add_sample(name + "_bucket", {"le": "+Inf"}, counts.duration_count)
    metric.add_sample(name + "_sum", {}, counts.duration_sum)
    metric.add_sample(name + "_count", {}, counts.duration_count)
    return metric


def numa_families(node: SimulatedNode) -> list[Metric]:
    """Per-NUMA-node gauges of a simulated node (`Node.simulated_node`); nothing when it is
    not running."""
    if not node.running:
        return []
    machine_state = node.state().get_machine_state()
    containers: dict[tuple[int, str], int] = {}
    for pod in node.active_pods():
        for container in pod.all_containers():
            seen: set[tuple[int, str]] = set()
            for block in node.memory_manager.get_memory(pod.uid, container.name) or []:
                for numa in block.numa_affinity or []:
                    seen.add((numa, block.type))
            for key in seen:
                containers[key] = containers.get(key, 0) + 1
    picks: dict[str, Callable[[Any], int]] = {
        "memorymanager_numa_node_capacity_bytes": lambda t: t.total_mem_size,
        "memorymanager_numa_node_allocatable_bytes": lambda t: t.allocatable,
        "memorymanager_numa_node_system_reserved_bytes": lambda t: t.system_reserved,
        "memorymanager_numa_node_reserved_bytes": lambda t: t.reserved,
        "memorymanager_numa_node_free_bytes": lambda t: t.free,
    }
    out: list[Metric] = []
    for name, pick in picks.items():
        metric = Metric(name, NUMA_GAUGES[name], "gauge")
        for numa, state in sorted(machine_state.items()):
            for resource, table in sorted((state.memory_map or {}).items()):
                if table is not None:
                    metric.add_sample(name, {"numa_node": str(numa), "resource": resource}, pick(table))
        out.append(metric)
    name = "memorymanager_numa_node_containers"
    metric = Metric(name, NUMA_GAUGES[name], "gauge")
    for numa, state in sorted(machine_state.items()):
        for resource in sorted(state.memory_map or {}):
            metric.add_sample(name, {"numa_node": str(numa), "resource": resource}, containers.get((numa, resource), 0))
    out.append(metric)
    return out


def render(families: Iterable[Metric]) -> str:
    """The Prometheus text exposition (0.0.4) of metric families, names exactly as given."""
    lines: list[str] = []
    for metric in families:
        help_text = metric.documentation.replace("\\", r"\\").replace("\n", r"\n")
        lines.append(f"# HELP {metric.name} {help_text}")
        lines.append(f"# TYPE {metric.name} {metric.type}")
        for sample in metric.samples:
            labels = ""
            if sample.labels:
                # client_golang sorts label names; a histogram's `le` comes last
                names = sorted(k for k in sample.labels if k != "le") + (["le"] if "le" in sample.labels else [])
                body = ",".join(f'{k}="{_escape(sample.labels[k])}"' for k in names)
                labels = "{" + body + "}"
            lines.append(f"{sample.name}{labels} {go_float(sample.value)}")
    return "\n".join(lines) + "\n"


def go_float(value: float) -> str:
    """A sample value as Go's client prints it (strconv 'g', shortest): `2`, `0.05`,
    `1.7179869184e+10`, `+Inf`."""
    value = float(value)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    digits, exp = _shortest(value)
    sign = "-" if value < 0 else ""
    if exp < -4 or exp >= 6:  # Go uses %e from exponent 6 on when printing the shortest form
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if exp >= len(digits) - 1:
        return sign + digits + "0" * (exp - len(digits) + 1)
    if exp >= 0:
        return sign + digits[: exp + 1] + "." + digits[exp + 1:]
    return sign + "0." + "0" * (-exp - 1) + digits


def _shortest(value: float) -> tuple[str, int]:
    """The shortest round-trip decimal digits of |value| and its decimal exponent."""
    from decimal import Decimal

    sign, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in digit_tuple)
    return digits, len(digits) - 1 + int(exponent)


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def exposition(metrics: KubeletMetrics, node: SimulatedNode) -> str:
    """Everything `/metrics` shows for a simulated node: kubelet's families and the per-NUMA
    gauges, sorted by name as client_golang gathers them."""
    return metrics_page(node_metrics(metrics, node), metrics)


@dataclass
class NodeMetrics:
    """What `/metrics` shows of the node itself at one moment: the managers' counts, the per-NUMA gauges
    and the gates deciding which series exist (picklable: the node's process sends it to the server's)."""

    counts: Counts
    numa: list[Metric]
    gates: FeatureGates
    cpu: CPUGauges = CPUGauges()
    device_plugins: tuple[str, ...] = ()


def cpu_gauges(node: SimulatedNode) -> CPUGauges:
    """The CPU manager's gauges as its static policy sets them at start, read from the state now: the shared
    pool (the default set minus the reserved CPUs) in millicores, the exclusive CPUs (the union of every
    container's set) and how many of them each NUMA node holds. Nothing under the `none` policy."""
    if not node.running or node.cpu_manager.policy.name() != "static":
        return CPUGauges()
    manager = node.cpu_manager
    available = manager.get_default_cpu_set().difference(manager.reserved_cpus())
    exclusive = CPUSet()
    for containers in manager.state().get_cpu_assignments().values():
        exclusive = exclusive.union(*containers.values())
    per_numa: dict[int, int] = {}
    for cpu in exclusive:
        numa = manager.topology.cpu_numa_node_id(cpu)
        per_numa[numa] = per_numa.get(numa, 0) + 1
    return CPUGauges(available.size() * 1000, exclusive.size(), tuple(sorted(per_numa.items())), True)


def device_plugins(node: SimulatedNode) -> tuple[str, ...]:
    """The device plugins that registered at the node's last start (each once: one per declared resource)."""
    return tuple(sorted(node.devices)) if node.running else ()


def node_metrics(metrics: KubeletMetrics, node: SimulatedNode) -> NodeMetrics:
    """The node's part of the page, now."""
    return NodeMetrics(metrics.snapshot(), numa_families(node), _feature_gates(node), cpu_gauges(node),
                       device_plugins(node))


def metrics_page(node: NodeMetrics, pod_resources: KubeletMetrics) -> str:
    """The `/metrics` page: the node's part with the PodResources counts of `pod_resources` (the
    servicers' observer, in the process serving PodResources), families sorted by name."""
    counts = replace(node.counts, pod_resources=pod_resources.snapshot().pod_resources)
    families = kubelet_families(counts, node.gates, node.cpu, node.device_plugins)
    return render(sorted(families + node.numa, key=lambda m: m.name))


def _feature_gates(node: SimulatedNode) -> FeatureGates:
    """The node's feature gates (the defaults when they do not validate: such a kubelet never
    started, and its PodResources server answered nothing)."""
    try:
        return FeatureGates.from_config(node.config.feature_gates)
    except FeatureGateError:
        return FeatureGates()


class MetricsHTTPServer:
    """`/metrics` over HTTP for one node, in a daemon thread; `text()` gives the page."""

    def __init__(self, host: str, port: int, text: Callable[[], str]) -> None:
        page = text

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.split("?", 1)[0] != "/metrics":
                    self.send_error(404, "only /metrics is served here")
                    return
                try:
                    body = page().encode("utf-8")
                except Exception as exc:  # never a dead server
                    self.send_error(500, f"collecting metrics failed: {exc}")
                    return
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="metrics-http", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        """The bound host and port (the port chosen by the system when 0 was asked)."""
        host, port = self.httpd.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def write_scenario_metrics(path: str, run: Callable[[Sequence[Observer]], T]) -> T:
    """Call `run` (the scenario runner) with an observer for every node it builds, then write the metrics
    of the last kubelet (re)start to `path`: each start or restart is a new kubelet process, whose
    counters start from zero."""
    metrics = KubeletMetrics()
    result = run([metrics])
    page = exposition(metrics, metrics.node) if metrics.node is not None else render(KubeletMetrics().families())
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(page)
    return result
