#!/usr/bin/env python3
"""Builds and runs a small C program (consumer/consumer.c) the ways users
consume corealloc, and checks it runs on corealloc:

  pkg-config      cc consumer.c $(pkg-config --cflags --libs corealloc),
                  against the installed PREFIX
  find-package    consumer/CMakeLists.txt with find_package(corealloc VERSION
                  CONFIG) against PREFIX, linking corealloc::corealloc and
                  corealloc::corealloc-static; a later major version must not
                  be found
  subdirectory    consumer/CMakeLists.txt adding the sources with
                  add_subdirectory, which must leave its settings alone

usage: consumers.py MODE --version V --work DIR --cc CC --generator G
                    [--prefix PREFIX] [--source ROOT]
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONSUMER = os.path.join(HERE, "consumer")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(command, env=None, expect_ok=True):
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if expect_ok and result.returncode != 0:
        fail(f"exit status {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result


def check_consumer(program, version):
    output = run([program]).stdout
    if output != f"corealloc {version}\n":
        fail(f"{program} printed {output!r}, expected 'corealloc {version}'")
    print(f"ok: {os.path.basename(program)} runs on corealloc {version}")


def pkg_config(args):
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(args.prefix, "lib", "pkgconfig"))
    modversion = run(["pkg-config", "--modversion", "corealloc"], env).stdout.strip()
    if modversion != args.version:
        fail(f"pkg-config --modversion: {modversion}, expected {args.version}")
    flags = run(["pkg-config", "--cflags", "--libs", "corealloc"], env).stdout.split()
    libdir = run(["pkg-config", "--variable=libdir", "corealloc"], env).stdout.strip()
    program = os.path.join(args.work, "consumer")
    run([args.cc, os.path.join(CONSUMER, "consumer.c"), *flags, f"-Wl,-rpath,{libdir}", "-o", program])
    check_consumer(program, args.version)


def cmake_consumer(args, definitions, expect_ok=True):
    build = os.path.join(args.work, "build")
    shutil.rmtree(build, ignore_errors=True)
    configure = run(["cmake", "-S", CONSUMER, "-B", build, "-G", args.generator,
                     f"-DCMAKE_C_COMPILER={args.cc}", *definitions], expect_ok=expect_ok)
    if not expect_ok:
        return configure
    run(["cmake", "--build", build])
    for program in ("consumer_shared", "consumer_static"):
        check_consumer(os.path.join(build, program), args.version)
    return configure


def find_package(args):
    prefix = f"-DCMAKE_PREFIX_PATH={args.prefix}"
    cmake_consumer(args, [prefix, f"-DCOREALLOC_WANTED={args.version}"])
    later = f"{int(args.version.split('.')[0]) + 1}.0"
    result = cmake_consumer(args, [prefix, f"-DCOREALLOC_WANTED={later}"], expect_ok=False)
    if result.returncode == 0 or "compatible with requested version" not in " ".join(result.stderr.split()):
        fail(f"find_package(corealloc {later}) should fail as incompatible:\n{result.stderr}")
    print(f"ok: find_package(corealloc {later}) refused by the version file")


def subdirectory(args):
    cmake_consumer(args, [f"-DCOREALLOC_SOURCE_DIR={args.source}"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["pkg-config", "find-package", "subdirectory"])
    for option in ("version", "work", "cc", "generator"):
        parser.add_argument("--" + option, required=True)
    parser.add_argument("--prefix")
    parser.add_argument("--source")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    {"pkg-config": pkg_config, "find-package": find_package, "subdirectory": subdirectory}[args.mode](args)


if __name__ == "__main__":
    main()
