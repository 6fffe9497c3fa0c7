/* A plain Sherman-Morrison kernel for slaterlab/kernel.h, in C99 with plain
 * loops (no BLAS), as a QMC code would write it. Double precision.
 *
 * Built several times from this one source (examples/kernels/CMakeLists.txt):
 *   (none)               example-sm: ratio, accept by Sherman-Morrison
 *   SLK_WHOLE_CYCLE      example-cycle: also a whole-cycle call (Woodbury),
 *                        which completes cycles whose intermediate matrices
 *                        are exactly singular
 *   SLK_BROKEN_SIGN      forgets to flip the sign of det on a negative ratio
 *   SLK_BROKEN_RANK1     drops the -e_k term of the rank-1 correction
 *   SLK_BROKEN_CRASH     dereferences NULL at the 10th accepted move (SIGSEGV)
 *   SLK_BROKEN_HANG      never returns from the 10th accepted move
 *   SLK_BROKEN_EXIT      calls exit(3) in the 10th accepted move
 *   SLK_BROKEN_WRITES_INPUT  adds 1 to the first entry of the matrix that
 *                        reset() is given and of the column that ratio() is
 *                        given (const double*), and writes one entry past
 *                        the column's end
 *   SLK_BROKEN_INVERSE   inverse() returns the identity
 *   SLK_BROKEN_SIGN_FIVE log_det() returns the sign times 5
 *   SLK_BROKEN_DROP      (with SLK_WHOLE_CYCLE) silently drops the last
 *                        update of every cycle of two or more
 *   SLK_BROKEN_START     fails where the options say: fail_reset = "crash" |
 *                        "hang" | "status" (an undefined status, 77, with a
 *                        message holding a line break, an escape sequence
 *                        and invalid UTF-8) | "oom" (malloc fails) |
 *                        "long_message" (300 bytes into the message), in every
 *                        reset with N > 1; largest_n = "M": create refuses N > M;
 *                        exit_in_create = "yes": create calls exit(4)
 *   SLK_BROKEN_LOAD      calls exit(5) when the library is loaded (a constructor)
 *   SLK_BROKEN_PLACEHOLDER  (with SLK_WHOLE_CYCLE) applies every cycle but
 *                        declares it a breakdown with the placeholder ratio 1
 *   SLK_BROKEN_PRINTS    prints a debugging line to stdout in every ratio()
 *                        (right answers; a driver's own output must survive it)
 *   SLK_BROKEN_ROUNDING  sets the rounding mode to upward in ratio() and
 *                        leaves it so
 * (broken_fastmath is the plain source built with -ffast-math.)
 * The broken ones exist to show that slaterlab catches each of them.
 *
 * State: the inverse B = A^{-1}, row-major (row k of B is contiguous: the
 * ratio of electron k reads it), log|det A| and its sign.
 *
 * Option: pivot = "partial" (default) | "none": the Gauss-Jordan inversion
 * of reset() with or without row pivoting.
 */
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_common.h"
#include "slaterlab/kernel.h"

#ifndef SLK_NAME
#define SLK_NAME "example-sm"
#endif
#ifndef SLK_ABI_VERSION
#define SLK_ABI_VERSION 1 /* a version 1 kernel: its table ends at apply_cycle */
#endif


typedef struct {
  int n;
  double breakdown;
  int pivot;       /* partial pivoting in reset() */
  double* inv;     /* n x n row-major: inv[i * n + j] = (A^{-1})_{ij} */
  double* work;    /* 2 n: x = A^{-1} a', and a copy of row k */
  double* column;  /* the pending proposal's column */
  int pending_k;   /* -1: no proposal */
  double pending_ratio;
  double log_abs;
  int sign;
  long accepted;
#if defined(SLK_BROKEN_START)
  const char* fail_reset; /* "" or one of the fail_reset options */
#endif
} sm_kernel;

