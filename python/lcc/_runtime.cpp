//===- _runtime.cpp - lcc's runtime for Python
//-----------------------------===//
//
// The extension module `lcc._runtime`: a compiled module on a device, over
// the runtime's C API (lcc/runtime.h), with numpy arrays for tensors. The
// Python package (`lcc/__init__.py`) builds the user-facing API on it.
// Every runtime error becomes lcc.LccError (a RuntimeError) carrying the
// runtime's one-line message; a mismatched input, ValueError naming it.
//
//===----------------------------------------------------------------------===//

#include "lcc/runtime.h"

#include "Generation.h"
#include "common/RuntimeTool.h"
#include "common/SequenceShares.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// lcc.LccError, set when the module is imported.
py::object errorType;

/// Raises the status's message: ValueError for a wrong argument, else
/// lcc.LccError.
[[noreturn]] void raise(LccStatus status) {
  std::string message = lccStatusGetMessage(status);
  LccStatusCode code = lccStatusGetCode(status);
  lccStatusDestroy(status);
  if (code == LCC_STATUS_INVALID_ARGUMENT)
    throw py::value_error(message);
  PyErr_SetString(errorType.ptr(), message.c_str());
  throw py::error_already_set();
}

void check(LccStatus status) {
  if (status)
    raise(status);
}

/// The numpy dtype of an lcc dtype; bf16, which numpy lacks, is refused.
py::dtype numpyDType(LccDType dtype) {
  switch (dtype) {
  case LCC_DTYPE_F32:
    return py::dtype::of<float>();
  case LCC_DTYPE_F16:
    return py::dtype("float16");
  case LCC_DTYPE_I32:
    return py::dtype::of<int32_t>();
  case LCC_DTYPE_I64:
    return py::dtype::of<int64_t>();
  default:
    throw py::type_error(std::string("numpy has no ") + lccDTypeGetName(dtype) +
                         " arrays");
  }
}

/// The lcc dtype of a numpy array; an error names the argument.
LccDType lccDType(const py::array &array, const std::string &what) {
  py::dtype dtype = array.dtype();
  if (dtype.is(py::dtype::of<float>()))
    return LCC_DTYPE_F32;
  if (dtype.is(py::dtype("float16")))
    return LCC_DTYPE_F16;
  if (dtype.is(py::dtype::of<int32_t>()))
    return LCC_DTYPE_I32;
  if (dtype.is(py::dtype::of<int64_t>()))
    return LCC_DTYPE_I64;
  throw py::value_error(what + ": numpy dtype " +
                        py::str(dtype).cast<std::string>() +
                        " has no lcc dtype (float32, float16, int32, int64)");
}

/// A copy of `view` as a new numpy array.
py::array toNumpy(const LccTensorView &view) {
  std::vector<py::ssize_t> shape(view.shape, view.shape + view.rank);
  py::array array(numpyDType(view.dtype), shape);
  std::memcpy(array.mutable_data(), view.data, view.size);
  return array;
}

/// A numpy array held with the view the C API reads: C-contiguous, little
/// endian, as the array itself when it already is.
struct TensorArgument {
  py::array array;
  std::vector<int64_t> shape;
  LccTensorView view{};

  TensorArgument(py::array given, const std::string &what) {
    array = py::array::ensure(given, py::array::c_style);
    if (!array)
      throw py::value_error(what + ": not convertible to a C-order array");
    if (array.dtype().byteorder() == '>')
      throw py::value_error(what + ": big-endian arrays are not supported");
    shape.assign(array.shape(), array.shape() + array.ndim());
    view.dtype = lccDType(array, what);
    view.rank = shape.size();
    view.shape = shape.data();
    view.data = array.data();
    view.size = static_cast<uint64_t>(array.nbytes());
  }
};

py::dict describe(const LccTensorView &signature) {
  py::dict entry;
  entry["name"] = signature.name ? signature.name : "";
  entry["dtype"] = lccDTypeGetName(signature.dtype);
  entry["shape"] =
      std::vector<int64_t>(signature.shape, signature.shape + signature.rank);
  return entry;
}

