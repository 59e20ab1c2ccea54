"""corealloc prof: runs a program with the heap profiler on, or converts
profiles it wrote, into pprof (PREFIX.pb.gz) and a flame graph (PREFIX.svg)."""
import glob
import os
import re
import sys

from . import launch, locate, prof_dump, prof_flame, prof_pprof, prof_symbols
from .errors import ToolError

DUMP_NAME = re.compile(r"\.(\d+)\.(\d+)\.heap$")
TOP_SITES = 5


def _samples(dump, frames):
    samples = []
    for site in dump.sites:
        stack = prof_symbols.program_stack(site.pcs, frames)
        samples.append((stack, (site.alloc_count, site.alloc_bytes, site.live_count,
                                site.live_bytes)))
    return samples


def _site_name(stack):
    """The allocating function (with the functions inlined into it) and line."""
    if not stack:
        return "(allocator only)"
    name, _ = prof_flame.frame_name(stack[0])
    line = stack[0].lines[0]
    return f"{name} ({os.path.basename(line.file)}:{line.line})" if line.file else name


def write_profile(dump, prefix, label, base=None):
    """Writes PREFIX.pb.gz and PREFIX.svg; returns a summary for the terminal."""
    if base is not None:
        dump = prof_dump.growth(dump, base)
    frames = prof_symbols.symbolize(dump.maps, [pc for site in dump.sites for pc in site.pcs])
    samples = _samples(dump, frames)
    used = {f.address: f for stack, _ in samples for f in stack}
    comments = [f"corealloc heap profile of process {dump.pid}", f"stacks: {dump.stacks}"]
    if base is not None:
        comments.append(f"growth since {base.path}")
    data = prof_pprof.encode(samples, list(used.values()), dump.rate,
                             int(os.path.getmtime(dump.path) * 1e9), comments)
    with open(prefix + ".pb.gz", "wb") as f:
        f.write(data)
    live = sum(values[3] for _, values in samples)
    allocated = sum(values[1] for _, values in samples)
    what = "live heap growth" if base is not None else "live heap"
    human = prof_flame.human
    title = f"{label}: {what} {human(live)} (allocated {human(allocated)})"
    subtitle = (f"corealloc heap profile, process {dump.pid}, one sample per {human(dump.rate)} "
                "on average; frame width = live bytes allocated there")
    with open(prefix + ".svg", "w", encoding="utf-8") as f:
        f.write(prof_flame.render([(stack, values[3]) for stack, values in samples], title, subtitle))
    by_site = {}
    for stack, values in samples:
        name = _site_name(stack)
        by_site[name] = by_site.get(name, 0.0) + values[3]
    lines = [f"{prefix}.pb.gz, {prefix}.svg: {label}, {what} {human(live)}, "
             f"allocated {human(allocated)}"]
    for name, size in sorted(by_site.items(), key=lambda item: -item[1])[:TOP_SITES]:
        if size > 0:
            lines.append(f"  {human(size):>10}  {size / live * 100 if live else 0:5.1f}%  {name}")
    return "\n".join(lines)


def _dumps(prefix):
    """(pid, n, path) of every PREFIX.<pid>.<n>.heap."""
    found = []
    for path in glob.glob(glob.escape(prefix) + ".*.*.heap"):
        match = DUMP_NAME.search(path)
        if match and path[:match.start()] == prefix:
            found.append((int(match.group(1)), int(match.group(2)), path))
    return found


def _final_dumps(prefix):
    """{pid: path of the process's last dump}."""
    return {pid: path for pid, _, path in sorted(_dumps(prefix))}


def _profile_run(args):
    command = launch.command_from(args.command)
    prefix = os.path.abspath(args.output)
    if not os.path.isdir(os.path.dirname(prefix)):
        raise ToolError(f"no directory {os.path.dirname(prefix)} for the profiles")
    for _, _, stale in _dumps(prefix):  # an earlier run's, which would mix with this one's
        os.remove(stale)
    extra = {"COREALLOC_PROFILE": "1", "COREALLOC_PROFILE_PREFIX": prefix}
    if args.rate:
        extra["COREALLOC_PROFILE_RATE"] = args.rate
    env = launch.preload_environment(locate.profiling_library(args.library), extra)
    started = []
    status = launch.run_program(command, env, started.append)
    dumps = _final_dumps(prefix)
    if not dumps:
        raise ToolError("the program wrote no heap profile (did it run on corealloc?)", 3)
    root = started[0] if started and started[0] in dumps else min(dumps)
    for pid, path in sorted(dumps.items()):
        out = args.output if pid == root else f"{args.output}.{pid}"
        label = os.path.basename(command[0]) + ("" if pid == root else f" (process {pid})")
        print("corealloc prof: " + write_profile(prof_dump.read(path), out, label), file=sys.stderr)
    return status


def run(args):
    if args.dump:
        if args.command:
            raise ToolError("give either --dump or a program to run, not both")
        base = prof_dump.read(args.base) if args.base else None
        dump = prof_dump.read(args.dump)
        print("corealloc prof: " + write_profile(dump, args.output, os.path.basename(args.dump), base),
              file=sys.stderr)
        return 0
    if args.base:
        raise ToolError("--base compares two profiles: use it with --dump")
    return _profile_run(args)
