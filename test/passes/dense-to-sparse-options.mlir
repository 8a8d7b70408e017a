// Bad options are errors that name the option.
// RUN: not lcc-opt %s --attn-dense-to-sparse="pattern=dilated" 2>&1 | FileCheck %s --check-prefix=PATTERN
// RUN: not lcc-opt %s --attn-dense-to-sparse="block=0" 2>&1 | FileCheck %s --check-prefix=BLOCK
// PATTERN: error: attn-dense-to-sparse: unknown pattern 'dilated'; expected 'strided' or 'fixed'
// BLOCK: error: attn-dense-to-sparse: expected block >= 1, stride >= 0 and summary >= 0, got block=0, stride=0, summary=0
func.func @f() {
  return
}