/// The job this process is a rank of: MPI's world when mpirun launched it,
/// else one process alone. Made by the first module loaded, ended by
/// lcc's atexit hook (leave_job) so that MPI is finalised.
LccCommunicator job = nullptr;

LccCommunicator joinJob() {
  if (!job)
    check(lccCommunicatorCreate(&job));
  return job;
}

/// A module loaded on a device: the session every function of it shares.
class Session {
public:
  Session(const std::string &path, py::bytes data, const std::string &device,
          unsigned threads) {
    std::string bytes = data;
    check(path.empty()
              ? lccModuleLoadMemory(bytes.data(), bytes.size(), &module)
              : lccModuleLoadFile(path.c_str(), &module));
    check(lccDeviceCreate(device.c_str(), threads, &this->device));
    check(lccSessionCreate(this->device, module, &session));
    // A train step's collectives run among the job's ranks.
    check(lccSessionSetCommunicator(session, joinJob()));
  }
  ~Session() {
    lccSessionDestroy(session);
    lccDeviceDestroy(device);
    lccModuleDestroy(module);
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  std::vector<std::string> functions() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < lccModuleGetFunctionCount(module); ++i)
      names.push_back(lccModuleGetFunctionName(module, i));
    return names;
  }

  /// {"inputs": [...], "outputs": [...]} of function `name`.
  py::dict signature(const std::string &name) {
    LccFunction function = lookup(name);
    py::list inputs, outputs;
    for (size_t i = 0; i < lccFunctionGetInputCount(function); ++i) {
      LccTensorView view;
      lccFunctionGetInput(function, i, &view);
      inputs.append(describe(view));
    }
    for (size_t i = 0; i < lccFunctionGetOutputCount(function); ++i) {
      LccTensorView view;
      lccFunctionGetOutput(function, i, &view);
      outputs.append(describe(view));
    }
    py::dict result;
    result["inputs"] = inputs;
    result["outputs"] = outputs;
    return result;
  }

  /// Calls `name`; an input may be None where a carried result fills it.
  /// A function that splits its sequence over ranks (context parallelism)
  /// takes each such input whole, cut here to this rank's share as the
  /// tools cut it, and then returns such results whole, gathered from the
  /// ranks; or every such input as this rank's share, and then returns
  /// shares.
  std::vector<py::array> call(const std::string &name, py::list arguments) {
    LccFunction function = lookup(name);
    size_t expected = lccFunctionGetInputCount(function);
    if (arguments.size() != expected)
      throw py::value_error(name + " takes " + std::to_string(expected) +
                            " inputs, got " + std::to_string(arguments.size()));
    lcc::tools::SequenceShares shares(module, name,
                                      lccCommunicatorGetRank(joinJob()));
    std::vector<std::unique_ptr<TensorArgument>> held;
    std::vector<LccTensorView> views(expected);
    std::string givenWhole, givenShare; // the first input given each way
    for (size_t i = 0; i < expected; ++i) {
      LccTensorView signature;
      lccFunctionGetInput(function, i, &signature);
      if (arguments[i].is_none()) {
        views[i] = signature; // data NULL: the carried value stays
        continue;
      }
      std::string what =
          "input " + std::to_string(i) + " '" + signature.name + "' of " + name;
      held.push_back(std::make_unique<TensorArgument>(
          py::array(py::reinterpret_borrow<py::object>(arguments[i])), what));
      views[i] = held.back()->view;
      if (shares.getInputSplitDim(i) < 0)
        continue;
      if (std::equal(views[i].shape, views[i].shape + views[i].rank,
                     signature.shape, signature.shape + signature.rank)) {
        givenShare = givenShare.empty() ? what : givenShare;
        continue;
      }
      std::string error = shares.cutInput(i, signature, views[i], what);
      if (!error.empty())
        throw py::value_error(
            error + ", or this rank's share " +
            lcc::tools::formatShape(std::vector<int64_t>(
                signature.shape, signature.shape + signature.rank)));
      givenWhole = givenWhole.empty() ? what : givenWhole;
    }
    if (!givenWhole.empty() && !givenShare.empty())
      throw py::value_error(givenWhole + " is whole and " + givenShare +
                            " this rank's share: give every input that "
                            "holds the sequence whole, or every one as "
                            "the share");
    LccStatus status;
    {
      // Other Python threads run while the model does.
      py::gil_scoped_release unlocked;
      status = lccFunctionCall(function, views.data(), expected);
    }
    check(status);
    std::vector<py::array> results;
    for (size_t i = 0; i < lccFunctionGetOutputCount(function); ++i) {
      LccTensorView view;
      lccFunctionGetResult(function, i, &view);
      if (!givenWhole.empty()) {
        std::string error = shares.gatherResult(joinJob(), i, view);
        if (!error.empty())
          throw py::value_error(error);
      }
      results.push_back(toNumpy(view));
    }
    return results;
  }

  void carry(const std::string &name, size_t result, size_t input) {
    check(lccFunctionCarryResult(lookup(name), result, input));
  }

  /// name -> (dtype, shape, is optimizer state) of every parameter.
  std::vector<py::tuple> parameters() const {
    std::vector<py::tuple> list;
    for (size_t i = 0; i < lccModuleGetParameterCount(module); ++i) {
      LccTensorView view;
      lccModuleGetParameter(module, i, &view);
      list.push_back(py::make_tuple(
          view.name, lccDTypeGetName(view.dtype),
          std::vector<int64_t>(view.shape, view.shape + view.rank),
          lccModuleIsStateParameter(module, i) != 0));
    }
    return list;
  }

  py::array getParameter(const std::string &name) {
    for (size_t i = 0; i < lccModuleGetParameterCount(module); ++i) {
      LccTensorView signature;
      lccModuleGetParameter(module, i, &signature);
      if (name != signature.name)
        continue;
      LccTensorView value;
      check(lccSessionGetParameter(session, i, &value));
      return toNumpy(value);
    }
    throw py::key_error("the module has no parameter '" + name + "'");
  }

  void setParameter(const std::string &name, py::array value) {
    TensorArgument argument(value, "parameter '" + name + "'");
    argument.view.name = nullptr;
    check(lccSessionBindParameter(session, name.c_str(), &argument.view));
  }

  void loadParameters(const std::string &path) {
    check(lccSessionBindParametersFile(session, path.c_str()));
  }
  void saveParameters(const std::string &path) {
    check(lccSessionWriteParametersFile(session, path.c_str()));
  }
  void initializeParameters(uint64_t seed) {
    check(lccSessionInitializeParameters(session, seed));
  }

  /// The statistics of `name`'s calls and the device's memory.
  py::dict report(const std::string &name) {
    LccFunction function = lookup(name);
    py::dict report;
    uint64_t calls = lccFunctionGetCallCount(function);
    report["calls"] = calls;
    report["mean_ms"] = calls
                            ? double(lccFunctionGetTotalNanoseconds(function)) /
                                  1e6 / double(calls)
                            : 0.0;
    report["arena_bytes"] = lccFunctionGetArenaBytes(function);
    report["input_bytes_copied"] = lccFunctionGetCopiedInputBytes(function);
    report["peak_bytes"] = lccDeviceGetPeakBytes(device);
    py::list commands;
    for (size_t i = 0; i < lccFunctionGetCommandCount(function); ++i) {
      LccCommandStats stats;
      lccFunctionGetCommandStats(function, i, &stats);
      py::dict command;
      command["name"] = stats.name;
      command["kind"] = stats.kind;
      command["location"] = stats.location;
      command["total_ms"] = double(stats.totalNanoseconds) / 1e6;
      command["flops"] = lccFunctionGetCommandFlops(function, i);
      commands.append(command);
    }
    report["commands"] = commands;
    return report;
  }

  std::string deviceName() const { return lccDeviceGetName(device); }

  /// Generation by prefill and decode_step (tools/lcc-generate's loop):
  /// prompt and new tokens, [batch, length + new], and the timings.
  std::pair<py::array, py::dict> generate(py::array prompts,
                                          uint64_t maxNewTokens,
                                          double temperature, uint64_t topK,
                                          double topP, uint64_t seed,
                                          int64_t endToken, bool recompute) {
    lcc::tools::Generator generator;
    std::string error = lcc::tools::Generator::find(module, session, generator);
    if (!error.empty()) {
      PyErr_SetString(errorType.ptr(), error.c_str());
      throw py::error_already_set();
    }
    auto tokens = py::array_t<int32_t, py::array::c_style>::ensure(prompts);
    if (!tokens || tokens.ndim() != 2 || tokens.shape(0) != generator.batch)
      throw py::value_error("prompt: expected int32 tokens [" +
                            std::to_string(generator.batch) +
                            ", length] (the model's batch)");
    lcc::tools::GenerationOptions options;
    options.maxNewTokens = maxNewTokens;
    options.sampling.sample = temperature >= 0 || topK > 0 || topP < 1;
    options.sampling.temperature = temperature >= 0 ? temperature : 1.0;
    options.sampling.topK = topK;
    options.sampling.topP = topP;
    options.sampling.seed = seed;
    options.endTokenGiven = endToken >= 0;
    options.endToken = endToken;
    options.recompute = recompute;
    std::vector<int32_t> given(tokens.data(), tokens.data() + tokens.size());
    lcc::tools::Generated out;
    {
      py::gil_scoped_release unlocked;
      error =
          lcc::tools::generate(generator, given, tokens.shape(1), options, out);
    }
    if (!error.empty())
      throw py::value_error(error);
    py::array_t<int32_t> result(
        {py::ssize_t(generator.batch),
         py::ssize_t(out.promptLength + out.newTokens)});
    std::copy(out.tokens.begin(), out.tokens.end(), result.mutable_data());
    py::dict report;
    report["prompt_tokens"] = out.promptLength;
    report["new_tokens"] = out.newTokens;
    report["prefill_ms"] = out.prefillMs;
    report["decode_ms"] = out.decodeMs;
    report["caches_full"] = out.cachesFull;
    return {result, report};
  }

