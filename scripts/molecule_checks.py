"""Independent readings of the molecule files, for make-molecules.py's checks.

Each function reads what a file holds by that format's own conventions and
nothing of Psi4's internals, so that agreement between two renderings (TREXIO,
Molden, cube values) is evidence that each was converted right:

  read_cube        a Gaussian cube file's grid and values
  psi4_cube_grid   the points of the grid Psi4 1.3 evaluates, to the last bit
  read_molden      shells and MO coefficients of a Molden file (Psi4's writer)
  molden_polynomials  the angular part of each Molden AO, in Molden's order
  determinant_energy  <Psi|H|Psi> / <Psi|Psi> of a determinant expansion by
                   the Slater-Condon rules, from MO integrals
"""

import itertools

import numpy as np

from gaussian_basis import Shell, cartesian_component_factor, evaluate_aos, solid_harmonic

ANGULAR_LETTERS = "spdfghi"


def read_cube(path):
    """(origin, counts, values (n,), significant digits of the printed mantissa).

    The values run x outermost, z innermost; the axes must be x, y, z.
    """
    with open(path) as handle:
        lines = handle.read().split("\n")
    natoms, *origin = lines[2].split()
    natoms = int(natoms)
    origin = np.array([float(x) for x in origin[:3]])
    counts, axes = [], []
    for line in lines[3:6]:
        fields = line.split()
        counts.append(int(fields[0]))
        axes.append([float(x) for x in fields[1:4]])
    if min(counts) <= 0:
        raise ValueError(f"{path}: grid given in angstrom (negative count)")
    tokens = " ".join(lines[6 + abs(natoms):]).split()
    values = np.array([float(t) for t in tokens])
    if values.size != np.prod(counts):
        raise ValueError(f"{path}: {values.size} values for a {counts} grid")
    if not np.allclose(np.array(axes), np.diag(np.diag(axes))):
        raise ValueError(f"{path}: axes are not along x, y, z")
    mantissa = tokens[0].lstrip("+-").split("E")[0].split("e")[0]
    digits = len(mantissa.replace(".", "").lstrip("0")) or len(mantissa.replace(".", ""))
    return origin, np.array(counts), np.diag(axes), values, digits


def psi4_cube_grid(coords, spacing, overage=4.0):
    """The cube grid Psi4 1.3 builds (CubicScalarGrid::build_grid), in its own arithmetic.

    The cube file prints the origin with 6 decimals only; recomputing it gives
    the points Psi4 evaluated to the last bit. Returns (origin, counts, points)
    with points in the cube's order (x outermost).
    """
    origin, counts = np.zeros(3), np.zeros(3, dtype=int)
    for k in range(3):
        lo, hi = coords[:, k].min(), coords[:, k].max()
        n = int((hi - lo + 2.0 * overage) / spacing)
        if spacing * n < hi - lo + 2.0 * overage:
            n += 1
        origin[k] = lo - (spacing * n - (hi - lo)) / 2.0
        counts[k] = n + 1
    axes = [origin[k] + np.arange(counts[k]) * spacing for k in range(3)]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    return origin, counts, np.column_stack([x.ravel(), y.ravel(), z.ravel()])


def read_molden(path):
    """Shells (in file order, Molden conventions) and MO coefficients (nao x nmo)."""
    with open(path) as handle:
        lines = [line.rstrip("\n") for line in handle]
    section, atoms, shells = None, {}, []
    pure_d = pure_f = pure_g = False
    energies, occupations, columns = [], [], []
    atom = None
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        upper = stripped.upper()
        if upper.startswith("["):
            tag = upper.split("]")[0] + "]"
            pure_d |= tag in ("[5D]", "[5D7F]", "[5D10F]")
            pure_f |= tag in ("[5D]", "[5D7F]", "[7F]")
            pure_g |= tag == "[9G]"
            section = tag
            if tag == "[ATOMS]" and "ANGS" in upper:
                raise ValueError("expected [Atoms] (AU)")
            index += 1
            continue
        if not stripped:
            index += 1
            continue
        if section == "[ATOMS]":
            fields = stripped.split()
            atoms[int(fields[1])] = np.array([float(x) for x in fields[3:6]])
        elif section == "[GTO]":
            fields = stripped.split()
            if len(fields) == 2 and fields[1] == "0" and fields[0].isdigit():
                atom = int(fields[0])
            else:
                letter, count = fields[0].lower(), int(fields[1])
                block = [lines[index + 1 + p].split() for p in range(count)]
                exps = np.array([float(b[0].replace("D", "E")) for b in block])
                coefs = np.array([float(b[1].replace("D", "E")) for b in block])
                shells.append((atom, ANGULAR_LETTERS.index(letter), exps, coefs))
                index += count
        elif section == "[MO]":
            if "=" in stripped:
                key, value = [x.strip() for x in stripped.split("=", 1)]
                if key.lower() == "ene":
                    energies.append(float(value))
                    columns.append([])
                elif key.lower() == "occup":
                    occupations.append(float(value))
            else:
                columns[-1].append(float(stripped.split()[1]))
        index += 1
    pure = {0: False, 1: False, 2: pure_d, 3: pure_f, 4: pure_g}
    result = [Shell(atoms[a], l, e, c, pure[l], nucleus=a - 1) for a, l, e, c in shells]
    return result, np.array(columns).T, np.array(energies), np.array(occupations)


