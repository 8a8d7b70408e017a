//===- SourceNames.h - what each op of a model is, in its own words -*- C++ -*-===//
//
// A profile or an IR dump must lead back to the model: a dispatch is named
// after the model op it computes ("forward_12_layers.1.ff"), and every
// command of the artifact carries the source position of that op. The name
// is the op's parameter prefix ("layers.1.ff" for a feed-forward reading
// layers.1.ff.w1, .b1, ...) or, for an op without parameters, its kind; ops
// in the regions of a named op (the attention of a multi-head block) take
// that op's name. Names travel through the pipeline as NameLocs around the
// ops' source locations, which every lowering keeps.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_SOURCENAMES_H
#define LCC_COMPILER_SOURCENAMES_H

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace lcc {

/// Wraps the location of every op of the model's functions in a NameLoc
/// giving its source name (see above). Ops already named keep their name.
void attachSourceNames(mlir::ModuleOp module);

/// The source name `loc` carries (its outermost NameLoc), if any.
std::optional<std::string> sourceNameOf(mlir::Location loc);

/// "model.mlir:12:8", the first file position in `loc`, if any.
std::optional<std::string> sourcePositionOf(mlir::Location loc);

/// The attributes of a dispatch (and of a call of one) that only name it:
/// the model op it was outlined from and that op's source position. Copies
/// of one kernel differ in them alone; deduplication and the kernel cache
/// set them aside.
inline constexpr llvm::StringLiteral kDispatchNamingAttributes[] = {
    "lcc.name", "lcc.location"};

/// `name` with every character a symbol of an object file or PTX cannot
/// hold replaced by '_' ("layers.1.ff" -> "layers_1_ff").
std::string symbolSafe(llvm::StringRef name);

} // namespace lcc

#endif // LCC_COMPILER_SOURCENAMES_H
