//===- TrainingData.cpp - lcc-train's data and batches --------------------===//

#include "TrainingData.h"

#include <cstdio>
#include <cstring>

namespace lcc::train {

std::string quote(const std::string &text) {
  std::string out = "'";
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\x%02x", byte);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool findSignature(LccModule module, const std::string &name, Signature &info) {
  for (size_t f = 0; f < lccModuleGetFunctionCount(module); ++f) {
    if (name != lccModuleGetFunctionName(module, f))
      continue;
    info.name = name;
    auto read = [&](size_t count, auto get, std::vector<Argument> &out) {
      for (size_t i = 0; i < count; ++i) {
        LccTensorView view;
        get(module, f, i, &view);
        out.push_back({view.name ? view.name : "", view.dtype,
                       std::vector<int64_t>(view.shape, view.shape + view.rank),
                       view.size});
      }
    };
    read(lccModuleGetFunctionInputCount(module, f), lccModuleGetFunctionInput,
         info.inputs);
    read(lccModuleGetFunctionOutputCount(module, f), lccModuleGetFunctionOutput,
         info.outputs);
    return true;
  }
  return false;
}

std::string describeArgument(const Argument &argument, size_t index) {
  return "argument " + std::to_string(index) + " " + quote(argument.name);
}

/// "" when every argument of `step` has the same first dimension B >= 1:
/// a step takes B rows of every file.
std::string checkBatchDimension(const Signature &step) {
  if (step.inputs.empty())
    return std::string(kTrainStep) +
           " takes no arguments; there is no data to feed it";
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const Argument &argument = step.inputs[i];
    std::string what =
        describeArgument(argument, i) + " of " + kTrainStep + " is ";
    if (argument.shape.empty())
      return what + "a scalar; lcc-train needs a batch dimension";
    if (argument.shape[0] == 0)
      return what + formatShape(argument.shape) + ", an empty batch";
    if (argument.shape[0] != step.inputs[0].shape[0])
      return what + formatShape(argument.shape) + ", argument 0 " +
             quote(step.inputs[0].name) + " is " +
             formatShape(step.inputs[0].shape) +
             "; lcc-train needs one batch dimension for all";
  }
  return "";
}

std::string loadDataset(const std::vector<std::string> &paths, const char *flag,
                        const Signature &step, Dataset &dataset) {
  size_t count = step.inputs.size();
  if (paths.size() != count) {
    std::string names;
    for (size_t i = 0; i < count; ++i)
      names += (i ? ", " : "") + quote(step.inputs[i].name);
    // `step` holds the arguments that are not carried (--carry) only.
    return std::string(kTrainStep) + " takes " + std::to_string(count) +
           " argument" + (count == 1 ? "" : "s") +
           (count ? " (" + names + ")" : "") + " from data, got " +
           std::to_string(paths.size()) + " " + flag + " file" +
           (paths.size() == 1 ? "" : "s");
  }
  for (size_t i = 0; i < count; ++i) {
    const Argument &argument = step.inputs[i];
    std::string what = std::string(flag) + " '" + paths[i] + "' for " +
                       describeArgument(argument, i);
    std::string error = dataset.files.read(paths[i]);
    if (!error.empty())
      return error;
    const LccTensorView &view = dataset.files.views.back();
    if (view.dtype != argument.dtype)
      return what + ": expected dtype " + lccDTypeGetName(argument.dtype) +
             ", got " + lccDTypeGetName(view.dtype);
    std::vector<int64_t> shape(view.shape, view.shape + view.rank);
    std::vector<int64_t> rest(argument.shape.begin() + 1, argument.shape.end());
    if (shape.empty() ||
        std::vector<int64_t>(shape.begin() + 1, shape.end()) != rest) {
      std::string expected = "[N";
      for (int64_t dim : rest)
        expected += ", " + std::to_string(dim);
      return what + ": expected shape " + expected + "] (the argument's " +
             formatShape(argument.shape) + " less its batch dimension), got " +
             formatShape(shape);
    }
    uint64_t rows = uint64_t(shape[0]);
    uint64_t batch = uint64_t(argument.shape[0]);
    if (rows < batch)
      return what + ": " + std::to_string(rows) + " row" +
             (rows == 1 ? "" : "s") + ", fewer than one batch of " +
             std::to_string(batch);
    if (i > 0 && rows != dataset.rows)
      return std::string(flag) + " files have different row counts: '" +
             paths[0] + "' has " + std::to_string(dataset.rows) + ", '" +
             paths[i] + "' has " + std::to_string(rows);
    dataset.rows = rows;
    // rows >= 1 here, so the division is exact.
    dataset.rowBytes.push_back(view.size / rows);
  }
  return "";
}

