//===- AttentionMap.cpp - lcc --emit=attention-map
//-------------------------===//

#include "compiler/AttentionMap.h"

#include "dialects/Attn/IR/AttnOps.h"
#include "passes/AttentionForms.h"
#include "passes/LowerToLinalg/MaskTiles.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace lcc;
using lcc::lowering::MaskTileTable;
using lcc::lowering::MaskTiling;

namespace {

/// The SVG's plot is at most this many pixels a side; a grid of more tiles
/// than pixels shows groups of tiles, shaded by the share they visit.
constexpr int64_t kPlotPixels = 512;
/// A causal grid of more tiles a side than this is drawn from coarser tiles
/// (its counts stay exact): a million tokens would otherwise need a table
/// of hundreds of megabytes for a picture of 512 x 512 cells.
constexpr int64_t kMaxDrawnTiles = 2048;

/// "model.mlir:27:12" of `op`, or "" where it has no file position.
std::string positionOf(Operation *op) {
  std::string text;
  op->getLoc()->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                           file.getLine(), file.getColumn())
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

/// The tile table of a dense attention without a mask region: every pair
/// visited and unmasked, or, causal, the pairs at or below the diagonal
/// (those crossing it masked).
MaskTileTable causalTable(const MaskTiling &t) {
  MaskTileTable table;
  table.queryTiles = (t.querySeq + t.queryTile - 1) / t.queryTile;
  table.keyTiles = (t.keySeq + t.keyTile - 1) / t.keyTile;
  for (int64_t q = 0; q < table.queryTiles; ++q)
    for (int64_t k = 0; k < table.keyTiles; ++k) {
      int64_t lastQuery = std::min(t.querySeq, (q + 1) * t.queryTile) - 1;
      int64_t firstKey = k * t.keyTile,
              lastKey = std::min(t.keySeq, (k + 1) * t.keyTile) - 1;
      uint8_t cls = lowering::kFullTile;
      if (t.causal && firstKey > lastQuery)
        cls = lowering::kHiddenTile;
      else if (t.causal && lastKey > q * t.queryTile)
        cls = lowering::kPartialTile;
      table.hiddenTiles += cls == lowering::kHiddenTile;
      table.fullTiles += cls == lowering::kFullTile;
      table.visible.push_back(cls);
    }
  return table;
}

/// `text` as SVG text: a path may hold '&' or '<'.
std::string escaped(StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printHTMLEscaped(text, os);
  return out;
}

/// The pairs a causal (or unmasked) attention visits at `t`'s tiles,
/// counted without a table.
int64_t causalVisited(const MaskTiling &t) {
  int64_t queryTiles = (t.querySeq + t.queryTile - 1) / t.queryTile;
  int64_t keyTiles = (t.keySeq + t.keyTile - 1) / t.keyTile;
  if (!t.causal)
    return queryTiles * keyTiles;
  int64_t visited = 0;
  for (int64_t q = 0; q < queryTiles; ++q) {
    int64_t lastQuery = std::min(t.querySeq, (q + 1) * t.queryTile) - 1;
    visited += std::min(keyTiles, lastQuery / t.keyTile + 1);
  }
  return visited;
}

/// The start of a map's SVG, `height` pixels tall: a white page as wide as
/// its plot (which ends `plotRight` pixels from the left) and its longest
/// line of text, the title and the subtitle.
std::string svgPage(double plotRight, double height, const std::string &title,
                    const std::string &subtitle, const std::string &legend) {
  // A sans-serif character is at most about 0.6 em on average (the
  // headless Chromium test renders it).
  double textWidth =
      0.6 * std::max({14.0 * title.size(), 12.0 * subtitle.size(),
                      12.0 * legend.size()});
  return llvm::formatv(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:F0}\" "
      "height=\"{1:F0}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"20\" y=\"20\" font-size=\"14\">{2}</text>\n"
      "<text x=\"20\" y=\"40\">{3}</text>\n",
      std::max(plotRight, 20 + textWidth) + 20, height, escaped(title),
      escaped(subtitle));
}

