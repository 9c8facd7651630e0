"""Fuzzing every reader (issue 12): hypothesis strategies of bad and odd inputs, the outcome classes,
the replay of fixtures/bad, and `python -m tests.fuzz --examples N` for long runs."""
