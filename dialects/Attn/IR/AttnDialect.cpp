//===- AttnDialect.cpp - attn dialect registration -------------------------===//

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/IR/AttnOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace lcc::attn;

#include "dialects/Attn/IR/AttnOpsDialect.cpp.inc"
#include "dialects/Attn/IR/AttnOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Attn/IR/AttnOpsAttributes.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Attn/IR/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Attn/IR/AttnOpsAttributes.cpp.inc"
      >();
}
