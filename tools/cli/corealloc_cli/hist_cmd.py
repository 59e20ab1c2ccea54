"""corealloc hist: runs the program under the hist interposer and reports."""
import json
import shutil
import sys
import tempfile

from . import hist_data, hist_plot, hist_report, launch, locate


def run(args):
    command = launch.command_from(args.command)
    launch.check_program(command[0])
    directory = tempfile.mkdtemp(prefix="corealloc-hist-")
    try:
        env = launch.preload_environment(locate.hist_interposer(), {
            "COREALLOC_HIST_DIR": directory,
            "COREALLOC_HIST_CHILDREN": "0" if args.no_children else "1",
        })
        status = launch.run_program(command, env)
        processes = hist_data.read_directory(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    out = sys.stderr if args.report_to_stderr else sys.stdout
    if args.json:
        json.dump(processes, out, indent=1)
        out.write("\n")
    else:
        out.write(hist_report.report(processes, args.all_processes))
    if args.output and processes:
        hist_plot.write_png(processes[0], args.output)
        print(f"corealloc hist: wrote {args.output}", file=sys.stderr)
    return status