void keepRankShares(Dataset &dataset, const tools::SequenceShares &shares,
                    uint64_t ranks, uint64_t rank) {
  size_t files = dataset.files.views.size();
  dataset.shareBytes.resize(files);
  dataset.shareShapes.resize(files);
  for (size_t i = 0; i < files; ++i) {
    int dim = shares.getInputSplitDim(i);
    if (dim < 0)
      continue;
    LccTensorView &view = dataset.files.views[i];
    // A file's rows are the argument's less its batch dimension: the same
    // dimension holds the positions.
    std::vector<int64_t> whole(view.shape, view.shape + view.rank);
    std::vector<int64_t> &shape = dataset.shareShapes[i] = whole;
    shape[size_t(dim)] /= int64_t(ranks);
    std::vector<uint8_t> &bytes = dataset.shareBytes[i];
    bytes.resize(view.size / ranks);
    tools::cutShare(view.data, whole, lccDTypeGetSize(view.dtype),
                    size_t(dim), ranks, rank, bytes.data());
    view.shape = shape.data();
    view.data = bytes.data();
    view.size = bytes.size();
    dataset.rowBytes[i] /= ranks;
  }
}

Batcher::Batcher(const Dataset &dataset, const Signature &step)
    : dataset(dataset), step(step), batch(uint64_t(step.inputs[0].shape[0])),
      staging(step.inputs.size()), views(step.inputs.size()) {}

const LccTensorView *Batcher::of(const std::vector<uint64_t> &rows) {
  bool consecutive = true;
  for (size_t r = 1; r < rows.size(); ++r)
    consecutive &= rows[r] == rows[0] + r;
  for (size_t i = 0; i < views.size(); ++i) {
    const Argument &argument = step.inputs[i];
    uint64_t rowBytes = dataset.rowBytes[i];
    const char *data = static_cast<const char *>(dataset.files.views[i].data);
    LccTensorView &view = views[i];
    view.name = nullptr;
    view.dtype = argument.dtype;
    view.rank = argument.shape.size();
    view.shape = argument.shape.data();
    view.size = argument.bytes;
    if (consecutive) {
      view.data = data + rows[0] * rowBytes;
      continue;
    }
    staging[i].resize(argument.bytes);
    for (size_t r = 0; r < rows.size(); ++r)
      std::memcpy(staging[i].data() + r * rowBytes, data + rows[r] * rowBytes,
                  rowBytes);
    view.data = staging[i].data();
  }
  return views.data();
}

std::vector<uint64_t> consecutiveRows(uint64_t start, uint64_t batch,
                                      uint64_t rows) {
  std::vector<uint64_t> out(batch);
  for (uint64_t r = 0; r < batch; ++r)
    out[r] = (start + r) % rows;
  return out;
}

std::string describeRows(const std::vector<uint64_t> &rows, const char *flag) {
  // Runs of consecutive rows: "rows 8-11", "row 8 and rows 0-2", "rows 7,
  // 2, 9, 4".
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  for (uint64_t row : rows)
    if (!runs.empty() && runs.back().second + 1 == row)
      runs.back().second = row;
    else
      runs.push_back({row, row});
  std::string text;
  if (runs.size() <= 2) {
    for (size_t i = 0; i < runs.size(); ++i) {
      auto [first, last] = runs[i];
      text += (i ? " and " : "") + (first == last
                                        ? "row " + std::to_string(first)
                                        : "rows " + std::to_string(first) +
                                              "-" + std::to_string(last));
    }
  } else {
    text = "rows ";
    for (size_t i = 0; i < rows.size(); ++i)
      text += (i ? ", " : "") + std::to_string(rows[i]);
  }
  return text + " of the " + flag + " files";
}

} // namespace lcc::train