static void* sm_create(int n, int precision, double breakdown, int n_options,
                       const slaterlab_option* options, char* message) {
  int pivot = 1;
#if defined(SLK_BROKEN_START)
  const char* fail_reset = "";
  long largest_n = -1;
#endif
  for (int i = 0; i < n_options; ++i) {
#if defined(SLK_BROKEN_START)
    if (strcmp(options[i].key, "fail_reset") == 0) {
      static const char* const known[] = {"crash", "hang", "status", "oom", "long_message"};
      for (int w = 0; w < 5; ++w)
        if (strcmp(options[i].value, known[w]) == 0) fail_reset = known[w];
      continue;
    }
    if (strcmp(options[i].key, "largest_n") == 0) {
      largest_n = strtol(options[i].value, NULL, 10);
      continue;
    }
    if (strcmp(options[i].key, "exit_in_create") == 0) exit(4);
#endif
    if (strcmp(options[i].key, "pivot") == 0 && strcmp(options[i].value, "partial") == 0) {
      pivot = 1;
    } else if (strcmp(options[i].key, "pivot") == 0 && strcmp(options[i].value, "none") == 0) {
      pivot = 0;
    } else {
      char text[SLATERLAB_MESSAGE_SIZE];
      snprintf(text, sizeof text, "unknown option %s = \"%s\" (known: pivot = partial | none)",
               options[i].key, options[i].value);
      say(message, text);
      return NULL;
    }
  }
  if (n < 1 || precision != SLATERLAB_DOUBLE) {
    say(message, "needs N >= 1 and double precision");
    return NULL;
  }
#if defined(SLK_BROKEN_START)
  if (largest_n >= 0 && n > largest_n) {
    say(message, "this kernel takes N up to largest_n only");
    return NULL;
  }
#endif
  sm_kernel* s = calloc(1, sizeof *s);
  if (!s) return NULL;
#if defined(SLK_BROKEN_START)
  s->fail_reset = fail_reset;
#endif
  s->n = n;
  s->breakdown = breakdown;
  s->pivot = pivot;
  s->inv = malloc(sizeof(double) * (size_t)n * (size_t)n);
  s->work = malloc(sizeof(double) * 2 * (size_t)n);
  s->column = malloc(sizeof(double) * (size_t)n);
  s->pending_k = -1;
  if (!s->inv || !s->work || !s->column) {
    free(s->inv);
    free(s->work);
    free(s->column);
    free(s);
    say(message, "out of memory");
    return NULL;
  }
  return s;
}

static void sm_destroy(void* kernel) {
  sm_kernel* s = kernel;
  free(s->inv);
  free(s->work);
  free(s->column);
  free(s);
}

/* The inverse of the n x n column-major `a` into s->inv, with log|det|. */
static int sm_reset(void* kernel, const double* a, int lda, char* message) {
  sm_kernel* s = kernel;
  const int n = s->n;
#if defined(SLK_BROKEN_START)
  if (n > 1 && strcmp(s->fail_reset, "crash") == 0) {
    volatile int* volatile nowhere = NULL;
    *nowhere = 1;
  }
  if (n > 1 && strcmp(s->fail_reset, "hang") == 0) {
    volatile int forever = 1;
    while (forever) {
    }
  }
  if (n > 1 && strcmp(s->fail_reset, "status") == 0) {
    say(message, "line one\nline two \033[31mred\033[0m \xff\xfe end");
    return 77;
  }
  if (n > 1 && strcmp(s->fail_reset, "long_message") == 0) {
    memset(message, 'x', 299);
    message[299] = '\0';
    return SLATERLAB_INTERNAL;
  }
  if (n > 1 && strcmp(s->fail_reset, "oom") == 0) {
    double* huge = malloc((size_t)1 << 62);
    if (!huge) {
      say(message, "out of memory");
      return SLATERLAB_INTERNAL;
    }
    free(huge);
  }
#endif
  const int status = invert_columns(a, lda, n, s->pivot, s->inv, &s->log_abs, &s->sign, message);
  if (status != SLATERLAB_OK) return status;
#if defined(SLK_BROKEN_WRITES_INPUT)
  ((double*)a)[0] += 1.0; /* casts away the const */
#endif
  s->pending_k = -1;
  s->accepted = 0;
  return SLATERLAB_OK;
}

/* rho = e_k^T A^{-1} a' = row k of the inverse times the new column. */
static int sm_ratio(void* kernel, int k, const double* column, double* ratio, char* message) {
  sm_kernel* s = kernel;
  const int n = s->n;
  if (k < 0 || k >= n) {
    say(message, "electron index out of range");
    return SLATERLAB_BAD_ARGUMENT;
  }
  double rho = 0.0;
  for (int j = 0; j < n; ++j) rho += s->inv[k * n + j] * column[j];
  memcpy(s->column, column, sizeof(double) * (size_t)n);
#if defined(SLK_BROKEN_WRITES_INPUT)
  ((double*)column)[0] += 1.0; /* casts away the const */
  ((double*)column)[n] = 0.0;  /* and past the end */
#endif
#if defined(SLK_BROKEN_ROUNDING)
  fesetround(FE_UPWARD);
#endif
#if defined(SLK_BROKEN_PRINTS)
  printf("sm_kernel debug: ratio of electron %d is %.17g\n", k, rho);
#endif
  s->pending_k = k;
  s->pending_ratio = rho;
  *ratio = rho;
  return (isfinite(rho) && fabs(rho) >= s->breakdown) ? SLATERLAB_OK : SLATERLAB_BREAKDOWN;
}

