/*===- kernels.c - hand-written kernels for the runtime tests -------------===*\
 *
 * Stand-ins for what the compiler's CPU target emits: exported functions
 * with the HostSharedObject entry ABI of lcm.fbs,
 *   void name(void *const *bindings, int64_t wg_x, int64_t wg_y,
 *             int64_t wg_z),
 * each computing one workgroup. Sizes are baked in, as in compiled code.
 *
\*===----------------------------------------------------------------------===*/

#include <stdint.h>

/* Elements per workgroup of the elementwise kernels. */
#define CHUNK 64

/* out = a + b; workgroup x covers elements [64x, 64x + 64). */
void vector_add(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  const float *a = bindings[0], *b = bindings[1];
  float *out = bindings[2];
  (void)y, (void)z;
  for (int64_t i = x * CHUNK; i < (x + 1) * CHUNK; ++i)
    out[i] = a[i] + b[i];
}

/* C[8, 12] = A[8, 6] B[6, 12] in 4x4 tiles: workgroup (x, y) computes the
 * tile of columns [4x, 4x + 4) and rows [4y, 4y + 4); the grid is (3, 2, 1). */
enum { M = 8, K = 6, N = 12, TILE = 4 };
void matmul(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  const float *a = bindings[0], *b = bindings[1];
  float *c = bindings[2];
  (void)z;
  for (int64_t row = y * TILE; row < (y + 1) * TILE; ++row)
    for (int64_t col = x * TILE; col < (x + 1) * TILE; ++col) {
      float sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += a[row * K + k] * b[k * N + col];
      c[row * N + col] = sum;
    }
}

/* out = 2 * in, by chunks; the tests point `out` into the transient arena. */
void scale2(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  const float *in = bindings[0];
  float *out = bindings[1];
  (void)y, (void)z;
  for (int64_t i = x * CHUNK; i < (x + 1) * CHUNK; ++i)
    out[i] = 2 * in[i];
}

/* out[i] = in[i] + bias[i % 64], by chunks; bias is a [64] parameter. */
void add_bias(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  const float *in = bindings[0], *bias = bindings[1];
  float *out = bindings[2];
  (void)y, (void)z;
  for (int64_t i = 0; i < CHUNK; ++i)
    out[x * CHUNK + i] = in[x * CHUNK + i] + bias[i];
}

/* ids[z][y][x] = x + 100 y + 10000 z (i32) over the grid (4, 3, 2): shows
 * that each workgroup gets its own id in all three dimensions. */
void grid_ids(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  int32_t *ids = bindings[0];
  ids[(z * 3 + y) * 4 + x] = (int32_t)(x + 100 * y + 10000 * z);
}

/* visits[x] += 1: after one call every element is 1 exactly when every
 * workgroup ran exactly once. */
void count_visits(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  int32_t *visits = bindings[0];
  (void)y, (void)z;
  visits[x] += 1;
}

/* The toy model of the training tests, over x [4, 16] f32, weight [4] i32
 * and the parameter w [16] f32:
 *   loss = sum_b weight[b] * sum_j (x[b][j] - w[j])^2 / 64,
 *   dloss/dw[j] = 2/64 * sum_b weight[b] * (w[j] - x[b][j]).
 * Each kernel is one workgroup. */
static float mean_square(const float *x, const int32_t *weight,
                         const float *w) {
  float sum = 0;
  for (int b = 0; b < 4; ++b)
    for (int j = 0; j < 16; ++j) {
      float d = x[b * 16 + j] - w[j];
      sum += (float)weight[b] * d * d;
    }
  return sum / 64;
}

static void mean_square_gradient(const float *x, const int32_t *weight,
                                 const float *w, float *gradient) {
  for (int j = 0; j < 16; ++j) {
    float sum = 0;
    for (int b = 0; b < 4; ++b)
      sum += (float)weight[b] * (w[j] - x[b * 16 + j]);
    gradient[j] = sum * (2.0f / 64);
  }
}

/* (x, weight, w, loss): the loss. */
void mse_loss(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  (void)x, (void)y, (void)z;
  *(float *)bindings[3] = mean_square(bindings[0], bindings[1], bindings[2]);
}

/* (x, weight, w, loss, gradient): the loss and dloss/dw. */
void mse_gradients(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  (void)x, (void)y, (void)z;
  *(float *)bindings[3] = mean_square(bindings[0], bindings[1], bindings[2]);
  mean_square_gradient(bindings[0], bindings[1], bindings[2], bindings[4]);
}

/* (x, weight, w, steps, loss): what `lcc --train --optimizer=sgd --lr=4`
 * would emit: the loss at the current w, then w -= 4 * dloss/dw in place,
 * and the optimizer state steps[0] (f32) counts the step. */
void mse_train_step(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  float *w = bindings[2], *steps = bindings[3], gradient[16];
  (void)x, (void)y, (void)z;
  *(float *)bindings[4] = mean_square(bindings[0], bindings[1], w);
  mean_square_gradient(bindings[0], bindings[1], w, gradient);
  for (int j = 0; j < 16; ++j)
    w[j] -= 4 * gradient[j];
  steps[0] += 1;
}

/* Writes 1; kernels_variant.c's function of the same name writes 2, so a
 * test can tell which of two loaded libraries a symbol came from. */
void variant_id(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  (void)x, (void)y, (void)z;
  *(int32_t *)bindings[0] = 1;
}

/* An exported object that is not a function, for the loader's check that an
 * entry point names a function. */
const int lcm_test_kernel_data[4] = {1, 2, 3, 4};
