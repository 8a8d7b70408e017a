//===- HostProgram.h - the host side of a compiled function -----*- C++ -*-===//
//
// After dispatch outlining a function is a list of dispatch calls on
// tensors. Planning gives every tensor a buffer (argument, result,
// parameter, or a range of the transient arena) and turns the calls into
// the command list of the artifact (docs/design.md §5).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_HOSTPROGRAM_H
#define LCC_COMPILER_HOSTPROGRAM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <vector>
#include <string>

namespace lcc {

enum class ParameterInit { Normal, Zeros, Ones, Constant };

struct TensorSignature {
  std::string name;
  mlir::RankedTensorType type;
  /// For integer inputs that index a table: every element's [min, max].
  std::optional<std::pair<int64_t, int64_t>> validRange;
  /// Context parallelism: the dimension holding the rank's share of the
  /// positions (attn.split_dim), -1 when whole.
  int64_t splitDim = -1;
};

struct Parameter {
  TensorSignature signature;
  ParameterInit init = ParameterInit::Normal;
  float initScale = 0.02f;
  /// Every element's value under Constant init.
  float initValue = 0.0f;
  /// Optimizer state: zero (or initValue) when loaded, not required from a
  /// weights file.
  bool state = false;
};

/// Parameters of a module, shared by its functions, in first-use order.
struct ParameterTable {
  llvm::SmallVector<Parameter> parameters;
  llvm::StringMap<unsigned> indexByName;
};

enum class BufferKind { Input, Output, Parameter, Transient };

struct PlannedBuffer {
  BufferKind kind;
  unsigned index = 0;       // argument, result or parameter index
  uint64_t size = 0;        // bytes
  uint64_t arenaOffset = 0; // Transient only, set by planArena
  unsigned firstCommand = 0, lastCommand = 0; // live range (Transient)
};

/// A byte range of a buffer.
struct BufferRange {
  unsigned buffer = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct PlannedCommand {
  enum class Kind { Dispatch, Copy, AllReduce, Exchange } kind = Kind::Dispatch;
  /// AllReduce: how the ranks' values combine.
  enum class Reduction { Sum, Mean } reduction = Reduction::Sum;
  /// Exchange: which rank gets what (attn.all_to_all: a block of the
  /// source's `blocks` to each rank; attn.ring_shift: the whole source to
  /// the rank `ringOffset` on; attn.rank_slice: this rank's block of the
  /// source; attn.rank_pad: the source at this rank's block of the target).
  enum class Exchange {
    AllToAll,
    Ring,
    RankSlice,
    RankPad
  } exchange = Exchange::AllToAll;
  int64_t blocks = 1, ringOffset = 0;
  std::string name;       // for reports: "forward_12_layers.1.ff"
  std::string location;   // of the model op: "model.mlir:12:8", or ""
  std::string entryPoint; // Dispatch: the dispatch function's name
  double flops = 0;       // Dispatch: its floating-point operations
  std::array<int64_t, 3> workgroupCount = {1, 1, 1};
  /// Dispatch: inputs, then outputs; AllReduce: the ranges it reduces in
  /// place (every one an output); Exchange: its source, then its target.
  llvm::SmallVector<BufferRange> bindings;
  unsigned outputCount = 0;   // bindings it writes
  BufferRange source, target; // Copy
};

/// A tensor of the host program where the planner put it: what the hazard
/// check (verifyHostProgram) needs to prove that no command overwrites bytes
/// a tensor still holds for a later reader.
struct PlannedTensor {
  std::string description; // "result 0 of forward_ff_3", for messages
  /// The byte ranges holding the tensor's defined elements (an assembly of
  /// slices holds only the slices inserted so far).
  llvm::SmallVector<BufferRange> defined;
  /// The command that completes the tensor (-1: before the first, as for
  /// arguments and parameters), and the last command that reads it (the
  /// number of commands when the function returns it; -1: never read).
  int64_t definedBy = -1, lastRead = -1;
  /// The command that takes the tensor as the initial value of its output
  /// and updates it in place (its last reader, reading it through that
  /// output binding); -1: none.
  int64_t updatedBy = -1;
};

struct HostProgram {
  std::string name;
  llvm::SmallVector<TensorSignature> inputs, outputs;
  llvm::SmallVector<PlannedBuffer> buffers;
  std::vector<PlannedCommand> commands;
  uint64_t arenaSize = 0;
};

/// Plans `host` (a function of dispatch calls, collectives, reshapes and
/// tensor.empty),
/// adding the parameters it uses to `parameters`.
mlir::FailureOr<HostProgram> planHostProgram(mlir::func::FuncOp host,
                                             ParameterTable &parameters);

/// Checks the planned program against `tensors`: no command may write a
/// byte that a tensor completed earlier still holds for a later (or the
/// same) command. Transient buffers are compared at their arena offsets, so
/// this covers the arena placement too. Returns a message naming the
/// command and the tensor on a violation.
std::optional<std::string>
verifyHostProgram(const HostProgram &program,
                  llvm::ArrayRef<PlannedTensor> tensors);

/// Places every transient buffer of `program` in one arena so that buffers
/// live at the same time never overlap (first fit, largest first); offsets
/// are multiples of 64. Sets `arenaSize`.
void planArena(HostProgram &program);

/// The byte range (offset, length) an insert_slice writes in its
/// destination, if it is one contiguous range with static offsets and unit
/// strides: only those are placed by the host program.
std::optional<std::pair<uint64_t, uint64_t>>
contiguousSliceBytes(mlir::tensor::InsertSliceOp insert);

/// Bytes of a statically shaped tensor.
uint64_t byteSize(mlir::RankedTensorType type);

} // namespace lcc

#endif // LCC_COMPILER_HOSTPROGRAM_H
