"""Broken traces and allocators are rejected with a message saying where."""
import os
import shutil

from tool_test import arguments, corealloc, expect_in

args = arguments()
good = os.path.join(args.workdir, "good.trace")
corealloc(args, "trace", "record", "-o", good, "--", args.single)
data = open(good, "rb").read()
header_len = int.from_bytes(data[10:12], "little")


def broken(name, content):
    path = os.path.join(args.workdir, name)
    with open(path, "wb") as out:
        out.write(content)
    return path


def rejected(path, *needles):
    for command in (["info"], ["replay", "--repeat", "1"]):
        _, err = corealloc(args, "trace", *command, path, expect_status=2)
        for needle in needles:
            expect_in(f"{command[0]} of {os.path.basename(path)}", needle, err)


# Cut inside the end chunk, and cleanly before it.
rejected(broken("cut.trace", data[:-5]), f"byte offset {len(data) - 36}: truncated: chunk of 16 bytes")
rejected(broken("noend.trace", data[:-36]), f"byte offset {len(data) - 36}: truncated: the trace has no end chunk")
# One flipped payload byte: the first chunk's checksum catches it.
flipped = bytearray(data)
flipped[header_len + 20 + 3] ^= 0x40
rejected(broken("flipped.trace", bytes(flipped)), f"byte offset {header_len}: corrupt: chunk checksum mismatch")
rejected(broken("magic.trace", b"XX" + data[2:]), "byte offset 0: not a corealloc trace")
version = bytearray(data)
version[8] = 9
rejected(broken("version.trace", bytes(version)), "trace format version 9")
rejected(broken("empty.trace", b""), "truncated: the file is shorter than a trace header")
_, err = corealloc(args, "trace", "replay", "/no/such.trace", expect_status=2)
expect_in("missing trace", "trace not found: /no/such.trace", err)

# An allocator that does not load, or does not exist, or is unknown.
not_a_library = shutil.copy(good, os.path.join(args.workdir, "libfake.so"))
_, err = corealloc(args, "trace", "replay", "--allocator", not_a_library, good, expect_status=4)
expect_in("allocator that does not load", "is not in use: it does not load", err)
_, err = corealloc(args, "trace", "replay", "--allocator", "/no/such/liballoc.so", good, expect_status=4)
expect_in("missing allocator", "allocator library not found", err)
_, err = corealloc(args, "trace", "replay", "--allocator", "nosuchmalloc", good, expect_status=4)
expect_in("unknown allocator", "unknown allocator 'nosuchmalloc'", err)

# The checks can fail: an allocator that hands out overlapping blocks.
out, _ = corealloc(args, "trace", "replay", "--json", "--repeat", "1", "--allocator", args.library, good,
                   expect_status=1)
expect_in("overlap detected", "overlaps the live block", out)
