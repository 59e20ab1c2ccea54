#!/usr/bin/env python3
"""Reads src/platform/options_table.h, the one declaration of corealloc's
environment variables, for what documents them: the README's options
table and the man pages.

usage: options_table.py [HEADER] --markdown
           prints the README's env rows
       options_table.py [HEADER] --man TEMPLATE OUTPUT VERSION
           writes a man page: TEMPLATE with @VERSION@, and the lines
           @ENVIRONMENT@ (the options), @INTERNAL@ (the variables users do
           not set) and @OPTION_NAMES@ (corealloc run's --option names)
           replaced
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

    @property
    def user_facing(self) -> bool:
        # Variables that are no option are set by the tool or the tests, but
        # COREALLOC_OPTIONS, which the user sets.
        return bool(self.kind) or self.name == "COREALLOC_OPTIONS"

    @property
    def option_name(self) -> str:
        """The name `corealloc run --option` takes: stats_file."""
        return self.name[len("COREALLOC_"):].lower()


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
    kind = "env" if v.user_facing else "env (internal)"
    default = f"`{v.default}`" if v.default else "unset"
    return f"| `{v.name}` | {kind} | {default} | {v.meaning} |"


def troff(text: str) -> str:
    """The table's markdown-ish text (`code` spans) as one line of troff."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"`([^`]*)`", lambda m: r"\fB" + m[1].replace("-", r"\-") + r"\fR", text)
    return "\\&" + text if text.startswith((".", "'")) else text


def man_entry(v: Variable) -> str:
    default = f" (default \\fB{troff(v.default)}\\fR)" if v.default else ""
    return f".TP\n.B {v.name}{default}\n{troff(v.meaning)}"


def man_page(template: str, version: str, variables: list[Variable]) -> str:
    sections = {
        "@ENVIRONMENT@": "\n".join(man_entry(v) for v in variables if v.user_facing),
        "@INTERNAL@": "\n".join(man_entry(v) for v in variables if not v.user_facing),
        "@OPTION_NAMES@": ",\n".join(rf"\fB{v.option_name}\fR" for v in variables if v.kind) + ".",
    }
    lines = [sections.get(line, line) for line in template.replace("@VERSION@", version).split("\n")]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    header = argv.pop(0) if argv and not argv[0].startswith("-") else HEADER
    variables = read(header)
    if argv == ["--markdown"]:
        for v in variables:
            print(markdown_row(v))
    elif len(argv) == 4 and argv[0] == "--man":
        with open(argv[1]) as f:
            template = f.read()
        with open(argv[2], "w") as f:
            f.write(man_page(template, argv[3], variables))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
