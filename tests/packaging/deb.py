#!/usr/bin/env python3
"""make deb's package (CPack's DEB generator): its control fields are
sensible (name, version, architecture, a dependency on the C library and
on Python for the tool, none on the C++ runtime) and it holds under /usr
exactly what make install puts under a prefix (PREFIX, installed by the
packaging_install test).

usage: deb.py --build BUILD_DIR --prefix PREFIX --version V --work DIR
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
for option in ("build", "prefix", "version", "work"):
    parser.add_argument("--" + option, required=True)
args = parser.parse_args()
if shutil.which("dpkg-deb") is None:
    print("SKIP: no dpkg-deb (not a Debian system)")
    sys.exit(77)

shutil.rmtree(args.work, ignore_errors=True)
os.makedirs(args.work)
subprocess.run(["cpack", "--config", os.path.join(args.build, "CPackConfig.cmake"), "-G", "DEB",
                "-B", args.work], check=True, stdout=subprocess.DEVNULL)
packages = glob.glob(os.path.join(args.work, "*.deb"))
if len(packages) != 1:
    print(f"FAIL: cpack made {packages}, expected one .deb")
    sys.exit(1)
deb = packages[0]
failures = []


def field(name):
    return subprocess.run(["dpkg-deb", "-f", deb, name], capture_output=True, text=True,
                          check=True).stdout.strip()


architecture = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                              check=True).stdout.strip()
for name, expected in (("Package", "corealloc"), ("Version", args.version),
                       ("Architecture", architecture)):
    if field(name) != expected:
        failures.append(f"{name}: {field(name)!r}, expected {expected!r}")
depends = [d.strip().split(" ")[0] for d in field("Depends").split(",")]
for needed in ("libc6", "python3"):
    if needed not in depends:
        failures.append(f"Depends lacks {needed}: {field('Depends')}")
if any(d.startswith("libstdc++") for d in depends):
    failures.append(f"Depends names the C++ runtime, which the library does not link: {field('Depends')}")
if not field("Maintainer"):
    failures.append("no Maintainer")

# Every file and link of the package, against the installed tree.
listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
packaged = set()
for line in listing.splitlines():
    path = re.split(r"\s+", line, maxsplit=5)[5].split(" -> ")[0]
    if not path.endswith("/"):
        packaged.add(os.path.relpath(path, "./usr"))
installed = set()
for folder, _, names in os.walk(args.prefix):
    installed |= {os.path.relpath(os.path.join(folder, name), args.prefix) for name in names}
for name in sorted(packaged - installed):
    failures.append(f"packaged, but make install does not install it: {name}")
for name in sorted(installed - packaged):
    failures.append(f"installed by make install, but not packaged: {name}")

print(f"{os.path.basename(deb)}: {len(packaged)} files, Depends: {field('Depends')}")
for failure in failures:
    print("FAIL: " + failure)
sys.exit(1 if failures else 0)
