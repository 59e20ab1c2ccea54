"""Writes the inputs of the real-program tests into a directory:
generated.c, a C program with many functions and tables for gcc, and
sort-input.txt, about 20 MB of pseudo-random lines for sort. Deterministic.

Usage: make_inputs.py OUTPUT_DIR
"""
import os
import random
import sys


def c_program(rng):
    parts = ["#include <stdio.h>\n#include <string.h>\n"]
    for i in range(400):
        table = ", ".join(str(rng.randrange(1 << 30)) for _ in range(32))
        parts.append(f"static const unsigned table{i}[32] = {{{table}}};\n")
        parts.append(
            f"unsigned long f{i}(unsigned long x) {{\n"
            f"    for (int k = 0; k < 32; k++)\n"
            f"        x = x * {rng.randrange(3, 1 << 20) | 1}u + table{i}[(x ^ k) & 31];\n"
            f"    return x ^ (x >> {rng.randrange(1, 31)});\n}}\n")
    calls = "\n".join(f"    acc = f{i}(acc + {i});" for i in range(400))
    parts.append(
        "int main(void) {\n    unsigned long acc = 1;\n" + calls +
        '\n    char buf[64];\n    snprintf(buf, sizeof buf, "%lu", acc);\n'
        '    printf("result %s length %zu\\n", buf, strlen(buf));\n    return 0;\n}\n')
    return "".join(parts)


def sort_lines(rng, total_bytes):
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
    written = 0
    while written < total_bytes:
        line = "".join(rng.choices(alphabet, k=rng.randrange(5, 120))) + "\n"
        written += len(line)
        yield line


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(2024)
    with open(os.path.join(out, "generated.c"), "w") as f:
        f.write(c_program(rng))
    with open(os.path.join(out, "sort-input.txt"), "w") as f:
        f.writelines(sort_lines(rng, 20 << 20))


if __name__ == "__main__":
    main()
