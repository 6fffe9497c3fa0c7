#!/usr/bin/python3
"""Reads slaterlab results files (docs/results.md, schema version 1).

The one place where Python reads the schema: scripts such as plot.py take
their tables from here. Every table is a NumPy structured array, one row per
item, with the schema's names as fields, so that
    rows = results.summaries(); rows[rows["precision"] == "float"]["max_ratio_error"]
works with NumPy alone. Strings are NumPy unicode fields.

    import slaterlab_results
    with slaterlab_results.open_results("results.h5") as results:
        results.experiments()                  # one row per experiment
        results.strategies()                   # one row per experiment x strategy
        results.checkpoints(exp, label)        # the strategy's checkpoint rows
        results.reference_checkpoints(exp)     # the reference's checkpoint rows
        results.summaries()                    # finished strategies and their summaries
        results.vmc_runs()                     # finished VMC runs: description and summary
        results.orbitals()                     # B-spline orbital accuracy
        results.summary_units()                # {summary field: unit}
        results.checkpoint_units(exp, label)   # {checkpoint field: unit}

A file that is missing, not HDF5, not a results file, or of another schema
version raises ResultsError with a one-line message. A `.partial` file of a
killed run reads too: unfinished strategies and VMC runs are in strategies()
(with finished = False) but not in summaries() and vmc_runs().
Needs h5py and NumPy (Debian: python3-h5py).
"""

import functools
import os

import h5py
import numpy as np

SCHEMA_VERSION = 1

# Experiment attributes, in the schema's order (docs/results.md, "Experiment group").
EXPERIMENT_FIELDS = ("workload", "n", "moves", "checkpoint_every", "seed", "acceptance",
                     "acceptance_rate")
# Strategy attributes written when the strategy starts (docs/results.md, "Strategy group").
STRATEGY_FIELDS = ("name", "precision", "epsilon", "recompute_every", "breakdown", "k",
                   "variant")
# VMC run attributes that describe the run; its summary follows from summary_keys.
VMC_FIELDS = ("system", "n", "n_down", "file", "source", "alpha", "omega", "orbitals", "grid", "scheme", "strategy", "step",
              "target_acceptance", "walkers", "equilibration_sweeps", "sweeps", "seed",
              "reference_run")


class ResultsError(Exception):
    """The file cannot be read as a slaterlab results file; str() is one line."""


def open_results(path):
    """A Results for `path`; use it in a `with` block (it closes the file)."""
    return Results(path)


