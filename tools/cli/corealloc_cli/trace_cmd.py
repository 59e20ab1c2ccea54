"""corealloc trace record | replay | info."""
import glob
import json
import os
import subprocess
import sys
import time

from . import launch, locate, replay_report
from .errors import ToolError


def _child_traces(base, since):
    paths = [p for p in glob.glob(glob.escape(base) + ".[0-9]*") if os.path.getmtime(p) >= since]
    return sorted(paths, key=os.path.getmtime)


def record(args):
    command = launch.command_from(args.command)
    launch.check_program(command[0])
    output = os.path.abspath(args.output)
    if os.path.isdir(output):
        raise ToolError(f"trace output is a directory: {args.output}")
    if os.path.exists(output):
        os.remove(output)
    started = time.time() - 1  # file times can have coarse granularity
    env = launch.preload_environment(locate.trace_interposer(), {
        "COREALLOC_TRACE_FILE": output,
        "COREALLOC_TRACE_CHILDREN": "0" if args.no_children else "1",
    })
    status = launch.run_program(command, env)
    if os.path.exists(output):
        print(f"corealloc trace: wrote {args.output} ({os.path.getsize(output)} bytes)", file=sys.stderr)
    else:
        print("corealloc trace: the program wrote no trace", file=sys.stderr)
    for child in _child_traces(output, started):
        print(f"corealloc trace: child process trace {child} ({os.path.getsize(child)} bytes)",
              file=sys.stderr)
    return status


def _check_traces(paths):
    for path in paths:
        if not os.path.isfile(path):
            raise ToolError(f"trace not found: {path}")
        if not os.access(path, os.R_OK):
            raise ToolError(f"trace not readable: {path}")


def run_replayer(arguments, allocator_path):
    """Runs corealloc-replay once (one pass, fresh process) and returns its JSON."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    command = [locate.replayer()] + arguments
    if allocator_path:
        env["LD_PRELOAD"] = allocator_path
        command += ["--allocator-path", allocator_path]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode in (2, 3, 4):
        message = result.stderr.strip().replace("corealloc-replay: ", "")
        # ld.so's own complaint about the preload adds nothing to ours
        message = "\n".join(line for line in message.splitlines() if "ld.so" not in line)
        raise ToolError(message, result.returncode)
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as error:
        raise ToolError(f"the replayer failed (exit status {result.returncode}): "
                        f"{result.stderr.strip()}", 3) from error


def replay(args):
    _check_traces(args.traces)
    allocators = [locate.allocator(name) for name in (args.allocator or ["glibc"])]
    common = []
    if args.threads:
        common += ["--threads", str(args.threads)]
    if args.copies > 1:
        common += ["--copies", str(args.copies)]
    common += args.traces
    results = []
    failed = False
    for label, path in allocators:
        check = None if args.no_check else run_replayer(["--check"] + common, path)
        runs = [run_replayer(common, path) for _ in range(args.repeat)]
        summary = replay_report.summarise(label, path, check, runs)
        failed = failed or summary["check"] == "failed"
        results.append(summary)
    if args.json:
        json.dump(results if len(results) > 1 else results[0], sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(replay_report.text(results))
    return 1 if failed else 0


def info(args):
    _check_traces(args.traces)
    traces = run_replayer(["--info"] + args.traces, None)
    if args.json:
        json.dump(traces, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(replay_report.info_text(traces))
    return 0
