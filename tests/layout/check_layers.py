#!/usr/bin/env python3
"""The library's layering, checked from its includes.

usage: check_layers.py SRC [--design DESIGN.md]
       check_layers.py --self-test

Every file of SRC lives in a layer folder; LAYERS below is the order, bottom
first, and the one place it is written. A file may include headers of its own
layer and of the layers before it, never one after it; the include graph of
modules (a module is x.c with x.h) has no cycle. With --design, the layer
table of the design document lists the layers in the same order and names
every source file. Exits 1 with one line per violation.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile

LAYERS = ("platform", "arch", "core", "frontend", "policy", "api")
PUBLIC_HEADERS = {"corealloc.h"}  # include/, the public API: any layer may use it
SOURCE_SUFFIXES = (".c", ".h", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def sources(src: str) -> list[str]:
    found = []
    for folder, _, files in os.walk(src):
        for name in files:
            if name.endswith(SOURCE_SUFFIXES):
                found.append(os.path.relpath(os.path.join(folder, name), src))
    return sorted(found)


def layer_of(path: str) -> str:
    return path.split(os.sep)[0]


def module_of(path: str) -> str:
    return os.path.splitext(path)[0]


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def check_includes(src: str) -> list[str]:
    problems = []
    files = sources(src)
    edges: dict[str, set[str]] = {module_of(f): set() for f in files}
    for path in files:
        layer = layer_of(path)
        if layer not in LAYERS:
            problems.append(f"{path}: not in a layer folder ({', '.join(LAYERS)})")
            continue
        with open(os.path.join(src, path), errors="replace") as f:
            text = f.read()
        for header in INCLUDE.findall(text):
            if header in PUBLIC_HEADERS:
                continue
            if not os.path.isfile(os.path.join(src, header)):
                problems.append(f"{path}: includes \"{header}\", which is not a path under src/")
                continue
            target = layer_of(header)
            if target not in LAYERS:
                problems.append(f"{path}: includes \"{header}\", outside the layer folders")
            elif LAYERS.index(target) > LAYERS.index(layer):
                problems.append(f"{path}: {layer} includes \"{header}\" of {target}, a layer above it")
            if module_of(header) != module_of(path):
                edges[module_of(path)].add(module_of(header))
    for component in strongly_connected(edges):
        problems.append("include cycle: " + " -> ".join(component))
    return problems


def design_table(design: str) -> list[tuple[str, str]]:
    """The rows (layer, files cell) of the table headed '| layer | files |'."""
    rows = []
    in_table = False
    with open(design) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| layer | files |"):
                in_table = True
                continue
            if in_table and line.startswith("|"):
                if set(cells[0]) <= {"-", ":"}:
                    continue
                rows.append((cells[0].strip("`"), cells[1] if len(cells) > 1 else ""))
            elif in_table:
                break
    return rows


def check_design(src: str, design: str) -> list[str]:
    rows = design_table(design)
    if not rows:
        return [f"{design}: no table headed '| layer | files |'"]
    problems = []
    order = [layer for layer, _ in rows]
    if tuple(order) != LAYERS:
        problems.append(f"{design}: the layer table lists {', '.join(order)}; the layers are {', '.join(LAYERS)}")
    named = set()
    for layer, cell in rows:
        for name in re.findall(r"`([^`]+)`", cell):
            named.add(f"{layer}/{name}")
    for path in sources(src):
        if path not in named:
            problems.append(f"{design}: the layer table does not name {path}")
    for name in sorted(named - set(sources(src))):
        problems.append(f"{design}: the layer table names {name}, which is not in src/")
    return problems


def self_test() -> int:
    """The check must fail on an upward include, a cycle, a stray file and a
    stale design table, and pass on a clean tree."""
    def tree(root: str, files: dict[str, str]) -> None:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)

    clean = {"platform/os.h": "", "platform/os.c": '#include "platform/os.h"\n',
             "core/zone.h": '#include "platform/os.h"\n', "core/zone.c": '#include "core/zone.h"\n'}
    table = "| layer | files |\n|---|---|\n" + "".join(
        f"| {layer} | {' '.join('`' + p.split('/')[1] + '`' for p in clean if p.startswith(layer + '/'))} |\n"
        for layer in LAYERS)
    cases = {
        "clean": (clean, table, 0),
        "upward": (dict(clean, **{"platform/os.c": '#include "core/zone.h"\n'}), table, 1),
        "cycle": (dict(clean, **{"core/a.h": '#include "core/b.h"\n', "core/b.h": '#include "core/a.h"\n'}),
                  table.replace("`zone.h`", "`zone.h` `a.h` `b.h`"), 1),
        "stray": (dict(clean, **{"misc/x.c": ""}), table, 1),
        "stale design": (dict(clean, **{"core/new.c": '#include "core/zone.h"\n'}), table, 1),
    }
    failed = 0
    for name, (files, design_text, want) in cases.items():
        with tempfile.TemporaryDirectory(prefix="layers-") as root:
            tree(root, files)
            design = os.path.join(root, "design.md")
            with open(design, "w") as f:
                f.write(design_text)
            found = check_includes(root) + check_design(root, design)
        got = 1 if found else 0
        if got != want:
            print(f"self-test {name}: expected {'violations' if want else 'none'}, got {found}")
            failed = 1
    print("self-test:", "FAILED" if failed else "ok")
    return failed


def main(argv: list[str]) -> int:
    if argv == ["--self-test"]:
        return self_test()
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    src = argv[0]
    problems = check_includes(src)
    if len(argv) == 3 and argv[1] == "--design":
        problems += check_design(src, argv[2])
    for p in problems:
        print(p)
    print(f"{len(sources(src))} files, layers {' < '.join(LAYERS)}: "
          f"{len(problems)} violation{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
