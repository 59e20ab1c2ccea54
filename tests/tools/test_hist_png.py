"""corealloc hist -o writes a PNG; needs the venv python with matplotlib."""
import os
import sys

from tool_test import SKIP, arguments, corealloc, expect_equal, expect_in

args = arguments()
python = os.environ.get("COREALLOC_PYTHON")
if not python:
    print("skipped: COREALLOC_PYTHON (the venv python with matplotlib) is not set; use make test")
    sys.exit(SKIP)
png = os.path.join(args.workdir, "hist.png")
_, err = corealloc(args, "hist", "-o", png, "--", args.threads, python=python)
expect_in("message", "wrote " + png, err)
with open(png, "rb") as image:
    expect_equal("PNG signature", image.read(8), b"\x89PNG\r\n\x1a\n")
expect_equal("PNG is not trivial", os.path.getsize(png) > 10000, True)
