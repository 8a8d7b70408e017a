//===- Expressions.h - masks and scores written as expressions --*- C++ -*-===//
//
// `--mask=expr:E` and `--score=expr:E`: a mask or score region's arithmetic
// written as a prefix expression, evaluated here from docs/masks.md's rules
// for region arithmetic (never from the compiler's lowering), so that the
// differential model fuzzer can draw random region arithmetic and check it.
//
//   E := i | j | b | h | s (the score, in a score) | INTEGER | FLOAT
//        (a FLOAT has a '.' or an exponent, or is inf, -inf or nan)
//      | (OP E ...)
//
// Integer operations, on 64-bit two's-complement values that wrap (as
// `index` does): addi subi muli maxsi minsi maxui minui andi ori xori,
// the divisions divsi divui ceildivsi ceildivui floordivsi remsi remui
// (x / 0 = 0, x % 0 = x; MIN / -1 = MIN, MIN % -1 = 0), the shifts shli
// shrui shrsi (by 64 or more: 0, 0 and the sign), comparisons eq ne slt
// sle sgt sge ult ule ugt uge (0 or 1), and select C X Y (C's low bit).
// Float operations, in double: addf mulf, sitofp X.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_EXPRESSIONS_H
#define LCC_TEST_REFERENCE_EXPRESSIONS_H

#include "Reference.h"

#include <string>

namespace lcc::reference {

/// The mask `text` computes: a key is visible where its value's low bit is
/// set. Throws ReferenceError naming what cannot be parsed.
PositionMask expressionMask(const std::string &text);

/// The score modifier `text` computes from `s` and the positions.
ScoreModifier expressionScore(const std::string &text);

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_EXPRESSIONS_H
