"""Contracted Gaussian shells in the TREXIO conventions, with NumPy evaluation.

What the molecule scripts need to write a TREXIO file from a quantum-chemistry
code's basis and to check it independently of that code:

  * the TREXIO normalisation of a shell (trex.org, "Basis set" and "Atomic
    orbitals"): AO_i(r) = N'_i P_i(r - A) R_s(|r - A|), with
    R_s(r) = N_s sum_k a_k f_k exp(-gamma_k r^2);
    f_k normalises the primitive x^l exp(-gamma r^2) (prim_factor),
    N_s normalises the contracted x^l R_s (shell_factor), and N'_i
    (ao.normalization) rescales one component;
  * P_i: cartesian monomials x^a y^b z^c in TREXIO's alphabetical order
    (xx, xy, xz, yy, yz, zz, ...), or real regular solid harmonics in the
    order m = 0, +1, -1, +2, -2, ... with the normalisation and phases of
    Helgaker, Jorgensen and Olsen, "Molecular Electronic-Structure Theory"
    (Wiley 2000), eqs. 6.4.47-6.4.50: S_l0 = z^l + ..., so that with N'_i = 1
    each spherical AO has unit norm;
  * every AO as a polynomial (a sum of monomials) times R_s, from which values
    and analytic overlaps follow without any quantum-chemistry code.
"""

import math
from dataclasses import dataclass

import numpy as np


def double_factorial(n):
    return 1 if n <= 0 else n * double_factorial(n - 2)


def cartesian_exponents(l):
    """(a, b, c) of x^a y^b z^c in TREXIO's (and Psi4's) alphabetical order."""
    return [(a, l - a - c, c) for a in range(l, -1, -1) for c in range(0, l - a + 1)]


def primitive_factor(exponent, l):
    """f: the factor that normalises x^l exp(-exponent r^2)."""
    return ((2.0 * exponent / math.pi) ** 0.75 * (4.0 * exponent) ** (l / 2.0)
            / math.sqrt(double_factorial(2 * l - 1)))


def shell_factor(exponents, coefficients, l):
    """N_s: the factor that normalises the contracted x^l sum_k a_k f_k exp(-gamma_k r^2).

    With normalised primitives <g_i|g_j> = (2 sqrt(g_i g_j) / (g_i + g_j))^(l + 3/2).
    """
    g = np.asarray(exponents, dtype=float)
    a = np.asarray(coefficients, dtype=float)
    ratio = 2.0 * np.sqrt(np.outer(g, g)) / np.add.outer(g, g)
    return 1.0 / math.sqrt(float(a @ (ratio ** (l + 1.5)) @ a))


def cartesian_component_factor(a, b, c):
    """N'_i of x^a y^b z^c when every cartesian AO is normalised on its own."""
    l = a + b + c
    return math.sqrt(double_factorial(2 * l - 1)
                     / (double_factorial(2 * a - 1) * double_factorial(2 * b - 1)
                        * double_factorial(2 * c - 1)))


