"""The servers under load and faults (issue 12). `python -m tests.load --seconds 60` is the long run."""
