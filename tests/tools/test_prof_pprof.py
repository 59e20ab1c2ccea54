"""go tool pprof reads corealloc prof's profile: the leaking site heads its
in-use listing with the leaked bytes, the freeing one its allocated
listing. Skipped (77) where Go is not installed."""
import os
import re
import shutil
import subprocess
import sys

from tool_test import SKIP, arguments, corealloc, expect_in, fail

args = arguments()
go = shutil.which("go")
if not go:
    print("skip: go is not installed")
    sys.exit(SKIP)

corealloc(args, "prof", "--rate", "4096", "--library", args.library, "-o", "leak", "--",
          args.prof_sites, "single")
env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="")


def top(sample_index):
    result = subprocess.run([go, "tool", "pprof", "-top", f"-sample_index={sample_index}",
                             os.path.join(args.workdir, "leak.pb.gz")],
                            capture_output=True, text=True, env=env, check=False, timeout=300)
    if result.returncode != 0:
        fail(f"go tool pprof exited {result.returncode}:\n{result.stderr}")
    print(result.stdout)
    rows = [line.split() for line in result.stdout.splitlines() if re.match(r"\s*[\d.]+[kKMG]?B?\s", line)]
    if not rows:
        fail(f"no rows in go tool pprof's output:\n{result.stdout}")
    return result.stdout, rows


out, rows = top("inuse_space")
expect_in("pprof's sample type", "Type: inuse_space", out)
expect_in("pprof's first row", "leak_site", " ".join(rows[0]))
flat = rows[0][0]
value = float(re.match(r"[\d.]+", flat).group()) * {"kB": 1e3, "MB": 1e6, "GB": 1e9}.get(
    re.sub(r"[\d.]+", "", flat), 1)
if not 3.2e6 <= value <= 4.8e6:
    fail(f"pprof gives leak_site {flat}, expected about 4MB (4000 x 1000 bytes)")
print(f"ok: leak_site flat {flat}")
out, rows = top("alloc_space")
expect_in("pprof's first row by allocated bytes", "churn_site", " ".join(rows[0]))
