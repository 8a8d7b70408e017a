//===- Expressions.cpp - masks and scores written as expressions ----------===//

#include "Expressions.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace lcc::reference {

namespace {

struct Node {
  std::string name; // an operation, a variable, or empty for a literal
  bool isFloat = false;
  int64_t integer = 0;
  double number = 0;
  std::vector<std::shared_ptr<Node>> operands;
};

using NodePtr = std::shared_ptr<Node>;

/// The variables of one evaluation.
struct Point {
  double s;
  int64_t b, h, i, j;
};

/// A value: an integer (two's complement, 64 bits) or a float.
struct Value {
  bool isFloat;
  uint64_t bits; // the integer, as unsigned so that it wraps
  double number;
};

class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  NodePtr parseAll() {
    NodePtr node = parse();
    skipSpaces();
    if (at != text.size())
      fail("unexpected text after the expression");
    return node;
  }

private:
  [[noreturn]] void fail(const std::string &why) const {
    throw ReferenceError("expression '" + text + "' at offset " +
                         std::to_string(at) + ": " + why);
  }

  void skipSpaces() {
    while (at < text.size() && std::isspace((unsigned char)text[at]))
      ++at;
  }

  std::string word() {
    size_t start = at;
    while (at < text.size() && !std::isspace((unsigned char)text[at]) &&
           text[at] != '(' && text[at] != ')')
      ++at;
    if (start == at)
      fail("expected a name or a number");
    return text.substr(start, at - start);
  }

  NodePtr parse() {
    skipSpaces();
    if (at >= text.size())
      fail("the expression ends early");
    auto node = std::make_shared<Node>();
    if (text[at] == '(') {
      ++at;
      node->name = word();
      for (;;) {
        skipSpaces();
        if (at < text.size() && text[at] == ')') {
          ++at;
          return node;
        }
        node->operands.push_back(parse());
      }
    }
    std::string token = word();
    if (token == "i" || token == "j" || token == "b" || token == "h" ||
        token == "s") {
      node->name = token;
      return node;
    }
    char *end = nullptr;
    if (token.find_first_of(".eEinfa") != std::string::npos) {
      node->isFloat = true;
      node->number = std::strtod(token.c_str(), &end);
    } else {
      errno = 0;
      node->integer = std::strtoll(token.c_str(), &end, 10);
      if (errno != 0)
        fail("integer '" + token + "' out of range");
    }
    if (!end || *end != '\0')
      fail("'" + token + "' is neither a variable nor a number");
    return node;
  }

  const std::string &text;
  size_t at = 0;
};

int64_t asSigned(uint64_t x) {
  int64_t y;
  std::memcpy(&y, &x, sizeof(y));
  return y;
}

Value integer(uint64_t bits) { return {false, bits, 0}; }
Value integer(bool truth) { return integer(uint64_t(truth ? 1 : 0)); }

/// Signed x / y rounded as `round` says ('t'runcate, 'f'loor, 'c'eil), for
/// y other than 0 and -1.
int64_t signedDivide(int64_t x, int64_t y, char round) {
  int64_t q = x / y, r = x % y;
  if (r != 0 && round == 'f' && ((r < 0) != (y < 0)))
    --q;
  if (r != 0 && round == 'c' && ((r < 0) == (y < 0)))
    ++q;
  return q;
}

Value divide(const std::string &op, uint64_t x, uint64_t y) {
  bool remainder = op == "remsi" || op == "remui";
  if (y == 0) // docs/masks.md: x / 0 = 0, x % 0 = x
    return integer(remainder ? x : uint64_t(0));
  if (op == "divui")
    return integer(x / y);
  if (op == "remui")
    return integer(x % y);
  if (op == "ceildivui")
    return integer(x / y + (x % y != 0 ? 1 : 0));
  if (y == ~uint64_t(0)) // x / -1 = -x, wrapping; x % -1 = 0
    return integer(remainder ? uint64_t(0) : uint64_t(0) - x);
  int64_t a = asSigned(x), b = asSigned(y);
  if (op == "remsi")
    return integer(uint64_t(a % b));
  char round = op == "floordivsi" ? 'f' : op == "ceildivsi" ? 'c' : 't';
  return integer(uint64_t(signedDivide(a, b, round)));
}

Value shift(const std::string &op, uint64_t x, uint64_t amount) {
  if (op == "shrsi")
    return integer(uint64_t(asSigned(x) >> (amount >= 64 ? 63 : amount)));
  if (amount >= 64)
    return integer(uint64_t(0));
  return integer(op == "shli" ? x << amount : x >> amount);
}