/* A'^{-1} = A^{-1} - (A^{-1} a' - e_k) (e_k^T A^{-1}) / rho. */
static int sm_accept(void* kernel, char* message) {
  sm_kernel* s = kernel;
  const int n = s->n;
  const int k = s->pending_k;
  if (k < 0) {
    say(message, "accept without a pending ratio");
    return SLATERLAB_BAD_ARGUMENT;
  }
#if defined(SLK_BROKEN_CRASH) || defined(SLK_BROKEN_HANG) || defined(SLK_BROKEN_EXIT)
  if (++s->accepted == 10) {
#if defined(SLK_BROKEN_CRASH)
    volatile int* volatile nowhere = NULL;
    *nowhere = 1;
#elif defined(SLK_BROKEN_EXIT)
    exit(3);
#else
    volatile int forever = 1;
    while (forever) {
    }
#endif
  }
#endif
  const double rho = s->pending_ratio;
  double* x = s->work;
  double* row = s->work + n;
  for (int i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int j = 0; j < n; ++j) sum += s->inv[i * n + j] * s->column[j];
    x[i] = sum;
  }
#if !defined(SLK_BROKEN_RANK1)
  x[k] -= 1.0;
#endif
  memcpy(row, s->inv + (size_t)k * (size_t)n, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i) {
    const double f = x[i] / rho;
    for (int j = 0; j < n; ++j) s->inv[i * n + j] -= f * row[j];
  }
  s->log_abs += log(fabs(rho));
#if !defined(SLK_BROKEN_SIGN)
  if (rho < 0) s->sign = -s->sign;
#endif
  s->pending_k = -1;
  return SLATERLAB_OK;
}

static int sm_reject(void* kernel, char* message) {
  (void)message;
  ((sm_kernel*)kernel)->pending_k = -1;
  return SLATERLAB_OK;
}

static int sm_flush(void* kernel, char* message) {
  (void)kernel;
  (void)message;
  return SLATERLAB_OK;
}

static int sm_log_det(void* kernel, double* log_abs, int* sign, char* message) {
  const sm_kernel* s = kernel;
  (void)message;
  *log_abs = s->log_abs;
#if defined(SLK_BROKEN_SIGN_FIVE)
  *sign = 5 * s->sign;
#else
  *sign = s->sign;
#endif
  return SLATERLAB_OK;
}

static int sm_inverse(void* kernel, double* out, int ld, char* message) {
  const sm_kernel* s = kernel;
  (void)message;
  for (int j = 0; j < s->n; ++j)
    for (int i = 0; i < s->n; ++i) {
#if defined(SLK_BROKEN_INVERSE)
      out[(size_t)j * (size_t)ld + (size_t)i] = i == j ? 1.0 : 0.0;
#else
      out[(size_t)j * (size_t)ld + (size_t)i] = s->inv[i * s->n + j];
#endif
    }
  return SLATERLAB_OK;
}

#if defined(SLK_WHOLE_CYCLE)
/* A cycle by the Woodbury identity, so that only A_before and A_after need
 * be regular: with K the m distinct replaced electrons (a later update of
 * the same electron wins) and C their final columns,
 *   S = (A^{-1} C)_{K,:}                     (m x m)
 *   det(A_after) / det(A_before) = det S
 *   A_after^{-1} = A^{-1} - (A^{-1} C - E_K) S^{-1} (A^{-1})_{K,:}.
 * S is factorised by Gauss-Jordan with partial pivoting. */
