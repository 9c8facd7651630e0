"""The fleet summary for people: a terminal table, a progress bar, and one self-contained HTML
page with SVG bar charts (no scripts, no external files).
"""
from __future__ import annotations

import html
import sys
import time
from typing import Mapping, Optional, Sequence, TextIO

Summary = Mapping[str, object]


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.1f}Gi"


def _refused(variant: Mapping[str, object]) -> int:
    refusals = variant["refusals"]
    assert isinstance(refusals, Mapping)
    return sum(sum(m.values()) for m in refusals.values())


def _memory(group: Mapping[str, object]) -> tuple[int, int, int]:
    """(used, free, stranded) memory bytes over the group's NUMA nodes."""
    used = free = stranded = 0
    for row in group["numa"]:  # type: ignore[union-attr]
        cell = row.get("memory") or {}
        used += cell.get("used", 0)
        free += cell.get("free", 0)
        stranded += cell.get("stranded", 0)
    return used, free, stranded


def _ratio(used: int, of: int) -> str:
    """`used/of`, or `-` when there is nothing of it."""
    return f"{used}/{of}" if of else "-"


def _cpus(group: Mapping[str, object]) -> str:
    """Exclusive CPUs held / allocatable CPUs (`-` when the CPU manager pins nothing)."""
    cpus = group.get("cpus") or {}
    return _ratio(cpus.get("exclusive", 0), cpus.get("allocatable", 0))  # type: ignore[union-attr]


def _devices(group: Mapping[str, object]) -> str:
    """Devices allocated / healthy devices, over every device resource (`-` without devices)."""
    cells = list((group.get("devices") or {}).values())  # type: ignore[union-attr]
    return _ratio(sum(c["allocated"] for c in cells), sum(c["allocatable"] for c in cells))


def table_lines(summary: Summary) -> list[str]:
    """One line per variant and node group: pods, kubelet refusals, disagreements, memory, exclusive
    CPUs and devices in use."""
    header = (f"{'variant':<22} {'group':<10} {'admitted':>8} {'refused':>7} {'disagree':>8} "
              f"{'unsched':>7} {'used':>8} {'free':>8} {'stranded':>8} {'excl cpus':>9} {'devices':>9}")
    lines = [f"fleet {summary['fleet']}: placement {summary['placement']}, onRefusal {summary['onRefusal']}, "
             f"{summary['trace']['events']} events"  # type: ignore[index]
             f" ({'bound' if summary['trace']['bound'] else 'unbound'} trace)", "", header]  # type: ignore[index]
    for variant in summary["variants"]:  # type: ignore[union-attr]
        pods = variant["pods"]
        for i, group in enumerate(variant["groups"]):
            refused = sum(sum(m.values()) for m in group["refusals"].values())
            used, free, stranded = _memory(group)
            name = variant["name"] if i == 0 else ""
            unsched = str(pods["unschedulable"]) if i == 0 else ""
            lines.append(f"{name:<22} {group['name']:<10} {group['admitted']:>8} {refused:>7} "
                         f"{group['disagreements']:>8} {unsched:>7} {_gib(used):>8} {_gib(free):>8} {_gib(stranded):>8} "
                         f"{_cpus(group):>9} {_devices(group):>9}")
        for reason, messages in variant["refusals"].items():
            for message, count in messages.items():
                lines.append(f"{'':<22} {count:>5} x {reason}: {message}")
    return lines


def print_table(summary: Summary, out: TextIO) -> None:
    for line in table_lines(summary):
        print(line, file=out)


class ProgressBar:
    """A one-line bar on a terminal: `[###...] done/total events  rate/s  ETA m:ss`, redrawn at
    most 10 times a second; silent when `enabled` is False (the command enables it when stderr
    is a terminal, or with --progress)."""

    def __init__(self, total: int, enabled: bool, out: Optional[TextIO] = None, width: int = 30,
                 unit: str = "events") -> None:
        self.total = max(1, total)
        self.done = 0
        self.enabled = enabled
        self.out = sys.stderr if out is None else out
        self.width = width
        self.unit = unit
        self._last = 0.0
        self._start = time.monotonic()
        self._drawn = False

    def __call__(self, amount: int) -> None:
        self.done = min(self.total, self.done + amount)
        now = time.monotonic()
        if self.enabled and (now - self._last >= 0.1 or self.done == self.total):
            self._last = now
            self.out.write("\r" + self.line(now - self._start))
            self.out.flush()
            self._drawn = True

    def line(self, elapsed: float) -> str:
        """The bar after `elapsed` seconds: done, rate and the estimated time left."""
        filled = self.width * self.done // self.total
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = clock(left / rate) if rate > 0 else "0:00" if left == 0 else "?"
        if self.unit == "bytes":
            amounts, speed = f"{self.done / (1 << 20):,.1f}/{self.total / (1 << 20):,.1f} MiB", f"{rate / (1 << 20):,.1f} MiB/s"
        else:
            amounts, speed = f"{self.done:,}/{self.total:,} {self.unit}", f"{rate:,.0f}/s"
        return f"[{'#' * filled}{'.' * (self.width - filled)}] {amounts}  {speed}  ETA {eta}"

    def close(self) -> None:
        if self.enabled and self._drawn:
            self.out.write("\n")
            self.out.flush()


def clock(seconds: float) -> str:
    """`m:ss`, or `h:mm:ss` from an hour on."""
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


# ----- HTML -------------------------------------------------------------------------------------------

