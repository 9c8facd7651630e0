"""The scenario runner: parse, execute and report scenario files (../shared/scenario-format.md)."""
