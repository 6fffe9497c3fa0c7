#!/usr/bin/python3
"""Plot errors over repeats of a study with `repeats` (docs/large-n.md).

One PNG, two rows of panels:
  top:    for each N, the max ratio error and the worst log-det error of
          delayed updates against K, one line per precision, with
          Sherman-Morrison (K = 1) as the first point; mean over repeats with
          one standard error as error bars;
  bottom: for each N, the log-det error against the accepted moves of
          Sherman-Morrison and the largest-K delayed update per precision
          (mean over repeats; the band spans the repeats).
Repeats are the experiments named <configuration>-r<i> (what `repeats = R`
writes); `slaterlab table -k drift` gives the same numbers as a table.

Usage: scripts/plot-drift.py results.h5 -o drift.png
Needs h5py, NumPy and Matplotlib (Debian: python3-h5py python3-matplotlib).
Exit codes: 0 written, 2 bad input (missing or invalid file, no repeats).
"""

import argparse
import collections
import re
import sys

import numpy as np

import slaterlab_results  # the results file's schema, read in one place (beside this script)

import matplotlib
matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

PRECISIONS = ("float", "mixed", "double")
COLOURS = {"float": "tab:red", "mixed": "tab:orange", "double": "tab:blue"}


class BadInput(Exception):
    """A problem with the user's input, reported as one line and exit code 2."""


def read_groups(path):
    """{N: {label: {"k", "precision", "max_ratio", "worst_log_det", "series"}}},
    each value a list over repeats; series are (accepted, log-det error)."""
    groups = collections.defaultdict(dict)
    try:
        with slaterlab_results.open_results(path) as results:
            experiments = results.experiments()
            n_of = dict(zip(experiments["experiment"], experiments["n"]))
            described = results.strategies()
            k_of = {(str(e), str(l)): int(k) for e, l, k in
                    zip(described["experiment"], described["label"], described["k"])}
            for row in results.summaries():
                name = str(row["experiment"])
                if not re.search(r"-r[0-9]+$", name) or row["failed"]:
                    continue
                label = str(row["label"])
                k = k_of[(name, label)] if "delayed" in label else 1
                entry = groups[int(n_of[name])].setdefault(label, {
                    "k": k, "precision": str(row["precision"]), "delayed": "delayed" in label,
                    "max_ratio": [], "worst_log_det": [], "series": []})
                entry["max_ratio"].append(float(row["max_ratio_error"]))
                entry["worst_log_det"].append(float(row["worst_log_det_error"]))
                rows = results.checkpoints(name, label)
                entry["series"].append((rows["accepted"], rows["log_det_error"]))
    except slaterlab_results.ResultsError as error:
        raise BadInput(str(error))
    if not groups:
        raise BadInput(f"{path} has no repeated experiments (names ending in -r<i>)")
    return groups


def mean_error(values):
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return np.nan, np.nan
    error = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return values.mean(), error


def plot_against_k(ax, strategies, n):
    for precision in PRECISIONS:
        for field, marker, style in (("max_ratio", "o", "-"), ("worst_log_det", "s", "--")):
            points = sorted((s["k"], *mean_error(s[field])) for s in strategies.values()
                            if s["precision"] == precision)
            if not points:
                continue
            k, mean, error = map(np.array, zip(*points))
            what = "max ratio" if field == "max_ratio" else "worst log-det"
            ax.errorbar(k, mean, yerr=error, marker=marker, linestyle=style, capsize=3,
                        color=COLOURS[precision], label=f"{precision}, {what}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("K (1 = Sherman-Morrison)")
    ax.set_ylabel("error (mean over repeats)")
    ax.set_title(f"N = {n}")


def plot_drift(ax, strategies, n):
    largest_k = max((s["k"] for s in strategies.values() if s["delayed"]), default=None)
    for label, s in strategies.items():
        if s["delayed"] and s["k"] != largest_k:
            continue
        length = min(len(accepted) for accepted, _ in s["series"])
        accepted = np.min([a[:length] for a, _ in s["series"]], axis=0)
        errors = np.array([e[:length] for _, e in s["series"]])
        style = "--" if s["delayed"] else "-"
        keep = accepted > 0
        ax.plot(accepted[keep], errors.mean(axis=0)[keep], style,
                color=COLOURS[s["precision"]], label=label)
        ax.fill_between(accepted[keep], errors.min(axis=0)[keep], errors.max(axis=0)[keep],
                        color=COLOURS[s["precision"]], alpha=0.15)
    ax.set_yscale("log")
    ax.set_xlabel("accepted moves")
    ax.set_ylabel("log-det error")


def main():
    parser = argparse.ArgumentParser(
        description="Plot errors against K and log-det drift over repeats (docs/large-n.md).")
    parser.add_argument("results", help="HDF5 results file of a study with repeats")
    parser.add_argument("-o", "--output", required=True, help="the PNG to write")
    parser.add_argument("--dpi", type=int, default=100, help="resolution (default 100)")
    args = parser.parse_args()
    try:
        groups = read_groups(args.results)
        sizes = sorted(groups)
        figure, axes = plt.subplots(2, len(sizes), figsize=(5 * len(sizes), 8), squeeze=False)
        for column, n in enumerate(sizes):
            plot_against_k(axes[0][column], groups[n], n)
            plot_drift(axes[1][column], groups[n], n)
        axes[0][0].legend(fontsize="x-small")
        axes[1][0].legend(fontsize="x-small")
        figure.tight_layout()
        try:
            figure.savefig(args.output, dpi=args.dpi)
        except OSError as error:
            raise BadInput(f"cannot write {args.output}: {error.strerror}")
    except BadInput as error:
        print(f"plot-drift.py: error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