COLORS = {"admitted": "#4c9f70", "refused": "#d1495b", "disagreements": "#edae49", "unschedulable": "#8d99ae",
          "used": "#00798c", "free": "#a5d8dd", "stranded": "#d1495b"}


def bar_chart(title: str, labels: Sequence[str], series: Mapping[str, Sequence[float]], unit: str = "") -> str:
    """Grouped horizontal bars: one group per label, one bar per series, as an SVG element."""
    bar, gap, left, width = 14, 10, 170, 420
    names = list(series)
    height = 30 + len(labels) * (len(names) * bar + gap) + 20 * len(names)
    peak = max([v for values in series.values() for v in values] + [1])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{height}" '
             f'font-family="sans-serif" font-size="11">',
             f'<text x="0" y="14" font-size="13" font-weight="bold">{html.escape(title)}</text>']
    y = 26
    for i, label in enumerate(labels):
        parts.append(f'<text x="0" y="{y + bar * len(names) / 2 + 4:.0f}">{html.escape(label)}</text>')
        for name in names:
            value = series[name][i]
            w = width * value / peak
            parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar - 2}" fill="{COLORS.get(name, "#555")}">'
                         f'<title>{html.escape(name)}: {value:g}{unit}</title></rect>')
            parts.append(f'<text x="{left + w + 4:.1f}" y="{y + bar - 4}">{value:g}{unit}</text>')
            y += bar
        y += gap
    for name in names:
        parts.append(f'<rect x="0" y="{y}" width="10" height="10" fill="{COLORS.get(name, "#555")}"/>'
                     f'<text x="14" y="{y + 9}">{html.escape(name)}</text>')
        y += 20
    parts.append("</svg>")
    return "".join(parts)


def _cpu_and_device_charts(variant: Mapping[str, object]) -> list[str]:
    """Exclusive CPUs per NUMA node (when a CPU manager pins) and devices per resource (when there are
    any) at the end of one variant, as SVG charts."""
    charts = []
    labels, used, free = [], [], []
    for g in variant["groups"]:  # type: ignore[union-attr]
        for row in g["numa"]:
            if "cpu" in row:
                labels.append(f"{g['name']} NUMA {row['numaNode']}")
                used.append(row["cpu"]["used"])
                free.append(row["cpu"]["free"])
    if labels:
        charts.append(bar_chart(f"Exclusive CPUs per NUMA node at the end: {variant['name']}", labels,
                                {"used": used, "free": free}, " CPUs"))
    labels, used, free = [], [], []
    for g in variant["groups"]:  # type: ignore[union-attr]
        for resource, cell in (g.get("devices") or {}).items():
            labels.append(f"{g['name']} {resource}")
            used.append(cell["allocated"])
            free.append(cell["free"])
    if labels:
        charts.append(bar_chart(f"Devices at the end: {variant['name']}", labels, {"used": used, "free": free}))
    return charts


def html_report(summary: Summary) -> str:
    """The whole page."""
    variants = list(summary["variants"])  # type: ignore[call-overload]
    outcome = bar_chart(
        "Pods per variant", [v["name"] for v in variants],
        {"admitted": [v["pods"]["admitted"] for v in variants],
         "refused": [_refused(v) for v in variants],
         "disagreements": [v["disagreements"] for v in variants],
         "unschedulable": [v["pods"]["unschedulable"] for v in variants]})
    memory_charts = []
    for v in variants:
        labels, used, free, stranded = [], [], [], []
        for g in v["groups"]:
            for row in g["numa"]:
                cell = row.get("memory") or {}
                labels.append(f"{g['name']} NUMA {row['numaNode']}")
                used.append(round(cell.get("used", 0) / (1 << 30), 2))
                free.append(round(cell.get("free", 0) / (1 << 30), 2))
                stranded.append(round(cell.get("stranded", 0) / (1 << 30), 2))
        memory_charts.append(bar_chart(f"Memory per NUMA node at the end: {v['name']}", labels,
                                       {"used": used, "free": free, "stranded": stranded}, " GiB"))
        memory_charts.extend(_cpu_and_device_charts(v))
    table = html.escape("\n".join(table_lines(summary)))
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>fleet {html.escape(str(summary['fleet']))}</title>"
            "<style>body{font-family:sans-serif;margin:2em} pre{background:#f4f4f4;padding:1em;overflow-x:auto}</style></head><body>"
            f"<h1>Fleet {html.escape(str(summary['fleet']))}</h1><pre>{table}</pre>"
            f"<div>{outcome}</div>" + "".join(f"<div>{c}</div>" for c in memory_charts) +
            "<p>Refused: kubelet's admission refusals (a pod retried elsewhere counts once per refusal). "
            "Disagreements: the scheduler rule chose the node and kubelet refused. Stranded: free memory on a "
            "NUMA node smaller than the smallest need of a pod that did not run. Exclusive CPUs: CPUs the CPU "
            "manager gave a container for itself, out of its allocatable CPUs (the reserved ones left out). "
            "Devices: devices allocated, out of the healthy ones.</p></body></html>\n")


def write_outputs(summary: Summary, out_dir: str, summary_text: str) -> list[str]:
    """summary.json and report.html into `out_dir` (created); the paths written."""
    import os

    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, "summary.json"), os.path.join(out_dir, "report.html")]
    with open(paths[0], "w", encoding="utf-8") as fh:
        fh.write(summary_text)
    with open(paths[1], "w", encoding="utf-8") as fh:
        fh.write(html_report(summary))
    return paths