/// The end of a map's SVG: the frame of its plot (`width` x `height`, in
/// the plot's group, which it closes) and the legend at `legendY`.
std::string svgPlotEnd(double width, double height, double legendY,
                       const std::string &legend) {
  return llvm::formatv("<rect width=\"{0:F1}\" height=\"{1:F1}\" "
                       "fill=\"none\" stroke=\"#999\"/>\n</g>\n"
                       "<text x=\"20\" y=\"{2:F1}\">{3}</text>\n</svg>\n",
                       width, height, legendY, escaped(legend));
}

/// The SVG of `table` (the first batch and head's, when per batch-head).
std::string renderMap(const MaskTileTable &table, const std::string &title,
                      const std::string &subtitle) {
  int64_t rows = table.queryTiles, cols = table.keyTiles;
  int64_t group = std::max<int64_t>(
      1, (std::max(rows, cols) + kPlotPixels - 1) / kPlotPixels);
  int64_t groupRows = (rows + group - 1) / group,
          groupCols = (cols + group - 1) / group;
  double cell = double(kPlotPixels) / double(std::max(groupRows, groupCols));
  double left = 20, top = 60;
  std::string legend = "query tiles down, key tiles across; dark: every "
                       "score computed, light: masked within the tile, "
                       "white: never read";
  std::string svg =
      svgPage(left + cell * groupCols, top + cell * groupRows + 40, title,
              subtitle, legend);
  svg += llvm::formatv("<g class=\"tiles\" transform=\"translate({0},{1})\">\n",
                       left, top);
  for (int64_t gr = 0; gr < groupRows; ++gr)
    for (int64_t gc = 0; gc < groupCols; ++gc) {
      int64_t visited = 0, full = 0, count = 0;
      for (int64_t r = gr * group; r < std::min(rows, (gr + 1) * group); ++r)
        for (int64_t c = gc * group; c < std::min(cols, (gc + 1) * group);
             ++c) {
          uint8_t cls = table.visible[r * cols + c];
          visited += cls != lowering::kHiddenTile;
          full += cls == lowering::kFullTile;
          ++count;
        }
      if (visited == 0)
        continue;
      // Unmasked work dark, masked lighter, by the share of the group.
      const char *color = full == visited ? "#1f4e8c" : "#6fa8dc";
      svg += llvm::formatv(
          "<rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"{2:F1}\" height=\"{2:F1}\" "
          "fill=\"{3}\" fill-opacity=\"{4:F2}\"/>\n",
          gc * cell, gr * cell, cell, color, double(visited) / double(count));
    }
  svg += svgPlotEnd(cell * groupCols, cell * groupRows,
                    top + cell * groupRows + 24, legend);
  return svg;
}

/// The map of a dense attention op, or nullopt with `why`.
std::optional<AttentionMap> mapOf(attn::AttentionOp op, AttentionTiling tiles,
                                  std::string &why) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto k = cast<RankedTensorType>(op.getKey().getType());
  if (!q.hasStaticShape() || !k.hasStaticShape()) {
    why = "dynamic shapes";
    return std::nullopt;
  }
  MaskTiling tiling =
      MaskTiling::of(op.getQuery(), op.getKey(), tiles.queryTile, tiles.keyTile,
                     op.getCausal());
  MaskTileTable first;
  int64_t pairs = 0, visited = 0;
  bool perBatchHead = false;
  if (Region *mask = op.getMaskRegion()) {
    FailureOr<MaskTileTable> computed =
        lowering::computeMaskTileTable(mask, tiling, why);
    if (failed(computed))
      return std::nullopt;
    // A table per (batch, head) is drawn for the first of them.
    first = std::move(*computed);
    perBatchHead = first.perBatchHead;
    pairs = first.queryTiles * first.keyTiles;
    first.visible.resize(pairs);
    visited = pairs - std::count(first.visible.begin(), first.visible.end(),
                                 uint8_t(lowering::kHiddenTile));
  } else {
    int64_t queryTiles =
                (tiling.querySeq + tiling.queryTile - 1) / tiling.queryTile,
            keyTiles = (tiling.keySeq + tiling.keyTile - 1) / tiling.keyTile;
    pairs = queryTiles * keyTiles;
    visited = causalVisited(tiling);
    int64_t coarse = std::max<int64_t>(
        1,
        (std::max(queryTiles, keyTiles) + kMaxDrawnTiles - 1) / kMaxDrawnTiles);
    MaskTiling drawn = tiling;
    drawn.queryTile *= coarse;
    drawn.keyTile *= coarse;
    first = causalTable(drawn);
  }
  std::string where = positionOf(op);
  AttentionMap map;
  map.summary =
      llvm::formatv("{0}: {1} of {2} tile pairs ({3:F1}% of dense work)", where,
                    visited, pairs, 100.0 * visited / pairs)
          .str();
  std::string title = llvm::formatv("attn.attention at {0}", where).str();
  std::string subtitle =
      llvm::formatv("{0} queries x {1} keys in {2}x{3} tiles{4}{5}: {6} of {7} "
                    "tile pairs computed, {8:F1}% of dense work",
                    tiling.querySeq, tiling.keySeq, tiling.queryTile,
                    tiling.keyTile, op.getCausal() ? ", causal" : "",
                    op.getMaskRegion() ? ", masked" : "", visited, pairs,
                    100.0 * visited / pairs)
          .str();
  if (perBatchHead)
    subtitle += " (batch 0, head 0)";
  map.svg = renderMap(first, title, subtitle);
  return map;
}

