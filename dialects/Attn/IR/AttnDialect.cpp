//===- AttnDialect.cpp - attn dialect registration -------------------------===//

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace lcc::attn;

#include "dialects/Attn/IR/AttnOpsDialect.cpp.inc"
#include "dialects/Attn/IR/AttnOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Attn/IR/AttnOpsAttributes.cpp.inc"

namespace {
/// attn ops are values of their operands (or, attn.assign, a write that
/// means the same wherever it stands): a model function's call, `loss`
/// calling `forward`, inlines like any other body.
struct AttnInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Operation *, bool) const override {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const override {
    return true;
  }
  bool isLegalToInline(Operation *, Region *, bool,
                       IRMapping &) const override {
    return true;
  }
};
} // namespace

void AttnDialect::initialize() {
  addInterfaces<AttnInlinerInterface>();
  addOperations<
#define GET_OP_LIST
#include "dialects/Attn/IR/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Attn/IR/AttnOpsAttributes.cpp.inc"
      >();
}
