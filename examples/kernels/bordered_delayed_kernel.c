/* A delayed-update kernel for slaterlab/kernel.h in C99 with CBLAS: the
 * algorithm of McDaniel, D'Azevedo, Li, Wong and Kent (J. Chem. Phys. 147,
 * 174107 (2017)) in the form QMC codes ship it (QMCPACK's DelayedUpdate):
 * the window matrix's inverse B^{-1} kept by bordering, move by move, and
 * applied at the flush as one GEMM. Double precision. A peer to judge next
 * to the built-in delayed strategy (`slaterlab run`, `fuzz`, `bench`), whose
 * flush solves with B's LU instead and whose growth guard ends windows
 * early (docs/delayed-updates.md says why; docs/kernels.md shows how to run
 * both).
 *
 * State: X = A^{-1} row-major at the last flush (x[i * n + j] = (A^{-1})_ij,
 * row k contiguous), and a window of m <= K accepted moves: their electrons
 * k_i, the flushed rows r_i = row k_i of X (the columns of W, n x K), their
 * new columns a'_i (the columns of P, n x K) and B^{-1}, B_ij = r_i . a'_j.
 * The current row k of the inverse is r - W q with q = B^{-T} c,
 * c_j = r . a'_j - delta(k, k_j). A flush applies, with x read column-major
 * (that is A^{-T}),
 *   x <- x - W B^{-T} Y^T,  Y^T = P^T x - E^T  (E^T: e_{k_i}^T in row i),
 * three GEMMs. A move of an electron already in the window flushes it
 * first, as the built-in delayed does: the delta in c keeps the ratios
 * right without it, but two rows of one electron in W round B^{-1} more.
 * Nothing guards the window: ratios near a singular state, and windows
 * through one, keep the bordered B^{-1}'s rounding (docs/kernels.md shows
 * what `run` and `fuzz` find).
 *
 * Option: k = the window K (an integer from 1; a window of at most N
 * moves; default 32).
 */
#include <cblas.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slaterlab/kernel.h"

/* LAPACK (Fortran), as OpenBLAS exports it. */
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);

typedef struct {
  int n, capacity, m;
  double breakdown;
  double* x;       /* n x n, A^{-1} at the last flush, row-major */
  double* w;       /* n x K: r_i */
  double* p;       /* n x K: a'_i */
  double* binv;    /* K x K column-major: B^{-1} */
  int* electron;   /* K: k_i */
  double* c;       /* K: c, then the bordering's b */
  double* q;       /* K: B^{-T} c */
  double* t;       /* K: B^{-1} b */
  double* yt;      /* K x n: Y^T */
  double* z;       /* n x K: W B^{-T} */
  double* scratch; /* n x n: inverse() and reset() */
  int* pivots;     /* n */
  double* column;  /* n: the pending proposal's a' */
  double* cur;     /* n: its current row of the inverse */
  int pending_k;   /* -1: no proposal */
  double pending_ratio;
  double log_abs;
  int sign;
} bordered_kernel;

static void say(char* message, const char* text) {
  if (message) {
    strncpy(message, text, SLATERLAB_MESSAGE_SIZE - 1);
    message[SLATERLAB_MESSAGE_SIZE - 1] = '\0';
  }
}

static void bd_destroy(void* kernel) {
  bordered_kernel* s = kernel;
  free(s->x);
  free(s->w);
  free(s->p);
  free(s->binv);
  free(s->electron);
  free(s->c);
  free(s->q);
  free(s->t);
  free(s->yt);
  free(s->z);
  free(s->scratch);
  free(s->pivots);
  free(s->column);
  free(s->cur);
  free(s);
}

