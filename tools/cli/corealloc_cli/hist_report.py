"""The text form of a hist report."""
from .hist_data import (GROWTH_RATIOS, SIZE_GROUPS, bucket_label, remote_free_share,
                        total_allocations)


def human_bytes(count):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count} bytes" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count} bytes"


def _calls_line(process):
    calls = ", ".join(f"{kind} {n}" for kind, n in sorted(process["calls"].items()))
    return calls or "none"


def _size_table(process):
    buckets = sorted({b for group in SIZE_GROUPS for b in process["sizes"][group]})
    if not buckets:
        return ["  no allocation requests"]
    lines = ["  request size (bytes)   " + "".join(f"{g:>10}" for g in SIZE_GROUPS) + "     total"]
    for bucket in buckets:
        counts = [process["sizes"][g].get(bucket, 0) for g in SIZE_GROUPS]
        lines.append(f"  {bucket_label(bucket):<22} " + "".join(f"{n:>10}" for n in counts)
                     + f"{sum(counts):>10}")
    return lines


def _histogram(title, buckets):
    if not buckets:
        return []
    lines = [f"  {title}"]
    top = max(buckets.values())
    for bucket in sorted(buckets):
        bar = "#" * max(1, round(40 * buckets[bucket] / top))
        lines.append(f"    {bucket_label(bucket):<22} {buckets[bucket]:>10}  {bar}")
    return lines


def _realloc_lines(process):
    r = process["realloc"]
    calls = process["calls"].get("realloc", 0) + process["calls"].get("reallocarray", 0)
    if not calls:
        return ["  realloc: not used"]
    lines = [f"  realloc: {calls} calls: from NULL {r.get('from_null', 0)}, grow {r.get('grow', 0)}, "
             f"shrink {r.get('shrink', 0)}, same size {r.get('same', 0)}; moved the block "
             f"{r.get('moved', 0)}; of another thread's object {r.get('of_remote', 0)}"]
    if r.get("grow", 0):
        ratios = ", ".join(f"{label}: {process['growth_ratio'].get(label, 0)}" for label in GROWTH_RATIOS)
        lines.append(f"    growth ratio new/old: {ratios}")
        lines += ["  " + line for line in _histogram("growth in bytes", process["growth_delta"])]
    lines += ["  " + line for line in _histogram("reallocs per object (at its free)",
                                                 process["realloc_chain"])]
    return lines


def _thread_lines(process):
    lines = ["  per thread (os tid): allocations, frees, frees of other threads' objects"]
    for tid, counts in sorted(process["threads"].items()):
        lines.append(f"    {tid:<10} {counts.get('allocations', 0):>10} {counts.get('frees', 0):>10} "
                     f"{counts.get('remote_frees', 0):>10}")
    return lines


def process_report(process):
    own_frees = process["frees"] - process["inherited_frees"]
    lines = [
        f"corealloc hist: {process['cmdline']} (pid {process['pid']}"
        + (", forked" if process["forked"] else "") + f", ended by {process['end']})",
        f"  allocation calls: {total_allocations(process)}; frees: {process['frees']}",
        f"  calls: {_calls_line(process)}",
        f"  threads that allocate: {process['threads_allocating']}",
        f"  frees by a thread other than the allocating one: {process['remote_frees']} of "
        f"{own_frees} ({100 * remote_free_share(process):.1f}%)",
        f"  peak live: {human_bytes(process['peak_live_bytes'])} "
        f"({process['peak_live_bytes']} bytes) in {process['peak_live_objects']} objects (peak count)",
        f"  live at the end: {process['live_objects_at_end']} objects, "
        f"{process['live_bytes_at_end']} bytes",
    ]
    if process["inherited_frees"]:
        lines.append(f"  frees of objects inherited from the parent: {process['inherited_frees']}")
    lines.append("")
    lines += _size_table(process)
    lines.append("")
    lines += _histogram("object lifetime (allocations made between an object's allocation and its free)",
                        process["lifetime"])
    lines.append("")
    lines += _realloc_lines(process)
    lines.append("")
    lines += _thread_lines(process)
    return "\n".join(lines)


def report(processes, all_processes):
    if not processes:
        return "corealloc hist: no report was written (did the program allocate at all?)"
    sections = [process_report(processes[0])]
    others = processes[1:]
    if others and all_processes:
        sections += [process_report(p) for p in others]
    elif others:
        summary = [f"child processes ({len(others)}; --all-processes shows each in full):"]
        summary += [f"  pid {p['pid']:<8} {total_allocations(p):>10} allocations  {p['cmdline']}"
                    for p in others]
        sections.append("\n".join(summary))
    return "\n\n".join(sections) + "\n"
