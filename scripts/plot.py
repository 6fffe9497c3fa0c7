#!/usr/bin/python3
"""Plot a slaterlab results file: one PNG per experiment.

Each PNG has three panels, one line or box per strategy:
  1. log-det error |log|det|_s - log|det|_ref| against the move count,
  2. inverse residual max|A X - I| against the move count (QR strategies,
     which keep no inverse, show their QR residual ||QR - AP|| / ||A||,
     dashed),
  3. the distribution of the ratio error: a box of the per-checkpoint maxima
     of the relative ratio error, with the per-checkpoint RMS values as dots.
Errors are on log scales; an exact zero cannot be drawn there and is left out.
When the file holds VMC runs (/vmc/<run>), vmc-energies.png draws each run's
energy minus the exact E(alpha) with its error bar (one standard error);
files without VMC runs get no such plot.

Usage: scripts/plot.py results.h5 -o plots/
Reads the file through slaterlab_results.py. Needs h5py, NumPy and Matplotlib (Debian: python3-h5py python3-matplotlib).
Exit codes: 0 written, 2 bad input (missing or invalid file, unwritable DIR).
"""

import argparse
import os
import re
import sys

import numpy as np

import slaterlab_results  # the results file's schema, read in one place (beside this script)

import matplotlib
matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


class BadInput(Exception):
    """A problem with the user's input, reported as one line and exit code 2."""


def read_results(path, wanted):
    """Experiments (name, n, each strategy's label and checkpoint rows) and
    finished VMC runs (name, energy, error, exact energy) of a results file."""
    try:
        with slaterlab_results.open_results(path) as results:
            table = results.experiments()
            table = table[np.isin(table["experiment"], wanted)] if wanted else table
            experiments = []
            for name, n in zip(table["experiment"], table["n"]):
                strategies = [{"label": str(label), "rows": results.checkpoints(name, label)}
                              for label in results.strategies(name)["label"]]
                experiments.append({"name": str(name), "n": int(n), "strategies": strategies})
            runs = [] if wanted else [{"name": str(r["run"]), "energy": float(r["energy"]),
                                       "error": float(r["error"]),
                                       "exact": float(r["exact_energy"])}
                                      for r in results.vmc_runs()]
    except slaterlab_results.ResultsError as error:
        raise BadInput(str(error))
    missing = set(wanted) - {e["name"] for e in experiments}
    if missing:
        raise BadInput(f"{path} has no experiment named {', '.join(sorted(missing))}")
    return experiments, runs


def positive(values):
    """Values for a log axis: zeros and negatives become gaps."""
    values = np.asarray(values, dtype=float)
    return np.where(values > 0, values, np.nan)


def plot_histories(ax_det, ax_res, strategies, colours):
    for s, colour in zip(strategies, colours):
        rows = s["rows"]
        if rows is None or len(rows) == 0:
            continue
        ax_det.plot(rows["move"], positive(rows["log_det_error"]), color=colour,
                    marker=".", label=s["label"])
        inverse = rows["inverse_residual_max"]
        if np.all(np.isnan(inverse)):
            ax_res.plot(rows["move"], positive(rows["qr_residual"]), color=colour,
                        marker=".", linestyle="--")
        else:
            ax_res.plot(rows["move"], positive(inverse), color=colour, marker=".")
    ax_det.set(title="log-det error", xlabel="moves", ylabel="|log|det| - reference|",
               yscale="log")
    ax_res.set(title="inverse residual (QR residual dashed)", xlabel="moves",
               ylabel="max|A X - I|  or  ||QR - AP|| / ||A||", yscale="log")