static void* bd_create(int n, int precision, double breakdown, int n_options,
                       const slaterlab_option* options, char* message) {
  int capacity = 32;
  for (int i = 0; i < n_options; ++i) {
    const char* text = options[i].value;
    char* end = NULL;
    errno = 0;
    const long k = strcmp(options[i].key, "k") == 0 && isdigit((unsigned char)text[0])
                       ? strtol(text, &end, 10)
                       : 0;
    if (!end || *end != '\0' || errno != 0 || k < 1) {
      char why[SLATERLAB_MESSAGE_SIZE];
      snprintf(why, sizeof why, "unknown option %s = \"%s\" (known: k = a window of 1 to N moves)",
               options[i].key, options[i].value);
      say(message, why);
      return NULL;
    }
    capacity = (int)(k < n ? k : n);
  }
  if (n < 1 || precision != SLATERLAB_DOUBLE) {
    say(message, "needs N >= 1 and double precision");
    return NULL;
  }
  if (capacity > n) capacity = n;
  bordered_kernel* s = calloc(1, sizeof *s);
  if (!s) {
    say(message, "out of memory");
    return NULL;
  }
  const size_t nn = (size_t)n, kk = (size_t)capacity;
  s->n = n;
  s->capacity = capacity;
  s->breakdown = breakdown;
  s->x = malloc(sizeof(double) * nn * nn);
  s->w = malloc(sizeof(double) * nn * kk);
  s->p = malloc(sizeof(double) * nn * kk);
  s->binv = malloc(sizeof(double) * kk * kk);
  s->electron = malloc(sizeof(int) * kk);
  s->c = malloc(sizeof(double) * kk);
  s->q = malloc(sizeof(double) * kk);
  s->t = malloc(sizeof(double) * kk);
  s->yt = malloc(sizeof(double) * kk * nn);
  s->z = malloc(sizeof(double) * nn * kk);
  s->scratch = malloc(sizeof(double) * nn * nn);
  s->pivots = malloc(sizeof(int) * nn);
  s->column = malloc(sizeof(double) * nn);
  s->cur = malloc(sizeof(double) * nn);
  s->pending_k = -1;
  if (!s->x || !s->w || !s->p || !s->binv || !s->electron || !s->c || !s->q || !s->t || !s->yt ||
      !s->z || !s->scratch || !s->pivots || !s->column || !s->cur) {
    bd_destroy(s);
    say(message, "out of memory");
    return NULL;
  }
  return s;
}

/* A^{-1} by LAPACK (getrf, getri), rows made contiguous; log|det| from U.
 * On failure the window is empty and x holds no inverse: only another
 * reset may follow (the status tells the caller as much). */
static int bd_reset(void* kernel, const double* a, int lda, char* message) {
  bordered_kernel* s = kernel;
  const int n = s->n;
  double* lu = s->scratch;
  s->m = 0;
  s->pending_k = -1;
  for (int j = 0; j < n; ++j) memcpy(lu + (size_t)j * n, a + (size_t)j * lda, sizeof(double) * n);
  int info = 0;
  dgetrf_(&n, &n, lu, &n, s->pivots, &info);
  if (info != 0) {
    say(message, info > 0 ? "getrf: an exactly zero pivot, the matrix is singular"
                          : "getrf: an argument out of range");
    return info > 0 ? SLATERLAB_SINGULAR : SLATERLAB_INTERNAL;
  }
  double log_abs = 0.0;
  int sign = 1;
  for (int i = 0; i < n; ++i) {
    const double u = lu[(size_t)i * n + i];
    if (!isfinite(u)) {
      say(message, "getrf: a non-finite pivot");
      return SLATERLAB_SINGULAR;
    }
    log_abs += log(fabs(u));
    if ((u < 0) != (s->pivots[i] != i + 1)) sign = -sign;
  }
  /* getri's workspace: X's storage, overwritten below; 64 columns of it
   * are what its blocked algorithm uses. */
  const int lwork = n * (n < 64 ? n : 64);
  dgetri_(&n, lu, &n, s->pivots, s->x, &lwork, &info);
  if (info != 0) {
    say(message, "getri: the matrix is singular");
    return SLATERLAB_SINGULAR;
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) s->x[(size_t)i * n + j] = lu[(size_t)j * n + i];
  s->log_abs = log_abs;
  s->sign = sign;
  return SLATERLAB_OK;
}

/* x <- x - W B^{-T} Y^T for the window (x: an n x n row-major inverse). */
static void apply_window(bordered_kernel* s, double* x) {
  const int n = s->n, m = s->m, kk = s->capacity;
  if (m == 0) return;
  /* Read column-major, x is (A^{-1})^T (its column i is row i of A^{-1}):
   * Y^T = P^T x - E^T, and x -= Z Y^T with Z = W B^{-T}. */
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, n, 1.0, s->p, n, x, n, 0.0, s->yt, kk);
  for (int i = 0; i < m; ++i) s->yt[(size_t)s->electron[i] * kk + i] -= 1.0;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, m, m, 1.0, s->w, n, s->binv, kk, 0.0,
              s->z, n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, m, -1.0, s->z, n, s->yt, kk, 1.0,
              x, n);
}

static void flush_window(bordered_kernel* s) {
  apply_window(s, s->x);
  s->m = 0;
}

/* rho = (r - W q) . a', q = B^{-T} c. */
static int bd_ratio(void* kernel, int k, const double* column, double* ratio, char* message) {
  bordered_kernel* s = kernel;
  const int n = s->n, m = s->m;
  if (k < 0 || k >= n) {
    say(message, "electron index out of range");
    return SLATERLAB_BAD_ARGUMENT;
  }
  const double* r = s->x + (size_t)k * n;
  memcpy(s->cur, r, sizeof(double) * n);
  if (m > 0) {
    cblas_dgemv(CblasColMajor, CblasTrans, n, m, 1.0, s->p, n, r, 1, 0.0, s->c, 1);
    for (int j = 0; j < m; ++j)
      if (s->electron[j] == k) s->c[j] -= 1.0;
    cblas_dgemv(CblasColMajor, CblasTrans, m, m, 1.0, s->binv, s->capacity, s->c, 1, 0.0, s->q, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, m, -1.0, s->w, n, s->q, 1, 1.0, s->cur, 1);
  }
  const double rho = cblas_ddot(n, s->cur, 1, column, 1);
  memcpy(s->column, column, sizeof(double) * n);
  s->pending_k = k;
  s->pending_ratio = rho;
  *ratio = rho;
  return (isfinite(rho) && fabs(rho) >= s->breakdown) ? SLATERLAB_OK : SLATERLAB_BREAKDOWN;
}

