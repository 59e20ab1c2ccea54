"""The allocators a user could choose instead of corealloc: glibc, the
corealloc builds in the build directory, the Debian-packaged peers that are
installed, the stronger peers built in ../shared/peers when they are there,
and any library given as name=path."""

from __future__ import annotations

import atexit
import functools
import shutil
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Allocator:
    name: str
    library: Path | None  # preloaded; None means the C library's malloc
    env: dict = field(default_factory=dict)
    is_corealloc: bool = False
    ablation: bool = False  # measured in Table 3 only, unless asked for by name


@dataclass(frozen=True)
class Peer:
    name: str
    package: str
    library: str


# Built outside Debian (../shared/peers/README.md): used when present, never required.
SHARED_PEERS_DIRECTORY = Path(__file__).resolve().parents[3] / "shared" / "peers"
SHARED_PEERS = {"snmalloc": "libsnmallocshim.so", "mimalloc3": "libmimalloc3.so", "rpmalloc": "librpmalloc.so"}

PEERS = (
    Peer("jemalloc", "libjemalloc2", "libjemalloc.so.2"),
    Peer("tcmalloc", "libtcmalloc-minimal4", "libtcmalloc_minimal.so.4"),
    Peer("mimalloc", "libmimalloc2.0", "libmimalloc.so.2"),
    # The proxy is the part that replaces malloc when preloaded.
    Peer("tbbmalloc", "libtbbmalloc2", "libtbbmalloc_proxy.so.2"),
)

# Table 3's rows: synchronisation x heap selection, by ablation library.
ABLATION_LABELS = {
    "corealloc": ("rseq critical sections", "by CPU id (rseq)"),
    "corealloc-cpumutex": ("per-CPU mutex", "by CPU id (sched_getcpu)"),
    "corealloc-threadhash": ("per-pool mutex", "hash of thread id"),
    "corealloc-globallock": ("one global lock", "single heap"),
    "corealloc-thread": ("none (thread-private)", "per-thread cache"),
}


def library_directories() -> list[Path]:
    multiarch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    return [Path("/usr/lib") / multiarch, Path("/lib") / multiarch, Path("/usr/lib64"), Path("/usr/lib")]


def find_library(file_name: str) -> Path | None:
    for directory in library_directories():
        candidate = directory / file_name
        if candidate.exists():
            return candidate
    return None


@functools.cache
def profile_scratch() -> Path:
    """Where corealloc-prof runs write their profiles, removed at exit."""
    directory = Path(tempfile.mkdtemp(prefix="corealloc-bench-profiles-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory


def discover(build_dir: Path, shared_peers: Path = SHARED_PEERS_DIRECTORY) -> tuple[list[Allocator], list[Peer]]:
    """All known allocators that exist here, and the Debian peers that are missing."""
    found = [Allocator("glibc", None)]
    # The heap profiler's cost: each run's profile goes to a scratch
    # directory that is removed when the driver exits.
    def profiling() -> dict[str, str]:
        return {"COREALLOC_PROFILE": "1", "COREALLOC_PROFILE_PREFIX": str(profile_scratch() / "profile")}

    for library in sorted((build_dir / "src").glob("libcorealloc*.so")):
        name = library.name[len("lib"):-len(".so")]
        if name == "corealloc-prof":
            # The profiling library (what corealloc prof runs), profiling on.
            found.append(Allocator(name, library, profiling(), is_corealloc=True, ablation=True))
            continue
        found.append(Allocator(name, library, is_corealloc=True, ablation=name != "corealloc"))
        if name == "corealloc":
            found.append(Allocator("corealloc-thread", library, {"COREALLOC_FRONTEND": "thread"},
                                   is_corealloc=True, ablation=True))
            # Secure mode's cost is part of every default comparison.
            found.append(Allocator("corealloc-secure", library, {"COREALLOC_SECURE": "1"}, is_corealloc=True))
            # Profiling on in the default library: per-thread caches.
            found.append(Allocator("corealloc-prof-thread", library, profiling(),
                                   is_corealloc=True, ablation=True))
    missing = []
    for peer in PEERS:
        library = find_library(peer.library)
        if library is None:
            missing.append(peer)
        else:
            found.append(Allocator(peer.name, library))
    for name, file_name in SHARED_PEERS.items():
        if (shared_peers / file_name).exists():
            found.append(Allocator(name, (shared_peers / file_name).resolve()))
    return found, missing


def parse_peer(item: str) -> tuple[Allocator | None, str | None]:
    """NAME=PATH as an allocator, or a note on why it cannot be one."""
    name, _, path = item.partition("=")
    if not name or not path:
        return None, f"{item}: expected NAME=PATH.so, skipped"
    library = Path(path).resolve()
    if not library.exists():
        return None, f"{name}: {library} does not exist, skipped"
    return Allocator(name, library), None


def select(available: list[Allocator], requested: list[str] | None,
           extra_peers: list[str] | None = None) -> tuple[list[Allocator], list[str]]:
    """The allocators to compare, and notes about requests that could not
    be met. Without a request: everything found except ablation builds.
    Extra peers (NAME=PATH) come on top of either, replacing a namesake."""
    by_name = {a.name: a for a in available}
    chosen, notes = [], []
    for item in requested or [a.name for a in available if not a.ablation]:
        allocator, note = parse_peer(item) if "=" in item else (by_name.get(item), None)
        if allocator is None:
            notes.append(note or f"{item}: not found in this build or on this system, skipped")
        else:
            chosen.append(allocator)
    for item in extra_peers or []:
        allocator, note = parse_peer(item)
        if allocator is None:
            notes.append(note)
            continue
        chosen = [a for a in chosen if a.name != allocator.name] + [allocator]
    return chosen, notes


def install_hint(missing: list[Peer]) -> str | None:
    if not missing:
        return None
    return "apt-get install " + " ".join(peer.package for peer in missing)
