//===- WorkgroupTileTemplates.cpp - tiled clusters reused -----------------===//

#include "compiler/WorkgroupTileTemplates.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

/// Where a member's operand comes from: another member's result, or the
/// cluster's `outer`th outer value.
struct Source {
  int member = -1;
  unsigned result = 0;
  unsigned outer = 0;
};

/// The same op but for its operands: name, attributes, properties, result
/// types and bodies (values inside them matched as they are defined). A
/// value a body reads from outside (a constant the canonicalizer hoisted,
/// a tensor a gather extracts from) is matched by one of the same type,
/// the same in every read: `captures` maps each of `a`'s to `b`'s.
bool sameOpButOperands(Operation *a, Operation *b, IRMapping &captures) {
  if (a->getNumOperands() != b->getNumOperands())
    return false;
  llvm::DenseMap<Value, Value> inner;
  return OperationEquivalence::isEquivalentTo(
      a, b,
      [&](Value l, Value r) {
        if (llvm::is_contained(a->getOperands(), l))
          return success(); // compared as the cluster's wiring
        if (Value defined = inner.lookup(l))
          return success(defined == r);
        if (Value captured = captures.lookupOrNull(l))
          return success(captured == r);
        if (l.getType() != r.getType())
          return failure();
        captures.map(l, r);
        return success();
      },
      [&](Value l, Value r) { inner[l] = r; },
      OperationEquivalence::IgnoreLocations);
}

/// The locations of `op`, the ops in its bodies and their blocks'
/// arguments, in walk order: equal ops give them in corresponding order.
SmallVector<Location> locationsOf(Operation *op) {
  SmallVector<Location> found;
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    found.push_back(nested->getLoc());
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          found.push_back(argument.getLoc());
  });
  return found;
}

/// What the bodies of `members` read from outside them.
llvm::SmallPtrSet<Value, 8> capturedBy(ArrayRef<Operation *> members) {
  llvm::SetVector<Value> captured;
  for (Operation *member : members)
    getUsedValuesDefinedAbove(member->getRegions(), captured);
  return llvm::SmallPtrSet<Value, 8>(captured.begin(), captured.end());
}

llvm::hash_code hashButOperands(Operation *op) {
  return OperationEquivalence::computeHash(
      op, OperationEquivalence::ignoreHashValue,
      OperationEquivalence::ignoreHashValue,
      OperationEquivalence::IgnoreLocations);
}

} // namespace

struct lcc::WorkgroupTileTemplates::Template {
  /// The cluster, root first, in the order its operands first reach them.
  SmallVector<Operation *> members;
  SmallVector<SmallVector<Source>> sources;
  /// Each outer value's first use: (member, operand).
  SmallVector<std::pair<unsigned, unsigned>> outerUses;
  /// What the members' bodies read from outside the cluster.
  llvm::SmallPtrSet<Value, 8> captures;
  scf::ForallOp forall;
  /// The forall's result that replaces each of the root's results.
  SmallVector<unsigned> resultOf;
};

lcc::WorkgroupTileTemplates::WorkgroupTileTemplates() = default;
lcc::WorkgroupTileTemplates::~WorkgroupTileTemplates() = default;

void lcc::WorkgroupTileTemplates::keep(ArrayRef<Operation *> members,
                                       scf::ForallOp forall,
                                       ArrayRef<Value> replacements) {
  Operation *root = members.front();
  auto kept = std::make_unique<Template>();
  kept->forall = forall;
  llvm::SmallPtrSet<Operation *, 8> memberSet(members.begin(), members.end());
  llvm::DenseMap<Operation *, unsigned> index = {{root, 0}};
  llvm::DenseMap<Value, unsigned> outers;
  kept->captures = capturedBy(members);
  // A body reads no member's result, and no value the members take as
  // operands: matching compares an operand's nested reads as its wiring.
  if (llvm::any_of(kept->captures, [&](Value v) {
        return memberSet.contains(v.getDefiningOp());
      }))
    return;
  kept->members.push_back(root);
  for (unsigned i = 0; i < kept->members.size(); ++i) {
    Operation *member = kept->members[i];
    SmallVector<Source> &sources = kept->sources.emplace_back();
    for (OpOperand &operand : member->getOpOperands()) {
      Value value = operand.get();
      Operation *def = value.getDefiningOp();
      Source source;
      if (def && memberSet.contains(def)) {
        auto [it, added] = index.try_emplace(def, kept->members.size());
        if (added)
          kept->members.push_back(def);
        source.member = it->second;
        source.result = cast<OpResult>(value).getResultNumber();
      } else {
        auto [it, added] = outers.try_emplace(value, outers.size());
        if (added)
          kept->outerUses.push_back({i, operand.getOperandNumber()});
        source.outer = it->second;
      }
      sources.push_back(source);
    }
  }
  if (kept->members.size() != members.size() ||
      llvm::any_of(outers, [&](auto &outer) {
        return kept->captures.contains(outer.first);
      }))
    return;
  // The forall reads the cluster's outer values and what its bodies read
  // from outside, nothing else.
  llvm::SetVector<Value> read;
  getUsedValuesDefinedAbove(forall.getRegion(), read);
  read.insert(forall->operand_begin(), forall->operand_end());
  if (llvm::any_of(read, [&](Value v) {
        return !outers.contains(v) && !kept->captures.contains(v);
      }))
    return;
  if (replacements.size() != root->getNumResults())
    return;
  for (Value replacement : replacements) {
    auto result = dyn_cast_or_null<OpResult>(replacement);
    if (!result || result.getOwner() != forall.getOperation())
      return;
    kept->resultOf.push_back(result.getResultNumber());
  }
  templates[hashButOperands(root)].push_back(std::move(kept));
}

