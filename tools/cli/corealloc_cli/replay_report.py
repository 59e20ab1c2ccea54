"""Summaries of replay passes, as text and as data for the bench driver."""
import statistics

from .hist_report import human_bytes


def summarise(label, path, check, runs):
    """One allocator's result: the check pass and the median of timed runs."""
    def median(key):
        values = [r[key] for r in runs if r.get(key) is not None]
        return statistics.median(values) if values else None
    first = runs[0]
    return {
        "allocator": label,
        "allocator_path": path,
        "malloc_from": first["malloc_from"],
        "traces": first["traces"],
        "copies": first["copies"],
        "threads": first["threads"],
        "events": first["events"],
        "check": check["check"] if check else "skipped",
        "check_error": check["error"] if check else "",
        "repeats": len(runs),
        "seconds": median("seconds"),
        "events_per_second": median("events_per_second"),
        "peak_live_bytes": first["peak_live_bytes"],
        "replay_rss_bytes": median("replay_rss_bytes"),
        "utilisation": median("utilisation"),
        "runs": [{k: r[k] for k in ("seconds", "events_per_second", "baseline_rss_bytes",
                                     "peak_rss_bytes", "replay_rss_bytes", "utilisation")}
                 for r in runs],
    }


def text(results):
    first = results[0]
    names = ", ".join(t["file"] for t in first["traces"])
    lines = [f"corealloc trace replay: {names}",
             f"  {first['events']} events, {first['threads']} replay threads, "
             f"{first['copies']} cop{'y' if first['copies'] == 1 else 'ies'} in parallel; "
             f"peak live {human_bytes(first['peak_live_bytes'])} ({first['peak_live_bytes']} bytes); "
             f"medians of {first['repeats']} timed runs",
             "",
             f"  {'allocator':<12} {'check':<8} {'Mevents/s':>10} {'seconds':>10} {'replay RSS':>12} "
             f"{'utilisation':>12}"]
    for r in results:
        rss = human_bytes(r["replay_rss_bytes"]) if r["replay_rss_bytes"] is not None else "n/a"
        util = f"{100 * r['utilisation']:.1f}%" if r["utilisation"] is not None else "n/a"
        lines.append(f"  {r['allocator']:<12} {r['check']:<8} {r['events_per_second'] / 1e6:>10.3f} "
                     f"{r['seconds']:>10.6f} {rss:>12} {util:>12}")
    for r in results:
        if r["check"] == "failed":
            lines.append(f"  {r['allocator']} FAILED the correctness check: {r['check_error']}")
    return "\n".join(lines) + "\n"


def info_text(traces):
    lines = []
    for t in traces:
        calls = ", ".join(f"{k} {n}" for k, n in t["calls"].items())
        lines += [f"{t['file']}: pid {t['pid']}{' (forked child)' if t['forked_child'] else ''}, "
                  f"ended by {t['ended_by']}: {t['command']}",
                  f"  {t['threads']} threads, {t['events']} events, {t['objects']} objects; calls: {calls}",
                  f"  events per thread: {t['events_per_thread']}",
                  f"  peak live: {t['peak_live_bytes']} bytes in {t['peak_live_objects']} objects; "
                  f"{t['live_objects_at_end']} objects live at the end"]
    return "\n".join(lines) + "\n"
