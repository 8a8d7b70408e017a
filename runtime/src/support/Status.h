//===- Status.h - fallible results of runtime calls -------------*- C++ -*-===//
//
// Every runtime call that can fail returns a Status (or a StatusOr<T>) that
// the caller propagates; nothing in the runtime aborts or exits. Messages are
// lowercase, without a trailing period, and name the failing item and the
// expected and actual values.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_STATUS_H
#define LCC_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace lcc::runtime {

/// Why a call failed. Mirrors LccStatusCode in the C API.
enum class StatusCode {
  Ok = 0,
  InvalidArgument = 1,   // the caller passed something wrong
  NotFound = 2,          // a file, function, tensor or symbol is missing
  InvalidModule = 3,     // an .lcm file is corrupted, truncated or malformed
  InvalidData = 4,       // an .npy or .safetensors file is malformed
  Unavailable = 5,       // no such device, or no code for it
  ResourceExhausted = 6, // an allocation failed
  Internal = 7,          // an operating system call failed
};

class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  Status(StatusCode code, std::string message)
      : code(code), message(std::move(message)) {
    assert(code != StatusCode::Ok && "an error status needs an error code");
  }

  /// Builds an error whose message is the concatenation of `parts`, each
  /// written with operator<<.
  template <typename... Parts>
  static Status error(StatusCode code, const Parts &...parts) {
    std::ostringstream os;
    (os << ... << parts);
    return Status(code, os.str());
  }

  bool ok() const { return code == StatusCode::Ok; }
  StatusCode getCode() const { return code; }
  const std::string &getMessage() const { return message; }

  /// The same error with "`context`: " in front of the message, so a caller
  /// can say which file or item the error is about.
  Status withContext(const std::string &context) const;

private:
  StatusCode code = StatusCode::Ok;
  std::string message;
};

/// A value or the error that prevented computing it.
template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(Status status) : status(std::move(status)) {
    assert(!this->status.ok() && "StatusOr needs a value or an error");
  }
  StatusOr(T value) : value(std::move(value)) {}

  bool ok() const { return status.ok(); }
  const Status &getStatus() const { return status; }

  T &operator*() {
    assert(ok());
    return *value;
  }
  const T &operator*() const {
    assert(ok());
    return *value;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }

  /// Moves the value out; only valid when ok().
  T take() {
    assert(ok());
    return std::move(*value);
  }

private:
  Status status;
  std::optional<T> value;
};

/// An error of a malformed module (the loader's and the ELF checker's).
template <typename... Parts> Status invalidModule(const Parts &...parts) {
  return Status::error(StatusCode::InvalidModule, parts...);
}

/// An error of a malformed .npy or .safetensors file.
template <typename... Parts> Status invalidData(const Parts &...parts) {
  return Status::error(StatusCode::InvalidData, parts...);
}

/// `text` in single quotes for a message: names and paths come from files a
/// user did not write, so quotes, backslashes and control or non-ASCII
/// bytes are escaped (\n, \x00, \') and a name longer than 200 bytes is
/// cut ("..."): a message stays one line and cannot forge another.
std::string quoted(const std::string &text);

} // namespace lcc::runtime

/// Returns from the enclosing function when `expr` (a Status) is an error.
#define LCC_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    ::lcc::runtime::Status lccStatus_ = (expr);                                \
    if (!lccStatus_.ok())                                                      \
      return lccStatus_;                                                       \
  } while (false)

#endif // LCC_RUNTIME_STATUS_H
