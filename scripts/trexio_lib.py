"""A small ctypes binding to libtrexio (the C library of the TREXIO format).

Debian ships libtrexio0 / libtrexio-dev (2.2.3) but no Python module, so the
molecule scripts call the C API directly: every group is written and read by
libtrexio itself, never by h5py, so the files are what TREXIO readers expect.

Names are TREXIO's: `write_int("nucleus_num", 3)` calls
trexio_write_nucleus_num, `write_floats("nucleus_coord", xyz)` calls
trexio_write_nucleus_coord with a C-contiguous float64 buffer (row-major
dimensions as in the TREXIO specification), and so on.
Errors: TrexioError with libtrexio's own message.
"""

import ctypes
import ctypes.util

import numpy as np

HDF5 = 0  # TREXIO_HDF5
TEXT = 1  # TREXIO_TEXT

_lib = None


def library():
    global _lib
    if _lib is None:
        path = ctypes.util.find_library("trexio") or "libtrexio.so.0"
        _lib = ctypes.CDLL(path)
        _lib.trexio_open.restype = ctypes.c_void_p
        _lib.trexio_open.argtypes = [ctypes.c_char_p, ctypes.c_char, ctypes.c_int32,
                                     ctypes.POINTER(ctypes.c_int32)]
        _lib.trexio_close.argtypes = [ctypes.c_void_p]
        _lib.trexio_string_of_error.restype = ctypes.c_char_p
        _lib.trexio_string_of_error.argtypes = [ctypes.c_int32]
    return _lib


class TrexioError(RuntimeError):
    pass


def _check(rc, what):
    if rc != 0:
        message = library().trexio_string_of_error(rc).decode()
        raise TrexioError(f"{what}: {message} (code {rc})")


def _ptr(array, ctype):
    return array.ctypes.data_as(ctypes.POINTER(ctype))


class File:
    """An open TREXIO file (mode 'w' writes a new one, 'r' reads)."""

    def __init__(self, path, mode, back_end):
        lib = library()
        rc = ctypes.c_int32(0)
        self._handle = lib.trexio_open(path.encode(), mode.encode(), back_end, ctypes.byref(rc))
        _check(rc.value, f"trexio_open({path})")
        if not self._handle:
            raise TrexioError(f"trexio_open({path}) returned no file")
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._handle:
            _check(library().trexio_close(self._handle), f"trexio_close({self.path})")
            self._handle = None

    def _call(self, function, *args):
        fn = getattr(library(), function)
        _check(fn(ctypes.c_void_p(self._handle), *args), function)

    # ---- writing ------------------------------------------------------------------

    def write_int(self, name, value):
        self._call(f"trexio_write_{name}", ctypes.c_int32(int(value)))

    def write_float(self, name, value):
        self._call(f"trexio_write_{name}", ctypes.c_double(float(value)))

    def write_str(self, name, text):
        data = text.encode()
        self._call(f"trexio_write_{name}", ctypes.c_char_p(data), ctypes.c_int32(len(data) + 1))

    def write_floats(self, name, values):
        array = np.ascontiguousarray(values, dtype=np.float64)
        self._call(f"trexio_write_{name}_64", _ptr(array, ctypes.c_double))

    def write_ints(self, name, values):
        array = np.ascontiguousarray(values, dtype=np.int32)
        self._call(f"trexio_write_{name}_32", _ptr(array, ctypes.c_int32))

    def write_strs(self, name, texts):
        encoded = [t.encode() for t in texts]
        array = (ctypes.c_char_p * len(encoded))(*encoded)
        longest = max(len(t) for t in encoded) + 1
        self._call(f"trexio_write_{name}", array, ctypes.c_int32(longest))

    def write_determinants(self, bit_strings, coefficients):
        """bit_strings: (ndet, 2 * N_int) int64, up words then down words."""
        bits = np.ascontiguousarray(bit_strings, dtype=np.int64)
        coefs = np.ascontiguousarray(coefficients, dtype=np.float64)
        count = ctypes.c_int64(len(coefs))
        self._call("trexio_write_determinant_list", ctypes.c_int64(0), count,
                   _ptr(bits, ctypes.c_int64))
        self._call("trexio_write_determinant_coefficient", ctypes.c_int64(0), count,
                   _ptr(coefs, ctypes.c_double))

    # ---- reading ------------------------------------------------------------------

    def read_int(self, name):
        value = ctypes.c_int32(0)
        self._call(f"trexio_read_{name}", ctypes.byref(value))
        return value.value

    def read_float(self, name):
        value = ctypes.c_double(0.0)
        self._call(f"trexio_read_{name}", ctypes.byref(value))
        return value.value

    def read_str(self, name, max_len=256):
        buffer = ctypes.create_string_buffer(max_len)
        self._call(f"trexio_read_{name}", buffer, ctypes.c_int32(max_len))
        return buffer.value.decode()

    def read_floats(self, name, shape):
        array = np.zeros(shape, dtype=np.float64)
        self._call(f"trexio_read_{name}_64", _ptr(array, ctypes.c_double))
        return array

    def read_ints(self, name, shape):
        array = np.zeros(shape, dtype=np.int32)
        self._call(f"trexio_read_{name}_32", _ptr(array, ctypes.c_int32))
        return array

    def read_determinants(self, count, n_int):
        bits = np.zeros((count, 2 * n_int), dtype=np.int64)
        coefs = np.zeros(count, dtype=np.float64)
        got = ctypes.c_int64(count)
        self._call("trexio_read_determinant_list", ctypes.c_int64(0), ctypes.byref(got),
                   _ptr(bits, ctypes.c_int64))
        got = ctypes.c_int64(count)
        self._call("trexio_read_determinant_coefficient", ctypes.c_int64(0), ctypes.byref(got),
                   _ptr(coefs, ctypes.c_double))
        return bits, coefs


def to_bit_field(orbitals, n_int):
    """TREXIO's own bit field of 0-based orbital indices (trexio_to_bitfield_list)."""
    orbs = np.ascontiguousarray(orbitals, dtype=np.int32)
    out = np.zeros(n_int, dtype=np.int64)
    _check(library().trexio_to_bitfield_list(_ptr(orbs, ctypes.c_int32), ctypes.c_int32(len(orbs)),
                                             _ptr(out, ctypes.c_int64), ctypes.c_int32(n_int)),
           "trexio_to_bitfield_list")
    return out


def to_orbital_list(bits):
    """0-based orbital indices set in one spin's bit field (trexio_to_orbital_list)."""
    words = np.ascontiguousarray(bits, dtype=np.int64)
    out = np.zeros(64 * len(words), dtype=np.int32)
    count = ctypes.c_int32(0)
    _check(library().trexio_to_orbital_list(ctypes.c_int32(len(words)), _ptr(words, ctypes.c_int64),
                                            _ptr(out, ctypes.c_int32), ctypes.byref(count)),
           "trexio_to_orbital_list")
    return out[:count.value].tolist()
