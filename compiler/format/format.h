// `bwc fmt`: the canonical layout of a .bwp file. The style, which run_format applies:
//
// - One statement per line, indented 4 spaces per block depth (`policy` and `when` bodies).
//   A block's first line ends with `{`; its `}` stands alone at the indentation of that line.
// - Inside a statement, tokens are separated by one space, except: no space before `,` and
//   one after it; `errno(EPERM)`, with no space before `(` or inside the parentheses. A
//   statement written over several lines is joined onto one.
// - A path (unquoted) keeps a space before a `,` that follows it: without one the lexer
//   would read the comma as part of the path (`/a,` is one path).
// - `set NAME = paths { a, b }` stays on one line when that line fits in 100 columns and no
//   comment is inside the braces. Otherwise each item gets its own line, one level deeper,
//   followed by `,` (the last one too), and `}` stands alone. The optional trailing comma is
//   the only token the formatter adds or removes.
// - Comments are kept: one on a line of its own is re-indented to the current depth (one
//   level deeper inside a statement or a split set); one after code stays on the line of
//   that code, two spaces after it. Comment text loses trailing whitespace only. When a
//   comment interrupts a statement, the rest of the statement continues on the next line,
//   one level deeper.
// - Blank lines: a run of them becomes one, kept only between statements, comments and the
//   lines of a split set; none right after a `{`, right before a `}` or at the start of the
//   file. A policy's closing `}` is followed by one before whatever comes next.
// - Output is LF-only, without trailing whitespace or a byte order mark, and ends with
//   exactly one newline (an empty file stays empty).
//
// Tokens are never reordered, and strings and paths are kept byte for byte, so the
// formatted file means what the original meant. run_format(run_format(x)) == run_format(x).
#pragma once

#include "diagnostics/diagnostics.h"

#include <optional>
#include <string>

namespace bw {

// The canonical text of a file that parses; std::nullopt with diagnostics when it does not.
std::optional<std::string> run_format(const SourceFile& file, Diagnostics& diags);

} // namespace bw