static int sm_apply_cycle(void* kernel, int n_updates, const double* columns, int ldc,
                          const int* electrons, double* ratio, char* message) {
  sm_kernel* s = kernel;
  const int n = s->n;
  int m = 0;
#if defined(SLK_BROKEN_DROP)
  if (n_updates > 1) --n_updates; /* the last update is lost, and nobody is told */
#endif
  int* k = malloc(sizeof(int) * (size_t)(n_updates > 0 ? n_updates : 1));
  const double** c = malloc(sizeof(double*) * (size_t)(n_updates > 0 ? n_updates : 1));
  double* y = malloc(sizeof(double) * (size_t)n * (size_t)(n_updates > 0 ? n_updates : 1));
  double* sm = malloc(sizeof(double) * (size_t)(n_updates * 2 * (n_updates > 0 ? n_updates : 1) + 1));
  double* rows = malloc(sizeof(double) * (size_t)n * (size_t)(n_updates > 0 ? n_updates : 1));
  int status = SLATERLAB_OK;
  if (!k || !c || !y || !sm || !rows) {
    say(message, "out of memory");
    status = SLATERLAB_INTERNAL;
    goto done;
  }
  for (int u = 0; u < n_updates; ++u) {
    if (electrons[u] < 0 || electrons[u] >= n) {
      say(message, "electron index out of range");
      status = SLATERLAB_BAD_ARGUMENT;
      goto done;
    }
    int slot = -1;
    for (int v = 0; v < m; ++v)
      if (k[v] == electrons[u]) slot = v;
    if (slot < 0) slot = m++;
    k[slot] = electrons[u];
    c[slot] = columns + (size_t)u * (size_t)ldc;
  }
  /* y = A^{-1} C (n x m, column u contiguous), S = y(K, :), augmented by I. */
  for (int u = 0; u < m; ++u)
    for (int i = 0; i < n; ++i) {
      double sum = 0.0;
      for (int j = 0; j < n; ++j) sum += s->inv[i * n + j] * c[u][j];
      y[u * n + i] = sum;
    }
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b) {
      sm[a * 2 * m + b] = y[b * n + k[a]];
      sm[a * 2 * m + m + b] = a == b ? 1.0 : 0.0;
    }
  double log_det = 0.0;
  int det_sign = 1;
  const double det =
      gauss_jordan(sm, m, 1, &log_det, &det_sign) == 0 ? det_sign * exp(log_det) : 0.0;
  *ratio = det;
  if (!isfinite(det) || fabs(det) < s->breakdown) {
    say(message, "cycle ratio below the breakdown threshold: A_after is (nearly) singular");
    status = SLATERLAB_BREAKDOWN;
    goto done;
  }
  /* A_after^{-1} = B - (y - E_K) S^{-1} B(K, :). */
  for (int a = 0; a < m; ++a) memcpy(rows + (size_t)a * (size_t)n, s->inv + (size_t)k[a] * (size_t)n,
                                     sizeof(double) * (size_t)n);
  for (int a = 0; a < m; ++a) y[a * n + k[a]] -= 1.0;
  for (int i = 0; i < n; ++i)
    for (int b = 0; b < m; ++b) {
      double f = 0.0; /* (y - E_K)(i, :) S^{-1}(:, b) */
      for (int a = 0; a < m; ++a) f += y[a * n + i] * sm[a * 2 * m + m + b];
      for (int j = 0; j < n; ++j) s->inv[i * n + j] -= f * rows[b * n + j];
    }
  s->log_abs += log(fabs(det));
  if (det < 0) s->sign = -s->sign;
  s->pending_k = -1;
#if defined(SLK_BROKEN_PLACEHOLDER)
  /* Declares every cycle a breakdown with TREX's placeholder ratio 1. */
  *ratio = 1.0;
  say(message, "breakdown (placeholder ratio 1)");
  status = SLATERLAB_BREAKDOWN;
#endif
done:
  free(k);
  free(c);
  free(y);
  free(sm);
  free(rows);
  return status;
}
#endif

static const slaterlab_kernel_api sm_api = {
    SLK_ABI_VERSION,
    SLK_NAME,
    "1.0",
    SLATERLAB_PRECISION_BIT(SLATERLAB_DOUBLE),
    1,   /* carries updates */
    0.0, /* slaterlab's default breakdown threshold */
    sm_create,
    sm_destroy,
    sm_reset,
    sm_ratio,
    sm_accept,
    sm_reject,
    sm_flush,
    sm_log_det,
    sm_inverse,
#if defined(SLK_WHOLE_CYCLE)
    sm_apply_cycle,
#else
    NULL,
#endif
    /* Version 2's members, which a version 1 table's reader never reads
     * (here only because this source is compiled with the version 2 header). */
    0,
    0,
    0u,
    NULL,
};

#if defined(SLK_BROKEN_LOAD)
__attribute__((constructor)) static void end_at_load(void) { exit(5); }
#endif

#if !defined(SLK_NO_ENTRY)
SLATERLAB_KERNEL_EXPORT const slaterlab_kernel_api* slaterlab_kernel(void) { return &sm_api; }
#else
/* A shared object that is not a kernel: the table is there, the entry point is not. */
const slaterlab_kernel_api* not_the_entry_point(void);
const slaterlab_kernel_api* not_the_entry_point(void) { return &sm_api; }
#endif
