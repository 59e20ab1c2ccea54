#!/usr/bin/env python3
"""cargo test of the Rust crates in rust/ (corealloc-sys builds the library
from this repository; corealloc's tests check a Rust program's allocations
go through it). Skipped when no cargo is installed.

usage: rust.py PROJECT_ROOT
"""
import os
import shutil
import subprocess
import sys

root = sys.argv[1]
# rustup installs into ~/.cargo/bin, which a test's PATH may lack.
candidates = [os.environ.get("CARGO"), shutil.which("cargo"),
              os.path.join(os.path.expanduser("~"), ".cargo", "bin", "cargo")]
cargo = next((c for c in candidates if c and os.access(c, os.X_OK)), None)
if cargo is None:
    print("SKIP: no cargo (Debian: cargo; or rustup)")
    sys.exit(77)
env = dict(os.environ, PATH=os.path.dirname(cargo) + os.pathsep + os.environ.get("PATH", ""))
# The crates need nothing from crates.io: no network.
command = [cargo, "test", "--locked", "--offline",
           "--manifest-path", os.path.join(root, "rust", "Cargo.toml")]
print("$ " + " ".join(command), flush=True)
sys.exit(subprocess.run(command, env=env, check=False).returncode)
