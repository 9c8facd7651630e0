"""Inputs shared by the runner and command-line tests."""

# Two NUMA nodes of 4Gi, one CPU each, in cadvisor's JSON field names.
TWO_NODE_MACHINE = {
    "num_cores": 2,
    "memory_capacity": 8589934592,
    "topology": [
        {"node_id": 0, "memory": 4294967296, "cores": [{"core_id": 0, "thread_ids": [0], "socket_id": 0}]},
        {"node_id": 1, "memory": 4294967296, "cores": [{"core_id": 1, "thread_ids": [1], "socket_id": 1}]},
    ],
}
