#!/usr/bin/env python3
"""Options as a user sets them: COREALLOC_OPTIONS=help lists every option
with its current value and default; a misspelt COREALLOC_ name is reported
with the option it most likely meant; a value that does not parse is
reported and the default kept; COREALLOC_OPTIONS=NAME=VALUE pairs set
options, but not over a variable of the option's own.

usage: options_env.py LIBCOREALLOC PROGRAM PROJECT_ROOT
PROGRAM allocates a little and exits 0.
"""
import json
import os
import subprocess
import sys

library, program, root = sys.argv[1:4]
sys.path.insert(0, os.path.join(root, "tools", "doc"))
import options_table  # noqa: E402

failures = []


def run(**variables):
    env = {k: v for k, v in os.environ.items() if not k.startswith("COREALLOC_")}
    env.update(LD_PRELOAD=library, **variables)
    done = subprocess.run([program], env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        failures.append(f"{variables}: exit status {done.returncode}: {done.stderr[-2000:]}")
    return done.stderr


def expect(what, condition, detail=""):
    if not condition:
        failures.append(f"{what}{': ' + detail if detail else ''}")


options = [v for v in options_table.read() if v.kind]
help_text = run(COREALLOC_OPTIONS="help", COREALLOC_PURGE_DELAY_MS="250")
for v in options:
    expect(f"help names {v.name}", f"\n{v.name}=" in help_text, help_text[:300])
    expect(f"help gives the default of {v.name}", f"  default: {v.default}\n" in help_text)
    expect(f"help gives the meaning of {v.name}", v.meaning in help_text)
expect("help shows a value set by its variable", "\nCOREALLOC_PURGE_DELAY_MS=250\n" in help_text)
expect("help shows a size with its unit", "\nCOREALLOC_RETAIN_BYTES=32M\n" in help_text)

err = run(COREALLOC_PURGE_DELY_MS="5")
expect("a misspelt name is reported with the option it meant",
       "COREALLOC_PURGE_DELY_MS is not an option" in err and "did you mean COREALLOC_PURGE_DELAY_MS?" in err, err)
err = run(COREALLOC_WHATEVER_THIS_IS="1")
expect("a name like no option is reported without a guess",
       "COREALLOC_WHATEVER_THIS_IS is not an option" in err and "did you mean" not in err, err)
err = run(COREALLOC_HIST_DIR="/nonexistent", COREALLOC_TOOL_PID="1")
expect("the tool's own variables are no misspellings", "not an option" not in err, err)

err = run(COREALLOC_RETAIN_BYTES="12x", COREALLOC_OPTIONS="help")
expect("a bad value is reported", "ignoring COREALLOC_RETAIN_BYTES=12x" in err, err)
expect("a bad value leaves the default", "\nCOREALLOC_RETAIN_BYTES=32M\n" in err, err)
err = run(COREALLOC_PURGE="sometimes")
expect("a bad choice is reported", "ignoring COREALLOC_PURGE=sometimes" in err, err)

err = run(COREALLOC_OPTIONS="stats=json,purge_delay_ms=0")
try:
    report = json.loads(err)
except ValueError:
    report = {}
    failures.append(f"COREALLOC_OPTIONS=stats=json gives no JSON report: {err[:300]!r}")
expect("COREALLOC_OPTIONS sets options", report.get("purge_delay_ms") == 0, str(report.get("purge_delay_ms")))
expect("the JSON report has a schema version", isinstance(report.get("schema"), int))
err = run(COREALLOC_OPTIONS="stats=json,purge_delay_ms=0", COREALLOC_PURGE_DELAY_MS="77")
report = json.loads(err) if err.startswith("{") else {}
expect("an option's own variable wins over COREALLOC_OPTIONS", report.get("purge_delay_ms") == 77, err[:200])
err = run(COREALLOC_OPTIONS="stats=1,nonsense")
expect("a malformed COREALLOC_OPTIONS item is reported", "ignoring 'nonsense'" in err, err[:300])

for failure in failures:
    print("FAIL:", failure)
print("options:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
