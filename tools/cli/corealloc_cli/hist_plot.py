"""The PNG form of a hist report (needs matplotlib)."""
from .errors import ToolError
from .hist_data import GROWTH_RATIOS, SIZE_GROUPS, bucket_label, remote_free_share


def _bars(axis, buckets, title, xlabel):
    keys = sorted(buckets)
    axis.bar(range(len(keys)), [buckets[k] for k in keys], color="tab:blue")
    axis.set_xticks(range(len(keys)), [bucket_label(k) for k in keys], rotation=60, fontsize=7)
    axis.set_title(title, fontsize=9)
    axis.set_xlabel(xlabel, fontsize=8)
    axis.set_yscale("log")


def write_png(process, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ToolError("PNG output needs matplotlib: run the tool with the project's venv "
                        "python (make venv), or pip install -r requirements.txt", 3) from error
    figure, axes = plt.subplots(2, 2, figsize=(12, 8))
    buckets = sorted({b for g in SIZE_GROUPS for b in process["sizes"][g]})
    bottom = [0] * len(buckets)
    for group in SIZE_GROUPS:
        counts = [process["sizes"][group].get(b, 0) for b in buckets]
        axes[0][0].bar(range(len(buckets)), counts, bottom=bottom, label=group)
        bottom = [a + b for a, b in zip(bottom, counts)]
    axes[0][0].set_xticks(range(len(buckets)), [bucket_label(b) for b in buckets], rotation=60, fontsize=7)
    axes[0][0].set_title("request sizes (log2 buckets)", fontsize=9)
    axes[0][0].set_xlabel("bytes", fontsize=8)
    axes[0][0].legend(fontsize=7)
    _bars(axes[0][1], process["lifetime"], "object lifetime", "allocations between allocation and free")
    axes[1][0].bar(GROWTH_RATIOS, [process["growth_ratio"].get(r, 0) for r in GROWTH_RATIOS],
                   color="tab:green")
    axes[1][0].set_title("realloc growth ratio (new/old size)", fontsize=9)
    threads = sorted(process["threads"].items())
    labels = [str(tid) for tid, _ in threads]
    axes[1][1].bar(labels, [c.get("allocations", 0) for _, c in threads], label="allocations")
    axes[1][1].bar(labels, [c.get("remote_frees", 0) for _, c in threads], label="frees of others' objects")
    axes[1][1].set_title("per thread (os tid)", fontsize=9)
    axes[1][1].tick_params(axis="x", labelrotation=60, labelsize=7)
    axes[1][1].legend(fontsize=7)
    figure.suptitle(f"{process['cmdline'][:100]}\n{process['threads_allocating']} allocating threads, "
                    f"{100 * remote_free_share(process):.1f}% cross-thread frees, "
                    f"peak {process['peak_live_bytes']} live bytes in {process['peak_live_objects']} objects",
                    fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
