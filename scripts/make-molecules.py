#!/usr/bin/python3
"""Regenerate slaterlab's shipped molecules (data/molecules/) with Psi4.

For each molecule and basis: a closed-shell RHF in Psi4 (c1, no
reorientation, so every file of a molecule shares one frame), then

  NAME-BASIS.molden      Psi4's own Molden writer (psi4.molden), MO list cut
                         to the kept MOs (all, or occupied + a few virtuals);
  NAME-BASIS.trexio.h5   TREXIO (HDF5 back end) written through libtrexio:
                         nucleus, electron, basis, ao, ao_1e_int_overlap, mo
                         and, for CAS molecules, determinant; converted here
                         from Psi4's data to TREXIO's conventions (not from
                         the Molden file);
  NAME-BASIS.ref.h5      Psi4's own numbers: energies, electron counts, and
                         MO values on points of Psi4's cube files;
  NAME-BASIS.trexio/     the TREXIO text back end, for one molecule.

Before a molecule's files are kept, the script checks them against each
other (analytic overlap of the TREXIO AOs against Psi4's, MO values of the
TREXIO and the Molden files against the cube values, the CAS energy of the
written determinants against Psi4's) and stops on any disagreement.
data/molecules/README.md states the conventions and the geometry sources.

Needs Debian's psi4, libtrexio0, python3-numpy and python3-h5py; the
slaterlab build and tests need none of them. Progress goes to stderr.

Example:
    scripts/make-molecules.py                 # every molecule, into data/molecules/
    scripts/make-molecules.py --only h2o-cc-pvdz -o /tmp/molecules
"""

import argparse
import atexit
import glob
import itertools
import math
import os
import shutil
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trexio_lib  # noqa: E402
from gaussian_basis import Shell, evaluate_aos, overlap_matrix  # noqa: E402
from molecule_checks import (determinant_energy,  # noqa: E402
                             evaluate_molden_aos, psi4_cube_grid, read_cube,
                             read_molden)

# ---- the molecules ----------------------------------------------------------------


def diatomic(a, b, distance):
    return [(a, 0.0, 0.0, 0.0), (b, 0.0, 0.0, distance)]


def benzene():
    cc, ch = 1.3914, 1.0802
    atoms = []
    for k in range(6):
        t = math.radians(60 * k)
        atoms.append(("C", cc * math.cos(t), cc * math.sin(t), 0.0))
    for k in range(6):
        t = math.radians(60 * k)
        atoms.append(("H", (cc + ch) * math.cos(t), (cc + ch) * math.sin(t), 0.0))
    return atoms


def coronene():
    """Seven fused hexagons of side 1.42 A; C-H 1.08 A along each outer carbon's bisector."""
    cc, ch = 1.42, 1.08
    centres = [np.zeros(2)] + [math.sqrt(3) * cc * np.array([math.cos(math.radians(60 * k)),
                                                             math.sin(math.radians(60 * k))])
                               for k in range(6)]
    carbons = []
    for centre in centres:
        for k in range(6):
            t = math.radians(30 + 60 * k)
            p = centre + cc * np.array([math.cos(t), math.sin(t)])
            if all(np.linalg.norm(p - q) > 1e-6 for q in carbons):
                carbons.append(p)
    hydrogens = []
    for p in carbons:
        neighbours = [q for q in carbons if 1e-6 < np.linalg.norm(p - q) < 1.01 * cc]
        if len(neighbours) == 2:
            out = p - np.mean(neighbours, axis=0)
            hydrogens.append(p + ch * out / np.linalg.norm(out))
    assert len(carbons) == 24 and len(hydrogens) == 12
    return ([("C", p[0], p[1], 0.0) for p in carbons]
            + [("H", p[0], p[1], 0.0) for p in hydrogens])


GEOMETRIES = {
    # name: (atoms in angstrom, source)
    "h2": (diatomic("H", "H", 0.74144),
           "r_e = 0.74144 A: Huber and Herzberg, Constants of Diatomic Molecules (1979)"),
    "lih": (diatomic("Li", "H", 1.5949),
            "r_e = 1.5949 A: Huber and Herzberg, Constants of Diatomic Molecules (1979)"),
    "n2": (diatomic("N", "N", 1.09768),
           "r_e = 1.09768 A: Huber and Herzberg, Constants of Diatomic Molecules (1979)"),
    "h2o": ([("O", 0.0, 0.0, 0.1173), ("H", 0.0, 0.7572, -0.4692), ("H", 0.0, -0.7572, -0.4692)],
            "NIST CCCBDB experimental geometry (r_OH 0.958 A, HOH 104.48 deg; Hoy and Bunker, "
            "J. Mol. Spectrosc. 74, 1 (1979)), CCCBDB's cartesian coordinates"),
    "benzene": (benzene(),
                "D6h, r_e(CC) = 1.3914 A, r_e(CH) = 1.0802 A: Gauss and Stanton, "
                "J. Phys. Chem. A 104, 2865 (2000); in the xy plane, a C on +x"),
    "coronene": (coronene(),
                 "idealised D6h: C-C 1.42 A (graphite's in-plane bond), C-H 1.08 A along the "
                 "bisector; in the xy plane"),
}


