#!/usr/bin/python3
"""Plot `slaterlab bench` results (Google Benchmark JSON): moves/s against N and K.

Left panel, one per precision row: moves/s of delayed (incremental, solid;
naive, dotted) against K for each N, with sm (dashed, flat) and the GEMM
bound of delayed (grey, flat) at the same N. Right panel: moves/s against N
for sm, qr-givens, delayed at its best K, and both bounds.

Usage: build/release/slaterlab bench --benchmark_out=bench.json --benchmark_out_format=json
       scripts/plot-bench.py bench.json -o docs/bench.png
Needs Matplotlib (Debian: python3-matplotlib).
Exit codes: 0 written, 2 bad input (missing or invalid file, no update cases).
"""

import argparse
import json
import re
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

CASE = re.compile(r"^updates/(?P<label>[^/]+)/N:(?P<n>\d+)")
DELAYED = re.compile(r"^delayed-(?P<k>\d+)-(?P<p>float|double|mixed)(?P<naive>-naive)?$")
PLAIN = re.compile(r"^(?P<name>sm|qr-givens)-(?P<p>float|double|mixed)$")


def load(path):
    """{precision: {"delayed"|"naive": {n: {k: rate}}, "sm"|"qr-givens": {n: rate},
    "bound-delayed"|"bound-sm": {n: rate}}}"""
    with open(path) as f:
        data = json.load(f)
    out = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for b in data.get("benchmarks", []):
        m = CASE.match(b.get("name", ""))
        if not m or "items_per_second" not in b:
            continue
        n, label, rate = int(m["n"]), m["label"], b["items_per_second"]
        d = DELAYED.match(label)
        if d:
            out[d["p"]]["naive" if d["naive"] else "delayed"][n][int(d["k"])] = rate
            if "bound" in b:
                out[d["p"]]["bound-delayed"][n] = b["bound"]
            continue
        p = PLAIN.match(label)
        if p:
            out[p["p"]][p["name"]][n] = rate
            if "bound" in b:
                out[p["p"]]["bound-" + p["name"]][n] = b["bound"]
    return out


def plot(results, output):
    precisions = [p for p in ("double", "float") if p in results]
    fig, axes = plt.subplots(len(precisions), 2, figsize=(12, 4.5 * len(precisions)), squeeze=False)
    for row, p in enumerate(precisions):
        r = results[p]
        ax = axes[row][0]
        sizes = sorted(set(r["delayed"]) | set(r["sm"]))
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, n in enumerate(sizes):
            c = colours[i % len(colours)]
            for variant, style in (("delayed", "-o"), ("naive", ":x")):
                ks = sorted(r[variant].get(n, {}))
                if ks:
                    ax.plot(ks, [r[variant][n][k] for k in ks], style, color=c,
                            label=f"N={n} delayed" + (" naive" if variant == "naive" else ""))
            if n in r["sm"]:
                ax.axhline(r["sm"][n], color=c, ls="--", lw=1)
            if n in r["bound-delayed"]:
                ax.axhline(r["bound-delayed"][n], color=c, ls="-", lw=4, alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("K (delay)")
        ax.set_ylabel("moves/s")
        ax.set_title(f"{p}: delayed vs K (dashed: sm; wide pale: GEMM bound)")
        ax.legend(fontsize=7, ncol=2)
        ax.grid(True, which="both", alpha=0.3)

        ax = axes[row][1]
        best = {n: max(ks.values()) for n, ks in r["delayed"].items() if ks}
        for name, series, style in (("delayed, best K", best, "-o"), ("sm", r["sm"], "-s"),
                                    ("qr-givens", r["qr-givens"], "-^"),
                                    ("GEMM bound (4N^2 flops/move)", r["bound-delayed"], "--"),
                                    ("bandwidth bound of sm", r["bound-sm"], ":")):
            ns = sorted(series)
            if ns:
                ax.plot(ns, [series[n] for n in ns], style, label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N")
        ax.set_ylabel("moves/s")
        ax.set_title(f"{p}: moves/s against N")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(output, dpi=80)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="Google Benchmark JSON output of slaterlab bench")
    parser.add_argument("-o", "--output", default="bench.png", help="PNG to write")
    args = parser.parse_args()
    try:
        results = load(args.json)
    except (OSError, ValueError) as e:
        print(f"plot-bench: error: cannot read {args.json}: {e}", file=sys.stderr)
        return 2
    if not results:
        print(f"plot-bench: error: {args.json} holds no updates/ cases", file=sys.stderr)
        return 2
    try:
        plot(results, args.output)
    except OSError as e:
        print(f"plot-bench: error: cannot write {args.output}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
