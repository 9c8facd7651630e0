"""What the `kubelet-static` backend persists and reads back: its configuration (KubeletConfiguration
fields, plus `stateDir`, `driver`, `containerZones`) and, at every start, kubelet's checkpoint and the
claim records, every claim and cached container re-adopted before anything is placed."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from kubeinputs.errors import InputError
from kubeinputs.kubelet_config import parse_kubelet_config
from memorymanager.node.simulated_node import KubeletStartError
from memorymanager.resmgr import kubelet_updates
from memorymanager.resmgr.cache import ContainerCache
from memorymanager.resmgr.kubelet_claims import STATIC_NAME, claim_held, claim_pod, publish_devices, reserve
from memorymanager.resmgr.kubelet_containers import cached_pods
from memorymanager.resmgr.kubelet_placement import CLAIM_POD_PREFIX, DEFAULT_DRIVER, KubeletPlacement, is_claim_pod_uid
from memorymanager.resmgr.protocols import BackendConfig
from memorymanager.resmgr.types import PolicyError

BACKEND_KEYS = ("stateDir", "driver", "containerZones")


@dataclass(frozen=True)
class BackendSettings:
    """The backend's configuration read: kubelet's fields, the state folder, the DRA driver, zones per container."""

    kubelet: dict[str, object]
    state_dir: Optional[str]
    driver: str
    container_zones: bool


def read_config(config: BackendConfig, cache: Optional[ContainerCache]) -> BackendSettings:
    """The configuration mapping, checked (a bad field is a PolicyError naming it); `stateDir` defaults to
    `<cache folder>/kubelet` for a cache with a folder."""
    if not isinstance(config, Mapping):
        raise PolicyError(f"{STATIC_NAME} config: expected a map of KubeletConfiguration fields, got {type(config).__name__}")
    kubelet = {k: v for k, v in config.items() if k not in BACKEND_KEYS}
    state_dir = config.get("stateDir")
    if state_dir is None and cache is not None and cache.directory is not None:
        state_dir = os.path.join(cache.directory, "kubelet")
    if state_dir is not None and not isinstance(state_dir, str):
        raise PolicyError(f"{STATIC_NAME} config: stateDir: expected a folder path, got {state_dir!r}")
    driver = config.get("driver", DEFAULT_DRIVER)
    if not isinstance(driver, str) or not driver:
        raise PolicyError(f"{STATIC_NAME} config: driver: expected a DRA driver name, got {driver!r}")
    zones = config.get("containerZones", False)
    if not isinstance(zones, bool):
        raise PolicyError(f"{STATIC_NAME} config: containerZones: expected true or false, got {zones!r}")
    try:
        parse_kubelet_config(dict(kubelet), "config")
    except InputError as err:
        raise PolicyError(f"{STATIC_NAME} {err}") from err
    return BackendSettings(kubelet, state_dir, driver, zones)


def restore(p: KubeletPlacement) -> None:
    """Start kubelet's managers from the checkpoint, read the claim records back, re-adopt every claim and
    cached container (all active before anything is placed, so none of the restored memory is dropped as
    stale), reserve again any claim the checkpoint lost (the checkpoint written once for all of them), and
    publish the DRA devices."""
    try:
        p.node.start()
    except KubeletStartError as err:
        raise PolicyError(f"kubelet refused to start: {err}") from err
    p.claims.load()
    for c in p.cache:
        if is_claim_pod_uid(c.pod_uid):
            raise PolicyError(f"container cache {p.cache.path}: container {c.id!r}: pod UID {c.pod_uid!r} "
                              f"is in the DRA claims' key space (UIDs starting with {CLAIM_POD_PREFIX!r})")
    records = p.claims.records() if p.static else []
    pods = [claim_pod(r) for r in records]
    pods += cached_pods(p.cache)
    p.node.adopt(pods)
    with p.node.simulated_node.deferred_writes():  # the memory and CPU checkpoints written once
        for record in records:
            if not claim_held(p, record):
                reserve(p, record)
    kubelet_updates.follow(p)  # a cached cpuset the checkpoint disagrees with: corrected, and pending
    publish_devices(p)
