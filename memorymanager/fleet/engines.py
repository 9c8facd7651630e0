"""Where the simulation runs: `local` (this process, or N worker processes) or `dask`
(a `distributed.LocalCluster`, or an existing scheduler at an address).

Work is split where it is independent: by sweep variant always, and by node for a bound trace
(every add names its node): each task gets a chunk of nodes and only their events. An
unbound trace under a placement rule is one sequential task per variant, because every
placement depends on every earlier one. Tasks are pure functions of (spec, variant, nodes,
events), results are folded in fleet order, so every engine and worker count gives the same
summary.
"""
from __future__ import annotations

import math
import multiprocessing
import shutil
import tempfile
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from memorymanager.fleet.simulate import Progress, TaskResult, run_nodes
from memorymanager.fleet.spec import FleetSpec
from memorymanager.fleet.trace import Event, is_bound, reparse

ENGINES = ("local", "dask")
CHUNKS_PER_WORKER = 4


class EngineError(Exception):
    """The engine could not run (dask missing, a scheduler unreachable)."""


@dataclass(frozen=True)
class Task:
    """One unit of work: a variant, its nodes (None: all of them) and their events, as parsed
    events (in this process) or as the trace's (line number, text) pairs (to ship elsewhere:
    parsed pods pickle slowly, JSON text is small and the worker parses it in parallel)."""

    index: int
    spec: FleetSpec
    variant: int
    nodes: Optional[tuple[str, ...]]
    events: tuple[Event, ...] = ()
    lines: tuple[tuple[int, str], ...] = ()
    count: int = 0

    def shippable(self) -> "Task":
        """The same task with its events as text."""
        return replace(self, events=(), lines=tuple((e.line, e.text) for e in self.events))

    def replay_events(self) -> Sequence[Event]:
        return self.events if self.events or not self.lines else \
            reparse(self.lines, self.spec.trace, self.spec.templates, self.spec.limits)


def run_task(task: Task) -> TaskResult:
    """Run one task (in whichever process or worker holds it)."""
    return run_nodes(task.spec, task.spec.variants[task.variant], task.replay_events(), task.nodes)


def _split_events(events: Sequence[Event], chunks: list[tuple[str, ...]]) -> list[tuple[Event, ...]]:
    """Each chunk's events: adds bound to its nodes and the deletes of those pods."""
    chunk_of = {name: i for i, chunk in enumerate(chunks) for name in chunk}
    owner: dict[str, int] = {}
    out: list[list[Event]] = [[] for _ in chunks]
    for event in events:
        if event.op == "add":
            i = chunk_of[event.node or ""]
            owner[event.key] = i
            out[i].append(event)
        else:
            i = owner.pop(event.key, -1)
            if i >= 0:
                out[i].append(event)
    return [tuple(e) for e in out]


def plan(spec: FleetSpec, events: Sequence[Event], chunks: int) -> list[Task]:
    """The tasks: per variant one task (unbound trace) or `chunks` node chunks (bound trace)."""
    tasks: list[Task] = []
    if not is_bound(events) or chunks <= 1:
        for v in range(len(spec.variants)):
            tasks.append(Task(len(tasks), spec, v, None, tuple(events), count=len(events)))
        return tasks
    names = spec.node_names()
    size = math.ceil(len(names) / min(chunks, len(names)))
    node_chunks = [tuple(names[i:i + size]) for i in range(0, len(names), size)]
    per_chunk = _split_events(events, node_chunks)
    for v in range(len(spec.variants)):
        for chunk, chunk_events in zip(node_chunks, per_chunk):
            tasks.append(Task(len(tasks), spec, v, chunk, chunk_events, count=len(chunk_events)))
    return tasks


def _mp_context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def run_local(tasks: Sequence[Task], workers: int, progress: Optional[Progress] = None) -> list[TaskResult]:
    """In this process (workers == 1, progress per batch of events) or in a process pool
    (progress per finished task)."""
    if workers <= 1 or len(tasks) <= 1:
        return [run_nodes(t.spec, t.spec.variants[t.variant], t.events, t.nodes, progress) for t in tasks]
    results: dict[int, TaskResult] = {}
    context = _mp_context()
    if context.get_start_method() == "fork":  # the children inherit the parsed tasks: nothing to pickle or parse again
        work, function, setup = list(range(len(tasks))), _run_inherited, (_inherit, (list(tasks),))
    else:
        work, function, setup = [t.shippable() for t in tasks], run_task, (None, ())  # type: ignore[assignment]
    with context.Pool(min(workers, len(tasks)), *setup) as pool:
        for task, result in zip(tasks, pool.imap(function, work)):
            results[task.index] = result
            if progress is not None:
                progress(task.count)
    return [results[t.index] for t in tasks]


