//===- SequencePositions.h - which values run at one position ---*- C++ -*-===//
//
// A decode step runs the model function at one position. Which of the
// function's values are "per position" (computed from the tokens, one row
// per position along a sequence axis), where that axis is, and whether
// memory rows (Transformer-XL's [memory; segment]) come before the
// positions: found by walking the function from its tokens, each op asked
// whether it works position by position. The step then builds each such
// op on its one row (buildAtOnePosition) and clones the rest.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_DECODE_SEQUENCEPOSITIONS_H
#define LCC_PASSES_DECODE_SEQUENCEPOSITIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace lcc {

/// A value with a row per position: its sequence axis, and the rows of
/// memory before the positions on it (0 but after a concat of memories
/// before the sequence).
struct PositionAxis {
  unsigned axis;
  int64_t memoryRows = 0;
};

class SequencePositions {
public:
  /// The values of `function` (flat: one block) per position of its
  /// arguments `positionArguments` (tokens, labels: [B, `length`, ...]),
  /// the first by default, or of those `argumentAxes` gives with their
  /// axes; the step's caches hold `cachePositions` (learned positions have
  /// none beyond `length`).
  SequencePositions(mlir::func::FuncOp function, int64_t length,
                    int64_t cachePositions,
                    llvm::ArrayRef<unsigned> positionArguments = {0});
  SequencePositions(mlir::func::FuncOp function, int64_t length,
                    int64_t cachePositions,
                    llvm::ArrayRef<std::pair<unsigned, unsigned>> argumentAxes);

  /// Where `value` has its positions, or none: a value computed without
  /// the tokens (weights, memories, what they compute alone).
  std::optional<PositionAxis> lookup(mlir::Value value) const;

  /// The op that made `value` impossible to compute at one position (it,
  /// or one it is computed from, mixes positions), or null.
  mlir::Operation *refusedBefore(mlir::Value value) const {
    return taintedBy.lookup(value);
  }

  /// Why `op`, which reads per-position values, cannot run at one position
  /// ("'<op>' may mix positions: ...", "" when it can or reads none). An op
  /// after one that cannot is refused for the same reason.
  std::string whyNotAtOnePosition(mlir::Operation *op) const;

  /// `op`'s copy at one position, its per-position operands mapped to
  /// their rows by `mapping` (updated with its results); learned positions
  /// read at `position` ([1, 1] i32). The op must be one
  /// whyNotAtOnePosition accepts and no attention.
  void buildAtOnePosition(mlir::OpBuilder &b, mlir::Operation &op,
                          mlir::IRMapping &mapping, mlir::Value position) const;

private:
  void visit(mlir::Operation &op);
  /// The axes of `op`'s results if it works position by position, or why
  /// not.
  std::string placeResults(mlir::Operation &op);
  std::string placeModelOp(mlir::Operation &op);
  /// Whether operand `v` of an op that works position by position is
  /// learned positions, [1, length, width], read at the step's position.
  bool isLearnedPositions(mlir::Value v, unsigned axis) const;

  int64_t length, cachePositions;
  llvm::DenseMap<mlir::Value, PositionAxis> axes;
  llvm::DenseMap<mlir::Operation *, std::string> refused;
  /// Values computed from a refused op's results.
  llvm::DenseMap<mlir::Value, mlir::Operation *> taintedBy;
};

/// `type` with one position on `axis`.
mlir::RankedTensorType atOnePosition(mlir::Type type, unsigned axis);

} // namespace lcc

#endif // LCC_PASSES_DECODE_SEQUENCEPOSITIONS_H
