"""The scenario runner behind `memorymanager run` (contract: shared/scenario-format.md).

- `scenario`: load and check a scenario file (`schema` holds the shape checks, `yamlio` strict YAML);
- `execute`: run each scenario on a fresh `memorymanager.node.simulated_node.SimulatedNode`;
- `observe`: the node's state in the shapes of the `expect` keys;
- `expect`: the `expect` shapes and the comparison rules;
- `results`, `report`: outcomes, the human report and `--json`;
- `record`: `--record`; `discover`: which files a PATH stands for.
"""
