/* A version 2 kernel (slaterlab/kernel.h) in the form of QMCkl's and TREX's
 * Sherman-Morrison-Woodbury kernels, in C99 with plain loops. Double
 * precision. It uses what version 2 added:
 *   - differences (SLATERLAB_INPUT_DIFFERENCES): ratio and apply_cycle get
 *     d = new column - old column, so it keeps no copy of A: with
 *     B = A^{-1}, rho = 1 + (B d)_k and B' = B - (B d) B(k, :) / rho;
 *   - declared sizes: N >= 2 (min_n; a 2x2 Woodbury needs two columns), or
 *     exactly SLK_FIXED_N where built with it (TREX's kernels hard-code
 *     their size), and supports(): largest_cycle <= N;
 *   - a declined cycle shape: apply_cycle does cycles of 2 .. largest_cycle
 *     distinct electrons whole (Woodbury 2x2, 3x3, ...) and returns
 *     SLATERLAB_DECLINED for any other, leaving its state unchanged;
 *   - the flush contract: with check_flush = "yes" it holds slaterlab to
 *     it, refusing (BAD_ARGUMENT) a ratio after a sweep of N moves, and a
 *     log_det or inverse, while an accepted move is not yet flushed, as a
 *     kernel that queues its updates (QMCPACK's DelayedUpdate) would
 *     compute them wrong.
 * Options: largest_cycle = "K" (default 3, at least 2), check_flush = "yes".
 * Built with SLK_CYCLES_ONLY it leaves ratio, accept and reject NULL (a
 * whole-cycle-only kernel, version 2): it then does every cycle of 1 ..
 * largest_cycle (default N) distinct electrons whole.
 * A cycle's breakdown (|det S| below the threshold, or not finite) leaves
 * the state as it was; slaterlab resets the kernel after it (kernel.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_common.h"
#include "slaterlab/kernel.h"

#ifndef SLK_NAME
#define SLK_NAME "example-woodbury"
#endif
/* Built as SLK_FIXED_N = 21 (TREX's fixed size), or with SLK_MIN_N and
 * SLK_MAX_N set (bad_sizes: 5 and 4, sizes the loader refuses). */
#ifdef SLK_FIXED_N
#define SLK_MIN_N SLK_FIXED_N
#define SLK_MAX_N SLK_FIXED_N
#endif
#ifndef SLK_MIN_N
#define SLK_MIN_N 2
#endif
#ifndef SLK_MAX_N
#define SLK_MAX_N 0
#endif

typedef struct {
  int n;
  double breakdown;
  int largest_cycle;
  int check_flush;
  double* inv;  /* n x n row-major: inv[i * n + j] = (A^{-1})_{ij} */
  double* work; /* n (the difference) + n (B d) + n (row k) */
  int pending_k;
  double pending_ratio;
  double log_abs;
  int sign;
  int unflushed; /* an accepted move since the last flush or reset */
  int age;       /* moves since the first of them, itself included */
} wb_kernel;

/* Parses the options; 0, or -1 with a message. */
static int wb_options(int n_options, const slaterlab_option* options, int* largest_cycle,
                      int* check_flush, char* message) {
#if defined(SLK_CYCLES_ONLY)
  *largest_cycle = 0; /* 0: N, every cycle of distinct electrons whole */
#else
  *largest_cycle = 3;
#endif
  *check_flush = 0;
  for (int i = 0; i < n_options; ++i) {
    if (strcmp(options[i].key, "largest_cycle") == 0) {
      char* end = NULL;
      const long k = strtol(options[i].value, &end, 10);
      if (end == options[i].value || *end != '\0' || k < 2 || k > 64) {
        say(message, "largest_cycle must be an integer from 2 to 64");
        return -1;
      }
      *largest_cycle = (int)k;
    } else if (strcmp(options[i].key, "check_flush") == 0) {
      *check_flush = strcmp(options[i].value, "yes") == 0;
    } else {
      char text[SLATERLAB_MESSAGE_SIZE];
      snprintf(text, sizeof text,
               "unknown option %s (known: largest_cycle = K, check_flush = yes)", options[i].key);
      say(message, text);
      return -1;
    }
  }
  return 0;
}

static int wb_supports(int n, int precision, int n_options, const slaterlab_option* options,
                       char* message) {
  int largest_cycle, check_flush;
  (void)precision;
  if (wb_options(n_options, options, &largest_cycle, &check_flush, message) != 0)
    return SLATERLAB_BAD_ARGUMENT;
  if (largest_cycle > n) {
    char text[SLATERLAB_MESSAGE_SIZE];
    snprintf(text, sizeof text, "largest_cycle = %d needs N >= %d", largest_cycle, largest_cycle);
    say(message, text);
    return SLATERLAB_BAD_ARGUMENT;
  }
  return SLATERLAB_OK;
}

