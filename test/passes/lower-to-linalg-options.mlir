// Bad pass options are reported, not ignored.
// RUN: not lcc-opt %s --attn-lower-to-linalg="query-tile=-1" 2>&1 | FileCheck %s
// CHECK: error: attn-lower-to-linalg: expected query-tile >= 0 (0 picks the default), got -1
func.func @f() {
  return
}
