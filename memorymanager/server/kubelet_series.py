"""Kubelet's Prometheus series of the resource managers and the PodResources server, as kubelet
registers them (`pkg/kubelet/metrics/metrics.go`; names, types, labels, buckets and help texts
of the v1.36 metrics reference, unchanged in v1.37 as far as could be read: docs/grpc.md).

One entry per series, in kubelet's registration order, each saying which part of kubelet
feeds it. `exported` False marks a series nothing here can feed (the device plugin Allocate
call's duration: no plugin is called over gRPC); it is known here so that its name is checked
against kubelet's list, and is left out of `/metrics`.

Help texts are given without component-base's `[ALPHA] ` prefix, which `help_text` adds.
"""
from __future__ import annotations

from dataclasses import dataclass

from kubeinputs.features import KUBELET_POD_RESOURCES_GET_GATE

ALPHA_PREFIX = "[ALPHA] "

# kubelet_topology_manager_admission_duration_ms: ExponentialBuckets(.05, 2, 15)
ADMISSION_DURATION_MS_BUCKETS: tuple[float, ...] = tuple(0.05 * 2 ** k for k in range(15))


@dataclass(frozen=True)
class KubeletSeries:
    """One kubelet series: name, type, help (no prefix), labels, buckets, who feeds it, and the
    feature gate kubelet registers it under (none: always registered)."""

    name: str
    type: str
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()
    fed_by: str = ""
    exported: bool = True
    gate: str = ""

    @property
    def help_text(self) -> str:
        """The HELP line's text, as component-base prints an ALPHA series' help."""
        return ALPHA_PREFIX + self.help


_SERVER_API_VERSION = ("server_api_version",)
_ALIGNMENT = ("scope", "boundary")
_RESOURCE_NAME = ("resource_name",)
# prometheus' DefBuckets
DEFAULT_BUCKETS: tuple[float, ...] = (.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10)

SERIES: tuple[KubeletSeries, ...] = (
    KubeletSeries("kubelet_device_plugin_registration_total", "counter",
                  "Cumulative number of device plugin registrations. Broken down by resource name.",
                  _RESOURCE_NAME, fed_by="device manager (each declared plugin registers at every start)"),
    KubeletSeries("kubelet_device_plugin_alloc_duration_seconds", "histogram",
                  "Duration in seconds to serve a device plugin Allocation request. Broken down by resource name.",
                  _RESOURCE_NAME, DEFAULT_BUCKETS, fed_by="device manager (the plugin's Allocate call)",
                  exported=False),
    KubeletSeries("kubelet_pod_resources_endpoint_requests_total", "counter",
                  "Cumulative number of requests to the PodResource endpoint. Broken down by server api version.",
                  _SERVER_API_VERSION, fed_by="PodResources server"),
    KubeletSeries("kubelet_pod_resources_endpoint_requests_list", "counter",
                  "Number of requests to the PodResource List endpoint. Broken down by server api version.",
                  _SERVER_API_VERSION, fed_by="PodResources server"),
    KubeletSeries("kubelet_pod_resources_endpoint_requests_get_allocatable", "counter",
                  "Number of requests to the PodResource GetAllocatableResources endpoint. "
                  "Broken down by server api version.", _SERVER_API_VERSION, fed_by="PodResources server"),
    KubeletSeries("kubelet_pod_resources_endpoint_errors_list", "counter",
                  "Number of requests to the PodResource List endpoint which returned error. "
                  "Broken down by server api version.", _SERVER_API_VERSION, fed_by="PodResources server"),
    KubeletSeries("kubelet_pod_resources_endpoint_errors_get_allocatable", "counter",
                  "Number of requests to the PodResource GetAllocatableResources endpoint which returned error. "
                  "Broken down by server api version.", _SERVER_API_VERSION, fed_by="PodResources server"),
    KubeletSeries("kubelet_pod_resources_endpoint_requests_get", "counter",
                  "Number of requests to the PodResource Get endpoint. Broken down by server api version.",
                  _SERVER_API_VERSION, fed_by="PodResources server", gate=KUBELET_POD_RESOURCES_GET_GATE),
    KubeletSeries("kubelet_pod_resources_endpoint_errors_get", "counter",
                  "Number of requests to the PodResource Get endpoint which returned error. "
                  "Broken down by server api version.", _SERVER_API_VERSION, fed_by="PodResources server",
                  gate=KUBELET_POD_RESOURCES_GET_GATE),
    KubeletSeries("kubelet_cpu_manager_pinning_requests_total", "counter",
                  "The number of cpu core allocations which required pinning.", fed_by="CPU manager"),
    KubeletSeries("kubelet_cpu_manager_pinning_errors_total", "counter",
                  "The number of cpu core allocations which required pinning failed.", fed_by="CPU manager"),
    KubeletSeries("kubelet_cpu_manager_shared_pool_size_millicores", "gauge",
                  "The size of the shared CPU pool for non-guaranteed QoS pods, in millicores.", fed_by="CPU manager"),
    KubeletSeries("kubelet_cpu_manager_exclusive_cpu_allocation_count", "gauge",
                  "The total number of CPUs exclusively allocated to containers running on this node",
                  fed_by="CPU manager"),
    KubeletSeries("kubelet_cpu_manager_allocation_per_numa", "gauge", "Number of CPUs allocated per NUMA node",
                  ("numa_node",), fed_by="CPU manager"),
    KubeletSeries("kubelet_container_aligned_compute_resources_count", "counter",
                  "Cumulative number of aligned compute resources allocated to containers by alignment type.",
                  _ALIGNMENT, fed_by="topology manager (and CPU manager)"),
    KubeletSeries("kubelet_container_aligned_compute_resources_failure_count", "counter",
                  "Cumulative number of failures to allocate aligned compute resources to containers by alignment "
                  "type.", _ALIGNMENT, fed_by="topology manager (and CPU manager)"),
    KubeletSeries("kubelet_memory_manager_pinning_requests_total", "counter",
                  "The number of memory pages allocations which required pinning.", fed_by="memory manager"),
    KubeletSeries("kubelet_memory_manager_pinning_errors_total", "counter",
                  "The number of memory pages allocations which required pinning that failed.",
                  fed_by="memory manager"),
    KubeletSeries("kubelet_topology_manager_admission_requests_total", "counter",
                  "The number of admission requests where resources have to be aligned.", fed_by="topology manager"),
    KubeletSeries("kubelet_topology_manager_admission_errors_total", "counter",
                  "The number of admission request failures where resources could not be aligned.",
                  fed_by="topology manager"),
    KubeletSeries("kubelet_topology_manager_admission_duration_ms", "histogram",
                  "Duration in milliseconds to serve a pod admission request.",
                  buckets=ADMISSION_DURATION_MS_BUCKETS, fed_by="topology manager"),
)

BY_NAME: dict[str, KubeletSeries] = {s.name: s for s in SERIES}


def series(name: str) -> KubeletSeries:
    """The series of that name (KeyError for a name kubelet does not have)."""
    return BY_NAME[name]
