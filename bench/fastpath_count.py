#!/usr/bin/env python3
"""Counts the instructions of malloc's and free's hit paths in a built
libcorealloc.so (x86-64), so anyone can check the fast-path claim.

usage: fastpath_count.py [LIBRARY] [--show] [--max N]

The hit path is the straight line the compiler lays out for the expected
case: from the function's entry, conditional jumps fall through (the
misses are the taken branches), unconditional jumps inside the function
are followed, and the path ends at the first `ret`. Prints the number of
instructions and of conditional branches for each; with --show, the
instructions too. With --max N, exits 1 when either path is longer.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
FUNCTION = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
TARGET = re.compile(r"^([0-9a-f]+)\b")


def tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        sys.exit(f"fastpath_count: {name} is not installed (binutils)")
    return path


def address_of(library: Path, symbol: str) -> int:
    """The exported symbol's address (malloc is an alias: objdump may label
    the code with another of its names)."""
    out = subprocess.run([tool("nm"), "-D", "--defined-only", str(library)],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == symbol:
            return int(parts[0], 16)
    sys.exit(f"fastpath_count: {library} exports no {symbol}")


def disassemble(library: Path, symbol: str) -> list[tuple[int, str, str]]:
    start = address_of(library, symbol)
    out = subprocess.run([tool("objdump"), "-d", "--no-show-raw-insn", str(library)],
                         capture_output=True, text=True, check=True).stdout
    instructions, inside = [], False
    for line in out.splitlines():
        if FUNCTION.match(line):
            inside = int(FUNCTION.match(line).group(1), 16) == start
            continue
        m = LINE.match(line) if inside else None
        if m:
            instructions.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    if not instructions:
        sys.exit(f"fastpath_count: no function {symbol} in {library}")
    return instructions


def hit_path(instructions: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    by_address = {address: i for i, (address, _, _) in enumerate(instructions)}
    path, i, seen = [], 0, set()
    while i < len(instructions) and i not in seen:
        seen.add(i)
        address, mnemonic, operands = instructions[i]
        if mnemonic.startswith("nop") or mnemonic in ("xchg", "data16", "cs") and "ax,%ax" in operands:
            i += 1
            continue
        path.append(instructions[i])
        if mnemonic.startswith("ret"):
            return path
        if mnemonic == "jmp":
            target = TARGET.match(operands)
            if not target or int(target.group(1), 16) not in by_address:
                return path  # a tail call: the hit path leaves the function
            i = by_address[int(target.group(1), 16)]
            continue
        i += 1
    return path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", nargs="?", default="build/src/libcorealloc.so", type=Path)
    parser.add_argument("--show", action="store_true", help="print the instructions of each path")
    parser.add_argument("--max", type=int, help="fail when a path has more instructions than this")
    args = parser.parse_args(argv)
    too_long = False
    for name in ("malloc", "free"):
        path = hit_path(disassemble(args.library, name))
        branches = sum(1 for _, m, _ in path if m.startswith("j") and m != "jmp")
        ends = "ret" if path[-1][1].startswith("ret") else "a tail call"
        print(f"{name}: {len(path)} instructions, {branches} conditional branches, ending in {ends}")
        if args.show:
            for address, mnemonic, operands in path:
                print(f"    {address:x}:  {mnemonic:8} {operands}")
        too_long |= args.max is not None and len(path) > args.max
    return 1 if too_long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
