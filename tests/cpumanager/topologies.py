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


# The 288-CPU Knights Landing of kubelet's topoQuadSocketFourWayHT: socket s (= NUMA node s) holds 18 cores of
# 4 threads each; per socket, (core id, its four CPU ids). The ids are irregular, as on the real machine.
_QUAD_SOCKET_FOUR_WAY = {
    0: [(0, (0, 109, 169, 229)), (1, (50, 110, 170, 230)), (64, (1, 13, 25, 38)), (65, (2, 14, 26, 39)),
        (72, (9, 21, 33, 46)), (73, (10, 22, 34, 47)), (8, (57, 117, 177, 237)), (9, (58, 118, 178, 238)),
        (24, (71, 131, 191, 251)), (25, (72, 132, 192, 252)), (32, (79, 139, 199, 259)), (33, (80, 140, 200, 260)),
        (40, (87, 147, 207, 267)), (41, (88, 148, 208, 268)), (48, (95, 155, 215, 275)), (49, (96, 156, 216, 276)),
        (56, (103, 163, 223, 283)), (57, (104, 164, 224, 284))],
    1: [(66, (3, 15, 27, 40)), (67, (4, 16, 28, 41)), (74, (11, 23, 35, 48)), (75, (12, 24, 36, 49)),
        (2, (51, 111, 171, 231)), (3, (52, 112, 172, 232)), (10, (59, 119, 179, 239)), (11, (60, 120, 180, 240)),
        (18, (65, 125, 185, 245)), (19, (66, 126, 186, 246)), (26, (73, 133, 193, 253)), (27, (74, 134, 194, 254)),
        (34, (81, 141, 201, 261)), (35, (82, 142, 202, 262)), (42, (89, 149, 209, 269)), (43, (90, 150, 210, 270)),
        (50, (97, 157, 217, 277)), (51, (98, 158, 218, 278))],
    2: [(68, (5, 17, 29, 42)), (69, (6, 18, 30, 43)), (4, (53, 113, 173, 233)), (5, (54, 114, 174, 234)),
        (12, (61, 121, 181, 241)), (13, (62, 122, 182, 242)), (20, (67, 127, 187, 247)), (21, (68, 128, 188, 248)),
        (28, (75, 135, 195, 255)), (29, (76, 136, 196, 256)), (36, (83, 143, 203, 263)), (37, (84, 144, 204, 264)),
        (44, (91, 151, 211, 271)), (45, (92, 152, 212, 272)), (52, (99, 159, 219, 279)), (53, (100, 160, 220, 280)),
        (60, (105, 165, 225, 285)), (61, (106, 166, 226, 286))],
    3: [(70, (7, 19, 31, 44)), (71, (8, 20, 32, 45)), (63, (37, 108, 168, 228)), (62, (107, 167, 227, 287)),
        (6, (55, 115, 175, 235)), (7, (56, 116, 176, 236)), (14, (63, 123, 183, 243)), (15, (64, 124, 184, 244)),
        (22, (69, 129, 189, 249)), (23, (70, 130, 190, 250)), (30, (77, 137, 197, 257)), (31, (78, 138, 198, 258)),
        (38, (85, 145, 205, 265)), (39, (86, 146, 206, 266)), (46, (93, 153, 213, 273)), (47, (94, 154, 214, 274)),
        (54, (101, 161, 221, 281)), (55, (102, 162, 222, 282))],
}


def quad_socket_four_way_ht() -> CPUTopology:
    """4 sockets = 4 NUMA nodes, 72 cores of 4 threads, 288 CPUs with irregular ids (kubelet's KNL fixture);
    no uncore cache ids, as kubelet's fixture has none."""
    details = {cpu: CPUInfo(socket, socket, core, 0)
               for socket, cores in _QUAD_SOCKET_FOUR_WAY.items() for core, cpus in cores for cpu in cpus}
    assert sorted(details) == list(range(288))
    return CPUTopology(num_cpus=288, num_cores=72, num_sockets=4, cpu_details=details, num_uncore_cache=0)


def quad_socket_cpus(socket: Optional[int] = None) -> str:
    """The CPUs of one socket of quad_socket_four_way_ht (all sockets when None), as a cpuset string."""
    cpus = sorted(cpu for s, cores in _QUAD_SOCKET_FOUR_WAY.items() if socket in (None, s)
                  for _, ids in cores for cpu in ids)
    return ",".join(map(str, cpus))


