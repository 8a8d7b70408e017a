/*===- kernels_variant.c - a second library for the runtime tests ---------===*\
 *
 * Exports the same symbol as kernels.c with another result: the CPU device
 * must keep two loaded-from-memory libraries apart.
 *
\*===----------------------------------------------------------------------===*/

#include <stdint.h>

void variant_id(void *const *bindings, int64_t x, int64_t y, int64_t z) {
  (void)x, (void)y, (void)z;
  *(int32_t *)bindings[0] = 2;
}