def _plain(value):
    """An attribute value with strings decoded: str, list of str, or the
    NumPy scalar h5py gave (its type is kept: a seed is uint64)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    return value


def _column_type(values):
    """NumPy dtype of one table column holding `values` (None = missing)."""
    present = [v for v in values if v is not None]
    if any(isinstance(v, str) for v in present):
        return np.dtype(f"U{max([1] + [len(str(v)) for v in present])}")
    dtype = functools.reduce(np.promote_types, [np.asarray(v).dtype for v in present],
                             np.dtype(bool))
    if len(present) < len(values):
        dtype = np.promote_types(dtype, np.float64)  # a missing value becomes NaN
    return dtype


def _table(records, fields):
    """A structured array from a list of dicts, one field per name in `fields`
    (a record lacking a field holds NaN there, or "" for a string)."""
    columns = [(field, _column_type([r.get(field) for r in records])) for field in fields]
    empty = {"b": False, "U": "", "f": np.nan}
    rows = [tuple(r[field] if r.get(field) is not None else empty.get(dtype.kind, 0)
                  for field, dtype in columns) for r in records]
    return np.array(rows, dtype=columns)


def _ordered_union(lists):
    seen = {}
    for names in lists:
        for name in names:
            seen.setdefault(name, None)
    return list(seen)


class Results:
    """An open results file (read only)."""

    def __init__(self, path):
        self.path = path
        if not os.path.isfile(path):
            raise ResultsError(f"cannot read {path}: no such file")
        try:
            self._file = h5py.File(path, "r")
        except OSError as error:
            raise ResultsError(f"cannot read {path}: not a readable HDF5 file ({error})")
        version = self._file.attrs.get("schema_version")
        if version is None:
            self._file.close()
            raise ResultsError(f"cannot read {path}: not a slaterlab results file")
        if int(version) != SCHEMA_VERSION:
            self._file.close()
            raise ResultsError(f"cannot read {path}: schema version {int(version)}, "
                               f"this reader reads version {SCHEMA_VERSION}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._file.close()

    # --- metadata ---------------------------------------------------------
    def attributes(self):
        """The root attributes (run metadata) as a dict."""
        return {key: _plain(value) for key, value in self._file.attrs.items()}

    def config(self):
        """The resolved study (TOML text) that produced the file."""
        return _plain(self._file["config"][()]) if "config" in self._file else ""

    def summary_units(self):
        """{field: unit} of the summary fields of summaries() (docs/results.md,
        "Units"), from the strategies' summary_units attributes."""
        return self._summary_units(group for _, _, group in self._strategy_groups())

    def vmc_units(self):
        """{field: unit} of the summary fields of vmc_runs()."""
        return self._summary_units(self._file["vmc"].values() if "vmc" in self._file else [])

    def checkpoint_units(self, experiment, label=None):
        """{field: unit} of checkpoints(experiment, label), or of the
        reference's rows without a label."""
        group = self._file["experiments"][experiment]
        group = group["strategies"][label] if label is not None else group["reference"]
        attrs = group["checkpoints"].attrs
        return dict(zip(group["checkpoints"].dtype.names, _plain(attrs["column_units"])))

    @staticmethod
    def _summary_units(groups):
        units = {}
        for group in groups:
            if "summary_keys" in group.attrs:
                units.update(zip(_plain(group.attrs["summary_keys"]),
                                 _plain(group.attrs["summary_units"])))
        return units

    # --- determinant experiments -------------------------------------------
    def _experiment_groups(self):
        return self._file["experiments"].items() if "experiments" in self._file else []

    def _strategy_groups(self, experiment=None):
        for name, group in self._experiment_groups():
            if experiment is None or name == experiment:
                for label, strategy in group["strategies"].items():
                    yield name, label, strategy

    def experiments(self):
        """One row per experiment: experiment (its name), the fields of
        EXPERIMENT_FIELDS, then every other attribute of the experiments
        (param.<key>, certified_initial.<field>, certified_final.<field>,
        appended.<field>): "" or NaN where an experiment lacks it."""
        groups = list(self._experiment_groups())
        records = [dict({"experiment": name}, **{key: _plain(value)
                                                  for key, value in g.attrs.items()})
                   for name, g in groups]
        others = _ordered_union([k for k in g.attrs if k not in EXPERIMENT_FIELDS]
                                for _, g in groups)
        return _table(records, ["experiment", *EXPERIMENT_FIELDS, *others])

    def experiment_names(self):
        return [name for name, _ in self._experiment_groups()]

    def strategies(self, experiment=None):
        """One row per experiment x strategy (of one experiment if given):
        experiment, label, the fields of STRATEGY_FIELDS, and finished (its
        summary was written)."""
        records = []
        for name, label, group in self._strategy_groups(experiment):
            record = {"experiment": name, "label": label,
                      "finished": "summary_keys" in group.attrs}
            record.update({f: _plain(group.attrs[f]) for f in STRATEGY_FIELDS
                           if f in group.attrs})
            records.append(record)
        return _table(records, ("experiment", "label") + STRATEGY_FIELDS + ("finished",))

    def checkpoints(self, experiment, label):
        """The strategy's checkpoint rows (docs/results.md, "Strategy table") as stored,
        or None when the run stopped before its first row."""
        group = self._file["experiments"][experiment]["strategies"][label]
        return self._rows(group)

    def reference_checkpoints(self, experiment):
        """The reference's checkpoint rows (docs/results.md, "Reference table")."""
        return self._rows(self._file["experiments"][experiment]["reference"])

    @staticmethod
    def _rows(group):
        return group["checkpoints"][:] if "checkpoints" in group else None

    def summaries(self):
        """One row per finished strategy: experiment, label, precision and
        every summary attribute (summary_keys), in the file's order."""
        records, keys = [], []
        for name, label, group in self._strategy_groups():
            if "summary_keys" not in group.attrs:
                continue
            names = _plain(group.attrs["summary_keys"])
            keys.append(names)
            record = {"experiment": name, "label": label,
                      "precision": _plain(group.attrs.get("precision", ""))}
            record.update({key: _plain(group.attrs[key]) for key in names})
            records.append(record)
        return _table(records, ["experiment", "label", "precision"] + _ordered_union(keys))

    # --- VMC runs -----------------------------------------------------------
    def vmc_runs(self):
        """One row per finished VMC run: run (its name), the fields of
        VMC_FIELDS and every summary attribute (summary_keys)."""
        records, keys = [], []
        groups = self._file["vmc"].items() if "vmc" in self._file else []
        for name, group in groups:
            if "summary_keys" not in group.attrs:  # not finished
                continue
            names = _plain(group.attrs["summary_keys"])
            keys.append(names)
            record = {"run": name}
            record.update({f: _plain(group.attrs[f])
                           for f in VMC_FIELDS + tuple(names) if f in group.attrs})
            records.append(record)
        return _table(records, ["run"] + list(VMC_FIELDS) + _ordered_union(keys))

    def orbitals(self):
        """One row per orbital set measured (docs/results.md, "Orbital accuracy group"):
        label and every attribute of its group."""
        groups = list(self._file["orbitals"].items()) if "orbitals" in self._file else []
        records = [dict({"label": label}, **{key: _plain(value) for key, value in g.attrs.items()})
                   for label, g in groups]
        return _table(records, ["label"] + _ordered_union(list(g.attrs) for _, g in groups))

    def vmc_energies(self, run):
        """The run's local energies: one row per walker, one column per sweep."""
        return self._file["vmc"][run]["energy"][:]