@dataclass
class Run:
    molecule: str
    basis: str              # Psi4's name
    spherical: bool
    slug: str               # the file name's basis part
    virtuals: int = None    # kept virtual MOs; None keeps all
    cas: tuple = None       # (kind, occupied, virtual): kind "window" or "pi"
    text_back_end: bool = False
    grid_spacing: float = 0.2

    @property
    def stem(self):
        return f"{self.molecule}-{self.slug}"


RUNS = [
    Run("h2", "cc-pVDZ", True, "cc-pvdz"),
    Run("h2", "6-31G**", False, "6-31gss"),
    Run("lih", "cc-pVDZ", True, "cc-pvdz"),
    Run("lih", "6-31G**", False, "6-31gss"),
    Run("h2o", "cc-pVDZ", True, "cc-pvdz", cas=("window", 2, 2), text_back_end=True),
    Run("h2o", "6-31G**", False, "6-31gss"),
    Run("n2", "cc-pVDZ", True, "cc-pvdz"),
    Run("n2", "6-31G**", False, "6-31gss"),
    Run("n2", "cc-pVTZ", True, "cc-pvtz"),
    Run("n2", "cc-pVTZ", False, "cc-pvtz-cart"),
    Run("benzene", "cc-pVDZ", True, "cc-pvdz", cas=("pi", 3, 3)),
    Run("benzene", "6-31G**", False, "6-31gss"),
    # cc-pVDZ (396 AOs) is out of reach of conventional integrals on 2 cores; 6-31G has 240.
    Run("coronene", "6-31G", False, "6-31g", virtuals=10, grid_spacing=0.3),
]

GRID_POINTS = 300        # random cube points within NEAR_NUCLEI bohr of a nucleus
NEAR_NUCLEI = 3.5
POINTS_PER_NUCLEUS = 2   # plus the cube points nearest each nucleus


def log(stem, message):
    print(f"[{stem}] {message}", file=sys.stderr, flush=True)


def import_psi4():
    try:
        import psi4
    except ImportError:
        sys.path.insert(1, "/usr/lib/x86_64-linux-gnu")  # Debian's psi4 lives here
        import psi4
    return psi4


# ---- Psi4 -> TREXIO ----------------------------------------------------------------

def psi4_shells(basis, molecule, spherical):
    """The basis as gaussian_basis Shells, in Psi4's shell order (= TREXIO's)."""
    shells = []
    for index in range(basis.nshell()):
        s = basis.shell(index)
        centre = np.array([molecule.x(s.ncenter), molecule.y(s.ncenter), molecule.z(s.ncenter)])
        exps = np.array([s.exp(p) for p in range(s.nprimitive)])
        coefs = np.array([s.original_coef(p) for p in range(s.nprimitive)])
        # Psi4's pure p are ordered z, x, y (m = 0, +1, -1), as TREXIO's spherical p.
        shell = Shell(centre, s.am, exps, coefs, spherical, nucleus=s.ncenter)
        shells.append(shell)
        # Psi4's normalised coefficient of the x^l component: a_k f_k N_s (checked, so that
        # the TREXIO prim_factor and shell_factor are those of Psi4's functions).
        ours = shell.radial_coefficients()
        psi4_coef = np.array([s.coef(p) for p in range(s.nprimitive)])
        if not np.allclose(ours, psi4_coef, rtol=1e-10, atol=0.0):
            raise RuntimeError(f"shell {index}: normalisation differs from Psi4's "
                               f"({ours} vs {psi4_coef})")
    return shells


def ao_rescaling(shells):
    """N'_i per AO: Psi4's AO_i = TREXIO's AO_i / N'_i (Psi4's cartesians share x^l's norm)."""
    return np.concatenate([s.ao_factors() for s in shells])


def z_parity(shells):
    """+1 / -1: each AO's parity under z -> -z about its centre."""
    parities = []
    for s in shells:
        for poly in s.polynomials():
            powers = {c % 2 for (_, _, c) in poly}
            parities.append(-1 if powers == {1} else 1)
    return np.array(parities)


