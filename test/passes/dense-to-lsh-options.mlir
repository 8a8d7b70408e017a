// RUN: not lcc-opt %s --attn-dense-to-lsh="n-hashes=0" 2>&1 | FileCheck %s
// CHECK: error: attn-dense-to-lsh: expected n-hashes >= 1, bucket-size >= 1 and seed >= 0, got n-hashes=0, bucket-size=64, seed=0
func.func @f() {
  return
}
