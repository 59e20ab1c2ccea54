"""corealloc run --stats with the real library prints its report at exit."""
from tool_test import arguments, corealloc, expect_equal

args = arguments()
_, err = corealloc(args, "run", "--library", args.library, "--stats", "--", args.single)
expect_equal("a report on stderr", len(err.strip()) > 0, True)
_, quiet = corealloc(args, "run", "--library", args.library, "--", args.single)
expect_equal("no report without --stats", quiet.strip(), "")