_INHERITED: list[Task] = []  # a forked pool worker's tasks (set by its initializer; never in the parent)


def _inherit(tasks: list[Task]) -> None:
    """A forked pool worker's initializer: the tasks its parent holds, inherited with the fork (never pickled)."""
    _INHERITED[:] = tasks


def _run_inherited(index: int) -> TaskResult:
    """Run the task a forked pool worker inherited from its parent."""
    return run_task(_INHERITED[index])


SCHEDULER_TIMEOUT = 10.0  # seconds to reach a --scheduler and to see a worker there


def run_dask(tasks: Sequence[Task], workers: int, scheduler: Optional[str] = None, processes: bool = True,
             progress: Optional[Progress] = None, timeout: float = SCHEDULER_TIMEOUT) -> list[TaskResult]:
    """On a Dask cluster: a LocalCluster of `workers` single-threaded workers (processes or
    threads), or the scheduler at `scheduler`, which must answer and have a worker within
    `timeout` seconds. Dask's scratch space (and its lock files, which Dask leaves behind) goes
    to a private temporary folder, removed afterwards, not to $TMPDIR."""
    try:
        import dask
        import distributed  # noqa: F401 - only to know it is there
    except ImportError:
        raise EngineError("the dask engine needs dask.distributed: pip install 'memorymanager[fleet]'") from None
    scratch = tempfile.mkdtemp(prefix="memorymanager-dask-")
    try:
        with dask.config.set({"temporary-directory": scratch}):
            return _run_on_dask(tasks, workers, scheduler, processes, progress, timeout, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_on_dask(tasks: Sequence[Task], workers: int, scheduler: Optional[str], processes: bool,
                 progress: Optional[Progress], timeout: float, scratch: str) -> list[TaskResult]:
    """`run_dask` with its scratch folder."""
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    try:
        if scheduler:
            client = _connect(Client, scheduler, timeout)
        else:
            cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=processes,
                                   dashboard_address=":0", silence_logs=40, local_directory=scratch)
            client = Client(cluster)
        with client:
            # the tasks travel as data (scattered), not inside the task graph
            futures = client.map(run_task, client.scatter([t.shippable() for t in tasks]), pure=False)
            index = {f.key: t for f, t in zip(futures, tasks)}
            for future in as_completed(futures):
                if progress is not None:
                    progress(index[future.key].count)
            results = client.gather(futures)
    finally:
        if cluster is not None:
            cluster.close()
    return list(results)


def _connect(client_class: type, scheduler: str, timeout: float) -> Any:
    """A client of the scheduler at `scheduler` that has at least one worker; an EngineError naming
    the address and what went wrong otherwise (nothing listening, not a Dask scheduler, a bad
    address, no worker within the timeout)."""
    where = f"the Dask scheduler at {scheduler}"
    try:
        client = client_class(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise EngineError(f"cannot reach {where} within {timeout:g} s: {exc}") from None
    except MemoryError:  # a peer that answers something else: its first bytes read as a frame length
        raise EngineError(f"cannot reach {where}: what answers there is not a Dask scheduler") from None
    except (ValueError, TypeError) as exc:
        raise EngineError(f"cannot reach {where}: not a scheduler address ({exc}); "
                          "expected tcp://HOST:PORT") from None
    except Exception as exc:  # noqa: BLE001 - whatever else the client raises, worded and named
        raise EngineError(f"cannot reach {where}: {type(exc).__name__}: {exc}") from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError):
        client.close()
        raise EngineError(f"{where} has no worker (none joined within {timeout:g} s)") from None
    return client


def chunk_count(engine: str, workers: int) -> int:
    """How many node chunks a bound trace is cut into (more than workers, for balance)."""
    return max(1, workers) * CHUNKS_PER_WORKER if (workers > 1 or engine == "dask") else 1


def execute(spec: FleetSpec, events: Sequence[Event], *, engine: str = "local", workers: int = 1,
            scheduler: Optional[str] = None, processes: bool = True,
            progress: Optional[Progress] = None, timeout: float = SCHEDULER_TIMEOUT) -> list[TaskResult]:
    """Plan and run; the task results in plan order (`timeout`: for `scheduler`)."""
    if engine not in ENGINES:
        raise EngineError(f"unknown engine {engine!r}; expected one of: {', '.join(ENGINES)}")
    if workers < 1:
        raise EngineError("--workers must be at least 1")
    tasks = plan(spec, events, chunk_count(engine, workers))
    if engine == "dask":
        return run_dask(tasks, workers, scheduler, processes, progress, timeout)
    return run_local(tasks, workers, progress)