def check_conventions(psi4):
    """Psi4's AOs are TREXIO's conventions up to ao_rescaling, for s to f, both kinds.

    A molecule's own overlap cannot see a sign convention of an m != 0
    component that its symmetry keeps apart (N2 along z), so the mapping is
    checked once on N2 cc-pVTZ turned to no special orientation.
    """
    molecule = psi4.geometry("units bohr\nN 0.3 -0.2 0.1\nN 1.1 0.9 1.7\n"
                             "symmetry c1\nno_com\nno_reorient", name="orientation")
    for spherical in (True, False):
        basis = psi4.core.BasisSet.build(molecule, "BASIS", "cc-pVTZ", puream=int(spherical),
                                         quiet=True)
        shells = psi4_shells(basis, molecule, spherical)
        rescale = ao_rescaling(shells)
        psi4_overlap = np.array(psi4.core.MintsHelper(basis).ao_overlap())
        worst = np.abs(overlap_matrix(shells) - psi4_overlap * np.outer(rescale, rescale)).max()
        if worst > 1e-10:
            raise RuntimeError(f"Psi4's {'spherical' if spherical else 'cartesian'} AOs are not "
                               f"the TREXIO conventions assumed here (overlap off by {worst:.1e})")
        log("conventions", f"Psi4 {'spherical' if spherical else 'cartesian'} s-f AOs = TREXIO's "
                           f"(rotated N2 cc-pVTZ overlap within {worst:.1e})")


# ---- cube files ---------------------------------------------------------------------

