"""Where the tool's parts are: the interposers and replayer beside this
package, the corealloc library, and the allocators a replay can compare."""
import os
import subprocess

from . import build_info
from .errors import ToolError

# The package sits in <tool dir>/python/corealloc_cli.
TOOL_DIR = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Debian package file names; tbbmalloc replaces malloc through its proxy.
ALLOCATOR_SONAMES = {
    "jemalloc": "libjemalloc.so.2",
    "tcmalloc": "libtcmalloc_minimal.so.4",
    "mimalloc": "libmimalloc.so.2",
    "tbbmalloc": "libtbbmalloc_proxy.so.2",
}
ALLOCATOR_NAMES = ["glibc", "corealloc"] + sorted(ALLOCATOR_SONAMES)


def tool_file(name):
    path = os.path.join(TOOL_DIR, name)
    if not os.path.exists(path):
        raise ToolError(f"missing tool component {path} (is the build complete?)", 3)
    return path


def hist_interposer():
    return tool_file("libcorealloc_hist.so")


def trace_interposer():
    return tool_file("libcorealloc_trace.so")


def replayer():
    return tool_file("corealloc-replay")


def corealloc_library(override=None):
    """libcorealloc.so.N: --library, else installed (lib/) or build tree (src/)."""
    if override:
        if not os.path.isfile(override):
            raise ToolError(f"library not found: {override}")
        return os.path.realpath(override)
    for candidate in (os.path.join(TOOL_DIR, "..", build_info.LIBRARY),
                      os.path.join(TOOL_DIR, "..", "src", build_info.LIBRARY)):
        if os.path.isfile(candidate):
            return os.path.realpath(candidate)
    raise ToolError(f"cannot find {build_info.LIBRARY} next to the tool; pass --library PATH")


def profiling_library(override=None):
    """libcorealloc-prof.so, whose malloc counts for the heap profiler in its
    fast path: --library, else installed beside the tool (lib/corealloc/) or
    in the build tree (src/)."""
    if override:
        return corealloc_library(override)
    for candidate in (os.path.join(TOOL_DIR, build_info.PROF_LIBRARY),
                      os.path.join(TOOL_DIR, "..", "src", build_info.PROF_LIBRARY)):
        if os.path.isfile(candidate):
            return os.path.realpath(candidate)
    raise ToolError(f"cannot find {build_info.PROF_LIBRARY} next to the tool; pass --library PATH")


def _system_library(soname):
    try:
        listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                                 check=False).stdout
    except OSError:
        listing = ""
    for line in listing.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ")[0] == soname and os.path.isfile(path.strip()):
            return os.path.realpath(path.strip())
    for directory in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                      "/usr/lib64", "/usr/lib", "/usr/local/lib"):
        path = os.path.join(directory, soname)
        if os.path.isfile(path):
            return os.path.realpath(path)
    return None


def allocator(name_or_path):
    """Returns (label, path); path is None for glibc, which needs no preload."""
    if name_or_path == "glibc":
        return "glibc", None
    if name_or_path == "corealloc":
        return "corealloc", corealloc_library()
    if name_or_path in ALLOCATOR_SONAMES:
        path = _system_library(ALLOCATOR_SONAMES[name_or_path])
        if path is None:
            raise ToolError(f"allocator {name_or_path} is not installed "
                            f"({ALLOCATOR_SONAMES[name_or_path]} not found)", 4)
        return name_or_path, path
    if os.sep in name_or_path or name_or_path.endswith(".so") or ".so." in name_or_path:
        if not os.path.isfile(name_or_path):
            raise ToolError(f"allocator library not found: {name_or_path}", 4)
        return os.path.basename(name_or_path), os.path.realpath(name_or_path)
    raise ToolError(f"unknown allocator '{name_or_path}': use one of "
                    f"{', '.join(ALLOCATOR_NAMES)} or a path to a .so", 4)