/// Cells a side of the map of an input's key selection, at most: one per
/// token up to it, then a few tokens per cell.
constexpr int64_t kSelectionCells = 128;
/// Segments of the strips of groups beside that map, at most.
constexpr int64_t kStripSegments = 512;

/// A colour of its own for each of `count` groups.
std::string groupColor(int32_t group) {
  double hue = std::fmod(group * 137.508, 360.0);
  return llvm::formatv("hsl({0:F0},65%,50%)", hue).str();
}

/// Rectangles of the groups of `groups` along `length` pixels, across
/// (keys) or down (queries), `thickness` wide at `offset`: runs of one
/// group are one rectangle; past kStripSegments tokens a segment shows its
/// most common group.
std::string groupStrip(ArrayRef<int32_t> groups, double length,
                       double thickness, double offset, bool across) {
  int64_t n = groups.size();
  int64_t per = std::max<int64_t>(1, (n + kStripSegments - 1) / kStripSegments);
  std::vector<int32_t> segment;
  for (int64_t start = 0; start < n; start += per) {
    llvm::DenseMap<int32_t, int64_t> votes;
    int32_t best = groups[start];
    for (int64_t i = start; i < std::min(n, start + per); ++i)
      if (++votes[groups[i]] > votes[best])
        best = groups[i];
    segment.push_back(best);
  }
  double step = length / double(segment.size());
  std::string svg;
  for (size_t i = 0; i < segment.size();) {
    size_t end = i;
    while (end < segment.size() && segment[end] == segment[i])
      ++end;
    double from = i * step, size = (end - i) * step;
    svg += llvm::formatv("<rect x=\"{0:F2}\" y=\"{1:F2}\" width=\"{2:F2}\" "
                         "height=\"{3:F2}\" fill=\"{4}\"/>\n",
                         across ? from : offset, across ? offset : from,
                         across ? size : thickness, across ? thickness : size,
                         groupColor(segment[i]));
    i = end;
  }
  return svg;
}

/// The SVG of the keys `selection` gives each query: cells of a few
/// queries by a few keys, shaded by the share of their pairs scored, with
/// each query's group down the left and each key's across the top.
std::string renderSelection(const KeySelection &selection,
                            const std::string &title,
                            const std::string &subtitle) {
  int64_t rows = selection.queries, cols = selection.keys;
  int64_t per = std::max<int64_t>(
      1, (std::max(rows, cols) + kSelectionCells - 1) / kSelectionCells);
  int64_t cellRows = (rows + per - 1) / per, cellCols = (cols + per - 1) / per;
  std::vector<int64_t> scored(cellRows * cellCols, 0);
  for (int64_t q = 0; q < rows; ++q)
    for (int64_t i = selection.offsets[q]; i < selection.offsets[q + 1]; ++i)
      ++scored[(q / per) * cellCols + selection.visibleKeys[i] / per];
  double cell = double(kPlotPixels) / double(std::max(cellRows, cellCols));
  double strip = 10, left = 20 + strip + 4, top = 60 + strip + 4;
  std::string legend =
      "queries down, keys across (batch 0, head 0); shade: the share of a "
      "cell's query-key pairs scored; colours: each token's " +
      selection.groupName;
  std::string svg = svgPage(left + cell * cellCols, top + cell * cellRows + 40,
                            title, subtitle, legend);
  svg += llvm::formatv(
      "<g class=\"groups\" transform=\"translate({0},{1})\">\n", left, top);
  svg += groupStrip(selection.queryGroups, cell * cellRows, strip, -strip - 4,
                    /*across=*/false);
  if (!selection.keyGroups.empty())
    svg += groupStrip(selection.keyGroups, cell * cellCols, strip, -strip - 4,
                      /*across=*/true);
  svg += "</g>\n";
  svg += llvm::formatv("<g class=\"tiles\" transform=\"translate({0},{1})\">\n",
                       left, top);
  for (int64_t r = 0; r < cellRows; ++r)
    for (int64_t c = 0; c < cellCols; ++c) {
      int64_t count = scored[r * cellCols + c];
      if (count == 0)
        continue;
      double pairs = double(std::min(rows, (r + 1) * per) - r * per) *
                     double(std::min(cols, (c + 1) * per) - c * per);
      svg += llvm::formatv(
          "<rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"{2:F1}\" height=\"{2:F1}\" "
          "fill=\"#1f4e8c\" fill-opacity=\"{3:F2}\"/>\n",
          c * cell, r * cell, cell, std::max(0.08, double(count) / pairs));
    }
  svg += svgPlotEnd(cell * cellCols, cell * cellRows,
                    top + cell * cellRows + 24, legend);
  return svg;
}

