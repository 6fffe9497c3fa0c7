/* slaterlab/kernel.h: the C ABI of an external determinant-update kernel.
 *
 * A shared library that exports
 *
 *     const slaterlab_kernel_api* slaterlab_kernel(void);
 *
 * can be judged by slaterlab exactly like a built-in strategy
 * ([[strategy]] name = "kernel", library = "path/to/libx.so"; see
 * docs/kernels.md). Plain C99: no C++ types and no exceptions cross it, so
 * a kernel can be written in C, C++ (extern "C"), Fortran (bind(c)), Rust...
 *
 * Conventions (those of slaterlab everywhere):
 * - A(i, j) = phi_i(r_j): electron k owns column k; indices are 0-based.
 * - Matrices are column-major double (the exact data); the kernel rounds
 *   them to its storage precision itself.
 * - Calls follow the protocol
 *       create reset { ratio (accept | reject) }* [flush] ... destroy
 *   with exactly one accept or reject after every ratio; log_det, inverse,
 *   flush and apply_cycle may be called between proposals. A kernel is used
 *   from one thread at a time.
 * - When flush is called (version 2): after the move that ends each sweep
 *   of N moves counted from slaterlab's reset (a proposal, accepted or not,
 *   and each update of a cycle count as one move), before every log_det
 *   and inverse (a checkpoint), and where a driver completes its updates
 *   (`bench`, `fuzz`), in each case only when something was accepted since
 *   the last flush or reset; never between a ratio and its accept or
 *   reject. Version 1: only where a driver calls it (never in `run`).
 * - Every call that can fail returns a slaterlab_status and, when it is not
 *   SLATERLAB_OK, may write a NUL-terminated message of at most
 *   SLATERLAB_MESSAGE_SIZE bytes (terminator included) into `message`.
 * - Inputs (const) are the kernel's own copies and must stay unchanged;
 *   every call returns (no exit(), no crash, no hang) and leaves the
 *   floating-point environment (rounding, flush-to-zero) as it found it, as
 *   loading the library must (no -ffast-math at link time). slaterlab
 *   checks each and reports a kernel that does not (docs/kernels.md).
 *
 * The loader accepts abi_version 1 and 2 (a version 1 table ends at
 * apply_cycle and is read no further), checks that every required function
 * pointer is set and, for version 2, that the declared sizes make sense,
 * before any work; a mismatch is an error of the study (exit code 2), never
 * a crash. docs/kernels.md says what each version may expect and must do.
 */
#ifndef SLATERLAB_KERNEL_H
#define SLATERLAB_KERNEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the table or a signature changes. Version 2 appends
 * members to version 1's table and adds SLATERLAB_DECLINED. */
#define SLATERLAB_KERNEL_ABI_VERSION 2
/* The oldest version this header's readers still load. */
#define SLATERLAB_KERNEL_ABI_OLDEST 1
/* The symbol the loader looks up. */
#define SLATERLAB_KERNEL_ENTRY "slaterlab_kernel"
/* Size of every message buffer, terminator included. */
#define SLATERLAB_MESSAGE_SIZE 256

typedef enum slaterlab_status {
  SLATERLAB_OK = 0,
  /* The ratio (or the cycle) could not be computed reliably: |ratio| below
   * the breakdown threshold, or not finite. The value is still reported. */
  SLATERLAB_BREAKDOWN = 1,
  /* The matrix is singular to the kernel's working precision (reset, or an
   * accept / cycle that needed a refactorisation). */
  SLATERLAB_SINGULAR = 2,
  /* A call outside the protocol or an argument out of range (an unknown
   * option in create). */
  SLATERLAB_BAD_ARGUMENT = 3,
  /* Anything else (out of memory, ...). */
  SLATERLAB_INTERNAL = 4,
  /* Version 2, apply_cycle only: the kernel does not do this cycle shape
   * whole (a 2x2 / 3x3 Woodbury kernel given 5 updates). Its state must be
   * unchanged; slaterlab applies the cycle move by move (ratio, accept)
   * and counts the declined cycle. */
  SLATERLAB_DECLINED = 5
} slaterlab_status;

/* Bits of slaterlab_kernel_api.inputs (version 2). */
/* ratio and apply_cycle receive differences, new column - old column (the
 * column the electron holds just before that update), as QMCkl's
 * Sherman-Morrison kernels take them, instead of new columns. */
#define SLATERLAB_INPUT_DIFFERENCES 1u

/* Storage precision (slaterlab's "float", "double", "mixed"). */
typedef enum slaterlab_precision {
  SLATERLAB_FLOAT = 0,
  SLATERLAB_DOUBLE = 1,
  SLATERLAB_MIXED = 2
} slaterlab_precision;

/* Bits of slaterlab_kernel_api.precisions. */
#define SLATERLAB_PRECISION_BIT(p) (1u << (unsigned)(p))

/* One `options = { key = "value" }` entry of the study, passed through as text. */
typedef struct slaterlab_option {
  const char* key;
  const char* value;
} slaterlab_option;

