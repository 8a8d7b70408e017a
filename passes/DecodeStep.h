//===- DecodeStep.h - an attention form's caches for lcc --decode -*- C++
//-*-===//
//
// `lcc --decode` (passes/Decode/GenerateDecodeStep.cpp) compiles a causal
// model into prefill and a one-token decode step. Each attention form with
// a cached form (AttentionFormDefinition::fillDecodeCaches and
// buildDecodeStep) keeps what later tokens need in caches: state
// parameters `decode.cache.<attention>.<role>` of the module, sized for the
// positions the caches hold, filled by prefill and updated in place by each
// step.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_DECODESTEP_H
#define LCC_PASSES_DECODESTEP_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace lcc {

/// The caches of one attention: [batch, heads, rows, width] tensors, a row
/// per position.
class AttentionCaches {
public:
  /// The caches of attention `index` of the model, `rows` positions each.
  AttentionCaches(unsigned index, int64_t rows) : index(index), rows(rows) {}

  /// The positions each cache holds (the caches' rows).
  int64_t positions() const { return rows; }

  /// These caches with `memoryRows` more rows before the positions: an
  /// attention over a memory and the segment (Transformer-XL) caches both.
  AttentionCaches withMemoryRows(int64_t memoryRows) const {
    return AttentionCaches(index, rows + memoryRows);
  }

  /// Cache `role` ("key", "value", "buckets"): its current contents,
  /// [batch, heads, rows, width] of `element`, at `b`'s insertion point;
  /// `rows` the positions unless given (a cache of something else than
  /// positions: per bucket, say).
  mlir::Value read(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef role,
                   int64_t batch, int64_t heads, int64_t width,
                   mlir::Type element, int64_t rows = 0) const;

  /// Cache `role` becomes `contents` (as read returns it, whole).
  void write(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef role,
             mlir::Value contents) const;

  /// Cache `role` with rows [start, start + S) replaced by `update` ([batch,
  /// heads, S, width]), written back; `start` is a 0-d i32 tensor (clamped
  /// so that the rows fit: nothing is written outside the cache). Returns
  /// the cache as written, for reading after the update.
  mlir::Value writeRows(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::StringRef role, mlir::Value update,
                        mlir::Value start) const;

  /// writeRows from row 0: prefill's rows.
  mlir::Value fill(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef role,
                   mlir::Value update) const;

private:
  std::string name(llvm::StringRef role) const;

  unsigned index;
  int64_t rows;
};

/// Why an attention that is not causal has no cached form (each form's
/// fill says it the same way).
inline constexpr const char *kNotCausalForDecode =
    "it is not causal (a decode step sees only earlier positions)";

/// Why an attention whose queries sit at a given offset (a ring attention's
/// step) has no cached form: a decode step places its query itself.
inline constexpr const char *kQueryOffsetForDecode =
    "its queries sit at a query_offset (a step of ring attention); a decode "
    "step places its one query itself";

/// What a form gives for `lcc --decode` (AttentionFormDefinition's
/// fillDecodeCaches and buildDecodeStep): in prefill, after `op` (at `b`'s
/// insertion point), what writes its caches from its operands; in the
/// decode step, `op` at one position from its operands there (`operands`,
/// [batch, heads, 1, *] in `op`'s order) and `position` (0-d i32), its
/// caches updated and its result returned. Failure sets `whyNot`. The
/// pass builds prefill first, so a step is built only for an op whose
/// caches were filled: what refuses an op is checked in the fill.
using DecodeCacheFill = mlir::LogicalResult(mlir::OpBuilder &b,
                                            mlir::Operation *op,
                                            const AttentionCaches &caches,
                                            std::string &whyNot);
using DecodeStepBuild = mlir::FailureOr<mlir::Value>(
    mlir::OpBuilder &b, mlir::Operation *op, mlir::ValueRange operands,
    mlir::Value position, const AttentionCaches &caches, std::string &whyNot);

} // namespace lcc

#endif // LCC_PASSES_DECODESTEP_H
