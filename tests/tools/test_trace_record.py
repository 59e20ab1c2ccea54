"""corealloc trace record: exact event counts, threads, fork and exec."""
import glob
import json
import os

from tool_test import arguments, corealloc, expect_equal, expect_in

args = arguments()


def info(*paths):
    out, _ = corealloc(args, "trace", "info", "--json", *paths)
    return json.loads(out)


# --- single-threaded pattern: every call is an event.
single = os.path.join(args.workdir, "single.trace")
_, err = corealloc(args, "trace", "record", "-o", single, "--", args.single)
expect_in("record message", "wrote " + single, err)
[t] = info(single)
expect_equal("calls", t["calls"], {"malloc": 12, "calloc": 5, "posix_memalign": 3, "realloc": 5, "free": 19})
expect_equal("events", t["events"], 44)
expect_equal("objects (a realloc makes a new one)", t["objects"], 25)
expect_equal("threads", t["threads"], 1)
expect_equal("peak live bytes", t["peak_live_bytes"], 2200)
expect_equal("peak live objects", t["peak_live_objects"], 7)
expect_equal("live at end", t["live_objects_at_end"], 2)
expect_equal("ended by", t["ended_by"], "exit")
expect_equal("compact: bytes per event", os.path.getsize(single) < 48 + 200 + 44 * 8 + 60, True)
text, _ = corealloc(args, "trace", "info", single)
expect_in("info text", "1 threads, 44 events, 25 objects", text)

# --- four threads: one stream each, cross-thread frees kept.
threaded = os.path.join(args.workdir, "threads.trace")
corealloc(args, "trace", "record", "-o", threaded, "--", args.threads)
[t] = info(threaded)
expect_equal("72-byte mallocs and their frees", (t["calls"]["malloc"], t["calls"]["free"]), (400, 400))
expect_equal("streams of the four workers", sorted(t["events_per_thread"])[-4:], [200, 200, 200, 200])

# --- fork + exec: the child has its own trace, ended by the exec.
forked = os.path.join(args.workdir, "fork.trace")
_, err = corealloc(args, "trace", "record", "-o", forked, "--", args.fork, "/bin/true")
expect_in("child trace listed", "child process trace " + forked + ".", err)
traces = info(*([forked] + sorted(glob.glob(forked + ".*"))))
parent = traces[0]
expect_equal("parent calls", parent["calls"], {"malloc": 3, "free": 3})
children = [c for c in traces[1:] if c["forked_child"]]
expect_equal("forked children", len(children), 1)
expect_equal("child calls", children[0]["calls"], {"malloc": 7, "free": 7})
expect_equal("child ended by", children[0]["ended_by"], "exec")
exec_images = [c for c in traces[1:] if c["command"].startswith("/bin/true")]
expect_equal("the exec'd image has a trace of its own", len(exec_images), 1)

alone = os.path.join(args.workdir, "alone.trace")
corealloc(args, "trace", "record", "--no-children", "-o", alone, "--", args.fork, "/bin/true")
expect_equal("no child traces with --no-children", glob.glob(alone + ".*"), [])

# --- exit status passes through; missing program.
corealloc(args, "trace", "record", "-o", os.path.join(args.workdir, "x.trace"), "--",
          "/bin/sh", "-c", "exit 4", expect_status=4)
_, err = corealloc(args, "trace", "record", "-o", "y.trace", "--", "/no/such/program", expect_status=127)
expect_in("missing program", "program not found", err)
