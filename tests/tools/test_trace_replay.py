"""corealloc trace replay: correctness, counts, threads, copies, allocators."""
import json
import os

from tool_test import arguments, corealloc, expect_equal, expect_in

args = arguments()
single = os.path.join(args.workdir, "single.trace")
threaded = os.path.join(args.workdir, "threads.trace")
corealloc(args, "trace", "record", "-o", single, "--", args.single)
corealloc(args, "trace", "record", "-o", threaded, "--", args.threads)


def replay(*options):
    out, _ = corealloc(args, "trace", "replay", "--json", "--repeat", "2", *options)
    return json.loads(out)


r = replay(single)
expect_equal("check", r["check"], "passed")
expect_equal("events", r["events"], 44)
expect_equal("peak live bytes", r["peak_live_bytes"], 2200)
expect_equal("threads", r["threads"], 1)
expect_equal("allocator", (r["allocator"], r["malloc_from"].split("/")[-1]), ("glibc", "libc.so.6"))
expect_equal("timed runs", len(r["runs"]), 2)
expect_equal("throughput measured", r["events_per_second"] > 0, True)
expect_equal("utilisation measured", r["utilisation"] is None or 0 < r["utilisation"], True)

r = replay(threaded)
expect_equal("threaded check", r["check"], "passed")
expect_equal("threaded events", r["events"], 800 + 4 * (r["threads"] - 4))
expect_equal("one replay thread per recorded thread", r["threads"], len(r["traces"][0]["events_per_thread"]))

# Fewer replay threads than recorded ones: streams share workers, cross-thread
# frees still wait for their allocations, and the replay completes.
r = replay("--threads", "2", threaded)
expect_equal("2 replay threads", (r["threads"], r["check"]), (2, "passed"))

# Several traces (and copies) at once.
r = replay("--copies", "3", single, threaded)
expect_equal("copies x traces events", r["events"], 3 * (44 + r["traces"][1]["events"]))
expect_equal("copies check", r["check"], "passed")

# Comparable across allocators: the same fields for each.
peers = [name for name, soname in (("jemalloc", "libjemalloc.so.2"), ("mimalloc", "libmimalloc.so.2"))
         if os.path.exists("/usr/lib/x86_64-linux-gnu/" + soname)]
if peers:
    rs = replay(*sum((["--allocator", p] for p in ["glibc"] + peers), []), threaded)
    expect_equal("one result per allocator", [x["allocator"] for x in rs], ["glibc"] + peers)
    for x in rs[1:]:
        expect_in("malloc comes from the allocator", x["allocator"], x["malloc_from"])
        expect_equal(x["allocator"] + " check", x["check"], "passed")
        expect_equal(x["allocator"] + " events", x["events"], rs[0]["events"])

text, _ = corealloc(args, "trace", "replay", "--repeat", "1", single)
expect_in("text output", "44 events, 1 replay threads", text)
expect_in("text output", "glibc        passed", text)
