"""Starting the user's program with a library preloaded."""
import os
import shutil
import signal
import subprocess

from .errors import ToolError


def command_from(arguments):
    """The program and its arguments after an optional '--'."""
    if arguments and arguments[0] == "--":
        arguments = arguments[1:]
    if not arguments:
        raise ToolError("no program given (usage: ... -- PROGRAM ARGS...)")
    return arguments


def check_program(program):
    if os.sep in program:
        if not os.path.exists(program):
            raise ToolError(f"program not found: {program}", 127)
        if os.path.isdir(program) or not os.access(program, os.X_OK):
            raise ToolError(f"program is not executable: {program}", 126)
    elif shutil.which(program) is None:
        raise ToolError(f"program not found in PATH: {program}", 127)


def preload_environment(preload, extra=None):
    """The current environment with `preload` first in LD_PRELOAD (anything
    already there stays after it, so an interposer can sit over another
    allocator) and COREALLOC_TOOL_PID naming us as the root's parent."""
    env = dict(os.environ)
    if preload:
        existing = env.get("LD_PRELOAD", "")
        env["LD_PRELOAD"] = preload + (":" + existing if existing else "")
    env["COREALLOC_TOOL_PID"] = str(os.getpid())
    env.update(extra or {})
    return env


def run_program(command, env, started=None):
    """Runs the program to completion; returns a shell-style exit status.
    started, when given, is called with the program's process id."""
    check_program(command[0])
    try:
        process = subprocess.Popen(command, env=env)
    except OSError as error:
        raise ToolError(f"cannot run {command[0]}: {error.strerror}", 126) from error
    if started:
        started(process.pid)
    # Signals meant for the program (Ctrl-C) reach it directly; wait for it.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        status = process.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return 128 - status if status < 0 else status
