"""corealloc run: the program on corealloc, with options and statistics."""
import re

from . import launch, locate
from .errors import ToolError

OPTION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def option_environment(options, stats):
    env = {}
    for option in options:
        name, sep, value = option.partition("=")
        if not sep or not OPTION_NAME.match(name):
            raise ToolError(f"--option wants NAME=VALUE, not '{option}'")
        env["COREALLOC_" + name.upper()] = value
    if stats:
        env["COREALLOC_STATS"] = "1"
    return env


def run(args):
    command = launch.command_from(args.command)
    library = locate.corealloc_library(args.library)
    env = launch.preload_environment(library, option_environment(args.option, args.stats))
    return launch.run_program(command, env)
