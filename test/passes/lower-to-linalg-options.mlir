// Bad pass options are reported, not ignored.
// RUN: not lcc-opt %s --attn-lower-to-linalg="query-tile=0" 2>&1 | FileCheck %s
// CHECK: error: attn-lower-to-linalg: expected tile sizes >= 1, got query-tile=0, key-tile=64
func.func @f() {
  return
}
