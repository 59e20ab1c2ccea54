"""An allocation-heavy Python workload for the driver's "python" benchmark:
builds and drops many small dicts, lists, tuples and strings. Run with
PYTHONMALLOC=malloc so that every object goes through the allocator under
test. Checks its own results and prints one RESULT line."""

import sys
import time


def build_records(count: int, round_number: int) -> dict:
    records = {}
    for i in range(count):
        key = f"record-{round_number}-{i}"
        records[key] = {"id": i, "name": key.upper(), "tags": [str(i % 7), str(i % 11)], "pair": (i, -i)}
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


def main() -> int:
    count, rounds = int(sys.argv[1]), int(sys.argv[2])
    start = time.perf_counter()
    for round_number in range(rounds):
        total = churn(build_records(count, round_number))
        if total != expected_total(count):
            print(f"CHECK FAILED: round {round_number} total {total}", file=sys.stderr)
            return 1
    elapsed = time.perf_counter() - start
    print(f"RESULT bench=python records={count} rounds={rounds} seconds={elapsed:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