def plot_ratio_errors(ax, strategies, colours):
    maxima, rms, labels = [], [], []
    for s in strategies:
        rows = s["rows"]
        # The first row is the starting point: no proposal before it.
        rows = rows[rows["move"] > 0] if rows is not None else []
        maxima.append(positive(rows["ratio_error_max"]) if len(rows) else np.array([np.nan]))
        rms.append(positive(rows["ratio_error_rms"]) if len(rows) else np.array([np.nan]))
        labels.append(s["label"])
    positions = np.arange(1, len(labels) + 1)
    boxes = ax.boxplot([m[np.isfinite(m)] for m in maxima], positions=positions,
                       widths=0.6, patch_artist=True, showfliers=True,
                       medianprops={"color": "black"})
    for patch, colour in zip(boxes["boxes"], colours):
        patch.set(facecolor=colour, alpha=0.5)
    for x, values, colour in zip(positions, rms, colours):
        ax.plot(np.full(len(values), x), values, linestyle="none", marker="o", markersize=3,
                color=colour, markeredgecolor="black", markeredgewidth=0.3)
    ax.set_xticks(positions, labels, rotation=60, ha="right", fontsize=7)
    ax.set(title="ratio error per checkpoint (box: max, dots: RMS)",
           ylabel="|rho - rho_ref| / |rho_ref|", yscale="log")


def plot_vmc(runs, directory, dpi):
    """Energy minus the exact E(alpha) per VMC run, with one-standard-error bars:
    runs of different N and alpha share one axis, and a bias shows as a bar
    that misses zero."""
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(runs) + 2.5), 5.0))
    x = np.arange(len(runs))
    ax.errorbar(x, [r["energy"] - r["exact"] for r in runs], yerr=[r["error"] for r in runs],
                fmt="o", capsize=3)
    ax.axhline(0.0, color="black", linestyle=":", label="exact E(alpha)")
    ax.set_xticks(x, [r["name"] for r in runs], rotation=60, ha="right", fontsize=7)
    ax.set(title="VMC energy against the exact value (one standard error)",
           ylabel="E - E_exact")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(directory, "vmc-energies.png")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def file_name(experiment_name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", experiment_name) + ".png"


def plot_experiment(experiment, directory, dpi):
    strategies = experiment["strategies"]
    count = max(1, len(strategies))
    if count <= 10:
        colours = plt.get_cmap("tab10")(np.arange(count))
    elif count <= 20:
        colours = plt.get_cmap("tab20")(np.arange(count))
    else:
        colours = plt.get_cmap("hsv")(np.linspace(0, 1, count, endpoint=False))
    panels = 3
    fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels + 1.8, 4.4))
    plot_histories(axes[0], axes[1], strategies, colours)
    plot_ratio_errors(axes[2], strategies, colours)
    for ax in axes:
        ax.grid(True, which="major", alpha=0.3)
    fig.legend(loc="center right", fontsize=7, frameon=False)
    fig.suptitle(f"{experiment['name']} (N = {experiment['n']})")
    fig.tight_layout(rect=(0, 0, 1 - 1.6 / (4.2 * panels + 1.8), 1))
    path = os.path.join(directory, file_name(experiment["name"]))
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(
        description="Plot a slaterlab results file: log-det error, inverse residual and "
                    "ratio-error distribution per strategy, one PNG per experiment; VMC "
                    "energies against the exact value in vmc-energies.png.")
    parser.add_argument("results", help="HDF5 results file (slaterlab run -o ...)")
    parser.add_argument("-o", "--output", required=True, help="directory for the PNG files")
    parser.add_argument("-e", "--experiment", action="append", default=[],
                        help="plot only this experiment (repeatable; default: all "
                             "experiments and the VMC runs)")
    parser.add_argument("--dpi", type=int, default=100, help="resolution (default 100)")
    args = parser.parse_args()
    try:
        experiments, runs = read_results(args.results, args.experiment)
        try:
            os.makedirs(args.output, exist_ok=True)
        except OSError as error:
            raise BadInput(f"cannot create {args.output}: {error.strerror}")
        if not os.access(args.output, os.W_OK):
            raise BadInput(f"cannot write to {args.output}")
        for experiment in experiments:
            print(plot_experiment(experiment, args.output, args.dpi))
        if runs:
            print(plot_vmc(runs, args.output, args.dpi))
    except BadInput as error:
        print(f"plot.py: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
