#!/usr/bin/python3
"""Write a slaterlab replay file: the Slater matrix and the moves of a QMC walk.

This script is the example to copy into your own QMC code. It runs a small
variational Monte Carlo walk of N spin-polarised electrons in a 3D harmonic
trap, and records what slaterlab needs to replay the walk with every update
strategy (schema: docs/replay.md):

    initial_matrix   A[i, j] = phi_i(r_j): orbital i (row) at electron j (column)
    moves/electron   the electron k each proposal moves
    moves/column     the proposal's new column: phi_0(r'), ..., phi_{N-1}(r')
    moves/accept     1 if the walk accepted the proposal, else 0   (optional)
    moves/uniform    the uniform number of its Metropolis test     (optional)

In your code: evaluate your orbitals where `orbitals()` is called, append the
same four things inside your move loop, and write them as `write_replay_file`
does. Then point an experiment at the file:

    [[experiment]]
    workload = "replay"
    file = "replay.h5"        # relative to the TOML file; N comes from the file

Example:
    python3 scripts/write_replay.py -o replay.h5 --n 32 --moves 100 --seed 1
"""

import argparse
import math
import os
import sys

import h5py
import numpy as np
from numpy.polynomial import hermite


# ---- the physics of this example: replace by your code's --------------------

def oscillator_states(n):
    """Quantum numbers (nx, ny, nz) of the lowest n 3D harmonic-oscillator
    states, shell by shell (nx + ny + nz = 0, 1, 2, ...)."""
    states = []
    shell = 0
    while len(states) < n:
        for nx in range(shell, -1, -1):
            for ny in range(shell - nx, -1, -1):
                states.append((nx, ny, shell - nx - ny))
        shell += 1
    return states[:n]


def hermite_function(order, x):
    """Normalised 1D oscillator eigenfunction H_order(x) exp(-x^2/2) / norm."""
    coefficients = np.zeros(order + 1)
    coefficients[order] = 1.0
    norm = math.sqrt(2.0**order * math.factorial(order) * math.sqrt(math.pi))
    return hermite.hermval(x, coefficients) * math.exp(-0.5 * x * x) / norm


def orbitals(states, r):
    """The column of the Slater matrix for one electron at position r (3,):
    entry i is phi_i(r)."""
    return np.array([hermite_function(nx, r[0]) * hermite_function(ny, r[1]) *
                     hermite_function(nz, r[2]) for nx, ny, nz in states])


def vmc_walk(n, moves, seed, step):
    """A particle-by-particle Metropolis walk sampling |det A|^2. Returns the
    initial matrix and the per-move records."""
    rng = np.random.default_rng(seed)
    states = oscillator_states(n)
    positions = rng.normal(size=(n, 3))
    # A[i, j] = phi_i(r_j): column j belongs to electron j.
    a = np.column_stack([orbitals(states, positions[j]) for j in range(n)])
    initial = a.copy()

    electron = np.empty(moves, dtype=np.int64)
    column = np.empty((moves, n))      # row m = the new column of move m
    accept = np.empty(moves, dtype=np.int8)
    uniform = np.empty(moves)
    for m in range(moves):
        k = m % n                                       # sweep over the electrons
        trial = positions[k] + step * rng.normal(size=3)
        new_column = orbitals(states, trial)
        # rho = det(A') / det(A) = (A^-1 a')_k. Your code has its own ratio
        # (Sherman-Morrison, delayed updates, ...); slaterlab judges those.
        ratio = np.linalg.solve(a, new_column)[k]
        u = rng.random()
        accepted = u < ratio * ratio                   # Metropolis on |rho|^2
        if accepted:
            a[:, k] = new_column
            positions[k] = trial
        electron[m], column[m], accept[m], uniform[m] = k, new_column, accepted, u
    return initial, electron, column, accept, uniform


# ---- the file: this part is the same for every code --------------------------

def write_replay_file(path, initial, electron, column, accept=None, uniform=None,
                      layout="row-major", **metadata):
    """Writes a replay file (replay_schema_version 1).

    initial is the N x N NumPy array A with A[i, j] = phi_i(r_j). With
    layout="row-major" it is stored as it is; with "column-major" its
    transpose is stored (dataset[j, i] = A[i, j]: one row per electron), which
    is also what dumping a Fortran or column-major C++ array gives.
    column has one row per move. Every value must be finite.
    """
    stored = initial if layout == "row-major" else initial.T
    partial = path + ".partial"        # never leave a half-written file behind
    with h5py.File(partial, "w") as f:
        f.attrs["replay_schema_version"] = 1
        f.attrs["layout"] = layout
        for key, value in metadata.items():
            f.attrs[key] = value
        f.create_dataset("initial_matrix", data=np.ascontiguousarray(stored, dtype=np.float64))
        moves = f.create_group("moves")
        moves.create_dataset("electron", data=np.asarray(electron, dtype=np.int64))
        moves.create_dataset("column", data=np.asarray(column, dtype=np.float64))
        if accept is not None:
            moves.create_dataset("accept", data=np.asarray(accept, dtype=np.int8))
        if uniform is not None:
            moves.create_dataset("uniform", data=np.asarray(uniform, dtype=np.float64))
    os.replace(partial, path)


def main():
    parser = argparse.ArgumentParser(
        description="Write an example slaterlab replay file from a small VMC walk "
                    "(N electrons in a 3D harmonic trap).")
    parser.add_argument("-o", "--output", required=True, help="replay file to write (HDF5)")
    parser.add_argument("--n", type=int, default=32, help="electrons = orbitals (default 32)")
    parser.add_argument("--moves", type=int, default=100, help="proposals (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--step", type=float, default=0.6,
                        help="Gaussian step of a proposal (default 0.6)")
    parser.add_argument("--layout", choices=["row-major", "column-major"], default="row-major",
                        help="how initial_matrix is stored (default row-major)")
    parser.add_argument("--without-decisions", action="store_true",
                        help="omit moves/accept and moves/uniform: slaterlab then decides")
    args = parser.parse_args()
    if args.n < 1 or args.moves < 0 or not args.step > 0:
        parser.error("need --n >= 1, --moves >= 0 and --step > 0")

    initial, electron, column, accept, uniform = vmc_walk(args.n, args.moves, args.seed,
                                                          args.step)
    decisions = {} if args.without_decisions else {"accept": accept, "uniform": uniform}
    try:
        write_replay_file(args.output, initial, electron, column, layout=args.layout,
                          code="scripts/write_replay.py", seed=args.seed,
                          system=f"{args.n} spin-polarised electrons in a 3D harmonic trap",
                          **decisions)
    except OSError as error:
        print(f"write_replay.py: error: cannot write {args.output}: {error}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}: N = {args.n}, {args.moves} moves, "
          f"{int(accept.sum())} accepted, layout {args.layout}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