def multi_socket_per_numa_ht() -> CPUTopology:
    """kubelet's fake machine with sockets and NUMA nodes swapped: 80 CPUs, 40 cores of 2 threads (core n =
    CPUs n, n+40), 4 sockets of 10 cores (socket = core // 10) and 2 NUMA nodes of 2 sockets each."""
    return build(80, lambda c: ((c % 40) // 20, (c % 40) // 10, c % 40, 0), 4, 40)


def triple_socket_ht() -> CPUTopology:
    """3 sockets = 3 NUMA nodes, 9 cores of 2 threads (core n = CPUs 2n, 2n+1); socket 1 holds cores 0-2,
    socket 0 cores 3-5, socket 2 cores 6-8."""
    return build(18, lambda c: ((1, 0, 2)[c // 6], (1, 0, 2)[c // 6], c // 2, 0), 3, 9)


def dual_socket_multi_numa_ht_large() -> CPUTopology:
    """The dual 64-core EPYC (NPS=4): 256 CPUs, core n = CPUs n and n+128, NUMA node = core // 16, socket = core // 64."""
    return CPUTopology(num_cpus=256, num_cores=128, num_sockets=2, num_uncore_cache=0, cpu_details={
        c: CPUInfo((c % 128) // 16, (c % 128) // 64, c % 128, 0) for c in range(256)})


# Uncore-cache machines of kubelet's TestStaticPolicyAddWithUncoreAlignment. The stored fixture file predates
# them, so each is rebuilt from what the cases state about it (CPUs per uncore cache, which reserved CPUs share
# a cache, the cache ids of a NUMA node); every one is a regular layout: core n on CPU n (and n + cores with SMT).

def smt_uncore(cores: int, cores_per_uncore: int, cores_per_socket: int, cores_per_numa: Optional[int] = None,
               smt: bool = True) -> CPUTopology:
    """`cores` cores (2 threads each when `smt`: core n = CPUs n, n + cores), `cores_per_uncore` per uncore cache,
    sockets of `cores_per_socket` and NUMA nodes of `cores_per_numa` (default: one per socket)."""
    per_numa = cores_per_numa or cores_per_socket
    cpus = cores * (2 if smt else 1)
    return build(cpus, lambda c: ((c % cores) // per_numa, (c % cores) // cores_per_socket, c % cores,
                                  (c % cores) // cores_per_uncore), cores // cores_per_socket, cores)


def epyc_dual_socket_smt_uncore() -> CPUTopology:
    """2 sockets = 2 NUMA nodes of 96 cores, SMT (384 CPUs), 8 cores (16 CPUs) per uncore cache: 24 caches."""
    return smt_uncore(192, 8, 96)


def small_single_socket_smt_uncore() -> CPUTopology:
    """1 socket, 64 cores, SMT (128 CPUs), 4 cores (8 CPUs) per uncore cache: 16 caches."""
    return smt_uncore(64, 4, 64)


def small_single_socket_no_smt_uncore_of_4() -> CPUTopology:
    """1 socket, 64 single-thread cores, 4 per uncore cache: 16 caches."""
    return smt_uncore(64, 4, 64, smt=False)


def small_dual_socket_no_smt_uncore() -> CPUTopology:
    """2 sockets = 2 NUMA nodes of 32 single-thread cores, 8 per uncore cache (caches 0-3, 4-7)."""
    return smt_uncore(64, 8, 32, smt=False)


def large_single_socket_smt_uncore() -> CPUTopology:
    """1 socket, 128 cores, SMT (256 CPUs), 8 cores (16 CPUs) per uncore cache: 16 caches."""
    return smt_uncore(128, 8, 128)


def dual_socket_nps2_no_smt_uncore() -> CPUTopology:
    """2 sockets of 2 NUMA nodes of 48 single-thread cores (192 CPUs), 8 per uncore cache: NUMA node n holds
    caches 6n..6n+5."""
    return smt_uncore(192, 8, 96, 48, smt=False)


def large_single_socket_no_smt_uncore() -> CPUTopology:
    """1 socket, 128 single-thread cores, 8 per uncore cache: 16 caches (an ARM split-cache part)."""
    return smt_uncore(128, 8, 128, smt=False)


def single_socket_no_smt_monolithic_uncore() -> CPUTopology:
    """1 socket, 24 single-thread cores sharing one uncore cache (an ARM part with a monolithic cache)."""
    return smt_uncore(24, 24, 24, smt=False)


def small_single_socket_no_smt_uncore() -> CPUTopology:
    """1 socket, 32 single-thread cores, 8 per uncore cache: 4 caches."""
    return smt_uncore(32, 8, 32, smt=False)


def dual_socket_snc_smt_monolithic_uncore() -> CPUTopology:
    """2 sockets of 60 cores, SMT (240 CPUs, core n = CPUs n, n + 120), 2 sub-NUMA nodes of 30 cores per
    socket, one uncore cache per socket (a monolithic x86 L3)."""
    return smt_uncore(120, 60, 60, 30)
