//===- Diagnostics.cpp - one-line tool diagnostics ------------------------===//

#include "compiler/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <unistd.h>

using namespace mlir;

static StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  llvm_unreachable("unknown diagnostic severity");
}

/// Prints the innermost file position of `loc` as `file:line:col`, or
/// nothing when the location carries none.
static void printPosition(raw_ostream &os, Location loc) {
  FileLineColLoc position;
  loc->walk([&](Location inner) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner)) {
      position = fileLoc;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!position)
    return;
  os << position.getFilename().getValue();
  // Line 0 is no position (a file as a whole): say the file alone rather
  // than point at "0:0".
  if (position.getLine() != 0)
    os << ":" << position.getLine() << ":" << position.getColumn();
  os << ": ";
}

std::string lcc::asOneLine(StringRef text) {
  std::string line;
  line.reserve(text.size());
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t')
      line += ' ';
    else if (byte < 0x20 || byte == 0x7f)
      line += llvm::formatv("\\x{0:x-2}", unsigned(byte)).str();
    else
      line += c;
  }
  return line;
}

/// `message` naming its op once: MLIR's parser puts "custom op 'X' " before
/// what an op's generated parser says, which starts "'X' op " itself.
static StringRef withOpNamedOnce(StringRef message) {
  StringRef rest = message;
  if (!rest.consume_front("custom op '"))
    return message;
  size_t end = rest.find("' ");
  if (end == StringRef::npos)
    return message;
  std::string repeated = "'" + rest.take_front(end).str() + "' op ";
  rest = rest.drop_front(end + 2);
  return rest.starts_with(repeated) ? rest : message;
}

/// One diagnostic as a single line.
static std::string formatLine(StringRef tool, DiagnosticSeverity severity,
                              Location loc, const Diagnostic &diag) {
  std::string line, message = diag.str();
  llvm::raw_string_ostream os(line);
  os << tool << ": " << severityName(severity) << ": ";
  printPosition(os, loc);
  os << withOpNamedOnce(message);
  return lcc::asOneLine(line);
}

lcc::OneLineDiagnosticHandler::OneLineDiagnosticHandler(MLIRContext *context,
                                                        StringRef tool)
    : context(context), tool(tool.str()) {
  // The offending op is named in the message; its full text would span lines.
  context->printOpOnDiagnostic(false);
  id = context->getDiagEngine().registerHandler([this](Diagnostic &diag) {
    DiagnosticSeverity severity = diag.getSeverity();
    if (severity == DiagnosticSeverity::Error)
      ++numErrors;
    std::string line =
        formatLine(this->tool, severity, diag.getLocation(), diag);
    for (Diagnostic &note : diag.getNotes())
      line += "\n" + formatLine(this->tool, DiagnosticSeverity::Note,
                                note.getLocation(), note);
    // Each function holding a copy of a model op would repeat its remark.
    bool repeated =
        severity != DiagnosticSeverity::Error && !printed.insert(line).second;
    if (!repeated)
      llvm::errs() << line << "\n";
    return success();
  });
}

lcc::OneLineDiagnosticHandler::~OneLineDiagnosticHandler() {
  context->getDiagEngine().eraseHandler(id);
}

void lcc::reportError(StringRef tool, const llvm::Twine &message) {
  llvm::errs() << tool << ": error: " << asOneLine(message.str()) << "\n";
}

/// What llvm::cl writes to stderr itself while `parse` runs: an option's
/// parser (a pass name of --mlir-print-ir-after) reports there, not to the
/// stream the parse was given.
static bool captureStderr(llvm::function_ref<bool()> parse,
                          std::string &captured) {
  llvm::errs().flush();
  std::FILE *file = std::tmpfile();
  int saved = file ? dup(STDERR_FILENO) : -1;
  if (saved < 0 || dup2(fileno(file), STDERR_FILENO) < 0) {
    if (saved >= 0)
      close(saved);
    if (file)
      std::fclose(file);
    return parse();
  }
  bool ok = parse();
  llvm::errs().flush();
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::rewind(file);
  char buffer[4096];
  size_t read;
  while ((read = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    captured.append(buffer, read);
  std::fclose(file);
  return ok;
}

bool lcc::parseCommandLine(int argc, char **argv, StringRef tool,
                           StringRef overview) {
  std::string clErrors, stderrText;
  llvm::raw_string_ostream clErrorStream(clErrors);
  bool parsed = captureStderr(
      [&] {
        return llvm::cl::ParseCommandLineOptions(argc, argv, overview,
                                                 &clErrorStream);
      },
      stderrText);
  if (parsed) {
    llvm::errs() << stderrText; // warnings, if any, as llvm::cl wrote them
    return true;
  }
  clErrors += stderrText;
  // llvm::cl writes "PROGRAM: message" lines; keep one line with our prefix.
  SmallVector<StringRef> lines;
  StringRef(clErrors).split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::string message;
  for (StringRef line : lines) {
    line = line.trim();
    size_t colon = line.find(": ");
    if (colon != StringRef::npos &&
        llvm::sys::path::filename(line.take_front(colon)) == tool)
      line = line.drop_front(colon + 2);
    if (!message.empty())
      message += "; ";
    message += line.str();
  }
  reportError(tool, message.empty() ? "invalid command line; see '" +
                                         tool.str() + " --help'"
                                   : message);
  return false;
}
