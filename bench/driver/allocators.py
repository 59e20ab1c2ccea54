"""The allocators a user could choose instead of corealloc: glibc, the
corealloc builds in the build directory, the Debian-packaged peers that are
installed, and any library given as name=path."""

from __future__ import annotations

import sysconfig
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


def discover(build_dir: Path) -> tuple[list[Allocator], list[Peer]]:
    """All known allocators that exist here, and the peers that are missing."""
    found = [Allocator("glibc", None)]
    for library in sorted((build_dir / "src").glob("libcorealloc*.so")):
        name = library.name[len("lib"):-len(".so")]
        found.append(Allocator(name, library, is_corealloc=True, ablation=name != "corealloc"))
        if name == "corealloc":
            found.append(Allocator("corealloc-thread", library, {"COREALLOC_FRONTEND": "thread"},
                                   is_corealloc=True, ablation=True))
    missing = []
    for peer in PEERS:
        library = find_library(peer.library)
        if library is None:
            missing.append(peer)
        else:
            found.append(Allocator(peer.name, library))
    return found, missing


def select(available: list[Allocator], requested: list[str] | None) -> tuple[list[Allocator], list[str]]:
    """The allocators to compare, and notes about requests that could not
    be met. Without a request: everything found except ablation builds."""
    if not requested:
        return [a for a in available if not a.ablation], []
    by_name = {a.name: a for a in available}
    chosen, notes = [], []
    for item in requested:
        if "=" in item:
            name, path = item.split("=", 1)
            library = Path(path).resolve()
            if library.exists():
                chosen.append(Allocator(name, library))
            else:
                notes.append(f"{name}: {library} does not exist, skipped")
        elif item in by_name:
            chosen.append(by_name[item])
        else:
            notes.append(f"{item}: not found in this build or on this system, skipped")
    return chosen, notes


def install_hint(missing: list[Peer]) -> str | None:
    if not missing:
        return None
    return "apt-get install " + " ".join(peer.package for peer in missing)