static void* wb_create(int n, int precision, double breakdown, int n_options,
                       const slaterlab_option* options, char* message) {
  int largest_cycle, check_flush;
  if (wb_options(n_options, options, &largest_cycle, &check_flush, message) != 0) return NULL;
  if (n < SLK_MIN_N || (SLK_MAX_N > 0 && n > SLK_MAX_N) || largest_cycle > n ||
      precision != SLATERLAB_DOUBLE) {
    say(message, "a size or precision it does not take (see its table and supports())");
    return NULL;
  }
  wb_kernel* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->n = n;
  s->breakdown = breakdown;
  s->largest_cycle = largest_cycle > 0 ? largest_cycle : n;
  s->check_flush = check_flush;
  s->inv = malloc(sizeof(double) * (size_t)n * (size_t)n);
  s->work = malloc(sizeof(double) * 3 * (size_t)n);
  s->pending_k = -1;
  if (!s->inv || !s->work) {
    free(s->inv);
    free(s->work);
    free(s);
    say(message, "out of memory");
    return NULL;
  }
  return s;
}

static void wb_destroy(void* kernel) {
  wb_kernel* s = kernel;
  free(s->inv);
  free(s->work);
  free(s);
}

static int wb_reset(void* kernel, const double* a, int lda, char* message) {
  wb_kernel* s = kernel;
  s->pending_k = -1;
  s->unflushed = 0;
  return invert_columns(a, lda, s->n, 1, s->inv, &s->log_abs, &s->sign, message);
}

static int wb_unflushed(const wb_kernel* s, char* message) {
  if (!s->check_flush || !s->unflushed) return 0;
  say(message, "accepted moves not flushed before a measurement");
  return 1;
}

/* rho = 1 + e_k^T B d. */
static int wb_ratio(void* kernel, int k, const double* difference, double* ratio, char* message) {
  wb_kernel* s = kernel;
  const int n = s->n;
  if (k < 0 || k >= n) {
    say(message, "electron index out of range");
    return SLATERLAB_BAD_ARGUMENT;
  }
  /* An accepted move is flushed at the latest when its sweep of N ends. */
  if (s->check_flush && s->unflushed && s->age >= n) {
    say(message, "a sweep of N moves ended without a flush");
    return SLATERLAB_BAD_ARGUMENT;
  }
  s->age += s->unflushed;
  double rho = 1.0;
  for (int j = 0; j < n; ++j) rho += s->inv[k * n + j] * difference[j];
  memcpy(s->work, difference, sizeof(double) * (size_t)n);
  s->pending_k = k;
  s->pending_ratio = rho;
  *ratio = rho;
  return (isfinite(rho) && fabs(rho) >= s->breakdown) ? SLATERLAB_OK : SLATERLAB_BREAKDOWN;
}

/* B' = B - (B d) B(k, :) / rho. */
static int wb_accept(void* kernel, char* message) {
  wb_kernel* s = kernel;
  const int n = s->n;
  const int k = s->pending_k;
  if (k < 0) {
    say(message, "accept without a pending ratio");
    return SLATERLAB_BAD_ARGUMENT;
  }
  const double rho = s->pending_ratio;
  double* x = s->work + n;
  double* row = s->work + 2 * n;
  for (int i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int j = 0; j < n; ++j) sum += s->inv[i * n + j] * s->work[j];
    x[i] = sum;
  }
  memcpy(row, s->inv + (size_t)k * (size_t)n, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i) {
    const double f = x[i] / rho;
    for (int j = 0; j < n; ++j) s->inv[i * n + j] -= f * row[j];
  }
  s->log_abs += log(fabs(rho));
  if (rho < 0) s->sign = -s->sign;
  s->pending_k = -1;
  if (!s->unflushed) s->age = 1;
  s->unflushed = 1;
  return SLATERLAB_OK;
}

static int wb_reject(void* kernel, char* message) {
  (void)message;
  ((wb_kernel*)kernel)->pending_k = -1;
  return SLATERLAB_OK;
}

static int wb_flush(void* kernel, char* message) {
  wb_kernel* s = kernel;
  (void)message;
  s->unflushed = 0;
  return SLATERLAB_OK;
}

static int wb_log_det(void* kernel, double* log_abs, int* sign, char* message) {
  const wb_kernel* s = kernel;
  if (wb_unflushed(s, message)) return SLATERLAB_BAD_ARGUMENT;
  *log_abs = s->log_abs;
  *sign = s->sign;
  return SLATERLAB_OK;
}

static int wb_inverse(void* kernel, double* out, int ld, char* message) {
  const wb_kernel* s = kernel;
  if (wb_unflushed(s, message)) return SLATERLAB_BAD_ARGUMENT;
  for (int j = 0; j < s->n; ++j)
    for (int i = 0; i < s->n; ++i) out[(size_t)j * (size_t)ld + (size_t)i] = s->inv[i * s->n + j];
  return SLATERLAB_OK;
}

