#!/usr/bin/python3
"""Tests of scripts/slaterlab_results.py against a results file of a short
run of the slaterlab binary: the tables hold what the study asked for, agree
with what `slaterlab table` prints from the same file (the C++ reader), and
agree among themselves (a summary is the extreme of its checkpoint rows);
a killed run's file and bad files read as documented.

Usage: slaterlab_results_test.py SLATERLAB_BINARY   (exit 77: no h5py, skipped)
"""

import csv
import io
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import h5py
    import numpy as np
except ImportError:
    print("skipped: /usr/bin/python3 has no h5py/numpy")
    sys.exit(77)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
import slaterlab_results  # noqa: E402  (found through the path above)

BINARY = None  # set from the command line

STUDY = """
[study]
name = "reader"
seed = 11
[reference]
certify = false
[[experiment]]
workload = ["gaussian", "small-step"]
n = 8
moves = 24
checkpoint_every = 8
[[strategy]]
name = "sm"
precision = ["float", "double"]
[[strategy]]
name = "qr-givens"
[[vmc]]
n = 4
alpha = 0.8
scheme = ["pbp", "qs"]
walkers = 2
sweeps = 64
equilibration = 16
"""
EXPERIMENTS = ["gaussian-n8", "small-step-n8"]
LABELS = ["sm-float", "sm-double", "qr-givens-double"]


