"""The simulated node: a kubelet's memory manager and topology manager wired together as
kubelet wires them, with active pods, admission, container start and restart."""
