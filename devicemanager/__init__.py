"""devicemanager: kubelet's device manager (v1.37): device plugins' devices, their NUMA topology hints,
device allocation and the checkpoint `device-plugins/kubelet_internal_checkpoint`.

Layer 2 (a manager beside `memorymanager` and `topologymanager`): it reads only `kubeinputs`,
`topologymanager` and the kubelet checkpoint store of `state`. The front door is
`devicemanager.manager.new_manager`; the modules follow kubelet's files:

* `plugin_devices`: the devices the plugins registered and their health;
* `topology_hints` (with `hint_family` for 17+ device NUMA nodes, `reference_hints` the literal loop);
* `allocation`: devicesToAllocate and filterByAffinity; `pod_devices`: who holds what;
* `checkpoint`: the file's bytes, checksum, restore; `requests`: how many devices are asked for.
"""
