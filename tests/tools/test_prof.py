"""corealloc prof on prof_sites.c, whose sites' live and allocated bytes are
known: each profile must name the right sites with the right bytes, within
sampling error (a rate of 4 KiB gives a few hundred samples per site: the
bounds are 5 standard deviations or more). --library is the library
profiled, --frontend the front end it must run while profiling: rseq for
the profiling library (where the kernel has rseq), per-thread for the
default one."""
import glob
import json
import os
import re

from pprof_reader import by_site, read
from tool_test import arguments, corealloc, expect_equal, expect_in, fail

RATE = 4096
KB = 1000
SITES = {"leak_site", "churn_site", "thread_leak_site", "child_site", "parent_site",
         "first_site", "second_site", "handoff_site", "big_site"}

args = arguments()


def expect_near(what, actual, expected, tolerance):
    if not expected * (1 - tolerance) <= actual <= expected * (1 + tolerance):
        fail(f"{what}: {actual:.0f}, expected {expected:.0f} within {tolerance:.0%}")
    print(f"ok: {what} = {actual:.0f} (expected {expected:.0f} within {tolerance:.0%})")


def profile(mode, prefix, env=None, library=args.library, rate=RATE):
    chosen = ["--library", library] if library else []
    _, err = corealloc(args, "prof", "--rate", str(rate), *chosen, "-o", prefix,
                       "--", args.prof_sites, mode, env=env)
    return err