def solid_harmonic(l, m):
    """S_lm as {(a, b, c): coefficient} over monomials x^a y^b z^c (Helgaker et al. 6.4.47-50)."""
    am = abs(m)
    two_vm = 0 if m >= 0 else 1  # 2 v_m
    norm = (math.sqrt(2.0 * math.factorial(l + am) * math.factorial(l - am)
                      / (2.0 if m == 0 else 1.0))
            / (2 ** am * math.factorial(l)))
    terms = {}
    for t in range((l - am) // 2 + 1):
        for u in range(t + 1):
            for w in range((am - two_vm) // 2 + 1):  # v = v_m + w
                two_v = 2 * w + two_vm
                coef = ((-1) ** (t + w) * 0.25 ** t * math.comb(l, t) * math.comb(l - t, am + t)
                        * math.comb(t, u) * math.comb(am, two_v))
                power_y = 2 * u + two_v
                key = (2 * t + am - power_y, power_y, l - 2 * t - am)
                terms[key] = terms.get(key, 0.0) + norm * coef
    return {k: c for k, c in terms.items() if c != 0.0}


def spherical_order(l):
    """m in TREXIO's (and Psi4's) order: 0, +1, -1, +2, -2, ..."""
    order = [0]
    for m in range(1, l + 1):
        order += [m, -m]
    return order


@dataclass
class Shell:
    center: np.ndarray          # bohr
    l: int
    exponents: np.ndarray
    coefficients: np.ndarray    # a_k, for normalised primitives (the basis set's numbers)
    spherical: bool
    nucleus: int = 0

    def prim_factors(self):
        return np.array([primitive_factor(g, self.l) for g in self.exponents])

    def factor(self):
        return shell_factor(self.exponents, self.coefficients, self.l)

    def size(self):
        return 2 * self.l + 1 if self.spherical else (self.l + 1) * (self.l + 2) // 2

    def ao_factors(self):
        """N'_i of this shell's AOs: 1 for solid harmonics, unit-norm cartesians otherwise."""
        if self.spherical:
            return np.ones(self.size())
        return np.array([cartesian_component_factor(*e) for e in cartesian_exponents(self.l)])

    def polynomials(self):
        """Each AO's N'_i P_i as {(a, b, c): coefficient}."""
        if self.spherical:
            return [solid_harmonic(self.l, m) for m in spherical_order(self.l)]
        return [{e: f} for e, f in zip(cartesian_exponents(self.l), self.ao_factors())]

    def radial_coefficients(self):
        """The coefficients d_k of R_s = sum_k d_k exp(-gamma_k r^2)."""
        return self.coefficients * self.prim_factors() * self.factor()


def evaluate_aos(shells, points, polynomials=Shell.polynomials):
    """AO values (npoints x nao) at points (npoints x 3, bohr).

    polynomials(shell) gives each AO's angular part (default: TREXIO's order).
    """
    columns = []
    for shell in shells:
        d = points - shell.center
        r2 = np.einsum("ij,ij->i", d, d)
        radial = np.exp(-np.outer(r2, shell.exponents)) @ shell.radial_coefficients()
        for poly in polynomials(shell):
            angular = np.zeros(len(points))
            for (a, b, c), coef in poly.items():
                angular += coef * d[:, 0] ** a * d[:, 1] ** b * d[:, 2] ** c
            columns.append(angular * radial)
    return np.column_stack(columns)


def _overlap_1d(la, lb, pa, pb, p):
    """int (x - A)^la (x - B)^lb exp(-p (x - P)^2) dx for arrays of primitive pairs."""
    total = np.zeros_like(p)
    for i in range(la + 1):
        for j in range(lb + 1):
            n = i + j
            if n % 2:
                continue
            moment = double_factorial(n - 1) / (2.0 * p) ** (n // 2) * np.sqrt(math.pi / p)
            total += math.comb(la, i) * math.comb(lb, j) * pa ** (la - i) * pb ** (lb - j) * moment
    return total


def overlap_matrix(shells):
    """Analytic <AO_i|AO_j> of the shells' AOs (Gaussian product theorem)."""
    offsets = np.cumsum([0] + [s.size() for s in shells])
    result = np.zeros((offsets[-1], offsets[-1]))
    for i, si in enumerate(shells):
        for j, sj in enumerate(shells[: i + 1]):
            a = si.exponents[:, None]
            b = sj.exponents[None, :]
            p = a + b
            weight = np.outer(si.radial_coefficients(), sj.radial_coefficients())
            ab = si.center - sj.center
            weight = weight * np.exp(-a * b / p * float(ab @ ab))
            centre = (a[..., None] * si.center + b[..., None] * sj.center) / p[..., None]
            pa = centre - si.center
            pb = centre - sj.center
            block = np.zeros((si.size(), sj.size()))
            for u, poly_i in enumerate(si.polynomials()):
                for v, poly_j in enumerate(sj.polynomials()):
                    value = 0.0
                    for ei, ci in poly_i.items():
                        for ej, cj in poly_j.items():
                            prod = weight.copy()
                            for axis in range(3):
                                prod *= _overlap_1d(ei[axis], ej[axis], pa[..., axis],
                                                    pb[..., axis], p)
                            value += ci * cj * prod.sum()
                    block[u, v] = value
            result[offsets[i]:offsets[i + 1], offsets[j]:offsets[j + 1]] = block
            result[offsets[j]:offsets[j + 1], offsets[i]:offsets[i + 1]] = block.T
    return result
