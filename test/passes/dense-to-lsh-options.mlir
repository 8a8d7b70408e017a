// Each bad option is one error that names it alone.
// RUN: not lcc-opt %s --attn-dense-to-lsh="n-hashes=0" 2>&1 | FileCheck %s --check-prefix=HASHES
// RUN: not lcc-opt %s --attn-dense-to-lsh="n-hashes=4096" 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not lcc-opt %s --attn-dense-to-lsh="bucket-size=0" 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not lcc-opt %s --attn-dense-to-lsh="seed=-1" 2>&1 | FileCheck %s --check-prefix=SEED
// RUN: not lcc-opt %s --attn-dense-to-lsh="hash=bogus" 2>&1 | FileCheck %s --check-prefix=HASH
// HASH: error: attn-dense-to-lsh: unknown hash value 'bogus'; expected one of 'plain', 'factorized', 'auto'
// HASHES: error: attn-dense-to-lsh: expected n-hashes >= 1, got 0
// MANY: error: attn-dense-to-lsh: expected n-hashes <= 1024, got 4096
// BUCKET: error: attn-dense-to-lsh: expected bucket-size >= 1, got 0
// SEED: error: attn-dense-to-lsh: expected seed >= 0, got -1
func.func @f() {
  return
}
