"""From return addresses to functions: the process's mappings (from the
dump), each object's ELF load segments, and binutils' addr2line for names,
files and lines (inlined functions included). Without addr2line, frames are
named object+offset."""
import bisect
import os
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass

# Frames of the allocator itself, dropped from the top of every stack: the
# shared library's by its file name; a static link's by its functions' names.
ALLOCATOR_OBJECT = re.compile(r"^libcorealloc[^/]*\.so")
ALLOCATOR_FUNCTION = re.compile(
    r"^(stacktrace_|profile_|alloc_|sampled_malloc|small_alloc|large_malloc|corealloc_|"
    r"(__libc_)?(malloc|calloc|realloc|reallocarray|aligned_alloc|posix_memalign|memalign|"
    r"valloc|pvalloc)$|__posix_memalign$|operator new)")


@dataclass(frozen=True)
class Line:
    function: str
    file: str
    line: int


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    offset: int
    path: str


@dataclass
class Frame:
    address: int
    mapping: Mapping
    lines: tuple  # Line, innermost (inlined) first


def parse_maps(lines):
    """The executable mappings, sorted by address."""
    mappings = []
    for line in lines:
        fields = line.split(None, 5)
        if len(fields) < 5 or "x" not in fields[1]:
            continue
        start, _, end = fields[0].partition("-")
        path = fields[5].strip() if len(fields) == 6 else ""
        mappings.append(Mapping(int(start, 16), int(end, 16), int(fields[2], 16), path))
    return sorted(mappings, key=lambda m: m.start)


def load_segments(path):
    """(p_offset, p_vaddr, p_filesz) of each PT_LOAD of a 64-bit ELF file."""
    try:
        with open(path, "rb") as f:
            header = f.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2:
                return []
            endian = "<" if header[5] == 1 else ">"
            phoff, = struct.unpack_from(endian + "Q", header, 32)
            phentsize, phnum = struct.unpack_from(endian + "HH", header, 54)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return []
    segments = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(endian + "IIQQQQ", table,
                                                                        i * phentsize)
        if p_type == 1:
            segments.append((p_offset, p_vaddr, p_filesz))
    return segments


def _file_address(mapping, segments, address):
    """The address as the object's own (link-time) virtual address."""
    offset = address - mapping.start + mapping.offset
    for p_offset, p_vaddr, p_filesz in segments:
        if p_offset <= offset < p_offset + max(p_filesz, 1):
            return offset - p_offset + p_vaddr
    return offset


def _addr2line(path, addresses):
    """{address: (Line, ...)} from addr2line, or {} when it cannot say."""
    tool = shutil.which("addr2line")
    if not tool or not addresses:
        return {}
    try:
        out = subprocess.run([tool, "-a", "-f", "-C", "-i", "-e", path] +
                             [f"{a:#x}" for a in addresses],
                             capture_output=True, text=True, check=True, timeout=600).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    result, current, lines = {}, None, out.split("\n")
    i = 0
    while i < len(lines):
        text = lines[i]
        if re.fullmatch(r"0x[0-9a-f]+", text):
            current = int(text, 16)
            result[current] = []
            i += 1
            continue
        if current is not None and i + 1 < len(lines):
            where = lines[i + 1]
            file, _, number = where.rpartition(":")
            number = re.match(r"\d+", number)
            result[current].append(Line("" if text == "??" else text,
                                        "" if file in ("??", "") else file,
                                        int(number.group()) if number else 0))
            i += 2
            continue
        i += 1
    return {address: tuple(found) for address, found in result.items()}


def symbolize(maps_lines, addresses):
    """{address: Frame} for every return address."""
    mappings = parse_maps(maps_lines)
    starts = [m.start for m in mappings]
    by_object = {}
    frames = {}
    for address in set(addresses):
        i = bisect.bisect_right(starts, address) - 1
        mapping = mappings[i] if i >= 0 and address < mappings[i].end else Mapping(0, 0, 0, "")
        frames[address] = Frame(address, mapping, ())
        by_object.setdefault(mapping, []).append(address)
    for mapping, found in by_object.items():
        path = mapping.path
        readable = path.startswith("/") and os.path.isfile(path)
        segments = load_segments(path) if readable else []
        # A return address points after its call: the call is the byte before.
        local = {a: _file_address(mapping, segments, a - 1) for a in found}
        names = _addr2line(path, sorted(set(local.values()))) if readable else {}
        for address in found:
            lines = tuple(line for line in names.get(local[address], ()) if line.function)
            if not lines:
                label = os.path.basename(path) if path else "?"
                lines = (Line(f"{label}+{local[address]:#x}" if path else f"{address:#x}", "", 0),)
            frames[address] = Frame(address, mapping, lines)
    return frames


def is_allocator(frame):
    return bool(ALLOCATOR_OBJECT.match(os.path.basename(frame.mapping.path)) or
                (frame.lines and ALLOCATOR_FUNCTION.match(frame.lines[-1].function)))


def program_stack(pcs, frames):
    """A sample's stack without the allocator's own frames at its top."""
    stack = [frames[pc] for pc in pcs]
    while stack and is_allocator(stack[0]):
        stack.pop(0)
    return stack
