"""corealloc run: the program on corealloc, with options and statistics."""
import difflib
import os
import re
import shutil
import sys
import tempfile

from . import launch, locate, option_names
from .errors import ToolError

OPTION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def option_environment(options):
    env = {}
    for option in options:
        name, sep, value = option.partition("=")
        if not sep or not OPTION_NAME.match(name):
            raise ToolError(f"--option wants NAME=VALUE, not '{option}'")
        if name.lower() not in option_names.NAMES:
            close = difflib.get_close_matches(name.lower(), option_names.NAMES, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ToolError(f"unknown option '{name}'{hint}; the options are: "
                            f"{', '.join(option_names.NAMES)}")
        env["COREALLOC_" + name.upper()] = value
    return env


def _print_reports(directory):
    """Every process's report, in the order they were written."""
    reports = sorted((os.path.join(directory, name) for name in os.listdir(directory)),
                     key=os.path.getmtime)
    for report in reports:
        with open(report, encoding="utf-8", errors="replace") as f:
            sys.stderr.write(f.read())
    sys.stderr.flush()


def run(args):
    command = launch.command_from(args.command)
    library = locate.corealloc_library(args.library)
    extra = option_environment(args.option)
    if args.stats:
        extra.setdefault("COREALLOC_STATS", "1")
    env = launch.preload_environment(library, extra)
    # A program may close its stderr before the library writes the report
    # at exit (ls does): unless the user chose a file, the reports go to a
    # directory of ours, one per process, and we print them.
    if env.get("COREALLOC_STATS", "0") in ("", "0") or "COREALLOC_STATS_FILE" in env:
        return launch.run_program(command, env)
    directory = tempfile.mkdtemp(prefix="corealloc-run-")
    try:
        env["COREALLOC_STATS_FILE"] = os.path.join(directory, "report.%p")
        status = launch.run_program(command, env)
        _print_reports(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return status
