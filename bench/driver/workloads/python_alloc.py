"""An allocation-heavy Python workload for the driver's "python" benchmark:
builds and drops many small dicts, lists, tuples and strings, encodes and
decodes them as JSON, and runs regular expressions and case folding over
Unicode text. Run with PYTHONMALLOC=malloc so that every object goes through
the allocator under test. Checks its own results and prints one RESULT line
whose checksum must not depend on the allocator."""

import json
import re
import sys
import time
import unicodedata
import zlib

WORDS = ("Straße", "naïve", "café", "Ελληνικά", "кириллица", "日本語", "emoji😀", "plain", "ÅNGSTRÖM", "ǅemal")
TOKEN = re.compile(r"(\w+)-(\d+)|[^\W\d_]{3,}", re.UNICODE)


def build_records(count: int, round_number: int) -> dict:
    records = {}
    for i in range(count):
        key = f"record-{round_number}-{i}"
        records[key] = {"id": i, "name": key.upper(), "tags": [str(i % 7), str(i % 11)], "pair": (i, -i),
                        "text": " ".join(WORDS[(i + k) % len(WORDS)] for k in range(i % 5 + 1))}
    return records


def churn(records: dict) -> int:
    # Drop every third record and replace the lists of the rest.
    for key in [k for k in records if records[k]["id"] % 3 == 0]:
        del records[key]
    total = 0
    for record in records.values():
        record["tags"] = record["tags"] + [record["name"][-3:]]
        total += record["pair"][0] + len(record["tags"])
    return total


def expected_total(count: int) -> int:
    return sum(i + 3 for i in range(count) if i % 3 != 0)


def text_work(records: dict) -> int:
    """JSON round trip, then tokens, case folding and normalisation of the
    text; returns a CRC of what came out."""
    decoded = json.loads(json.dumps(records, ensure_ascii=False))
    if len(decoded) != len(records):
        raise ValueError("JSON round trip lost records")
    crc = 0
    for record in decoded.values():
        tokens = [m.group(0) for m in TOKEN.finditer(record["name"] + " " + record["text"])]
        folded = unicodedata.normalize("NFKD", " ".join(tokens).casefold())
        crc = zlib.crc32(folded.encode(), crc)
    return crc


def main() -> int:
    count, rounds = int(sys.argv[1]), int(sys.argv[2])
    start = time.perf_counter()
    checksum = 0
    for round_number in range(rounds):
        records = build_records(count, round_number)
        total = churn(records)
        if total != expected_total(count):
            print(f"CHECK FAILED: round {round_number} total {total}", file=sys.stderr)
            return 1
        checksum = zlib.crc32(str(text_work(records)).encode(), checksum)
    elapsed = time.perf_counter() - start
    print(f"RESULT bench=python records={count} rounds={rounds} checksum={checksum} seconds={elapsed:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