/// The map of `op`, whose keys depend on the input, for `selection`.
AttentionMap mapOfSelection(Operation *op, const KeySelection &selection) {
  std::string where = positionOf(op);
  double dense = double(selection.queries) * double(selection.keys);
  double share = 100.0 * selection.computedScores / dense;
  double visible = double(selection.visibleKeys.size()) /
                   double(std::max<int64_t>(1, selection.queries));
  AttentionMap map;
  map.summary = llvm::formatv("{0}: {1} for the input: {2:F1}% of dense "
                              "work, {3:F1} keys seen per query",
                              where, selection.description, share, visible)
                    .str();
  std::string title =
      llvm::formatv("{0} at {1}", op->getName().getStringRef(), where).str();
  std::string subtitle =
      llvm::formatv("{0} queries x {1} keys, {2}: {3:F1}% of dense work, "
                    "{4:F1} keys seen per query",
                    selection.queries, selection.keys, selection.description,
                    share, visible)
          .str();
  map.svg = renderSelection(selection, title, subtitle);
  return map;
}

/// `text` with what is not a letter, digit, '.' or '-' made '-'.
std::string fileSafe(const std::string &text) {
  std::string out = text;
  for (char &c : out)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-')
      c = '-';
  return out;
}

} // namespace

std::string lcc::attentionMapKey(Operation *op) {
  return positionOf(op) + " " + op->getName().getStringRef().str();
}

std::vector<AttentionMap>
lcc::drawAttentionMaps(ModuleOp module, AttentionTiling tiling,
                       const llvm::StringMap<KeySelection> &selections,
                       bool inputGiven) {
  std::vector<AttentionMap> maps;
  llvm::StringSet<> drawn;
  module.walk([&](Operation *op) {
    if (!isa<attn::AttentionFormInterface>(op))
      return;
    std::string key = attentionMapKey(op);
    if (!drawn.insert(key).second)
      return; // a copy inlined into another function
    std::optional<AttentionMap> map;
    std::string why;
    if (auto dense = dyn_cast<attn::AttentionOp>(op)) {
      map = mapOf(dense, tiling, why);
    } else if (auto selection = selections.find(key);
               selection != selections.end()) {
      map = mapOfSelection(op, selection->second);
    } else {
      op->emitRemark() << "no attention map: the blocks '"
                       << op->getName().getStringRef()
                       << "' computes are decided at run time or by its "
                          "form's own layout, not by a compile-time table"
                       << (!lookupKeySelectionForm(op) ? ""
                           : inputGiven
                               ? " (and it is not in the function --input "
                                 "feeds, the model's first)"
                               : " (--input=FILE.npy draws them for an input)");
      return;
    }
    if (!map) {
      op->emitRemark() << "no attention map: " << why;
      return;
    }
    std::string where = positionOf(op);
    map->fileName = std::to_string(maps.size()) + "-" +
                    fileSafe(where.empty() ? "attention" : where) + ".svg";
    maps.push_back(std::move(*map));
  });
  return maps;
}