Value compare(const std::string &op, uint64_t x, uint64_t y) {
  int64_t a = asSigned(x), b = asSigned(y);
  static const std::map<std::string, int> kinds = {
      {"eq", 0},  {"ne", 1},  {"slt", 2}, {"sle", 3}, {"sgt", 4},
      {"sge", 5}, {"ult", 6}, {"ule", 7}, {"ugt", 8}, {"uge", 9}};
  switch (kinds.at(op)) {
  case 0:
    return integer(x == y);
  case 1:
    return integer(x != y);
  case 2:
    return integer(a < b);
  case 3:
    return integer(a <= b);
  case 4:
    return integer(a > b);
  case 5:
    return integer(a >= b);
  case 6:
    return integer(x < y);
  case 7:
    return integer(x <= y);
  case 8:
    return integer(x > y);
  default:
    return integer(x >= y);
  }
}

Value evaluate(const Node &node, const Point &at);

uint64_t integerOperand(const Node &node, size_t n, const Point &at) {
  Value v = evaluate(*node.operands[n], at);
  if (v.isFloat)
    throw ReferenceError("'" + node.name + "' takes integers");
  return v.bits;
}

double floatOperand(const Node &node, size_t n, const Point &at) {
  Value v = evaluate(*node.operands[n], at);
  if (!v.isFloat)
    throw ReferenceError("'" + node.name + "' takes floats");
  return v.number;
}

void expectOperands(const Node &node, size_t count) {
  if (node.operands.size() != count)
    throw ReferenceError("'" + node.name + "' takes " + std::to_string(count) +
                         " operand(s), got " +
                         std::to_string(node.operands.size()));
}

Value evaluate(const Node &node, const Point &at) {
  const std::string &op = node.name;
  if (op.empty())
    return node.isFloat ? Value{true, 0, node.number}
                        : integer(uint64_t(node.integer));
  if (op == "s")
    return {true, 0, at.s};
  if (op == "i" || op == "j" || op == "b" || op == "h")
    return integer(uint64_t(op == "i"   ? at.i
                            : op == "j" ? at.j
                            : op == "b" ? at.b
                                        : at.h));
  if (op == "select") {
    expectOperands(node, 3);
    return evaluate(*node.operands[integerOperand(node, 0, at) & 1 ? 1 : 2],
                    at);
  }
  if (op == "sitofp") {
    expectOperands(node, 1);
    return {true, 0, double(asSigned(integerOperand(node, 0, at)))};
  }
  expectOperands(node, 2);
  if (op == "addf" || op == "mulf") {
    double x = floatOperand(node, 0, at), y = floatOperand(node, 1, at);
    return {true, 0, op == "addf" ? x + y : x * y};
  }
  uint64_t x = integerOperand(node, 0, at), y = integerOperand(node, 1, at);
  int64_t a = asSigned(x), b = asSigned(y);
  if (op == "addi")
    return integer(x + y);
  if (op == "subi")
    return integer(x - y);
  if (op == "muli")
    return integer(x * y);
  if (op == "andi")
    return integer(x & y);
  if (op == "ori")
    return integer(x | y);
  if (op == "xori")
    return integer(x ^ y);
  if (op == "maxsi" || op == "minsi")
    return integer(uint64_t((op == "maxsi") == (a > b) ? a : b));
  if (op == "maxui" || op == "minui")
    return integer((op == "maxui") == (x > y) ? x : y);
  if (op == "divsi" || op == "divui" || op == "ceildivsi" ||
      op == "ceildivui" || op == "floordivsi" || op == "remsi" || op == "remui")
    return divide(op, x, y);
  if (op == "shli" || op == "shrui" || op == "shrsi")
    return shift(op, x, y);
  if (op == "eq" || op == "ne" || op == "slt" || op == "sle" || op == "sgt" ||
      op == "sge" || op == "ult" || op == "ule" || op == "ugt" || op == "uge")
    return compare(op, x, y);
  throw ReferenceError("unknown operation '" + op + "' in an expression");
}

} // namespace

PositionMask expressionMask(const std::string &text) {
  NodePtr root = Parser(text).parseAll();
  evaluate(*root, {0, 0, 0, 0, 0}); // unknown names fail here, not per key
  return [root](int64_t b, int64_t h, int64_t i, int64_t j) {
    Value v = evaluate(*root, {0, b, h, i, j});
    return !v.isFloat && (v.bits & 1) != 0;
  };
}

ScoreModifier expressionScore(const std::string &text) {
  NodePtr root = Parser(text).parseAll();
  evaluate(*root, {0, 0, 0, 0, 0});
  return [root](double s, int64_t b, int64_t h, int64_t i, int64_t j) {
    Value v = evaluate(*root, {s, b, h, i, j});
    if (!v.isFloat)
      throw ReferenceError("a score expression must be a float");
    return v.number;
  };
}

} // namespace lcc::reference