def chosen_orbitals(nocc, nkept):
    occupied = sorted({0, nocc // 2, nocc - 2, nocc - 1} - {-1})
    virtual = [i for i in (nocc, nocc + 1) if i < nkept]
    return occupied + virtual


def cube_samples(psi4, wfn, orbitals, nuclei, run, workdir):
    """Points and Psi4's cube values of `orbitals` (0-based, energy order)."""
    cube_dir = os.path.join(workdir, "cubes")
    os.makedirs(cube_dir, exist_ok=True)
    psi4.set_options({"cubeprop_tasks": ["orbitals"],
                      "cubeprop_orbitals": [i + 1 for i in orbitals],
                      "cubeprop_filepath": cube_dir,
                      "cubic_grid_spacing": [run.grid_spacing] * 3})
    psi4.cubeprop(wfn)
    origin, counts, points = psi4_cube_grid(nuclei, run.grid_spacing)
    columns, digits = [], set()
    for i in orbitals:
        (path,) = glob.glob(os.path.join(cube_dir, f"Psi_a_{i + 1}_*.cube"))
        printed_origin, printed_counts, steps, values, d = read_cube(path)
        # The file prints the origin to 1e-6 bohr: it must be the recomputed one.
        if (not np.array_equal(printed_counts, counts) or np.abs(printed_origin - origin).max()
                > 5.1e-7 or not np.allclose(steps, run.grid_spacing, rtol=0, atol=5.1e-7)):
            raise RuntimeError(f"{path}: not the grid Psi4 1.3 builds")
        columns.append(values)
        digits.add(d)
    values = np.column_stack(columns)
    if len(digits) != 1:
        raise RuntimeError(f"cube files print {digits} significant digits")
    # Spread points over where the orbitals live (within NEAR_NUCLEI bohr of a
    # nucleus: a rule of geometry alone, so a rerun picks the same points), plus
    # the points nearest each nucleus.
    nearest = np.min([np.linalg.norm(points - nucleus, axis=1) for nucleus in nuclei], axis=0)
    region = np.flatnonzero(nearest <= NEAR_NUCLEI)
    rng = np.random.default_rng(zlib.crc32(run.stem.encode()))
    picked = set(rng.choice(region, size=min(GRID_POINTS, len(region)), replace=False).tolist())
    for nucleus in nuclei:
        distance = np.linalg.norm(points - nucleus, axis=1)
        picked.update(np.argsort(distance, kind="stable")[:POINTS_PER_NUCLEUS].tolist())
    picked = np.array(sorted(picked))
    return points[picked], values[picked], digits.pop()


# ---- CAS --------------------------------------------------------------------------

def colex_strings(norb, nelec):
    """DETCI's string order for one CAS subspace: the highest orbital varies slowest."""
    return sorted(itertools.combinations(range(norb), nelec), key=lambda s: tuple(reversed(s)))


def parity_of_sort(sequence):
    seq = list(sequence)
    swaps = sum(1 for i in range(len(seq)) for j in range(i + 1, len(seq)) if seq[i] > seq[j])
    return -1 if swaps % 2 else 1


def parse_detci_determinants(output_path):
    """(alpha index, beta index, coefficient, occupations) of DETCI's determinant print."""
    rows, reading = [], False
    with open(output_path) as handle:
        for line in handle:
            if "most important determinants" in line:
                rows, reading = [], True
                continue
            if reading:
                fields = line.replace("(", " ").replace(")", " ").replace(",", " ").split()
                if not fields:
                    if rows:
                        reading = False
                    continue
                if fields[0] != "*":
                    reading = False
                    continue
                occupations = {}
                for label in fields[5:]:
                    occupations[int("".join(ch for ch in label if ch.isdigit()))] = label[-1]
                rows.append((int(fields[3]), int(fields[4]), float(fields[2]), occupations))
    return rows


def run_cas(psi4, wfn, run, shells, nocc, output_path):
    """CASCI on the RHF orbitals: (determinants as (alpha, beta) MO index tuples,
    coefficients in TREXIO's sign convention, Psi4's CI energy)."""
    kind, nact_occ, nact_vir = run.cas
    C = np.array(wfn.Ca_subset("AO", "ALL"))
    nmo = C.shape[1]
    if kind == "window":
        active_occ = list(range(nocc - nact_occ, nocc))
        active_vir = list(range(nocc, nocc + nact_vir))
    else:  # "pi": MOs odd under z -> -z (the molecule lies in the xy plane)
        even = z_parity(shells) > 0
        pi = [k for k in range(nmo) if np.abs(C[even, k]).max() < 1e-8]
        active_occ = [k for k in pi if k < nocc][-nact_occ:]
        active_vir = [k for k in pi if k >= nocc][:nact_vir]
    core = [k for k in range(nocc) if k not in active_occ]
    active = active_occ + active_vir
    order = core + active + [k for k in range(nocc, nmo) if k not in active_vir]
    # DETCI takes its active space as a window of the reference's orbital order,
    # so the reference's orbitals are permuted (the energies with them).
    wfn.Ca().np[:, :] = C[:, order]
    eps = np.array(wfn.epsilon_a())
    wfn.epsilon_a().np[:] = eps[order]
    psi4.set_options({"restricted_docc": [len(core)], "active": [len(active)],
                      "num_dets_print": 100000, "ci_maxiter": 100,
                      "e_convergence": 1e-10, "r_convergence": 1e-8})
    from psi4.driver.procrouting import proc_util
    proc_util.check_iwl_file_from_scf_type(psi4.core.get_global_option("SCF_TYPE"), wfn)
    ciwfn = psi4.core.detci(wfn)
    energy = psi4.core.variable("CI ROOT 0 TOTAL ENERGY")
    dvec = ciwfn.D_vector()
    dvec.init_io_files(True)
    dvec.read(0, 0)
    vector = np.array(dvec).ravel().copy()
    ciwfn.print_vector(dvec, 0)  # the determinant print, parsed below
    dvec.close_io_files(True)
    strings = colex_strings(len(active), nact_occ)
    if vector.size != len(strings) ** 2:
        raise RuntimeError(f"CI vector of {vector.size}, expected {len(strings)}^2")
    # The printed determinants name their strings and orbitals: check the string order.
    psi4.core.flush_outfile()
    printed = parse_detci_determinants(output_path)
    for ia, ib, coef, occupations in printed:
        expected = {}
        for spin, string in (("A", strings[ia]), ("B", strings[ib])):
            for local in string:
                orbital = len(core) + local + 1
                expected[orbital] = "X" if orbital in expected else spin
        if expected != occupations or abs(vector[ia * len(strings) + ib] - coef) > 1e-6:
            raise RuntimeError(f"DETCI determinant ({ia}, {ib}) is not the assumed string pair")
    if len(printed) < 2:
        raise RuntimeError("DETCI printed no determinants")
    determinants, coefficients = [], []
    for ia, sa in enumerate(strings):
        for ib, sb in enumerate(strings):
            signs = 1
            spins = []
            for string in (sa, sb):
                in_ci_order = core + [active[k] for k in string]
                signs *= parity_of_sort(in_ci_order)
                spins.append(tuple(sorted(in_ci_order)))
            determinants.append(tuple(spins))
            coefficients.append(signs * vector[ia * len(strings) + ib])
    wfn.Ca().np[:, :] = C
    wfn.epsilon_a().np[:] = eps
    return determinants, np.array(coefficients), energy, active


def check_cas_energy(psi4, wfn, determinants, coefficients, energy, stem):
    """The written expansion's energy by the Slater-Condon rules equals Psi4's CI energy."""
    involved = sorted({k for d in determinants for spin in d for k in spin})
    C = np.array(wfn.Ca_subset("AO", "ALL"))[:, involved]
    local = {k: i for i, k in enumerate(involved)}
    mints = psi4.core.MintsHelper(wfn.basisset())
    hcore = np.array(mints.ao_kinetic()) + np.array(mints.ao_potential())
    h = C.T @ hcore @ C
    Cm = psi4.core.Matrix.from_array(C)
    n = len(involved)
    eri = np.array(mints.mo_eri(Cm, Cm, Cm, Cm)).reshape(n, n, n, n)
    mapped = [tuple(tuple(local[k] for k in spin) for spin in d) for d in determinants]
    ours = determinant_energy(mapped, coefficients, h, eri,
                              wfn.molecule().nuclear_repulsion_energy())
    # Both are Rayleigh quotients of the same vector and differ by the roundoff of
    # two integral transformations (~1e-12 here). A wrong sign on a determinant of
    # weight c moves the quotient by about 4 c^2 |E - H_II| (> 1e-9 for |c| > 2e-5).
    if abs(ours - energy) > 1e-9:
        raise RuntimeError(f"determinant energy {ours:.12f} != Psi4's CI energy {energy:.12f}")
    log(stem, f"CAS energy of the written determinants {ours:.12f} (Psi4 {energy:.12f})")


# ---- writers ------------------------------------------------------------------------

def trim_molden(source, target, nkept):
    """Copy Psi4's Molden file keeping the first nkept MOs (Psi4 writes them by energy)."""
    with open(source) as handle:
        lines = handle.readlines()
    start = next(i for i, line in enumerate(lines) if line.strip().upper() == "[MO]")
    blocks = [i for i in range(start + 1, len(lines)) if lines[i].strip().startswith("Sym=")]
    end = blocks[nkept] if nkept < len(blocks) else len(lines)
    with open(target, "w") as handle:
        handle.writelines(lines[:end])


def write_trexio(path, back_end, data):
    if back_end == trexio_lib.HDF5 and os.path.exists(path):
        os.remove(path)
    if back_end == trexio_lib.TEXT and os.path.exists(path):
        shutil.rmtree(path)
    shells = data["shells"]
    with trexio_lib.File(path, "w", back_end) as f:
        f.write_int("metadata_code_num", 2)
        f.write_strs("metadata_code", [f"Psi4 {data['psi4_version']}",
                                       "slaterlab scripts/make-molecules.py"])
        f.write_int("metadata_author_num", 1)
        f.write_strs("metadata_author", ["slaterlab"])
        f.write_str("metadata_description", data["description"])
        f.write_int("nucleus_num", len(data["charges"]))
        f.write_floats("nucleus_charge", data["charges"])
        f.write_floats("nucleus_coord", data["coords"])
        f.write_strs("nucleus_label", data["labels"])
        f.write_float("nucleus_repulsion", data["e_nuc"])
        f.write_int("electron_num", data["n_up"] + data["n_dn"])
        f.write_int("electron_up_num", data["n_up"])
        f.write_int("electron_dn_num", data["n_dn"])
        f.write_str("basis_type", "Gaussian")
        f.write_int("basis_prim_num", sum(len(s.exponents) for s in shells))
        f.write_int("basis_shell_num", len(shells))
        f.write_ints("basis_nucleus_index", [s.nucleus for s in shells])
        f.write_ints("basis_shell_ang_mom", [s.l for s in shells])
        f.write_floats("basis_shell_factor", [s.factor() for s in shells])
        f.write_ints("basis_shell_index", [i for i, s in enumerate(shells) for _ in s.exponents])
        f.write_floats("basis_exponent", np.concatenate([s.exponents for s in shells]))
        f.write_floats("basis_coefficient", np.concatenate([s.coefficients for s in shells]))
        f.write_floats("basis_prim_factor", np.concatenate([s.prim_factors() for s in shells]))
        f.write_int("ao_cartesian", 0 if shells[0].spherical else 1)
        f.write_int("ao_num", data["mo"].shape[0])
        f.write_ints("ao_shell", [i for i, s in enumerate(shells) for _ in range(s.size())])
        f.write_floats("ao_normalization", np.concatenate([s.ao_factors() for s in shells]))
        f.write_floats("ao_1e_int_overlap", data["overlap"])
        f.write_str("mo_type", "RHF")
        f.write_int("mo_num", data["mo"].shape[1])
        f.write_floats("mo_coefficient", data["mo"].T)  # [mo.num, ao.num]
        f.write_floats("mo_energy", data["mo_energy"])
        f.write_floats("mo_occupation", data["mo_occupation"])
        if data.get("determinants"):
            n_int = (data["mo"].shape[1] + 63) // 64
            bits = [np.concatenate([trexio_lib.to_bit_field(a, n_int),
                                    trexio_lib.to_bit_field(b, n_int)])
                    for a, b in data["determinants"]]
            f.write_determinants(np.array(bits), data["coefficients"])


def read_trexio_shells(path, back_end):
    """Shells, overlap and MOs as a TREXIO reader sees them (through libtrexio)."""
    with trexio_lib.File(path, "r", back_end) as f:
        nnuc = f.read_int("nucleus_num")
        coords = f.read_floats("nucleus_coord", (nnuc, 3))
        nshell = f.read_int("basis_shell_num")
        nprim = f.read_int("basis_prim_num")
        nao = f.read_int("ao_num")
        nmo = f.read_int("mo_num")
        nucleus = f.read_ints("basis_nucleus_index", nshell)
        ang = f.read_ints("basis_shell_ang_mom", nshell)
        factor = f.read_floats("basis_shell_factor", nshell)
        index = f.read_ints("basis_shell_index", nprim)
        exps = f.read_floats("basis_exponent", nprim)
        coefs = f.read_floats("basis_coefficient", nprim)
        prim = f.read_floats("basis_prim_factor", nprim)
        cartesian = f.read_int("ao_cartesian")
        ao_norm = f.read_floats("ao_normalization", nao)
        overlap = f.read_floats("ao_1e_int_overlap", (nao, nao))
        mo = f.read_floats("mo_coefficient", (nmo, nao)).T
    shells = []
    for s in range(nshell):
        sel = index == s
        shell = Shell(coords[nucleus[s]], int(ang[s]), exps[sel], coefs[sel], not cartesian,
                      nucleus=int(nucleus[s]))
        # The file's own factors must be those the conventions give.
        if not (np.allclose(prim[sel], shell.prim_factors(), rtol=1e-14)
                and math.isclose(factor[s], shell.factor(), rel_tol=1e-14)):
            raise RuntimeError(f"{path}: shell {s} factors differ from the conventions")
        shells.append(shell)
    if not np.allclose(ao_norm, np.concatenate([s.ao_factors() for s in shells]), rtol=1e-14):
        raise RuntimeError(f"{path}: ao.normalization differs from the conventions")
    return shells, overlap, mo


def write_reference(path, data):
    with h5py.File(path, "w") as f:
        f.attrs["molecule"] = data["molecule"]
        f.attrs["basis"] = data["basis"]
        f.attrs["source"] = f"Psi4 {data['psi4_version']} RHF (scf_type pk)"
        f.attrs["geometry_source"] = data["geometry_source"]
        f.attrs["units"] = "bohr, hartree"
        f.create_dataset("hf_energy", data=data["e_hf"])
        f.create_dataset("nuclear_repulsion", data=data["e_nuc"])
        f.create_dataset("electrons_up", data=np.int64(data["n_up"]))
        f.create_dataset("electrons_down", data=np.int64(data["n_dn"]))
        if "ci_energy" in data:
            f.create_dataset("ci_energy", data=data["ci_energy"])
            f["ci_energy"].attrs["source"] = (f"Psi4 {data['psi4_version']} DETCI CASCI on the "
                                              f"RHF orbitals, active MOs {data['active']}")
        grid = f.create_group("grid")
        grid.create_dataset("points", data=data["points"])
        grid.create_dataset("mo_indices", data=np.array(data["orbitals"], dtype=np.int64))
        grid.create_dataset("mo_values", data=data["values"])
        grid.attrs["significant_digits"] = np.int64(data["digits"])
        grid.attrs["source"] = (f"Psi4 {data['psi4_version']} cubeprop (CUBEPROP_TASKS "
                                f"ORBITALS, CUBIC_BASIS_TOLERANCE 1e-12)")
        grid.attrs["cube_value_format"] = "%12.5E"
        grid.attrs["cube_spacing_bohr"] = data["spacing"]
        grid.attrs["mo_indices_convention"] = (
            "0-based MO indices in energy order, as in the Molden and TREXIO files; the same "
            "wavefunction wrote all three, so signs agree")


# ---- one molecule ---------------------------------------------------------------------

def generate(psi4, run, outdir, workdir):
    stem = run.stem
    atoms, geometry_source = GEOMETRIES[run.molecule]
    psi4.core.clean()
    psi4.core.clean_options()
    output_path = os.path.join(workdir, f"{stem}.out")
    psi4.core.set_output_file(output_path, False)
    lines = ["0 1", "units angstrom"] + [f"{s} {x:.10f} {y:.10f} {z:.10f}" for s, x, y, z in atoms]
    molecule = psi4.geometry("\n".join(lines + ["symmetry c1", "no_com", "no_reorient"]),
                             name=run.molecule)
    psi4.set_options({"basis": run.basis, "puream": run.spherical, "scf_type": "pk",
                      "reference": "rhf", "e_convergence": 1e-10, "d_convergence": 1e-8,
                      "maxiter": 200})
    started = time.time()
    e_hf, wfn = psi4.energy("scf", return_wfn=True, molecule=molecule)
    log(stem, f"RHF {e_hf:.12f} Eh ({time.time() - started:.0f} s)")
    basis = wfn.basisset()
    if basis.has_puream() != run.spherical:
        raise RuntimeError("Psi4 did not take the requested puream")
    nocc, nmo = wfn.nalpha(), wfn.nmo()
    if wfn.nalpha() != wfn.nbeta():
        raise RuntimeError("not closed shell")
    shells = psi4_shells(basis, molecule, run.spherical)
    rescale = ao_rescaling(shells)
    s_psi4 = np.array(psi4.core.MintsHelper(basis).ao_overlap())
    overlap = s_psi4 * np.outer(rescale, rescale)
    C = np.array(wfn.Ca_subset("AO", "ALL"))
    energies = np.array(wfn.epsilon_a_subset("AO", "ALL"))
    if np.any(np.diff(energies) < 0):
        raise RuntimeError("MOs are not in energy order")
    nkept = nmo if run.virtuals is None else min(nmo, nocc + run.virtuals)
    mo = (C / rescale[:, None])[:, :nkept]
    occupation = np.array([2.0 if k < nocc else 0.0 for k in range(nkept)])
    coords = np.array(molecule.geometry())
    version = psi4.__version__
    data = {
        "molecule": run.molecule,
        "basis": run.basis + ("" if run.spherical else " cartesian"),
        "psi4_version": version, "geometry_source": geometry_source,
        "shells": shells, "overlap": overlap, "mo": mo, "mo_energy": energies[:nkept],
        "mo_occupation": occupation, "charges": [molecule.Z(i) for i in range(molecule.natom())],
        "coords": coords, "labels": [molecule.symbol(i).capitalize() for i in range(molecule.natom())],
        "e_nuc": molecule.nuclear_repulsion_energy(), "e_hf": e_hf, "n_up": nocc, "n_dn": nocc,
        "description": (f"{run.molecule} {run.basis} {'spherical' if run.spherical else 'cartesian'}"
                        f": RHF of Psi4 {version}; geometry: {geometry_source}"),
    }
    # The analytic overlap of the TREXIO AOs equals Psi4's, mapped (Psi4's integrals
    # are exact to ~1e-14; 1e-10 leaves room for the longer sums of f shells).
    if np.abs(overlap_matrix(shells) - overlap).max() > 1e-10:
        raise RuntimeError("TREXIO AO overlap differs from Psi4's")

    molden_full = os.path.join(workdir, f"{stem}.full.molden")
    psi4.molden(wfn, molden_full, dovirtual=True)
    trim_molden(molden_full, os.path.join(outdir, f"{stem}.molden"), nkept)

    orbitals = chosen_orbitals(nocc, nkept)
    points, values, digits = cube_samples(psi4, wfn, orbitals, coords, run, workdir)
    data.update(points=points, values=values, digits=digits, orbitals=orbitals,
                spacing=run.grid_spacing)

    if run.cas:
        dets, coefs, e_ci, active = run_cas(psi4, wfn, run, shells, nocc, output_path)
        check_cas_energy(psi4, wfn, dets, coefs, e_ci, stem)
        leading = dets[int(np.argmax(np.abs(coefs)))]
        if leading != (tuple(range(nocc)), tuple(range(nocc))):
            raise RuntimeError(f"leading determinant {leading} is not the RHF one")
        data.update(determinants=dets, coefficients=coefs, ci_energy=e_ci, active=active)
        log(stem, f"CASCI {e_ci:.12f} Eh, {len(dets)} determinants, active MOs {active}")

    write_trexio(os.path.join(outdir, f"{stem}.trexio.h5"), trexio_lib.HDF5, data)
    if run.text_back_end:
        write_trexio(os.path.join(outdir, f"{stem}.trexio"), trexio_lib.TEXT, data)
    write_reference(os.path.join(outdir, f"{stem}.ref.h5"), data)
    check_files(run, outdir, data)


def check_files(run, outdir, data):
    """Each file's MOs, read by its own conventions, against the cube values."""
    stem = run.stem
    points, values, orbitals = data["points"], data["values"], data["orbitals"]
    # Cube values are printed with `digits` significant digits (half an ulp of the
    # mantissa: 5 * 10^-digits relative); Psi4 drops basis functions below 1e-12
    # (CUBIC_BASIS_TOLERANCE), so values near 1e-12 are only good absolutely.
    relative = 5.0 * 10.0 ** -data["digits"]
    tolerance = relative * np.abs(values) * 1.01 + 1e-10

    def compare(label, predicted):
        ratio = (np.abs(predicted - values) / tolerance).max()
        worst = np.abs(predicted - values).max()
        if ratio > 1.0:
            raise RuntimeError(f"{label} MO values differ from the cube values by up to {worst:.2e}")
        log(stem, f"{label}: {len(points)} points x {len(orbitals)} MOs agree with the cube "
                  f"(largest difference {worst:.1e}, {ratio:.2f} of the tolerance)")

    for path, back_end in [(f"{stem}.trexio.h5", trexio_lib.HDF5), (f"{stem}.trexio",
                                                                      trexio_lib.TEXT)]:
        if back_end == trexio_lib.TEXT and not run.text_back_end:
            continue
        shells, overlap, mo = read_trexio_shells(os.path.join(outdir, path), back_end)
        if np.abs(overlap_matrix(shells) - overlap).max() > 1e-10:
            raise RuntimeError(f"{path}: analytic overlap differs from ao_1e_int_overlap")
        gram = mo.T @ overlap @ mo
        if np.abs(gram - np.eye(len(gram))).max() > 1e-8:  # Psi4's d_convergence
            raise RuntimeError(f"{path}: MOs are not orthonormal")
        compare(path, evaluate_aos(shells, points) @ mo[:, orbitals])
        if data.get("determinants"):
            check_trexio_determinants(os.path.join(outdir, path), back_end, data)

    shells, mo, _, _ = read_molden(os.path.join(outdir, f"{stem}.molden"))
    # Psi4's Molden writer leaves cartesian components normalised like x^l, as its AOs are.
    compare(f"{stem}.molden", evaluate_molden_aos(shells, points, False) @ mo[:, orbitals])
    if not run.spherical and any(s.l > 1 for s in shells):
        other = evaluate_molden_aos(shells, points, True) @ mo[:, orbitals]
        log(stem, "molden read with unit-norm cartesian components would be off by up to "
                  f"{np.abs(other - values).max():.1e}")


def check_trexio_determinants(path, back_end, data):
    n_int = (data["mo"].shape[1] + 63) // 64
    with trexio_lib.File(path, "r", back_end) as f:
        count = f.read_int("determinant_num")
        bits, coefs = f.read_determinants(count, n_int)
    read = [(tuple(trexio_lib.to_orbital_list(b[:n_int])),
             tuple(trexio_lib.to_orbital_list(b[n_int:]))) for b in bits]
    if read != list(data["determinants"]) or not np.array_equal(coefs, data["coefficients"]):
        raise RuntimeError(f"{path}: determinants read back differ")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Molecules: " + ", ".join(r.stem for r in RUNS))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("-o", "--output", default=os.path.join(root, "data", "molecules"),
                        help="output directory (default: data/molecules)")
    parser.add_argument("--only", nargs="+", metavar="STEM",
                        help="only these NAME-BASIS stems or molecule names")
    parser.add_argument("--threads", type=int, default=2, help="Psi4 threads (default 2)")
    parser.add_argument("--memory", default="4 GB", help="Psi4 memory (default '4 GB')")
    args = parser.parse_args()
    runs = [r for r in RUNS if not args.only or r.stem in args.only or r.molecule in args.only]
    if not runs:
        print(f"slaterlab: error: no molecule matches {args.only}", file=sys.stderr)
        return 2
    output = os.path.abspath(args.output)
    os.makedirs(output, exist_ok=True)
    # Psi4 removes its scratch files at exit; the work directory goes after it
    # (atexit runs the last registered first, and Psi4 registers on import).
    workroot = tempfile.mkdtemp(prefix="make-molecules-")
    atexit.register(shutil.rmtree, workroot, True)
    os.chdir(workroot)  # Psi4 leaves timer.dat in the working directory
    psi4 = import_psi4()
    psi4.core.be_quiet()
    psi4.set_memory(args.memory, execute=True)
    psi4.set_num_threads(args.threads)
    psi4.core.IOManager.shared_object().set_default_path(workroot)
    psi4.core.set_output_file(os.path.join(workroot, "conventions.out"), False)
    check_conventions(psi4)
    for run in runs:
        workdir = os.path.join(workroot, run.stem)
        os.makedirs(workdir)
        started = time.time()
        generate(psi4, run, output, workdir)
        log(run.stem, f"done ({time.time() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
