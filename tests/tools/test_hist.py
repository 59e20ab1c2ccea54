"""corealloc hist on programs whose allocation pattern is known exactly."""
import json

from tool_test import arguments, corealloc, expect_equal, expect_in

args = arguments()

# --- pattern_single.c, single-threaded: every count is known.
out, _ = corealloc(args, "hist", "--json", "--", args.single)
[single] = json.loads(out)
expect_equal("calls", single["calls"],
             {"malloc": 12, "calloc": 5, "posix_memalign": 3, "realloc": 5, "free": 19})
# JSON turns the integer bucket numbers into strings; bucket b is [2^(b-1), 2^b).
expect_equal("malloc sizes", single["sizes"]["malloc"], {"7": 10, "10": 2})
expect_equal("calloc sizes", single["sizes"]["calloc"], {"6": 5})
expect_equal("aligned sizes", single["sizes"]["aligned"], {"8": 3})
expect_equal("realloc sizes", single["sizes"]["realloc"], {"5": 2, "6": 1, "7": 1, "8": 1})
expect_equal("lifetimes", single["lifetime"], {"0": 15, "1": 1, "2": 2, "3": 1})
expect_equal("realloc kinds", single["realloc"],
             {"from_null": 1, "grow": 3, "shrink": 1, "same": 0, "moved": single["realloc"]["moved"],
              "of_remote": 0})
expect_equal("growth ratios", single["growth_ratio"],
             {"1-1.25": 0, "1.25-1.5": 1, "1.5-2": 1, "2-4": 0, ">4": 1})
expect_equal("growth deltas", single["growth_delta"], {"4": 1, "5": 1, "8": 1})
expect_equal("realloc chains", single["realloc_chain"], {"3": 1})
expect_equal("peak live bytes", single["peak_live_bytes"], 2200)
expect_equal("peak live objects", single["peak_live_objects"], 7)
expect_equal("live objects at end", single["live_objects_at_end"], 2)
expect_equal("live bytes at end", single["live_bytes_at_end"], 2000)
expect_equal("allocating threads", single["threads_allocating"], 1)
expect_equal("remote frees", single["remote_frees"], 0)

# The text report shows the same numbers.
text, _ = corealloc(args, "hist", "--", args.single)
expect_in("text report", "calls: calloc 5, free 19, malloc 12, posix_memalign 3, realloc 5", text)
expect_in("text report", "peak live: 2.1 KiB (2200 bytes) in 7 objects", text)
expect_in("text report", "64-127                         10         0         1         0        11", text)

# --- pattern_threads.c: 4 threads x 100 mallocs of 72 bytes; 25% cross-thread frees.
out, _ = corealloc(args, "hist", "--json", "--", args.threads)
[threaded] = json.loads(out)
expect_equal("72-byte mallocs", threaded["sizes"]["malloc"].get("7"), 400)
expect_equal("frees", threaded["frees"], 400)
expect_equal("cross-thread frees", threaded["remote_frees"], 100)
workers = [t for t in threaded["threads"].values() if t.get("frees") == 100]
expect_equal("worker threads", len(workers), 4)
expect_equal("each worker's counts", workers,
             [{"allocations": 100, "frees": 100, "remote_frees": 25}] * 4)
# glibc's pthread_create may calloc in the main thread: it allocates only then.
main_allocates = any(t["frees"] == 0 and t["allocations"] > 0 for t in threaded["threads"].values())
expect_equal("allocating threads", threaded["threads_allocating"], 4 + main_allocates)
text, _ = corealloc(args, "hist", "--", args.threads)
expect_in("text report", "frees by a thread other than the allocating one: 100 of 400 (25.0%)", text)

# --- pattern_cxx.cpp: operator new/delete are observed as such.
out, _ = corealloc(args, "hist", "--json", "--", args.cxx)
[cxx] = json.loads(out)
expect_equal("C++ new", cxx["calls"].get("new"), 6)
expect_equal("C++ new[]", cxx["calls"].get("new[]"), 2)
expect_equal("C++ aligned new", cxx["calls"].get("new_aligned"), 1)
expect_equal("C++ delete", cxx["calls"].get("delete"), 7)
expect_equal("C++ delete[]", cxx["calls"].get("delete[]"), 2)

# --- pattern_fork.c: the child is reported on its own; --no-children skips it.
out, _ = corealloc(args, "hist", "--json", "--", args.fork, "/bin/true")
processes = json.loads(out)
root, child = processes[0], [p for p in processes if p["forked"]][0]
expect_equal("parent mallocs", root["sizes"]["malloc"], {"6": 3})
expect_equal("child mallocs", child["sizes"]["malloc"], {"9": 7})
expect_equal("child ended by", child["end"], "exec")
out, _ = corealloc(args, "hist", "--json", "--no-children", "--", args.fork, "/bin/true")
expect_equal("processes without children", len(json.loads(out)), 1)

# --- the program's exit status passes through; a missing program is an error.
corealloc(args, "hist", "--", "/bin/sh", "-c", "exit 3", expect_status=3)
_, err = corealloc(args, "hist", "--", "/no/such/program", expect_status=127)
expect_in("missing program", "program not found: /no/such/program", err)
