/*===- embed.c - a model run from C through the installed runtime ---------===*\
 *
 * embed MODEL.lcm WEIGHTS.safetensors INPUT.npy...
 *
 * Loads a module that lcc compiled, puts it on the CPU, binds its weights,
 * calls its first function on the inputs (in argument order) and prints
 * each result's name, shape and the sum of its elements.
 *
\*===----------------------------------------------------------------------===*/

#include <lcc/runtime.h>

#include <stdio.h>
#include <stdlib.h>

/* Prints the error of a failed call, frees it and says whether it failed. */
static int failed(LccStatus status) {
  if (!status)
    return 0;
  fprintf(stderr, "embed: error: %s\n", lccStatusGetMessage(status));
  lccStatusDestroy(status);
  return 1;
}

static void printResult(const LccTensorView *result) {
  uint64_t count = result->size / lccDTypeGetSize(result->dtype);
  double sum = 0;
  for (uint64_t i = 0; i < count; ++i)
    sum += lccTensorGetElement(result, i);
  printf("%s: [", result->name);
  for (size_t d = 0; d < result->rank; ++d)
    printf("%s%lld", d ? ", " : "", (long long)result->shape[d]);
  printf("] %s, sum %.6g\n", lccDTypeGetName(result->dtype), sum);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr,
            "usage: embed MODEL.lcm WEIGHTS.safetensors INPUT.npy...\n");
    return 2;
  }
  int inputCount = argc - 3;
  LccHostTensor *files = calloc((size_t)inputCount + 1, sizeof(LccHostTensor));
  LccTensorView *inputs = calloc((size_t)inputCount + 1, sizeof(LccTensorView));
  LccModule module = NULL;
  LccDevice device = NULL;
  LccSession session = NULL;
  LccFunction function = NULL;
  int error = failed(lccModuleLoadFile(argv[1], &module)) ||
              failed(lccDeviceCreate("cpu", /*threadCount=*/0, &device)) ||
              failed(lccSessionCreate(device, module, &session)) ||
              failed(lccSessionBindParametersFile(session, argv[2])) ||
              failed(lccSessionLookupFunction(session, NULL, &function));
  for (int i = 0; !error && i < inputCount; ++i) {
    error = failed(lccNpyRead(argv[3 + i], &files[i]));
    if (!error)
      lccHostTensorGetView(files[i], &inputs[i]);
  }
  if (!error)
    error = failed(lccFunctionCall(function, inputs, (size_t)inputCount));
  for (size_t r = 0; !error && r < lccFunctionGetOutputCount(function); ++r) {
    LccTensorView result;
    lccFunctionGetResult(function, r, &result);
    printResult(&result);
  }
  for (int i = 0; i < inputCount; ++i)
    lccHostTensorDestroy(files[i]);
  free(files);
  free(inputs);
  lccSessionDestroy(session); /* any order: a session keeps its module */
  lccDeviceDestroy(device);   /* and its device alive */
  lccModuleDestroy(module);
  return error;
}