MOLDEN_CARTESIAN = {
    1: ["x", "y", "z"],
    2: ["xx", "yy", "zz", "xy", "xz", "yz"],
    3: ["xxx", "yyy", "zzz", "xyy", "xxy", "xxz", "xzz", "yzz", "yyz", "xyz"],
}


def _exponents(label):
    return tuple(label.count(axis) for axis in "xyz")


def molden_polynomials(shell, cartesian_unit_norm):
    """Each AO's angular polynomial in Molden's order.

    Spherical: 0, +1, -1, ... (p: x, y, z), the solid harmonics of gaussian_basis.
    Cartesian: Molden's order; cartesian_unit_norm says whether each component
    is normalised on its own (True) or shares the norm of x^l (False).
    """
    if shell.l == 0:
        return [{(0, 0, 0): 1.0}]
    if shell.l == 1:
        return [{e: 1.0} for e in [(1, 0, 0), (0, 1, 0), (0, 0, 1)]]
    if shell.spherical:
        order = [0] + [s * m for m in range(1, shell.l + 1) for s in (1, -1)]
        return [solid_harmonic(shell.l, m) for m in order]
    result = []
    for label in MOLDEN_CARTESIAN[shell.l]:
        e = _exponents(label)
        result.append({e: cartesian_component_factor(*e) if cartesian_unit_norm else 1.0})
    return result


def evaluate_molden_aos(shells, points, cartesian_unit_norm):
    return evaluate_aos(shells, points, lambda s: molden_polynomials(s, cartesian_unit_norm))


# ---- determinant expansions -------------------------------------------------------

def _move_to_end(occupied, removed):
    """Parity of moving `removed` (in order) to the end of the sorted list `occupied`."""
    rest = list(occupied)
    swaps = 0
    for orbital in removed:
        position = rest.index(orbital)
        swaps += len(rest) - 1 - position
        rest.pop(position)
        rest.append(orbital)
    return (-1) ** swaps


def _one_spin(occ_i, occ_j):
    holes = sorted(set(occ_i) - set(occ_j))
    particles = sorted(set(occ_j) - set(occ_i))
    if len(holes) > 2:
        return None
    sign = _move_to_end(occ_i, holes) * _move_to_end(occ_j, particles)
    return holes, particles, sign


def determinant_energy(determinants, coefficients, h, eri, e_core):
    """<Psi|H|Psi> / <Psi|Psi> for Psi = sum_I c_I |alpha_I beta_I>.

    determinants: (alpha, beta) tuples of orbital indices into h and eri
    (chemists' notation (pq|rs)); each determinant is the product of its
    alpha string (ascending) and its beta string (ascending).
    """
    def coulomb_exchange(occ):
        return sum(eri[p, p, q, q] - eri[p, q, q, p] for p in occ for q in occ) / 2.0

    def diagonal(alpha, beta):
        value = sum(h[p, p] for p in alpha) + sum(h[p, p] for p in beta)
        value += coulomb_exchange(alpha) + coulomb_exchange(beta)
        value += sum(eri[p, p, q, q] for p in alpha for q in beta)
        return value

    def single(i, a, same, other):
        value = h[i, a]
        value += sum(eri[i, a, k, k] - eri[i, k, k, a] for k in same if k != i)
        value += sum(eri[i, a, k, k] for k in other)
        return value

    total = 0.0
    n = len(determinants)
    for x, y in itertools.product(range(n), range(n)):
        cx, cy = coefficients[x], coefficients[y]
        if cx == 0.0 or cy == 0.0:
            continue
        (ax, bx), (ay, by) = determinants[x], determinants[y]
        da = _one_spin(ax, ay)
        db = _one_spin(bx, by)
        if da is None or db is None or len(da[0]) + len(db[0]) > 2:
            continue
        (ha, pa, sa), (hb, pb, sb) = da, db
        if not ha and not hb:
            element = diagonal(ax, bx)
        elif len(ha) == 1 and not hb:
            element = sa * single(ha[0], pa[0], ax, bx)
        elif len(hb) == 1 and not ha:
            element = sb * single(hb[0], pb[0], bx, ax)
        elif len(ha) == 1 and len(hb) == 1:
            element = sa * sb * eri[ha[0], pa[0], hb[0], pb[0]]
        else:
            (i, j), (a, b), s = (ha, pa, sa) if ha else (hb, pb, sb)
            element = s * (eri[i, a, j, b] - eri[i, b, j, a])
        total += cx * cy * element
    return e_core + total / float(np.dot(coefficients, coefficients))
