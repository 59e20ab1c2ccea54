"""Reading the heap profiler's dumps (written by src/api/profile_dump.c,
whose header comment is the format)."""
from dataclasses import dataclass, field

from .errors import ToolError

MAGIC = "corealloc heap profile 1"


@dataclass
class Site:
    """One call stack's samples and the estimates they stand for."""
    alloc_samples: int
    alloc_count: float
    alloc_bytes: float
    live_samples: int
    live_count: float
    live_bytes: float
    pcs: tuple  # return addresses, innermost first


@dataclass
class Dump:
    path: str
    pid: int
    rate: int
    stacks: str
    time_ns: int
    sites: list = field(default_factory=list)
    maps: list = field(default_factory=list)  # /proc/self/maps lines


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError as error:
        raise ToolError(f"cannot read profile {path}: {error.strerror}") from error
    if not lines or lines[0] != MAGIC:
        raise ToolError(f"{path} is not a corealloc heap profile")
    if "maps" not in lines:
        raise ToolError(f"{path}: damaged heap profile (no maps: cut short?)")
    maps_at = lines.index("maps")
    header, body = {}, 1
    while body < maps_at and not lines[body].startswith("site "):
        key, _, value = lines[body].partition(" ")
        header[key] = value
        body += 1
    try:
        dump = Dump(path, int(header["pid"]), int(header["rate"]), header["stacks"],
                    int(header["time_ns"]))
        for line in lines[body:maps_at]:
            words = line.split()
            depth = int(words[7])
            dump.sites.append(Site(int(words[1]), float(words[2]), float(words[3]), int(words[4]),
                                   float(words[5]), float(words[6]),
                                   tuple(int(w, 16) for w in words[8:8 + depth])))
    except (KeyError, ValueError, IndexError) as error:
        raise ToolError(f"{path}: damaged heap profile ({error})") from error
    dump.maps = [line for line in lines[maps_at + 1:] if line]
    return dump


def growth(dump, base):
    """The sites of dump less those of base (an earlier dump of the same
    process): what was allocated in between, and how the live heap changed."""
    if base.pid != dump.pid:
        raise ToolError(f"{base.path} is of process {base.pid}, {dump.path} of {dump.pid}: "
                        "a base must be an earlier profile of the same process")
    before = {site.pcs: site for site in base.sites}
    sites = []
    for site in dump.sites:
        old = before.get(site.pcs)
        if old is None:
            sites.append(site)
            continue
        sites.append(Site(site.alloc_samples - old.alloc_samples, site.alloc_count - old.alloc_count,
                          site.alloc_bytes - old.alloc_bytes, site.live_samples - old.live_samples,
                          site.live_count - old.live_count, site.live_bytes - old.live_bytes,
                          site.pcs))
    return Dump(dump.path, dump.pid, dump.rate, dump.stacks, dump.time_ns, sites, dump.maps)
