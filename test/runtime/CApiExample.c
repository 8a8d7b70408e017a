/*===- CApiExample.c - the C API used from C ------------------------------===*\
 *
 * c-api-example ADD.lcm
 *
 * Runs the "add" module of lcm-testgen through the C API, the way
 * docs/runtime.md shows, compiled as C: proves the header is C and the
 * calls work without C++. Exits 0 when every element of the sum is right.
 *
\*===----------------------------------------------------------------------===*/

#include "lcc/runtime.h"

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c-api-example ADD.lcm\n");
    return 2;
  }
  enum { N = 128 };
  float a[N], b[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = (float)(2 * i);
  }
  /* A C caller may put any integer in an LccDType: the runtime answers
   * "unknown" rather than reading past its tables. */
  if (lccDTypeGetSize((LccDType)259) != 0 ||
      lccDTypeGetSize((LccDType)-1) != 0 ||
      lccDTypeGetName((LccDType)5)[0] != 'u') {
    fprintf(stderr, "c-api-example: an unknown dtype was accepted\n");
    return 1;
  }
  int64_t shape[] = {N};
  LccTensorView inputs[] = {{"a", LCC_DTYPE_F32, 1, shape, a, sizeof(a)},
                            {"b", LCC_DTYPE_F32, 1, shape, b, sizeof(b)}};

  LccModule module = NULL;
  LccDevice device = NULL;
  LccSession session = NULL;
  LccFunction function = NULL;
  LccStatus status = lccModuleLoadFile(argv[1], &module);
  if (!status)
    status = lccDeviceCreate("cpu", /*threadCount=*/0, &device);
  if (!status)
    status = lccSessionCreate(device, module, &session);
  if (!status)
    status = lccSessionLookupFunction(session, "add", &function);
  if (!status)
    status = lccFunctionCall(function, inputs, 2);
  int wrong = 0;
  if (!status) {
    LccTensorView result;
    lccFunctionGetResult(function, 0, &result);
    for (uint64_t i = 0; i < N; ++i)
      wrong += lccTensorGetElement(&result, i) != 3.0 * (double)i;
    printf("%s: %d wrong elements, peak %llu bytes\n", result.name, wrong,
           (unsigned long long)lccDeviceGetPeakBytes(device));
  } else {
    fprintf(stderr, "error: %s\n", lccStatusGetMessage(status));
  }
  int failed = status != NULL || wrong != 0;
  lccStatusDestroy(status);
  lccSessionDestroy(session);
  lccDeviceDestroy(device);
  lccModuleDestroy(module);
  return failed;
}