typedef struct slaterlab_kernel_api {
  /* SLATERLAB_KERNEL_ABI_VERSION of the header the kernel was built with. */
  int abi_version;

  /* ---- traits (the results file records name and version) ---- */
  const char* name;          /* non-empty, e.g. "my-sm" */
  const char* version;       /* e.g. "1.2.0"; may be NULL */
  unsigned precisions;       /* SLATERLAB_PRECISION_BIT of each supported; 0: double only */
  int carries_updates;       /* 1: keeps accepted updates between refactorisations (the
                                usual); 0: refactorises every move */
  double default_breakdown;  /* threshold used when the study gives none; <= 0: 1e-12 */

  /* ---- required ---- */
  /* A kernel for N x N matrices in `precision`. Version 1: any N >= 1
   * (slaterlab validates the study's options by creating and destroying
   * one kernel with N = 1 before any work). Version 2: any N it declares
   * (min_n, max_n, supports); the study's options are validated by a
   * kernel at the smallest declared N, and `run` creates and destroys one
   * at each of the study's sizes before any work; ratios with |ratio| < breakdown are
   * breakdowns. NULL on failure (an unknown option...), with a message. */
  void* (*create)(int n, int precision, double breakdown, int n_options,
                  const slaterlab_option* options, char* message);
  void (*destroy)(void* kernel);
  /* Starts from A (N x N, column-major, leading dimension lda >= N);
   * SLATERLAB_SINGULAR if A is singular to working precision. */
  int (*reset)(void* kernel, const double* a, int lda, char* message);
  /* Ratio det(A') / det(A) for replacing column k by `column` (N doubles;
   * new - old with SLATERLAB_INPUT_DIFFERENCES); becomes the pending
   * proposal. OK or BREAKDOWN, *ratio set either way.
   * Version 2: ratio, accept and reject may all three be NULL when
   * apply_cycle is set: a whole-cycle-only kernel (QMCkl's Woodbury 2x2,
   * 3x3). Such a kernel is refused, before any work, for a workload of
   * single moves; it must not decline a cycle (that is a finding), and fuzz
   * and bench hold it to the cycle property alone. */
  int (*ratio)(void* kernel, int k, const double* column, double* ratio, char* message);
  /* Applies (or queues) the pending proposal. */
  int (*accept)(void* kernel, char* message);
  /* Drops the pending proposal; the state must be left unchanged. */
  int (*reject)(void* kernel, char* message);
  /* Applies anything queued (delayed kernels). May be NULL: nothing is
   * ever queued. */
  int (*flush)(void* kernel, char* message);
  /* log|det A| and its sign (-1 or +1) for the current matrix. */
  int (*log_det)(void* kernel, double* log_abs, int* sign, char* message);

  /* ---- optional (NULL when absent) ---- */
  /* The maintained inverse A^{-1} of the current matrix (pending window
   * included), column-major into out with leading dimension ld >= N.
   * Enables slaterlab's inverse residual and divergence metrics. */
  int (*inverse)(void* kernel, double* out, int ld, char* message);
  /* A whole update cycle (a multi-determinant excitation, always applied):
   * column electrons[u] is replaced by columns[u * ldc .. u * ldc + N - 1]
   * (or differs by it, SLATERLAB_INPUT_DIFFERENCES), u = 0 .. n_updates - 1,
   * in that order. Intermediate matrices may be exactly singular.
   * *ratio = det(A_after) / det(A_before). Returns:
   *   OK        the kernel holds A_after;
   *   BREAKDOWN it could not complete the cycle reliably (|ratio| below the
   *             threshold, not finite, a pivot lost): *ratio is its best
   *             value, not judged; the kernel's state may be anything, and
   *             slaterlab calls reset with A_after before any other call
   *             but destroy; the cycle counts as applied and a breakdown;
   *   SINGULAR  A_after is singular to working precision: as BREAKDOWN,
   *             but slaterlab resets it only at the next regular matrix;
   *   DECLINED  (version 2) it does not do this shape whole: its state is
   *             unchanged, *ratio ignored; slaterlab applies the updates by
   *             ratio and accept instead (counted as a declined cycle).
   * (slaterlab's form of QMCkl's (LDS, Dim, N_updates, Updates,
   * Updates_index, breakdown, Slater_inv, determinant): 0-based indices,
   * the inverse kept inside.) */
  int (*apply_cycle)(void* kernel, int n_updates, const double* columns, int ldc,
                     const int* electrons, double* ratio, char* message);

  /* ---- version 2: read only when abi_version >= 2 ---- */
  /* The sizes it takes: N >= min_n (<= 0: 1) and N <= max_n (<= 0: no
   * bound); min_n == max_n is a fixed-size kernel. A study with another N
   * is refused before any work, naming the kernel and these sizes. */
  int min_n;
  int max_n;
  /* SLATERLAB_INPUT_* bits: the form of the columns it is given. */
  unsigned inputs;
  /* Optional: whether it takes N with these options (a delay rank K <= N),
   * asked before any create at that N: OK, or BAD_ARGUMENT with a message
   * saying what it takes. */
  int (*supports)(int n, int precision, int n_options, const slaterlab_option* options,
                  char* message);
} slaterlab_kernel_api;

/* Exports the entry point from a library built with hidden visibility:
 *   SLATERLAB_KERNEL_EXPORT const slaterlab_kernel_api* slaterlab_kernel(void) {...} */
#if defined(__GNUC__)
#define SLATERLAB_KERNEL_EXPORT __attribute__((visibility("default")))
#else
#define SLATERLAB_KERNEL_EXPORT
#endif

/* The one exported entry point (SLATERLAB_KERNEL_ENTRY). The table must
 * outlive every kernel it created (a static table). */
typedef const slaterlab_kernel_api* (*slaterlab_kernel_entry)(void);

#ifdef __cplusplus
}
#endif

#endif /* SLATERLAB_KERNEL_H */
