"""The scenario runner behind `memorymanager run` (contract: docs/scenario-format.md).

- `scenario`: load and check a scenario file (`schema` holds the scenario's own keys; files are read
  by `kubeinputs.reader`, values checked by the shared readers of `kubeinputs.errors`);
- `execute`: run each scenario on a fresh `memorymanager.node.simulated_node.SimulatedNode`;
- `observe`: the node's state in the shapes of the `expect` keys;
- `expect`: the `expect` shapes and the comparison rules;
- `results`, `report`: outcomes, the human report and `--json`;
- `record`: `--record`; `discover`: which files a PATH stands for.
"""
