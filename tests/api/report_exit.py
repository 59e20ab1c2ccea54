"""Checks corealloc's exit report, selected by environment variables.

Usage: report_exit.py LIBCOREALLOC PROGRAM MODE
MODE is one of:
  none       no COREALLOC_STATS: stderr stays empty
  text       COREALLOC_STATS=1: a text report on stderr naming the front end
  json       COREALLOC_STATS=json: stderr is exactly one JSON object
  text-file  COREALLOC_STATS=1 and COREALLOC_STATS_FILE: the report goes to
             the file, stderr stays empty
  json-file  COREALLOC_STATS=json and COREALLOC_STATS_FILE: likewise, JSON
The program must exit 0 and print "workload done" in every mode.
"""
import json
import os
import subprocess
import sys
import tempfile


def check_json(text, where, failures):
    try:
        report = json.loads(text)
    except ValueError as error:
        failures.append(f"{where} is not one JSON object: {error}: {text[:500]!r}")
        return
    if not isinstance(report, dict):
        failures.append(f"{where} holds JSON, but not an object")
    if "frontend" not in text:
        failures.append(f"{where}: the JSON report does not name the front end")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    library, program, mode = sys.argv[1:]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COREALLOC_")}
    env["LD_PRELOAD"] = library
    with tempfile.TemporaryDirectory() as tmp:
        report_file = os.path.join(tmp, "report")
        if mode in ("text", "text-file"):
            env["COREALLOC_STATS"] = "1"
        elif mode in ("json", "json-file"):
            env["COREALLOC_STATS"] = "json"
        elif mode != "none":
            sys.exit(__doc__)
        if mode.endswith("-file"):
            env["COREALLOC_STATS_FILE"] = report_file
        result = subprocess.run([program], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, timeout=60, text=True)
        failures = []
        if result.returncode != 0 or result.stdout != "workload done\n":
            failures.append(f"the program failed: status {result.returncode}, "
                            f"stdout {result.stdout!r}")
        if mode in ("none", "text-file", "json-file") and result.stderr:
            failures.append(f"unexpected stderr: {result.stderr[:500]!r}")
        if mode == "text" and "frontend" not in result.stderr:
            failures.append(f"no report naming the front end on stderr: "
                            f"{result.stderr[:500]!r}")
        if mode == "json":
            check_json(result.stderr, "stderr", failures)
        if mode.endswith("-file"):
            if not os.path.exists(report_file):
                failures.append("no report file written")
            else:
                text = open(report_file, encoding="utf-8").read()
                if mode == "json-file":
                    check_json(text, "the report file", failures)
                elif "frontend" not in text:
                    failures.append(f"the report file does not name the front end: "
                                    f"{text[:500]!r}")
        if mode != "none":
            print(result.stderr if not mode.endswith("-file") else
                  open(report_file, encoding="utf-8").read() if os.path.exists(report_file)
                  else "")
        for failure in failures:
            print("FAIL:", failure)
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
