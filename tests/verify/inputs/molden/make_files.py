#!/usr/bin/python3
"""Writes the hand-made Molden files of this folder (no numpy; exact
same-centre and s-s overlaps, Cholesky orthonormalisation), so that each can
be made again: python3 make_files.py. Used by tests/verify/inputs/
molecule_file_test.cpp and as seeds of the Molden fuzz target.

- h2-sto3g.molden: H2, R = 1.4 bohr, STO-3G (Hehre, Stewart and Pople, J.
  Chem. Phys. 51, 2657 (1969)); the RHF orbitals are sigma_g, sigma_u by
  symmetry: (chi_1 +- chi_2) / sqrt(2 (1 +- S_12)).
- h2-triplet-uhf.molden: the same orbitals, one alpha electron in each.
- ne-cartesian.molden, ne-spherical.molden, ne-5d10f.molden: one atom (in
  Angstrom) with s, sp, d, f and g shells; the orbitals orthonormalise all the
  AOs (Cholesky: C = L^-T for S = L L^T, S from Gaussian moments, the solid
  harmonics expanded by Helgaker, Jorgensen and Olsen's formula), ten
  electrons in the first five.
"""

import math

BOHR_PER_ANGSTROM = 1.0 / 0.529177210903


def double_factorial(n):
    r = 1
    while n > 1:
        r *= n
        n -= 2
    return r


def molden_cartesians(l):
    return {
        0: [(0, 0, 0)],
        1: [(1, 0, 0), (0, 1, 0), (0, 0, 1)],
        2: [(2, 0, 0), (0, 2, 0), (0, 0, 2), (1, 1, 0), (1, 0, 1), (0, 1, 1)],
        3: [(3, 0, 0), (0, 3, 0), (0, 0, 3), (1, 2, 0), (2, 1, 0), (2, 0, 1), (1, 0, 2), (0, 1, 2),
            (0, 2, 1), (1, 1, 1)],
        4: [(4, 0, 0), (0, 4, 0), (0, 0, 4), (3, 1, 0), (3, 0, 1), (1, 3, 0), (0, 3, 1), (1, 0, 3),
            (0, 1, 3), (2, 2, 0), (2, 0, 2), (0, 2, 2), (2, 1, 1), (1, 2, 1), (1, 1, 2)],
    }[l]


