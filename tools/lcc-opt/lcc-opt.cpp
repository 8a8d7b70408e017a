//===- lcc-opt.cpp - mlir-opt with the lcc dialects and passes ------------===//
//
// Runs any pipeline of lcc and upstream passes on attn IR; the lit suite
// tests every pass and verifier through it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  lcc::registerLccDialects(registry);
  lcc::registerLccPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "lcc optimizer driver: attn and upstream MLIR passes\n",
      registry));
}
