"""corealloc run preloads the library and passes options and --stats."""
from tool_test import arguments, corealloc, expect_equal, expect_in

args = arguments()
_, err = corealloc(args, "run", "--library", args.probe, "--stats", "--option", "purge_delay_ms=250",
                   "--option", "Retain_Bytes=4M", "--", "/bin/sh", "-c", "exit 0")
expect_in("preloaded", "run_probe loaded", err)
expect_in("stats", "run_probe env COREALLOC_STATS=1", err)
expect_in("option", "run_probe env COREALLOC_PURGE_DELAY_MS=250", err)
expect_in("option names are upper-cased", "run_probe env COREALLOC_RETAIN_BYTES=4M", err)
_, err = corealloc(args, "run", "--library", args.probe, "--", "/bin/sh", "-c", "exit 0")
expect_equal("no stats unless asked", "COREALLOC_STATS" in err, False)
corealloc(args, "run", "--library", args.probe, "--", "/bin/sh", "-c", "exit 5", expect_status=5)
_, err = corealloc(args, "run", "--library", args.probe, "--option", "bad", "--", "true", expect_status=2)
expect_in("bad option", "--option wants NAME=VALUE", err)
_, err = corealloc(args, "run", "--library", "/no/such.so", "--", "true", expect_status=2)
expect_in("missing library", "library not found: /no/such.so", err)
_, err = corealloc(args, "run", "--library", args.probe, "--", "no-such-program-xyz", expect_status=127)
expect_in("missing program", "program not found in PATH: no-such-program-xyz", err)
