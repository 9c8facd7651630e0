"""`memorymanager.resmgr`: the nri-plugins `policy` package interface (v0.15.0), backed by
kubelet's exact memory placement (the `kubelet-static` backend). See docs/resmgr.md."""
from memorymanager.resmgr.cache import Container, ContainerCache
from memorymanager.resmgr.claims import ClaimAllocation, ClaimRecord, ClaimStore
from memorymanager.resmgr.export import format_exports, shell_quote, write_exports
from memorymanager.resmgr.extended import (
    NRI_EXTENDED_RESOURCE_GLOB,
    ExtendedResourcesPatch,
    extended_resources_patch,
    reconcile_extended_resources,
)
from memorymanager.resmgr.kubelet_backend import KubeletBackend, new_kubelet_backend
from memorymanager.resmgr.kubelet_claims import device_name
from memorymanager.resmgr.kubelet_placement import DEFAULT_DRIVER
from memorymanager.resmgr.metrics import SystemCollector
from memorymanager.resmgr.policy import Policy, new_policy
from memorymanager.resmgr.protocols import Backend, BackendOptions, Options, Owner
from memorymanager.resmgr.types import *  # noqa: F401,F403  (the seed's constants and types)
from memorymanager.resmgr.types import (
    ClaimConfig,
    ContainerEdits,
    ContainerUpdate,
    Device,
    DeviceRequestAllocationResult,
    Domain,
    ErrNoDRAClaims,
    NoDRAClaimsError,
    PolicyError,
    ResourceClaim,
    TopologyZone,
    ZoneAttribute,
    ZoneResource,
)
