#!/usr/bin/python3
"""Hard cases for determinant updates, drawn with numpy, as replay files.

Usage: scripts/hard_cases.py KIND SEED OUT.h5, KIND one of
  repeated   gaussian N = 48; one random electron moves 2-5 times in a row
  randsvd    U diag(sigma) V^T with kappa = 1e10, N = 32; each move steps a
             column by 10 % of its norm in a random direction
  collinear  gaussian N = 40; chains that make a column a copy of another up
             to eta = 1e-6, then release the chain with fresh columns
Every move is accepted. Replay with workload = "replay", acceptance =
"forced", acceptance_rate = 1 (docs/replay.md).

The draws are numpy's, independent of slaterlab's random streams; the Haar
and randsvd matrices are made from them by the algorithms of
verify/inputs/random_matrices.hpp (haar_from_gaussian, randsvd_from_gaussians
below), which tests/verify/inputs/random_matrices_test.cpp checks give the
same matrices from the same Gaussian draws.
"""
import os
import sys

import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from write_replay import write_replay_file

def haar_from_gaussian(g):
    """Q diag(sign(R_jj)) of the Householder QR g = Q R, sign(0) = +1:
    Haar distributed for g of iid standard normals (haar_orthogonal)."""
    q, r = np.linalg.qr(g)
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)

def randsvd_from_gaussians(g_u, g_v, sigma):
    """(U diag(sigma)) V^T with U, V = haar_from_gaussian(g_u), (g_v) (randsvd)."""
    return (haar_from_gaussian(g_u) * sigma) @ haar_from_gaussian(g_v).T

def repeated(seed, n=48, moves=400):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    el, cols = [], []
    while len(el) < moves:
        k = int(rng.integers(n)); reps = int(rng.integers(2, 6))
        for _ in range(reps):
            el.append(k); cols.append(rng.standard_normal(n))
    return a, el[:moves], np.array(cols[:moves])

def randsvd_small(seed, n=32, kappa=1e10, moves=400, delta=0.1):
    rng = np.random.default_rng(seed)
    s = np.logspace(0, -np.log10(kappa), n)  # randsvd_singular_values' geometric mode
    g_u = rng.standard_normal((n, n))
    a = randsvd_from_gaussians(g_u, rng.standard_normal((n, n)), s)
    cur = a.copy(); el, cols = [], []
    for _ in range(moves):
        k = int(rng.integers(n))
        g = rng.standard_normal(n)
        c = cur[:, k] + delta * np.linalg.norm(cur[:, k]) * g / np.linalg.norm(g)
        el.append(k); cols.append(c); cur[:, k] = c
    return a, el, np.array(cols)

def collinear(seed, n=40, moves=400, eta=1e-6):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)); cur = a.copy(); el, cols = [], []
    while len(el) < moves:
        chain = rng.choice(n, size=int(rng.integers(2, 5)), replace=False)
        for t in range(1, len(chain)):
            src = cur[:, chain[t-1]]; g = rng.standard_normal(n)
            c = src + eta * np.linalg.norm(src) * g / np.linalg.norm(g)
            el.append(int(chain[t])); cols.append(c); cur[:, chain[t]] = c
        for t in chain[1:]:
            c = rng.standard_normal(n); el.append(int(t)); cols.append(c); cur[:, t] = c
    return a, el[:moves], np.array(cols[:moves])

kinds = {"repeated": repeated, "randsvd": randsvd_small, "collinear": collinear}

if __name__ == "__main__":
    kind, seed, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    a, el, cols = kinds[kind](seed)
    write_replay_file(out, a, el, cols, accept=np.ones(len(el), dtype=np.int8))
