"""Command-line parsing and dispatch for the corealloc tool."""
import argparse
import sys

from . import build_info, hist_cmd, locate, option_names, prof_cmd, run_cmd, trace_cmd
from .errors import ToolError

COMMAND_HELP = "-- PROGRAM ARGS...: the program to run"


def _parser():
    parser = argparse.ArgumentParser(prog="corealloc", description="Tools for the corealloc allocator.",
                                     epilog="The manual: man corealloc (the tool), man 3 corealloc "
                                            "(the library and its options).")
    parser.add_argument("--version", action="version", version=f"corealloc {build_info.VERSION}")
    commands = parser.add_subparsers(dest="command_name")

    run = commands.add_parser("run", help="run a program on corealloc",
                              epilog=f"option names: {', '.join(option_names.NAMES)} "
                                     "(man 3 corealloc, ENVIRONMENT)")
    run.add_argument("--stats", action="store_true",
                     help="print corealloc's report when the program exits (each process's, on stderr)")
    run.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                     help="set corealloc option NAME (as COREALLOC_NAME=VALUE); repeatable")
    run.add_argument("--library", metavar="PATH", help="the libcorealloc.so to use")
    run.add_argument("command", nargs=argparse.REMAINDER, help=COMMAND_HELP)
    run.set_defaults(handler=run_cmd.run)

    hist = commands.add_parser("hist", help="profile a program's use of malloc")
    hist.add_argument("-o", "--output", metavar="FILE.png", help="also draw the report as a PNG")
    hist.add_argument("--json", action="store_true", help="print the counts as JSON")
    hist.add_argument("--all-processes", action="store_true",
                      help="report each child process in full, not just the program itself")
    hist.add_argument("--no-children", action="store_true", help="do not observe child processes")
    hist.add_argument("--report-to-stderr", action="store_true",
                      help="print the report on stderr, leaving stdout to the program")
    hist.add_argument("command", nargs=argparse.REMAINDER, help=COMMAND_HELP)
    hist.set_defaults(handler=hist_cmd.run)

    prof = commands.add_parser(
        "prof", help="heap profile: where a program's memory is allocated, live and leaked",
        description="Runs the program on corealloc with its heap profiler on and writes "
                    "PREFIX.pb.gz (pprof: go tool pprof PREFIX.pb.gz) and PREFIX.svg (a flame "
                    "graph of the live heap) when it exits; each child process gets "
                    "PREFIX.<pid>.pb.gz and .svg. The raw profiles stay beside them as "
                    "PREFIX.<pid>.<n>.heap: a profiled process writes one more on SIGUSR2 or "
                    "corealloc_profile_dump(). With --dump, converts such a profile instead, "
                    "and with --base shows the growth since an earlier one (leaks).")
    prof.add_argument("-o", "--output", default="corealloc-prof", metavar="PREFIX",
                      help="where the profiles go (default corealloc-prof)")
    prof.add_argument("--rate", metavar="BYTES",
                      help="mean bytes allocated between samples (default 512K; K/M/G suffixes)")
    prof.add_argument("--library", metavar="PATH",
                      help="the library to profile on (default: libcorealloc-prof.so, whose fast "
                           "paths count for the profiler, so the per-CPU caches stay on)")
    prof.add_argument("--dump", metavar="FILE.heap", help="convert this profile instead of running")
    prof.add_argument("--base", metavar="OLDER.heap",
                      help="with --dump: show what changed since this earlier profile")
    prof.add_argument("command", nargs=argparse.REMAINDER, help=COMMAND_HELP)
    prof.set_defaults(handler=prof_cmd.run)

    trace = commands.add_parser("trace", help="record, replay or describe allocation traces")
    trace_commands = trace.add_subparsers(dest="trace_command", required=True)

    record = trace_commands.add_parser("record", help="record a program's allocation calls")
    record.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="the trace; child processes write FILE.<pid>")
    record.add_argument("--no-children", action="store_true", help="do not trace child processes")
    record.add_argument("command", nargs=argparse.REMAINDER, help=COMMAND_HELP)
    record.set_defaults(handler=trace_cmd.record)

    replay = trace_commands.add_parser("replay", help="replay traces, checking and timing an allocator")
    replay.add_argument("traces", nargs="+", metavar="FILE", help="traces, replayed in parallel")
    replay.add_argument("--allocator", action="append", metavar="NAME|PATH",
                        help=f"one of {', '.join(locate.ALLOCATOR_NAMES)} or a .so path "
                             "(default glibc); repeat to compare")
    replay.add_argument("--threads", type=int, metavar="N",
                        help="replay threads (default: one per recorded thread)")
    replay.add_argument("--copies", type=int, default=1, metavar="K",
                        help="replay K copies of each trace at once")
    replay.add_argument("--repeat", type=int, default=3, metavar="R",
                        help="timed runs per allocator (median reported)")
    replay.add_argument("--no-check", action="store_true", help="skip the correctness pass")
    replay.add_argument("--json", action="store_true", help="machine-readable output")
    replay.set_defaults(handler=trace_cmd.replay)

    info = trace_commands.add_parser("info", help="validate and summarise traces")
    info.add_argument("traces", nargs="+", metavar="FILE")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(handler=trace_cmd.info)
    return parser


def _validate(args):
    for name in ("threads", "copies", "repeat"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise ToolError(f"--{name} must be at least 1")


def main(argv):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command_name is None:
        parser.print_help()
        return 0
    try:
        _validate(args)
        return args.handler(args)
    except ToolError as error:
        print(f"corealloc: {error}", file=sys.stderr)
        return error.exit_code