# --- one leaking site, one that frees everything it allocates
err = profile("single", "single")
single = read(os.path.join(args.workdir, "single.pb.gz"))
expect_equal("sample types", single["types"],
             ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"])
live = by_site(single, SITES, "inuse_space")
expect_near("leak_site live bytes", live.get("leak_site", 0), 4000 * KB, 0.2)
expect_equal("churn_site live bytes", live.get("churn_site", 0), 0)
total_live = sum(live.values())
if live.get("leak_site", 0) < 0.95 * total_live:
    fail(f"leak_site holds {live.get('leak_site', 0)} of {total_live} live bytes, expected 95% or more")
allocated = by_site(single, SITES, "alloc_space")
expect_near("churn_site allocated bytes", allocated.get("churn_site", 0), 40000 * KB, 0.1)
expect_near("leak_site allocated objects", by_site(single, SITES, "alloc_objects").get("leak_site", 0),
            4000, 0.2)
# The terminal summary names the leak first, as a share of the live heap.
first = err.splitlines()[1] if len(err.splitlines()) > 1 else ""
expect_in("summary's top site", "leak_site (prof_sites.c:", first)
share = float(re.search(r"([\d.]+)%", first).group(1))
if share < 95:
    fail(f"summary gives leak_site {share}% of the live heap, expected 95% or more")
with open(os.path.join(args.workdir, "single.svg"), encoding="utf-8") as f:
    svg = f.read()
expect_in("flame graph", "<title>leak_site (", svg)
expect_equal("flame graph shows no freed site", "churn_site" in svg, False)

# --- the front end that ran while profiling (the exit report says); with
# the profiling library, as the tool chooses it itself
stats_file = os.path.join(args.workdir, "stats.json")
profile("single", "frontend", env=dict(os.environ, COREALLOC_STATS="json", COREALLOC_STATS_FILE=stats_file),
        library=None if args.frontend == "rseq" else args.library)
with open(stats_file, encoding="utf-8") as f:
    report = json.load(f)
if report["rseq_source"] != "unavailable":
    expect_equal("front end while profiling", report["frontend"], args.frontend)

# --- a program that frees everything, much of it from another thread than
# the one that allocated it (on the per-CPU fast path with the profiling
# library): nothing live
profile("free_all", "free_all")
free_all = read(os.path.join(args.workdir, "free_all.pb.gz"))
expect_near("handoff_site allocated bytes",
            by_site(free_all, SITES, "alloc_space").get("handoff_site", 0), 20000 * KB, 0.1)
expect_equal("handoff_site live bytes", by_site(free_all, SITES, "inuse_space").get("handoff_site", 0), 0)
everything_live = sum(by_site(free_all, SITES, "inuse_space").values())
if everything_live > 0.01 * 60000 * KB:
    fail(f"{everything_live} bytes live at exit in a program that freed everything it allocated")
print(f"ok: {everything_live} bytes live at exit of 60 MB allocated and freed (at most 1%)")

# --- every allocation sampled, in a program whose one block (8 MiB) makes
# corealloc start its purge thread inside that malloc: the thread's creation
# allocates (glibc's TLS for it), which is the allocator's, not big_site's,
# and nothing is live at exit
profile("big", "big", rate=1)
big = read(os.path.join(args.workdir, "big.pb.gz"))
expect_equal("big_site allocated objects", by_site(big, SITES, "alloc_objects").get("big_site", 0), 1)
expect_equal("live bytes at exit, the purge thread started in big_site's call",
             sum(by_site(big, SITES, "inuse_space").values()), 0)

# --- secure mode: sampling works there too (a sampled block is a span, sealed and
# checked as large blocks are), and no check finds anything wrong in a correct program
err = profile("single", "secure", env=dict(os.environ, COREALLOC_SECURE="1"))
expect_equal("misuse reports in secure mode", "corealloc: error" in err, False)
secure = read(os.path.join(args.workdir, "secure.pb.gz"))
expect_near("leak_site live bytes (secure mode)",
            by_site(secure, SITES, "inuse_space").get("leak_site", 0), 4000 * KB, 0.2)
expect_equal("churn_site live bytes (secure mode)",
             by_site(secure, SITES, "inuse_space").get("churn_site", 0), 0)

# --- four threads, one site: per-thread countdowns add up
profile("threads", "threads")
threads = read(os.path.join(args.workdir, "threads.pb.gz"))
expect_near("thread_leak_site live bytes",
            by_site(threads, SITES, "inuse_space").get("thread_leak_site", 0), 4000 * KB, 0.2)

# --- a forked child: a profile per process, each with its own sites
profile("fork", "fork")
parent = read(os.path.join(args.workdir, "fork.pb.gz"))
children = [p for p in glob.glob(os.path.join(args.workdir, "fork.*.pb.gz"))]
expect_equal("child profiles", len(children), 1)
child = read(children[0])
parent_live = by_site(parent, SITES, "inuse_space")
child_live = by_site(child, SITES, "inuse_space")
expect_near("parent_site live bytes (parent)", parent_live.get("parent_site", 0), 2000 * KB, 0.25)
expect_equal("child_site live bytes in the parent", parent_live.get("child_site", 0), 0)
expect_near("child_site live bytes (child)", child_live.get("child_site", 0), 3000 * KB, 0.25)
expect_equal("parent_site live bytes in the child", child_live.get("parent_site", 0), 0)

# --- profiles on demand and on SIGUSR2, and the growth between two
profile("dumps", "dumps")
dumps = sorted(glob.glob(os.path.join(args.workdir, "dumps.*.*.heap")),
               key=lambda path: int(path.split(".")[-2]))
expect_equal("profiles written (API, signal, exit)", len(dumps), 3)
corealloc(args, "prof", "--dump", dumps[1], "--base", dumps[0], "-o", "growth")
growth = by_site(read(os.path.join(args.workdir, "growth.pb.gz")), SITES, "inuse_space")
expect_near("second_site growth", growth.get("second_site", 0), 3000 * KB, 0.25)
expect_equal("first_site growth", growth.get("first_site", 0), 0)
first_only = by_site(read(os.path.join(args.workdir, "dumps.pb.gz")), SITES, "inuse_space")
expect_near("first_site live at exit", first_only.get("first_site", 0), 2000 * KB, 0.25)

# --- errors: a base of another process, --base without --dump
_, err = corealloc(args, "prof", "--dump", dumps[1], "--base",
                   glob.glob(os.path.join(args.workdir, "single.*.heap"))[0], expect_status=2)
expect_in("base of another process", "a base must be an earlier profile of the same process", err)
_, err = corealloc(args, "prof", "--base", dumps[0], "--", args.prof_sites, expect_status=2)
expect_in("--base alone", "use it with --dump", err)
