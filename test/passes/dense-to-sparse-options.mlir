// Bad options are errors that name the option.
// RUN: not lcc-opt %s --attn-dense-to-sparse="pattern=dilated" 2>&1 | FileCheck %s --check-prefix=PATTERN
// RUN: not lcc-opt %s --attn-dense-to-sparse="block=0" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not lcc-opt %s --attn-dense-to-sparse="stride=-2" 2>&1 | FileCheck %s --check-prefix=STRIDE
// RUN: not lcc-opt %s --attn-dense-to-sparse="summary=-1" 2>&1 | FileCheck %s --check-prefix=SUMMARY
// PATTERN: error: attn-dense-to-sparse: unknown pattern 'dilated'; expected 'strided' or 'fixed'
// BLOCK: error: attn-dense-to-sparse: expected block >= 1, got 0
// STRIDE: error: attn-dense-to-sparse: expected stride >= 0 (0 picks the default), got -2
// SUMMARY: error: attn-dense-to-sparse: expected summary >= 0 (0 picks the default), got -1
func.func @f() {
  return
}
