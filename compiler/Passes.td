//===- Passes.td - lcc compiler (codegen) passes -----------*- tablegen -*-===//
//
// Passes that turn lowered tensor programs into dispatches: kernels that are
// functions of a workgroup id and their buffers, called from a host program
// that only orders them (docs/design.md §5).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_PASSES
#define LCC_COMPILER_PASSES

include "mlir/Pass/PassBase.td"

def InlineModelCalls : Pass<"lcc-inline-model-calls", "mlir::ModuleOp"> {
  let summary = "inline the calls between a model's functions";
  let description = [{
    `loss` calling `forward` becomes one body per function: lcc runs this
    before its stages (its `--dump-ir` `attn` stage is after it), and the
    lcc-opt pipelines `lcc-attention-forms` and `lcc-lower-to-linalg` start
    with it, so that they take a model as written. A recursive call is an
    error naming it.
  }];
}

def FuseElementwise : Pass<"lcc-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "fuse elementwise producers into elementwise consumers";
  let description = [{
    Upstream elementwise fusion, restricted to consumers without reduction
    loops: fusing a producer into a contraction would recompute it once per
    reduction step (a GELU fused into the down projection runs d_model
    times per element). Producers of contractions stay separate and are
    fused per tile by `lcc-tile-to-workgroups` instead.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def RematerializeArgumentOps
    : Pass<"lcc-rematerialize-argument-ops", "mlir::ModuleOp"> {
  let summary = "recompute cheap ops of the arguments at each use";
  let description = [{
    A linalg op with only parallel loops and at most 4 ops per element
    (a bias broadcast, a fill, a scale) that reads only the function's
    arguments and constants, and has several users, is cloned before each
    user after the first. CSE had merged every computation of such a value
    into one tensor alive from its first use to its last: a bias broadcast
    shared by a reversible block's forward and its recomputation in the
    backward kept one contraction init per layer alive across the whole
    train step. A copy keeps nothing else alive (its operands are
    arguments), and a single-use copy can be fused into its consumer's
    tiles.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def TileToWorkgroups : Pass<"lcc-tile-to-workgroups", "mlir::ModuleOp"> {
  let summary = "tile top-level tensor ops into scf.forall over workgroups";
  let description = [{
    Each op of a function body that implements the TilingInterface (linalg
    ops, tensor.pad) and is not already inside an `scf.forall` becomes an
    `scf.forall` whose iterations are the workgroups of one dispatch. Ops are
    visited from the last to the first; a producer of an input whose only
    use is the tiled op is fused into it (computed per tile). So is an
    all-parallel producer of the destination that nothing else uses (the
    fill or bias broadcast that starts a contraction), which upstream
    tile-and-fuse does not fuse through a forall's outputs: each workgroup
    computes it on its tile of the output, and the loop starts from the
    producer's own destination.

    Tile sizes split the outermost parallel loops until about
    `workgroups` tiles exist (at most three loops, the workgroup grid's
    rank). A contraction's row and column loops of 64 iterations or more
    keep at least 64 a tile, the next loop split instead:
    its kernel reads all of the other operand once per workgroup, and a
    256-position feed-forward chunk split 64 ways into 4-row tiles ran its
    input gradient at 13 GFLOP/s. A top-level `tensor.extract_slice` (a strided view in general)
    becomes a `linalg.copy` first, so every computation ends up in some
    dispatch.

    A layer's copy of a cluster (a root with the producers fused into it)
    tiled before, the same ops wired the same way, gets a clone of that
    cluster's forall on its own operands, each op keeping its own location
    (WorkgroupTileTemplates.h): the same IR as tiling it again, in a third
    of the time at depth 16. `reuse-tiles=false` tiles every cluster anew.

    ```mlir
    %0 = linalg.generic ... ins(%x : tensor<1x512x128xf32>) ...
    // becomes
    %0 = scf.forall (%i, %j) = (0, 0) to (1, 512) step (1, 8) ... {
      ... linalg.generic on a 1x8x128 slice ...
    }
    ```
  }];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect"
  ];
  let options = [
    Option<"workgroups", "workgroups", "int64_t",
           /*default=*/"::lcc::knobs::kWorkgroups.defaultValue",
           "Number of workgroups to aim for per dispatch">,
    Option<"reuseTiles", "reuse-tiles", "bool", /*default=*/"true",
           "Clone the tiling of an equal cluster tiled before">,
  ];
}

def OutlineDispatches : Pass<"lcc-outline-dispatches", "mlir::ModuleOp"> {
  let summary = "outline each scf.forall into a dispatch function";
  let description = [{
    Every top-level `scf.forall` of a function (and every remaining top-level
    TilingInterface op, as a single workgroup) becomes a private function
    `@<func>_dispatch_<n>` on tensors, marked `lcc.dispatch` and carrying
    its `lcc.workgroup_count` (three values). Inside it, the forall's
    induction variables are computed from `gpu.block_id x/y/z`, so the same
    body serves the CPU device (block ids are kernel arguments) and the GPU
    (block ids are CTA ids). Each `tensor.parallel_insert_slice` becomes a
    `tensor.insert_slice` into the matching output argument.

    Arguments are the tensors the body reads, then one per output; views
    (`tensor.extract_slice`, `expand_shape`, `collapse_shape`), constants,
    `tensor.empty` and scalar computations (including loops that only yield
    scalars) are cloned into the dispatch instead of passed. A constant
    tensor of 1 KiB or more that is not a splat (an LSH layer's rotations) is
    passed instead, computed by a dispatch of its own just before each
    dispatch reading it: built in, it would make each layer's kernels its
    own. The forall is replaced by a `func.call` of the dispatch.

    A copy of an op already outlined (another layer's: the same ops reading
    other values of the same kinds, one to one) is not outlined again: it
    calls the first one's dispatch on its own values, carrying the
    `lcc.name` and `lcc.location` of what it computes, as
    `lcc-deduplicate-dispatches` would leave it.

    Any other top-level op that computes tensors (a loop over tensors left
    where a one-iteration forall folded away, a strided insert_slice, a
    constant the host returns) becomes a dispatch of one workgroup with
    fresh outputs; a scalar it yields travels as a 0-d tensor. What stays on
    the host is only calls, reshapes, contiguous insert_slices and
    `tensor.empty`; an op whose result no dispatch can return (a memref) is
    an error.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::gpu::GPUDialect"];
}

def DeduplicateDispatches
    : Pass<"lcc-deduplicate-dispatches", "mlir::ModuleOp"> {
  let summary = "call one dispatch function for all dispatches of equal body";
  let description = [{
    Dispatch functions (`lcc.dispatch`) that are equal but for their names
    (symbol, `lcc.name`, `lcc.location`) are one kernel: every call of a
    copy calls the first of them instead, and the copies are erased, so
    each distinct kernel is compiled once however deep the model is. A call
    pointed elsewhere gets the `lcc.name` (else the symbol) and
    `lcc.location` of the dispatch it was outlined as, which the host
    program's commands (and so reports and profiles) keep; a call that
    already has them (pointed at a copy's first dispatch by outlining or an
    earlier run) keeps its own. Equal means the
    same function type, the same attributes but the names (the workgroup
    count), and equivalent bodies by `OperationEquivalence` (ops,
    attributes and properties, constants, types, which value each operand
    is), locations excluded; a structural hash finds the candidates.
  }];
}

def ScheduleTransfers : Pass<"lcc-schedule-transfers", "mlir::ModuleOp"> {
  let summary = "run independent work between a transfer and its first reader";
  let description = [{
    The runtime starts a transfer among ranks (an op with the `Transfer`
    trait: `attn.all_to_all`, `attn.ring_shift`, `attn.all_reduce`) and
    runs the commands after it until one reads its bytes (docs/runtime.md,
    "Ranks"). In each host function, for each transfer in order, the ops
    after its first reader, up to and including the next transfer, that
    read neither the transfer's result, nor any transfer's result (a wait
    is never moved earlier), nor an op that stays, are moved before that
    first reader, in their order: a Ulysses all-to-all of the queries then
    runs while the values' projection computes and their all-to-all
    starts. Dispatch calls, reshapes, slices, `tensor.empty` and transfers
    move; collectives keep their order (every rank runs the same program).
    A move that would raise the most bytes the host's tensors hold at once
    (estimated as the planner places them: each tensor from its op to its
    last reader, reshapes and inserts into an assembly naming another's
    bytes) is undone: a transfer overlaps only work that costs no memory.
    Ring attention's shifts and the train step's gradient all-reduces are
    already written ahead of their readers; around them nothing moves.
  }];
}

def PrintHostPlan : Pass<"lcc-print-host-plan", "mlir::ModuleOp"> {
  let summary = "print the buffer plan of every host program (for tests)";
  let description = [{
    Runs the host planner of `lcc` on every function of dispatch calls (the
    IR after `lcc-outline-dispatches`) and prints, to stdout, each planned
    buffer (kind, bytes, arena offset and live range) and each command
    (dispatches with the byte ranges they read and write, copies). The
    planner's hazard check runs too: a plan in which a write lands on bytes
    that a tensor still holds fails the pass with the message `lcc` would
    give. The IR is not changed.

    ```
    host plan of @forward: 3 buffers, 1 commands, arena 64 bytes
      buffer 0: input 0, 64 bytes
      buffer 2: transient, 64 bytes at arena offset 0, live 0..0
      command 0: dispatch forward_dispatch_0 [1, 1, 1] reads b0[0, 64) writes b2[0, 64)
    ```
  }];
}

def PromoteTemporariesToStack
    : Pass<"lcc-promote-temporaries-to-stack", "mlir::func::FuncOp"> {
  let summary = "CPU: a dispatch's tile temporaries on the stack";
  let description = [{
    Before buffer deallocation: each statically shaped `memref.alloc` of a
    function's own body (not inside a loop or a branch, never returned)
    becomes a `memref.alloca` while they add up to at most `max-bytes`
    (default 256 KiB: dense attention's 96 x 96 tiles need about 110 KiB;
    a caller of the runtime on a thread of 1 MiB of stack, Java's default,
    keeps room for the rest). A CPU dispatch
    allocates its temporaries once per workgroup; from glibc's heap a
    workgroup's hundred-odd KiB is often trimmed off the top of the heap
    when freed and faulted back in by the next workgroup.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"262144",
           "Most bytes of temporaries one function keeps on the stack">,
  ];
}

def PromoteWorkgroupBuffers
    : Pass<"lcc-promote-workgroup-buffers", "mlir::gpu::GPUModuleOp"> {
  let summary = "place the buffers a GPU kernel allocates in shared memory";
  let description = [{
    A bufferized dispatch allocates its tile temporaries (score blocks,
    running maxima, padded tiles) with `memref.alloc`. On the GPU they are
    shared by the threads of a block, so each static allocation of a kernel
    becomes a slot of the block's dynamic shared memory
    (`gpu.dynamic_shared_memory` + `memref.view`), cast to the generic
    address space so that its users keep their types. Slots are 16-byte
    aligned and laid end to end. A dynamically sized buffer gets a slot as
    large as the constant upper bound of its sizes.

    An allocation inside an `scf.for` whose buffer is carried to the next
    iteration (yielded, as flash attention's running maximum is) gets two
    slots, used by even and odd iterations, because the next iteration
    reads the old buffer while writing the new one. Buffers that do not fit
    in `max-bytes` go to a global scratch array of the kernel
    (`@<kernel>_scratch`, sized by its `lcc.workgroup_count`), each
    workgroup using its own part of it. A buffer carried through two nested
    loops or a size without a constant bound is an error naming the kernel.
    The shared bytes are recorded in the kernel's
    `lcc.workgroup_memory_bytes` attribute, the dynamic shared memory of its
    launch.
  }];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::memref::MemRefDialect",
    "mlir::arith::ArithDialect"
  ];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"232448",
           "Shared memory one block may use: lcc gives --cuda-arch's "
           "limit (64 KiB on sm_75, 99 KiB on sm_86/89/120, 163 KiB on "
           "sm_80/87, 227 KiB on sm_90/100, the default)">,
  ];
}

def HintBlocksPerSm : Pass<"lcc-hint-blocks-per-sm", "mlir::gpu::GPUModuleOp"> {
  let summary = "tell ptxas how many blocks an SM holds by shared memory";
  let description = [{
    ptxas, told only a kernel's block size (`.maxntid`), keeps its
    registers down for an occupancy the kernel's shared memory may already
    rule out, and spills to get there. A kernel whose shared memory
    (`lcc.workgroup_memory_bytes`) lets an SM of `arch` hold fewer blocks
    than its threads would gets `nvvm.minctasm` (`.minnctapersm`) with
    that count, so that ptxas takes the registers it leaves. Only where
    the count leaves at least 96 registers a thread: ptxas meets it at any
    cost, spilling.
  }];
  let dependentDialects = ["mlir::NVVM::NVVMDialect"];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90\"",
           "The CUDA architecture whose SM limits apply">,
    Option<"blockSize", "block-size", "int64_t",
           /*default=*/"::lcc::knobs::kCudaBlockSize.defaultValue",
           "Threads per block of every kernel">,
  ];
}

def SplitRowReductions
    : Pass<"lcc-split-row-reductions", "mlir::func::FuncOp"> {
  let summary = "CPU: reductions along a row's contiguous elements in lanes";
  let description = [{
    A bufferized reduction whose innermost loop is its one reduction loop,
    of N (a multiple of `lanes`, at least twice it) contiguous elements per
    row, and whose body only combines its output with one value (`addf`,
    `maximumf`, `minimumf`: a row sum, a sum of squares, a layer norm's
    statistics, a softmax's maximum) is one dependent chain of N scalar
    operations per row: LLVM may not reorder float sums, so it neither
    vectorizes nor overlaps them. It becomes two reductions: `lanes`
    partial results per row, element `r * lanes + l` going to lane `l`
    (starting from the combiner's identity, in a stack buffer; the lanes a
    vector loop), then the lanes combined into the output in order. The
    order is fixed by `lanes`, not by the target's vector width: a CPU with
    AVX2 and one with AVX-512 sum alike. Reductions inside a kernel's loops
    (a flash attention tile's row maxima and sums: measured slower split),
    over more than 64 KiB of partial results per call, or reading their
    loop indices, are left as they are.
  }];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect",
    "mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
    "mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "Partial results per row (at least 2)">,
  ];
}

def VectorizeContractions
    : Pass<"lcc-vectorize-contractions", "mlir::func::FuncOp"> {
  let summary = "register-tile and vectorize contractions of CPU kernels";
  let description = [{
    A bufferized contraction C[m, n] += A[m, k] * B[k, n] whose C is
    row-major in `n` and whose inputs read `n` as their last dimension is
    tiled into register blocks of C with `k` innermost, each tile
    vectorized (`vector.contract`), the block of C hoisted out of the `k`
    loop into registers, and the contraction lowered to outer products
    (FMAs). A generic contraction of f32 matrices is first made a named
    `linalg.matmul` (which the vectorizer turns into `vector.contract`; a
    generic one would become broadcasts and a multi-reduction); one that
    reads B as (n, k), as q·kᵀ does, gets B transposed into a temporary
    first: at most 64 KiB of it in one stack buffer made at the function's
    entry (every iteration of an enclosing loop reuses it), a larger one on
    the heap; with 16 lanes (AVX-512) or 8 (AVX) and sizes the lanes
    divide, in blocks of lanes x lanes read as vectors and transposed by
    shuffles (8 x 8 by AVX's unpacks, shuffles and 128-bit permutes).
    Contractions of another shape, or whose `m` and `n` no block divides,
    are left to the loop lowering.

    The block is sized for the target's vector registers (`vector-bits`
    wide, `vector-registers` of them), at most as many rows as leave room
    for the row of B, the broadcast element of A and one spare register.
    When a step's elements of A are adjacent (A read as (k, m), as pᵀ·v
    reads its probabilities): the widest row of B of 4, 2 or 1 vectors that
    divides `n` and still fits 6 rows, and every row that fits. When they
    lie down a column of A (q·kᵀ's keys): two vectors of B per row when `n`
    allows (else one), and no more than 16 accumulators. Rows of C that no
    whole block covers (64 = 10 x 6 + 4) are one last, shorter block. AVX2
    (256 bits, 16 registers) gives 6 x 16 blocks for both; AVX-512 (512,
    32) 6 x 64 for pᵀ·v and 8 x 32 for q·kᵀ. lcc sets both from the CPU it
    compiles for; `tile-m` and `tile-n` (non-zero, dividing C) fix the
    block instead.

    A step's elements of A that are only taken apart to be broadcast are
    read by scalar loads, which LLVM folds into broadcasts from memory.

    With `bf16-dot` (a CPU with avx512_bf16; needs vector-bits=512), a
    contraction of bf16 operands in adjacent pairs of k accumulated in f32
    (C[m, n] += sum A[m, p, j] times B[p, n, j]) becomes blocks of AVX-512
    bf16 dot products (`x86vector.avx512.dot`): per pair, a load of B per
    16 columns, a broadcast of A's pair per row, one dot product per
    accumulator; blocks sized by the same rule.
    Without it such a contraction is left to the loop lowering.

    With `amx-tiles` as well (a CPU with amx_bf16), such a contraction whose
    C is whole 16 x 16 tiles, whose pairs are whole steps of 16 (at most
    16 steps) and whose rows of A's pairs are contiguous becomes AMX tile
    products (`amx.tile_mulf`, tdpbf16ps): C in blocks of up to 2 x 2 tiles,
    each loaded or zeroed, advanced over every step (unrolled: no tile
    lives across a loop) with two tiles of A and two of B, and stored.
    16 x 16 x 32 products per instruction against the dot product's 16 x 2.
  }];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect", "mlir::scf::SCFDialect",
    "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect",
    "mlir::x86vector::X86VectorDialect", "mlir::amx::AMXDialect"
  ];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"0",
           "Rows of C per register block (0: by the rule)">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"0",
           "Columns of C per register block, a power of two (0: by the "
           "rule)">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of the target's vector registers in bits">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"16", "Number of the target's vector registers">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "Lower paired bf16 contractions to AVX-512 bf16 dot products">,
    Option<"amxTiles", "amx-tiles", "bool", /*default=*/"false",
           "Lower paired bf16 contractions whose shape fits AMX tiles to "
           "tile products (needs bf16-dot)">,
  ];
}

def StageOperandTiles
    : Pass<"lcc-stage-operand-tiles", "mlir::gpu::GPUModuleOp"> {
  let summary = "copy the global inputs of contractions into block buffers";
  let description = [{
    A contraction (a linalg op with a reduction loop, such as flash
    attention's q·kᵀ and p·v) reads each input element many times. Each of
    its inputs that is a statically shaped view of a kernel argument the
    kernel never writes, of at most `max-bytes`, is copied into a fresh
    buffer by a `linalg.copy` placed where the view is made (so a tile
    invariant in a loop is copied once), and the contraction reads the
    copy. Rows of the copy are padded so that a warp's reads hit different
    shared-memory banks: by one element (the threads that read one column),
    or for a tile of bf16 pairs ([..][n][2], a pair one bank word) by 4
    pairs where n is reduced over and 8 where it is not, so that mma.sync's
    fragment loads of 8 rows by 4 pairs meet no conflict.

    Run before `lcc-distribute-to-threads` (the copy becomes a coalesced
    loop over the threads) and `lcc-promote-workgroup-buffers` (the buffer
    becomes shared memory).
  }];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect"
  ];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"32768",
           "Largest input to copy">,
  ];
}

def DistributeToThreads
    : Pass<"lcc-distribute-to-threads", "mlir::gpu::GPUModuleOp"> {
  let summary = "spread each kernel's loops over the threads of its block";
  let description = [{
    A bufferized dispatch describes the work of one workgroup. On the GPU a
    workgroup is a block of `block-size` threads, and every thread runs the
    kernel body:

    - Each linalg op becomes loops whose leading parallel loops are
      coalesced into one and strided over the threads (thread `t` takes
      iterations t, t + block-size, ...). The innermost parallel dimension
      varies fastest, so neighbouring threads touch neighbouring elements
      (coalesced global loads and stores). Reduction loops stay inside one
      thread.
    - Any other op that writes memory (a `memref.store`, a loop of scalar
      stores) runs on thread 0 only; its results (numbers) reach the other
      threads through one-element buffers, which
      `lcc-promote-workgroup-buffers` then places in shared memory.
    - Control flow around them (`scf.for`, `scf.if`) is run by every thread;
      its conditions and bounds are the same in every thread, since they
      come from block ids, loop counters and memory read after a barrier.
    - A `gpu.barrier` separates every write from what comes before and
      after it, so each op sees the memory the previous ops left, as on
      the CPU.
    - With `tensor-cores`, a paired bf16 product (TensorBuilder's
      pairedMatmul: A[m][kp][2] x B[kp][n][2] into f32 C[m][n], M a
      multiple of 16, N of 8, K of 16) is computed by the block's warps,
      each 16 x 8 tile of C by `mma.sync.aligned.m16n8k16` over K
      (TensorCoreContractions.cpp); with `tf32` too, an f32 product
      C[m][n] += A B of whole m16n8k8 tiles, its operands rounded to tf32.

    The kernel is marked with its `known_block_size`.
  }];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
    "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
    "mlir::LLVM::LLVMDialect", "mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "Compute paired bf16 products with mma.sync m16n8k16 (sm_80 and up)">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "With tensor-cores: f32 products too, rounded to tf32 (m16n8k8)">,
    Option<"blockSize", "block-size", "int64_t",
           /*default=*/"::lcc::knobs::kCudaBlockSize.defaultValue",
           "Threads per block">,
  ];
}

//===----------------------------------------------------------------------===//
// The steps of the kernel stages (StagePipelines.h) that are not upstream
// passes: each wraps one function of its target's file.
//===----------------------------------------------------------------------===//

def ExtractDispatches : Pass<"lcc-extract-dispatches", "mlir::ModuleOp"> {
  let summary = "keep only the dispatch functions: what a target compiles";
  let description = [{
    Erases every function without `lcc.dispatch` (the host programs, which
    lcc plans separately), so the module holds the kernels alone. The first
    step of `lcc-lower-to-kernels`, so that lcc-opt can start from lcc's
    dispatches dump.
  }];
}

def UseBufferSignatures : Pass<"lcc-use-buffer-signatures", "mlir::ModuleOp"> {
  let summary = "give each dispatch the buffer signature the runtime binds";
  let description = [{
    Every argument becomes a memref read through `to_tensor restrict`; each
    result is materialised into its output argument (outputs last), so
    bufferization writes outputs in place. Fails on a function that is not
    a dispatch.
  }];
  let dependentDialects = [
    "mlir::bufferization::BufferizationDialect",
    "mlir::memref::MemRefDialect", "mlir::func::FuncDialect"
  ];
}

def FoldFillCopies : Pass<"lcc-fold-fill-copies"> {
  let summary = "a copy out of a buffer holding one fill becomes that fill";
  let description = [{
    After bufferization: a `memref.alloc` whose uses are one `linalg.fill`,
    copies that read it (`memref.copy` or `linalg.copy`, each dominated by
    the fill) and deallocations is erased, each copy replaced by the fill
    of its target. One-shot bufferization copies a loop-carried tensor's
    initial fill (a flash attention's zero scores) from a buffer of its
    own, once per iteration; on a GPU that buffer takes shared memory.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def CopiesToLinalg : Pass<"lcc-copies-to-linalg", "mlir::ModuleOp"> {
  let summary = "make every memref.copy a linalg.copy";
  let description = [{
    A copy of strided views would otherwise become a call of MLIR's runner
    library, which no device has.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def BlockIdsToArguments
    : Pass<"lcc-block-ids-to-arguments", "mlir::ModuleOp"> {
  let summary = "CPU: the workgroup id as three trailing index arguments";
  let description = [{
    On the CPU a dispatch is called once per workgroup with its id:
    `gpu.block_id x/y/z` become the kernel's last three arguments.
  }];
}

def ApproximateMath : Pass<"lcc-approximate-math", "mlir::ModuleOp"> {
  let summary = "CPU: exp and erf as polynomials that vectorize";
  let description = [{
    Softmax calls exp per score and the exact GELU erf per hidden unit, and
    a call of libm per element keeps the loop scalar, where a polynomial
    vectorizes. An f32 exp marked
    `lcc.shifted_exp` (the softmax's exp(x - m), m the row's maximum or
    logsumexp) becomes a short form valid below 88: n = round(x / ln2),
    a degree-6 polynomial of x - n ln2 (within 1.2 ulp of exp), n added to
    its exponent bits, 0 below -87 (14 vector instructions). Every other
    exp becomes MLIR's full-range approximation (within a few ulp of libm,
    21 instructions), and every erf MLIR's rational approximation (within
    3.8e-7 of erf, libm's erff within 2.4e-7).
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::vector::VectorDialect"
  ];
}

def ExpandBFloat16 : Pass<"lcc-expand-bf16", "mlir::ModuleOp"> {
  let summary = "CPU: bf16 conversions as integer arithmetic";
  let description = [{
    f32 -> bf16 rounding (to nearest even) and bf16 -> f32 widening as
    integer shifts and selects. LLVM turns a scalar fptrunc to bfloat into
    a call of __truncsfbf2, which Debian 12's libgcc does not have, and the
    kernels link against nothing else.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def OutlineGpuModule : Pass<"lcc-outline-gpu-module", "mlir::ModuleOp"> {
  let summary = "CUDA: the dispatches as gpu.func kernels of one gpu.module";
  let description = [{
    Moves each dispatch function into a `gpu.func` kernel (keeping its
    `lcc.workgroup_count`) of the new `gpu.module @lcc_kernels`, with the
    memref globals they use.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def BlockLoopSums : Pass<"lcc-block-loop-sums", "mlir::gpu::GPUModuleOp"> {
  let summary = "CUDA: a kernel's long running sums in blocks";
  let description = [{
    A loop from 0 by 1 to a constant N of at least 256 whose iteration
    arguments are each only a running sum (its one use a float `addf` in
    the body, yielded as its next value) runs as N / B blocks of B
    iterations (B: passes/Summation.h, the largest divisor of N at most
    sqrt(N)): each block sums its terms from zero and the block's sum is
    added to the running one. A thread's reduction over a sequence's 4096
    positions (a weight gradient's output column) was one running float32
    sum, 1e-6 to 2e-6 off; in blocks it rounds as the CPU's and float32
    frameworks' sums do. Loops that do anything else with their arguments
    are left as they are.

    ```mlir
    %s = scf.for %k = %c0 to %c4096 step %c1 iter_args(%a = %init) -> (f32) {
      %x = ... %k ...
      %n = arith.addf %a, %x : f32
      scf.yield %n : f32
    }
    // becomes
    %s = scf.for %b = %c0 to %c64 step %c1 iter_args(%a = %init) -> (f32) {
      %p = scf.for %j = %c0 to %c64 step %c1 iter_args(%q = %zero) -> (f32) {
        %k = %b * 64 + %j
        ...
      }
      %n = arith.addf %a, %p : f32
      scf.yield %n : f32
    }
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
}

def ExpandMath : Pass<"lcc-expand-math", "mlir::gpu::GPUModuleOp"> {
  let summary = "CUDA: transcendental math as arithmetic, without libdevice";
  let description = [{
    Polynomial approximations and expansions for every math op NVPTX has no
    instruction for (rsqrt as 1 / sqrt): an artifact cannot link libdevice.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::math::MathDialect",
    "mlir::vector::VectorDialect"
  ];
}

def ConvertToNVVM : Pass<"lcc-convert-to-nvvm", "mlir::gpu::GPUModuleOp"> {
  let summary = "CUDA: gpu-to-nvvm without its libdevice calls";
  let description = [{
    Upstream's pass makes the LLVM math intrinsics illegal so that they
    become libdevice calls, which only a CUDA installation has; NVPTX has
    instructions for the ones `lcc-expand-math` leaves, so they stay
    intrinsics. Index is 64-bit and kernels take bare pointers.
  }];
  let dependentDialects = [
    "mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect"
  ];
}

#endif // LCC_COMPILER_PASSES