/* Borders B^{-1} by the move: with b_i = r_i . a', d = r . a' and the Schur
 * complement s = d - q . b (q and c left by ratio()),
 *   B'^{-1} = [[B^{-1} + t q^T / s, -t / s], [-q^T / s, 1 / s]], t = B^{-1} b. */
static int bd_accept(void* kernel, char* message) {
  bordered_kernel* s = kernel;
  const int n = s->n, kk = s->capacity;
  const int k = s->pending_k;
  if (k < 0) {
    say(message, "accept without a pending ratio");
    return SLATERLAB_BAD_ARGUMENT;
  }
  int repeated = 0;
  for (int j = 0; j < s->m; ++j) repeated |= s->electron[j] == k;
  if (repeated) flush_window(s);
  const double* r = s->x + (size_t)k * n;
  const int m = s->m;
  const double d = cblas_ddot(n, r, 1, s->column, 1);
  if (m == 0) {
    s->binv[0] = 1.0 / d;
  } else {
    double* b = s->c; /* c is no longer needed: q holds B^{-T} c */
    cblas_dgemv(CblasColMajor, CblasTrans, n, m, 1.0, s->w, n, s->column, 1, 0.0, b, 1);
    const double schur = d - cblas_ddot(m, s->q, 1, b, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, m, m, 1.0, s->binv, kk, b, 1, 0.0, s->t, 1);
    cblas_dger(CblasColMajor, m, m, 1.0 / schur, s->t, 1, s->q, 1, s->binv, kk);
    for (int i = 0; i < m; ++i) {
      s->binv[(size_t)m * kk + i] = -s->t[i] / schur;
      s->binv[(size_t)i * kk + m] = -s->q[i] / schur;
    }
    s->binv[(size_t)m * kk + m] = 1.0 / schur;
  }
  memcpy(s->w + (size_t)m * n, r, sizeof(double) * n);
  memcpy(s->p + (size_t)m * n, s->column, sizeof(double) * n);
  s->electron[m] = k;
  s->m = m + 1;
  s->log_abs += log(fabs(s->pending_ratio));
  if (s->pending_ratio < 0) s->sign = -s->sign;
  s->pending_k = -1;
  if (s->m == kk) flush_window(s);
  return SLATERLAB_OK;
}

static int bd_reject(void* kernel, char* message) {
  (void)message;
  ((bordered_kernel*)kernel)->pending_k = -1;
  return SLATERLAB_OK;
}

static int bd_flush(void* kernel, char* message) {
  (void)message;
  flush_window(kernel);
  return SLATERLAB_OK;
}

static int bd_log_det(void* kernel, double* log_abs, int* sign, char* message) {
  const bordered_kernel* s = kernel;
  (void)message;
  *log_abs = s->log_abs;
  *sign = s->sign;
  return SLATERLAB_OK;
}

/* The current inverse, the window applied to a copy: observing it changes
 * nothing (a flush would round the state differently). */
static int bd_inverse(void* kernel, double* out, int ld, char* message) {
  bordered_kernel* s = kernel;
  const int n = s->n;
  (void)message;
  memcpy(s->scratch, s->x, sizeof(double) * (size_t)n * n);
  apply_window(s, s->scratch);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) out[(size_t)j * ld + i] = s->scratch[(size_t)i * n + j];
  return SLATERLAB_OK;
}

static const slaterlab_kernel_api api = {
    .abi_version = 1, /* a version 1 kernel: flushed only where a driver calls flush */
    .name = "bordered-delayed",
    .version = "1",
    .precisions = SLATERLAB_PRECISION_BIT(SLATERLAB_DOUBLE),
    .carries_updates = 1,
    .default_breakdown = 0.0,
    .create = bd_create,
    .destroy = bd_destroy,
    .reset = bd_reset,
    .ratio = bd_ratio,
    .accept = bd_accept,
    .reject = bd_reject,
    .flush = bd_flush,
    .log_det = bd_log_det,
    .inverse = bd_inverse,
    .apply_cycle = NULL,
};

SLATERLAB_KERNEL_EXPORT const slaterlab_kernel_api* slaterlab_kernel(void) { return &api; }
