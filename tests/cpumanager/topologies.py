"""Test topologies shaped like the machines of kubelet's cpumanager tests, built from rules.

Each helper states the layout it builds (which CPU ids share a core, a NUMA node, a socket,
an uncore cache), so the expected values of a table test can be checked by hand.
"""
from __future__ import annotations

from typing import Callable, Optional

from cpumanager.topology import CPUInfo, CPUTopology


def build(num_cpus: int, layout: Callable[[int], tuple[int, int, int, int]], num_sockets: int,
          num_cores: int) -> CPUTopology:
    """A topology of CPUs 0..num_cpus-1, `layout(cpu)` = (numa, socket, core, uncore)."""
    return CPUTopology(num_cpus=num_cpus, num_cores=num_cores, num_sockets=num_sockets,
                       cpu_details={c: CPUInfo(*layout(c)) for c in range(num_cpus)})


def single_socket_ht() -> CPUTopology:
    """1 socket, 1 NUMA node, 4 cores of 2 threads: core n = CPUs n and n+4."""
    return build(8, lambda c: (0, 0, c % 4, 0), 1, 4)


def dual_socket_ht() -> CPUTopology:
    """2 sockets = 2 NUMA nodes, 6 cores of 2 threads: even CPUs on socket 0, odd on socket 1;
    core n = CPUs n and n+6."""
    return build(12, lambda c: (c % 2, c % 2, c % 6, c % 2), 2, 6)


def dual_socket_no_ht() -> CPUTopology:
    """2 sockets = 2 NUMA nodes of 4 single-thread cores: CPUs 0-3 and 4-7."""
    return build(8, lambda c: (c // 4, c // 4, c, c // 4), 2, 8)


def dual_socket_multi_numa_ht() -> CPUTopology:
    """2 sockets of 2 NUMA nodes each, 40 cores of 2 threads: NUMA n = CPUs 10n..10n+9 and their
    siblings 40 above; sockets hold NUMA nodes 0-1 and 2-3."""
    def layout(c: int) -> tuple[int, int, int, int]:
        numa = (c % 40) // 10
        return numa, numa // 2, c % 40, numa // 2
    return build(80, layout, 2, 40)


def uncore_single_socket_no_smt() -> CPUTopology:
    """1 socket, 1 NUMA node, 16 single-thread cores in 4 uncore caches of 4 (0-3, 4-7, 8-11, 12-15)."""
    return build(16, lambda c: (0, 0, c, c // 4), 1, 16)


def uncore_dual_socket_no_smt() -> CPUTopology:
    """2 sockets = 2 NUMA nodes (0-7, 8-15), 16 single-thread cores, 4 uncore caches of 4."""
    return build(16, lambda c: (c // 8, c // 8, c, c // 4), 2, 16)


def uncore_single_socket_multi_numa() -> CPUTopology:
    """1 socket of 2 NUMA nodes (0-7, 8-15), 16 single-thread cores, 4 uncore caches of 4."""
    return build(16, lambda c: (c // 8, 0, c, c // 4), 1, 16)


def uncore_single_socket_smt() -> CPUTopology:
    """1 socket, 1 NUMA node, 8 cores of 2 threads (core n = CPUs n, n+8), 2 uncore caches: cores 0-3, 4-7."""
    return build(16, lambda c: (0, 0, c % 8, (c % 8) // 4), 1, 8)
