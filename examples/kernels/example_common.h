/* What the example kernels share (sm_kernel.c, woodbury_kernel.c): the
 * message helper and the Gauss-Jordan inversion of reset(). Static
 * functions in a header, so that each kernel stays one source file. */
#ifndef SLATERLAB_EXAMPLE_COMMON_H
#define SLATERLAB_EXAMPLE_COMMON_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slaterlab/kernel.h"

static void say(char* message, const char* text) {
  if (message) {
    strncpy(message, text, SLATERLAB_MESSAGE_SIZE - 1);
    message[SLATERLAB_MESSAGE_SIZE - 1] = '\0';
  }
}

/* Gauss-Jordan elimination on the row-major n x 2n matrix [M | I], with or
 * without partial pivoting: afterwards the right half holds M^{-1}, and
 * log|det M| and its sign are returned. 0 on success, -1 at a zero or
 * non-finite pivot (M singular; the right half is then unusable). */
static int gauss_jordan(double* m, int n, int pivoting, double* log_abs, int* sign) {
  const int w = 2 * n;
  *log_abs = 0.0;
  *sign = 1;
  for (int c = 0; c < n; ++c) {
    int p = c;
    if (pivoting)
      for (int i = c + 1; i < n; ++i)
        if (fabs(m[i * w + c]) > fabs(m[p * w + c])) p = i;
    const double pivot = m[p * w + c];
    if (pivot == 0.0 || !isfinite(pivot)) return -1;
    if (p != c) {
      for (int j = 0; j < w; ++j) {
        const double t = m[c * w + j];
        m[c * w + j] = m[p * w + j];
        m[p * w + j] = t;
      }
      *sign = -*sign;
    }
    *log_abs += log(fabs(pivot));
    if (pivot < 0) *sign = -*sign;
    for (int j = 0; j < w; ++j) m[c * w + j] /= pivot;
    for (int i = 0; i < n; ++i) {
      if (i == c) continue;
      const double f = m[i * w + c];
      if (f == 0.0) continue;
      for (int j = 0; j < w; ++j) m[i * w + j] -= f * m[c * w + j];
    }
  }
  return 0;
}

/* The inverse of the n x n column-major `a` (leading dimension lda) into
 * the row-major `inv`, with log|det a| and its sign: reset()'s status. */
static int invert_columns(const double* a, int lda, int n, int pivoting, double* inv,
                          double* log_abs, int* sign, char* message) {
  double* m = malloc(sizeof(double) * (size_t)n * 2 * (size_t)n);
  if (!m) {
    say(message, "out of memory");
    return SLATERLAB_INTERNAL;
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      m[i * 2 * n + j] = a[(size_t)j * (size_t)lda + (size_t)i];
      m[i * 2 * n + n + j] = i == j ? 1.0 : 0.0;
    }
  if (gauss_jordan(m, n, pivoting, log_abs, sign) != 0) {
    free(m);
    say(message, "zero or non-finite pivot: the matrix is singular");
    return SLATERLAB_SINGULAR;
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) inv[i * n + j] = m[i * 2 * n + n + j];
  free(m);
  return SLATERLAB_OK;
}

#endif /* SLATERLAB_EXAMPLE_COMMON_H */
