#!/usr/bin/env python3
"""The README's options table says what the code declares: its environment
rows equal those generated from src/platform/options_table.h, and every
CMake option() of the project has a CMake row.

usage: options_doc.py PROJECT_ROOT
"""
import os
import re
import sys

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "tools", "doc"))
import options_table  # noqa: E402

with open(os.path.join(root, "README.md")) as f:
    readme = f.read().splitlines()
rows = [line for line in readme if line.startswith("| `COREALLOC_")]
env_rows = [line for line in rows if "| env" in line]
cmake_rows = [line for line in readme if "| CMake |" in line]

expected = [options_table.markdown_row(v) for v in options_table.read(
    os.path.join(root, "src", "platform", "options_table.h"))]
failures = []
if env_rows != expected:
    failures.append("README's environment rows differ from src/platform/options_table.h; they should read:\n"
                    + "\n".join(expected))

declared = set()
for folder, _, files in os.walk(root):
    if any(part.startswith((".", "build")) for part in folder[len(root):].split(os.sep)):
        continue
    if "CMakeLists.txt" in files:
        with open(os.path.join(folder, "CMakeLists.txt")) as f:
            declared |= set(re.findall(r"^\s*option\((\w+)", f.read(), re.M))
documented = {m for line in cmake_rows for m in re.findall(r"`(\w+)`", line.split("|")[1])}
for name in sorted(declared - documented):
    failures.append(f"CMake option {name} has no row in README's options table")
for name in sorted(documented - declared):
    failures.append(f"README documents CMake option {name}, which no CMakeLists.txt declares")

for failure in failures:
    print(failure)
print(f"{len(env_rows)} environment rows, {len(declared)} CMake options: "
      f"{'FAILED' if failures else 'ok'}")
sys.exit(1 if failures else 0)
