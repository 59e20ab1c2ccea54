#!/usr/bin/env python3
"""Reads src/platform/options_table.h, the one declaration of corealloc's
environment variables, for what documents them (the README's options table,
the manual).

usage: options_table.py [HEADER] --markdown   prints the README's env rows
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "src", "platform", "options_table.h")
STRING = r'"(?:[^"\\]|\\.)*"'


@dataclass(frozen=True)
class Variable:
    name: str          # the full variable name, COREALLOC_...
    kind: str          # BOOL, SIZE, MS, CHOICE, STRING; "" for a variable that is no option
    default: str
    choices: tuple[str, ...]
    meaning: str


def _join(literals: str) -> str:
    return "".join(bytes(m[1:-1], "utf-8").decode("unicode_escape") for m in re.findall(STRING, literals))


def read(header: str = HEADER) -> list[Variable]:
    with open(header) as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S).replace("\\\n", " ")
    found = []
    option = re.compile(rf"OPTION\((\w+),\s*\w+,\s*(\w+),\s*({STRING}),\s*({STRING}),\s*((?:{STRING}\s*)+)\)")
    for name, kind, default, choices, meaning in option.findall(text):
        found.append(Variable("COREALLOC_" + name, kind, _join(default),
                              tuple(c for c in _join(choices).split("|") if c), _join(meaning)))
    variable = re.compile(rf"VARIABLE\((\w+),\s*((?:{STRING}\s*)+)\)")
    for name, meaning in variable.findall(text):
        found.append(Variable("COREALLOC_" + name, "", "", (), _join(meaning)))
    if not found:
        raise ValueError(f"{header}: no OPTION or VARIABLE entries")
    return found


def markdown_row(v: Variable) -> str:
    # Variables that are no option are set by the tool or the tests, but
    # COREALLOC_OPTIONS, which the user sets.
    kind = "env" if v.kind or v.name == "COREALLOC_OPTIONS" else "env (internal)"
    default = f"`{v.default}`" if v.default else "unset"
    return f"| `{v.name}` | {kind} | {default} | {v.meaning} |"


def main(argv: list[str]) -> int:
    header = argv[0] if argv and not argv[0].startswith("-") else HEADER
    if "--markdown" not in argv:
        print(__doc__)
        return 2
    for v in read(header):
        print(markdown_row(v))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
