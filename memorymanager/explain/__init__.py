"""`memorymanager explain`: why kubelet admits a pod where it does, or refuses it.

The explanation is built (build.py) by running the admission on an in-memory fork of the
node with an observer that records what the managers were asked and answered, and by calling the
same pure functions the managers decide with (reference_hints.check_mask, the fast merge's building
blocks, the policy's admit rule). It is rendered as text (text.py), a documented JSON
document (json_format.py, docs/explain.md) or a self-contained HTML page (html.py).
"""