def solid_harmonic(l, m):
    """Racah-normalised real solid harmonic as {(a, b, c): coefficient}
    (Helgaker, Jorgensen and Olsen, eq. 6.4.47-6.4.50)."""
    am, two_vm = abs(m), 1 if m < 0 else 0
    norm = math.sqrt(2 * math.factorial(l + am) * math.factorial(l - am) / (2 if m == 0 else 1)) / (
        2 ** am * math.factorial(l))
    out = {}
    for t in range((l - am) // 2 + 1):
        for u in range(t + 1):
            for two_v in range(two_vm, am + 1, 2):
                c = (-1) ** (t + (two_v - two_vm) // 2) * 0.25 ** t * math.comb(l, t) * math.comb(
                    l - t, am + t) * math.comb(t, u) * math.comb(am, two_v)
                y = 2 * u + two_v
                key = (2 * t + am - y, y, l - 2 * t - am)
                out[key] = out.get(key, 0.0) + norm * c
    return out


def moment(n, p):
    """int x^n e^{-p x^2} dx."""
    return 0.0 if n % 2 else double_factorial(n - 1) * math.sqrt(math.pi / p) / (2 * p) ** (n // 2)


def polynomial(component):
    """The angular polynomial of an AO as {(a, b, c): coefficient}."""
    if component[0] == "m":
        l, index = component[1], component[2]
        m = (index + 1) // 2 if index % 2 else -(index // 2)
        return solid_harmonic(l, m)
    return {component: 1.0}


def overlap(ao1, ao2):
    """<ao1|ao2> of two AOs on one centre, each normalised."""
    def raw(x, y):
        (_, e1, c1, p1), (_, e2, c2, p2) = x, y
        total = 0.0
        for a, d1 in zip(e1, c1):
            for b, d2 in zip(e2, c2):
                # Primitive weights: coefficients of normalised x^l primitives.
                w = d1 * d2 / math.sqrt(moment(2 * x[0], 2 * a) * moment(0, 2 * a) ** 2) / math.sqrt(
                    moment(2 * y[0], 2 * b) * moment(0, 2 * b) ** 2)
                for q1, t1 in polynomial(p1).items():
                    for q2, t2 in polynomial(p2).items():
                        total += w * t1 * t2 * moment(q1[0] + q2[0], a + b) * moment(
                            q1[1] + q2[1], a + b) * moment(q1[2] + q2[2], a + b)
        return total
    return raw(ao1, ao2) / math.sqrt(raw(ao1, ao1) * raw(ao2, ao2))


def cholesky_orthonormal(s):
    n = len(s)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            v = s[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            low[i][j] = math.sqrt(v) if i == j else v / low[j][j]
    inv = [[0.0] * n for _ in range(n)]  # L^-1, lower triangular
    for i in range(n):
        inv[i][i] = 1.0 / low[i][i]
        for j in range(i):
            inv[i][j] = -sum(low[i][k] * inv[k][j] for k in range(j, i)) / low[i][i]
    return [[inv[j][i] for j in range(n)] for i in range(n)]  # C = L^-T: column j is MO j


def write(name, title, atoms_unit, atoms, flags, shells_by_atom, orbitals):
    """orbitals: list of (spin, occupation, coefficients)."""
    out = ["[Molden Format]", "[Title]", " " + title, "[Atoms] " + atoms_unit]
    for i, (sym, z, xyz) in enumerate(atoms):
        out.append("%-2s %3d %3d %22.15f %22.15f %22.15f" % (sym, i + 1, z, *xyz))
    out += flags
    out.append("[GTO]")
    for i, shells in enumerate(shells_by_atom):
        out.append("%3d 0" % (i + 1))
        for label, exps, coefs in shells:
            out.append(" %s %3d 1.00" % (label, len(exps)))
            for k, e in enumerate(exps):
                out.append(" ".join("%22.15e" % v for v in [e] + [c[k] for c in coefs]))
        out.append("")
    out.append("[MO]")
    for spin, occ, coefs in orbitals:
        out += [" Sym= 1a", " Ene= 0.0", " Spin= " + spin, " Occup= %.6f" % occ]
        out += ["%5d %22.15e" % (i + 1, c) for i, c in enumerate(coefs)]
    with open(name, "w") as f:
        f.write("\n".join(out) + "\n")


# H2, STO-3G.
STO3G_H = ([3.42525091, 0.62391373, 0.16885540], [0.15432897, 0.53532814, 0.44463454])


def h2_orbitals():
    e, d = STO3G_H
    r = 1.4
    norm = sum(x * y * (2 * math.sqrt(a * b) / (a + b)) ** 1.5 for a, x in zip(e, d) for b, y in zip(e, d))
    s12 = sum(x * y * (2 * math.sqrt(a * b) / (a + b)) ** 1.5 * math.exp(-a * b / (a + b) * r * r)
              for a, x in zip(e, d) for b, y in zip(e, d)) / norm
    g = 1.0 / math.sqrt(2 * (1 + s12))
    u = 1.0 / math.sqrt(2 * (1 - s12))
    return [g, g], [u, -u]


H2_ATOMS = [("H", 1, (0.0, 0.0, 0.0)), ("H", 1, (0.0, 0.0, 1.4))]
H2_SHELLS = [[("s", STO3G_H[0], [STO3G_H[1]])]] * 2
sg, su = h2_orbitals()
write("h2-sto3g.molden", "H2 STO-3G RHF (hand-made)", "AU", H2_ATOMS, [], H2_SHELLS,
      [("Alpha", 2.0, sg), ("Alpha", 0.0, su)])
write("h2-triplet-uhf.molden", "H2 STO-3G triplet UHF (hand-made)", "AU", H2_ATOMS, [], H2_SHELLS,
      [("Alpha", 1.0, sg), ("Alpha", 1.0, su), ("Beta", 0.0, sg), ("Beta", 0.0, su)])

# One atom with every l; sp shares its exponents between an s and a p part.
NE_SHELLS = [
    ("s", [7.5, 1.25], [[0.35, 0.75]]),
    ("sp", [2.25, 0.5], [[-0.25, 1.1], [0.45, 0.7]]),
    ("d", [1.75, 0.45], [[0.6, 0.5]]),
    ("f", [1.1], [[1.0]]),
    ("g", [0.9], [[1.0]]),
]


def atom_aos(spherical):
    """Per AO: (l, exponents, coefficients, component); component the powers
    (cartesian) or ("m", l, index) (spherical), in Molden's order."""
    aos = []
    for label, exps, coefs in NE_SHELLS:
        parts = [(0, coefs[0]), (1, coefs[1])] if label == "sp" else [("spdfg".index(label), coefs[0])]
        for l, c in parts:
            if spherical.get(l, False):
                aos += [(l, exps, c, ("m", l, i)) for i in range(2 * l + 1)]
            else:
                aos += [(l, exps, c, p) for p in molden_cartesians(l)]
    return aos


def atom_file(name, flags, spherical):
    aos = atom_aos(spherical)
    s = [[overlap(x, y) for y in aos] for x in aos]
    c = cholesky_orthonormal(s)
    n = len(aos)
    orbitals = [("Alpha", 2.0 if j < 5 else 0.0, [c[i][j] for i in range(n)]) for j in range(n)]
    position = (0.25, -0.5, 0.75)  # Angstrom
    write(name, "one atom, s to g (hand-made)", "Angs", [("Ne", 10, position)], flags, [NE_SHELLS], orbitals)


atom_file("ne-cartesian.molden", [], {})
atom_file("ne-spherical.molden", ["[5D7F]", "[9G]"], {2: True, 3: True, 4: True})
atom_file("ne-5d10f.molden", ["[5D10F]"], {2: True})