def table_csv(path, kind):
    """`slaterlab table --format csv --kind KIND` as a list of dicts."""
    out = subprocess.run([BINARY, "table", path, "--format", "csv", "--kind", kind],
                         check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def printed(value):
    """value rounded as the table prints it (two significant digits)."""
    return float(f"{value:.1e}")


class Reader(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="slaterlab_results_test.")
        study = os.path.join(cls.dir, "study.toml")
        pathlib.Path(study).write_text(STUDY)
        cls.path = os.path.join(cls.dir, "results.h5")
        subprocess.run([BINARY, "run", study, "-o", cls.path, "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_experiments_and_strategies_are_the_study(self):
        with slaterlab_results.open_results(self.path) as results:
            experiments = results.experiments()
            self.assertEqual(list(experiments["experiment"]), EXPERIMENTS)
            self.assertEqual(list(experiments["n"]), [8, 8])
            self.assertEqual(list(experiments["moves"]), [24, 24])
            # A workload parameter only small-step has: empty for gaussian.
            self.assertEqual(experiments["param.delta"][0], "")
            self.assertEqual(float(experiments["param.delta"][1]), 0.05)
            strategies = results.strategies()
            self.assertEqual(len(strategies), len(EXPERIMENTS) * len(LABELS))
            self.assertEqual(list(results.strategies(EXPERIMENTS[1])["label"]), LABELS)
            self.assertTrue(np.all(strategies["finished"]))
            for row in strategies:
                epsilon = np.finfo(np.float32 if row["precision"] == "float" else np.float64).eps
                self.assertEqual(row["epsilon"], epsilon, row["label"])
            self.assertIn("name = 'reader'", results.config())
            self.assertEqual(results.attributes()["schema_version"], 1)

    def test_checkpoints_cover_the_moves_and_bound_the_summaries(self):
        with slaterlab_results.open_results(self.path) as results:
            summaries = results.summaries()
            self.assertEqual(len(summaries), len(EXPERIMENTS) * len(LABELS))
            for s in summaries:
                rows = results.checkpoints(s["experiment"], s["label"])
                # A row at the start and one every checkpoint_every = 8 moves.
                self.assertEqual(list(rows["move"]), [0, 8, 16, 24])
                self.assertEqual(s["worst_log_det_error"], np.max(rows["log_det_error"]))
                self.assertEqual(s["final_log_det_error"], rows["log_det_error"][-1])
                # The row at move 0 measured no ratio (NaN); the summary skips it.
                self.assertTrue(np.isnan(rows["ratio_error_max"][0]))
                self.assertEqual(s["max_ratio_error"], np.nanmax(rows["ratio_error_max"]))
                self.assertEqual(s["flips"], np.sum(rows["flips"]))
            reference = results.reference_checkpoints(EXPERIMENTS[0])
            self.assertEqual(list(reference["move"]), [0, 8, 16, 24])
            self.assertEqual(results.summary_units()["max_ratio_error_eps"], "eps")
            self.assertEqual(results.checkpoint_units(EXPERIMENTS[0], "sm-float")["elapsed_s"], "s")
            self.assertEqual(results.checkpoint_units(EXPERIMENTS[0])["log_det"], "1")

    def test_summaries_agree_with_slaterlab_table(self):
        with slaterlab_results.open_results(self.path) as results:
            summaries = results.summaries()
        rows = table_csv(self.path, "determinant")
        self.assertEqual([(r["experiment"], r["strategy"]) for r in rows],
                         [(s["experiment"], s["label"]) for s in summaries])
        for row, s in zip(rows, summaries):
            for column, key in (("worst log-det error", "worst_log_det_error"),
                                ("max ratio error in eps", "max_ratio_error_eps"),
                                ("divergence (final)", "final_inverse_divergence")):
                if row[column]:
                    self.assertEqual(float(row[column]), printed(s[key]), (s["label"], key))
                else:  # a metric that does not apply is NaN, printed empty
                    self.assertTrue(np.isnan(s[key]), (s["label"], key))
            self.assertEqual(int(row["breakdowns"]), s["breakdowns"])

    def test_vmc_runs(self):
        with slaterlab_results.open_results(self.path) as results:
            runs = results.vmc_runs()
            self.assertEqual(list(runs["scheme"]), ["pbp", "qs"])
            # E(alpha) = (alpha/2 + omega^2/(2 alpha)) sum (n_i + 3/2): for N = 4 one
            # orbital of shell 0 and three of shell 1, sum = 3/2 + 3 * 5/2 = 9.
            np.testing.assert_allclose(runs["exact_energy"], (0.4 + 1 / 1.6) * 9, rtol=1e-15)
            self.assertEqual(results.vmc_energies(runs["run"][0]).shape, (2, 64))
            self.assertEqual(results.vmc_units()["energy"], "E")
        table = table_csv(self.path, "vmc")
        self.assertEqual([r["run"] for r in table], list(runs["run"]))
        for row, run in zip(table, runs):
            self.assertEqual(float(row["E exact"]), float(f"{run['exact_energy']:.10g}"))

    def test_a_killed_run_reads_without_the_unfinished(self):
        partial = os.path.join(self.dir, "killed.h5.partial")
        shutil.copy(self.path, partial)
        with h5py.File(partial, "r+") as f:  # as if killed before sm-double finished
            del f["experiments"][EXPERIMENTS[0]]["strategies"]["sm-double"].attrs["summary_keys"]
            del f["vmc"][list(f["vmc"])[1]].attrs["summary_keys"]
        with slaterlab_results.open_results(partial) as results:
            strategies = results.strategies(EXPERIMENTS[0])
            self.assertEqual(list(strategies["finished"]), [True, False, True])
            self.assertEqual(len(results.summaries()), len(EXPERIMENTS) * len(LABELS) - 1)
            self.assertEqual(len(results.vmc_runs()), 1)

    def test_bad_files_are_one_line_errors(self):
        text = os.path.join(self.dir, "text.h5")
        pathlib.Path(text).write_text("not hdf5")
        other = os.path.join(self.dir, "other.h5")
        with h5py.File(other, "w") as f:
            f.attrs["created_by"] = "someone else"
        newer = os.path.join(self.dir, "newer.h5")
        shutil.copy(self.path, newer)
        with h5py.File(newer, "r+") as f:
            f.attrs["schema_version"] = np.int32(2)
        for path, message in ((os.path.join(self.dir, "missing.h5"), "no such file"),
                              (text, "not a readable HDF5 file"),
                              (other, "not a slaterlab results file"),
                              (newer, "schema version 2, this reader reads version 1")):
            with self.assertRaises(slaterlab_results.ResultsError) as caught:
                slaterlab_results.open_results(path)
            self.assertIn(f"cannot read {path}: {message}", str(caught.exception))
            self.assertNotIn("\n", str(caught.exception))


if __name__ == "__main__":
    BINARY = sys.argv.pop(1)
    unittest.main()