private:
  LccFunction lookup(const std::string &name) {
    LccFunction function = nullptr;
    check(lccSessionLookupFunction(session, name.c_str(), &function));
    return function;
  }

  LccModule module = nullptr;
  LccDevice device = nullptr;
  LccSession session = nullptr;
};

} // namespace

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "lcc's runtime: a compiled module (.lcm) on a device";
  errorType = py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
  m.def(
      "set_error_type", [](py::object type) { errorType = type; },
      "The exception type runtime errors raise (lcc.LccError)");
  m.def("module_version", &lccGetModuleVersion,
        "The .lcm version this runtime reads");
  m.def(
      "rank", [] { return lccCommunicatorGetRank(joinJob()); },
      "This process's rank in its job (mpirun), 0 alone");
  m.def(
      "ranks", [] { return lccCommunicatorGetSize(joinJob()); },
      "The ranks of this process's job (mpirun), 1 alone");
  m.def(
      "leave_job",
      [] {
        lccCommunicatorDestroy(job);
        job = nullptr;
      },
      "Ends this process's part in its job (finalises MPI); at exit");
  py::class_<Session>(m, "Session")
      .def(py::init<const std::string &, py::bytes, const std::string &,
                    unsigned>(),
           py::arg("path"), py::arg("data"), py::arg("device"),
           py::arg("threads"))
      .def("functions", &Session::functions)
      .def("signature", &Session::signature)
      .def("call", &Session::call)
      .def("carry", &Session::carry)
      .def("parameters", &Session::parameters)
      .def("get_parameter", &Session::getParameter)
      .def("set_parameter", &Session::setParameter)
      .def("load_parameters", &Session::loadParameters)
      .def("save_parameters", &Session::saveParameters)
      .def("initialize_parameters", &Session::initializeParameters)
      .def("report", &Session::report)
      .def("device_name", &Session::deviceName)
      .def("generate", &Session::generate);
}
