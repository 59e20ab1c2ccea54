"""Reading the per-process files the hist interposer writes (format:
one 'key [label...] value' line per counter; see hist_observer.c)."""
import glob
import os

SIZE_GROUPS = ["malloc", "calloc", "realloc", "aligned"]
GROWTH_RATIOS = ["1-1.25", "1.25-1.5", "1.5-2", "2-4", ">4"]


def bucket_label(bucket):
    """Log buckets: 0 holds the value 0, b >= 1 holds [2^(b-1), 2^b)."""
    if bucket == 0:
        return "0"
    low, high = 1 << (bucket - 1), (1 << bucket) - 1
    return str(low) if low == high else f"{low}-{high}"


def empty_process():
    return {
        "pid": 0, "ppid": 0, "root": False, "forked": False, "end": "", "cmdline": "",
        "threads": {}, "threads_allocating": 0, "calls": {},
        "sizes": {group: {} for group in SIZE_GROUPS},
        "frees": 0, "remote_frees": 0, "inherited_frees": 0, "lifetime": {},
        "allocations": 0, "live_bytes_at_end": 0, "live_objects_at_end": 0,
        "peak_live_bytes": 0, "peak_live_objects": 0, "realloc": {},
        "growth_ratio": {}, "growth_delta": {}, "realloc_chain": {},
    }


def parse(text):
    process = empty_process()
    for line in text.splitlines():
        key, _, rest = line.partition(" ")
        if key == "cmdline":
            process["cmdline"] = rest.strip()
            continue
        if key == "end":
            process["end"] = rest.strip()
            continue
        fields = rest.split(" ")
        value = int(fields[-1])
        labels = fields[:-1]
        if key == "thread":
            process["threads"].setdefault(int(labels[0]), {})[labels[1]] = value
        elif key == "size":
            process["sizes"][labels[0]][int(labels[1])] = value
        elif key in ("lifetime", "growth_delta", "realloc_chain"):
            process[key][int(labels[0])] = value
        elif key in ("calls", "realloc", "growth_ratio"):
            process[key][labels[0]] = value
        elif key in ("root", "forked"):
            process[key] = bool(value)
        elif key != "corealloc-hist":
            process[key] = value
    return process


def read_directory(directory):
    """All processes' reports, the root (the program itself) first."""
    processes = []
    for path in sorted(glob.glob(os.path.join(directory, "hist.*")), key=os.path.getmtime):
        with open(path, encoding="utf-8", errors="replace") as report:
            processes.append(parse(report.read()))
    processes.sort(key=lambda p: not p["root"])
    return processes


def total_allocations(process):
    return sum(n for kind, n in process["calls"].items()
               if kind not in ("free", "delete", "delete[]"))


def remote_free_share(process):
    """Frees by a thread other than the allocator, over frees of objects
    this process allocated (not those inherited across fork)."""
    own_frees = process["frees"] - process["inherited_frees"]
    return process["remote_frees"] / own_frees if own_frees else 0.0
