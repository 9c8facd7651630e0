"""Crash consistency (issue 12): SIGKILL a process writing durable files at random moments and check
what is left on disk. `python -m tests.crash --kills N` is the long run (docs/limits.md)."""