/// The cluster of `root` that corresponds member by member to `t`'s: equal
/// ops, wired alike, none already fused, each member but the root read
/// only within the cluster. `reads` maps each value `t`'s forall reads
/// (its outer operands, what its bodies read from outside) to the
/// cluster's (each defined before its reader, so before `root`).
static bool matchCluster(const lcc::WorkgroupTileTemplates::Template &t,
                         Operation *root,
                         const llvm::SmallPtrSetImpl<Operation *> &fused,
                         SmallVectorImpl<Operation *> &members,
                         IRMapping &reads) {
  SmallVector<Value> outers;
  members.assign({root});
  llvm::SmallPtrSet<Operation *, 8> memberSet = {root};
  // Each operand as `t`'s comes: the next new member, a member met
  // before, the next new outer value or one met before.
  auto wiredAlike = [&](const Source &source, Value value, Type outerType) {
    if (source.member < 0) {
      if (source.outer < outers.size())
        return outers[source.outer] == value;
      if (source.outer != outers.size() || value.getType() != outerType)
        return false;
      outers.push_back(value);
      return true;
    }
    auto result = dyn_cast<OpResult>(value);
    if (!result || result.getResultNumber() != source.result)
      return false;
    Operation *def = result.getOwner();
    if (unsigned(source.member) < members.size())
      return members[source.member] == def;
    if (unsigned(source.member) != members.size() ||
        def->getBlock() != root->getBlock() || !memberSet.insert(def).second)
      return false;
    members.push_back(def);
    return true;
  };
  for (unsigned i = 0; i < t.members.size(); ++i) {
    if (i >= members.size() || fused.contains(members[i]) ||
        !sameOpButOperands(t.members[i], members[i], reads))
      return false;
    for (auto [j, source] : llvm::enumerate(t.sources[i]))
      if (!wiredAlike(source, members[i]->getOperand(j),
                      t.members[i]->getOperand(j).getType()))
        return false;
  }
  if (members.size() != t.members.size())
    return false;
  // The cluster dies with its root: what a member computes is read by
  // members only, and no outer value, nor one a body reads, is a member's.
  auto usedWithin = [&](Operation *member) {
    return llvm::all_of(member->getUsers(), [&](Operation *user) {
      return memberSet.contains(user);
    });
  };
  auto ofAMember = [&](Value v) {
    return memberSet.contains(v.getDefiningOp());
  };
  llvm::SmallPtrSet<Value, 8> captures = capturedBy(members);
  if (!llvm::all_of(llvm::drop_begin(members), usedWithin) ||
      llvm::any_of(outers, ofAMember) || llvm::any_of(captures, ofAMember) ||
      llvm::any_of(outers, [&](Value v) { return captures.contains(v); }))
    return false;
  // The comparison passes over a value both bodies read without telling
  // (it is equal to itself), so `reads` holds only the pairs that differ.
  // Each is safe to substitute only where the template reads it alone:
  // a template value the cluster reads too, or a cluster value the
  // template reads too, may be read as itself elsewhere (a clamp's bound
  // 0 here, 4 there, the same 0 as a gather's index in both).
  if (llvm::any_of(reads.getValueMap(), [&](auto &pair) {
        return captures.contains(pair.first) ||
               t.captures.contains(pair.second);
      }))
    return false;
  for (auto [outer, use] : llvm::enumerate(t.outerUses))
    reads.map(t.members[use.first]->getOperand(use.second), outers[outer]);
  return true;
}

/// Gives each op and block argument of `clone`, a copy of `t`'s forall,
/// the location of the corresponding op of `members`, as tiling them would:
/// the dispatch's name and source position, and a profile's rows, are this
/// layer's.
static void relocateClone(const lcc::WorkgroupTileTemplates::Template &t,
                          ArrayRef<Operation *> members, Operation *clone) {
  llvm::DenseMap<Attribute, Attribute> locations;
  for (auto [kept, member] : llvm::zip_equal(t.members, members))
    for (auto [from, to] :
         llvm::zip_equal(locationsOf(kept), locationsOf(member)))
      locations.try_emplace(from, to);
  auto relocate = [&](Location loc) -> Location {
    if (Attribute mapped = locations.lookup(loc))
      return cast<LocationAttr>(mapped);
    return loc;
  };
  clone->walk([&](Operation *op) {
    op->setLoc(relocate(op->getLoc()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          argument.setLoc(relocate(argument.getLoc()));
  });
}

bool lcc::WorkgroupTileTemplates::reuse(
    RewriterBase &rewriter, Operation *root,
    llvm::SmallPtrSetImpl<Operation *> &fused) {
  auto found = templates.find(hashButOperands(root));
  if (found == templates.end())
    return false;
  for (const std::unique_ptr<Template> &candidate : found->second) {
    const Template &t = *candidate;
    SmallVector<Operation *> members;
    IRMapping mapping;
    if (!matchCluster(t, root, fused, members, mapping))
      continue;
    rewriter.setInsertionPoint(root);
    Operation *clone = rewriter.clone(*t.forall, mapping);
    relocateClone(t, members, clone);
    for (auto [result, forallResult] :
         llvm::zip_equal(root->getResults(), t.resultOf))
      rewriter.replaceAllUsesWith(result, clone->getResult(forallResult));
    fused.insert(members.begin(), members.end());
    return true;
  }
  return false;
}
