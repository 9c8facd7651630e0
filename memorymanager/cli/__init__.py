"""The `memorymanager` command line: one module per command, `main` dispatching."""
from memorymanager.cli.app import main

__all__ = ["main"]