/* With K the m distinct electrons and D their differences, A_after =
 * A + D E_K^T, and by the Woodbury identity
 *   S = I + (B D)_{K,:}   (m x m),   det(A_after) / det(A) = det S,
 *   A_after^{-1} = B - (B D) S^{-1} B_{K,:}.
 * S is inverted by Gauss-Jordan with partial pivoting. */
static int wb_apply_cycle(void* kernel, int m, const double* differences, int ldc,
                          const int* electrons, double* ratio, char* message) {
  wb_kernel* s = kernel;
  const int n = s->n;
#if defined(SLK_CYCLES_ONLY)
  if (m < 1 || m > s->largest_cycle) return SLATERLAB_DECLINED; /* a finding: it has no moves */
#else
  if (m < 2 || m > s->largest_cycle) return SLATERLAB_DECLINED;
#endif
  for (int u = 0; u < m; ++u) {
    if (electrons[u] < 0 || electrons[u] >= n) {
      say(message, "electron index out of range");
      return SLATERLAB_BAD_ARGUMENT;
    }
    for (int v = 0; v < u; ++v)
      if (electrons[v] == electrons[u]) return SLATERLAB_DECLINED; /* one electron twice */
  }
  double* y = malloc(sizeof(double) * (size_t)n * (size_t)m);     /* B D, column u contiguous */
  double* sm = malloc(sizeof(double) * 2 * (size_t)m * (size_t)m); /* [S | I] row-major */
  double* rows = malloc(sizeof(double) * (size_t)n * (size_t)m);  /* B_{K,:} */
  int status = SLATERLAB_OK;
  if (!y || !sm || !rows) {
    say(message, "out of memory");
    status = SLATERLAB_INTERNAL;
    goto done;
  }
  for (int u = 0; u < m; ++u)
    for (int i = 0; i < n; ++i) {
      double sum = 0.0;
      for (int j = 0; j < n; ++j) sum += s->inv[i * n + j] * differences[(size_t)u * (size_t)ldc + j];
      y[u * n + i] = sum;
    }
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b) {
      sm[a * 2 * m + b] = (a == b ? 1.0 : 0.0) + y[b * n + electrons[a]];
      sm[a * 2 * m + m + b] = a == b ? 1.0 : 0.0;
    }
  double log_det = 0.0;
  int det_sign = 1;
  const double det = gauss_jordan(sm, m, 1, &log_det, &det_sign) == 0 ? det_sign * exp(log_det) : 0.0;
  *ratio = det;
  if (!isfinite(det) || fabs(det) < s->breakdown) {
    say(message, "cycle ratio below the breakdown threshold");
    status = SLATERLAB_BREAKDOWN;
    goto done;
  }
  for (int a = 0; a < m; ++a)
    memcpy(rows + (size_t)a * (size_t)n, s->inv + (size_t)electrons[a] * (size_t)n,
           sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i)
    for (int b = 0; b < m; ++b) {
      double f = 0.0; /* (B D)(i, :) S^{-1}(:, b) */
      for (int a = 0; a < m; ++a) f += y[a * n + i] * sm[a * 2 * m + m + b];
      for (int j = 0; j < n; ++j) s->inv[i * n + j] -= f * rows[b * n + j];
    }
  s->log_abs += log(fabs(det));
  if (det < 0) s->sign = -s->sign;
  s->age = (s->unflushed ? s->age : 0) + m;
  s->unflushed = 1;
done:
  free(y);
  free(sm);
  free(rows);
  return status;
}

static const slaterlab_kernel_api wb_api = {
    .abi_version = 2,
    .name = SLK_NAME,
    .version = "1.0",
    .precisions = SLATERLAB_PRECISION_BIT(SLATERLAB_DOUBLE),
    .carries_updates = 1,
    .default_breakdown = 0.0,
    .create = wb_create,
    .destroy = wb_destroy,
    .reset = wb_reset,
#if defined(SLK_CYCLES_ONLY) /* whole cycles only: no single moves at all */
    .ratio = NULL,
    .accept = NULL,
    .reject = NULL,
#else
    .ratio = wb_ratio,
    .accept = wb_accept,
    .reject = wb_reject,
#endif
    .flush = wb_flush,
    .log_det = wb_log_det,
    .inverse = wb_inverse,
    .apply_cycle = wb_apply_cycle,
    .min_n = SLK_MIN_N,
    .max_n = SLK_MAX_N,
    .inputs = SLATERLAB_INPUT_DIFFERENCES,
    .supports = wb_supports,
};

SLATERLAB_KERNEL_EXPORT const slaterlab_kernel_api* slaterlab_kernel(void) { return &wb_api; }
