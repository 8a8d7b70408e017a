//===- KeySelection.h - the keys an attention's queries score ---*- C++ -*-===//
//
// The blocks LSH and routed attention compute depend on the input: which
// bucket or cluster each token falls in. For one input, a form says which
// keys each query scores: it builds, after its op, the i32 tensors that
// decide it (a probe, which lcc compiles and runs on the input), and reads
// their contents back into a KeySelection. `lcc --emit=attention-map
// --input=...` draws it (compiler/AttentionMap.h).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_KEYSELECTION_H
#define LCC_PASSES_KEYSELECTION_H

#include "mlir/IR/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lcc {

/// Which keys each query of one (batch, head) scores.
struct KeySelection {
  int64_t queries = 0, keys = 0;
  /// The scores the form computes, masked and padded ones included: its
  /// work, where dense attention computes queries * keys.
  double computedScores = 0;
  /// What puts tokens together ("bucket in round 1", "cluster"), how many
  /// there are, and each query's and key's (keyGroups empty when keys
  /// are not grouped).
  std::string groupName;
  int64_t groupCount = 0;
  std::vector<int32_t> queryGroups, keyGroups;
  /// The keys query q sees, ascending and distinct, masked ones (later
  /// keys when causal, padding, LSH's own token) left out:
  /// visibleKeys[offsets[q], offsets[q + 1]).
  std::vector<int64_t> offsets = {0};
  std::vector<int32_t> visibleKeys;
  /// The form's configuration in words ("4 rounds, 32 buckets, chunks of
  /// 64").
  std::string description;

  /// Appends the keys of the next query (any order, repeats allowed).
  void addQuery(std::vector<int32_t> keysOfQuery) {
    std::sort(keysOfQuery.begin(), keysOfQuery.end());
    keysOfQuery.erase(std::unique(keysOfQuery.begin(), keysOfQuery.end()),
                      keysOfQuery.end());
    visibleKeys.insert(visibleKeys.end(), keysOfQuery.begin(),
                       keysOfQuery.end());
    offsets.push_back(static_cast<int64_t>(visibleKeys.size()));
  }
};

/// What a form builds after one of its ops for `lcc --emit=attention-map
/// --input`.
struct KeySelectionProbe {
  /// i32 tensors computed from the op's operands as its lowering computes
  /// them, whose contents decide the keys.
  llvm::SmallVector<mlir::Value> values;
  /// Reads those tensors' contents (each whole, C order) for batch 0,
  /// head 0.
  std::function<KeySelection(llvm::ArrayRef<const int32_t *> contents)> read;
};

} // namespace lcc

#endif // LCC_PASSES_KEYSELECTION_H
