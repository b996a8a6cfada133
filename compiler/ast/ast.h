// The project's own syntax tree. Only compiler/parse sees ANTLR; every later stage sees this.
// It records what was written, with locations; meaning is given by the check stage.
#pragma once

#include "source/source.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace bw::ast {

enum class Action { Allow, Deny, Audit };

// A word as written (a name, a number, an address, a keyword used as a name).
struct Word {
    std::string text;
    SourceLocation loc;
};

// A quoted string (escapes resolved) or an unquoted path; `${...}` is not yet expanded.
struct Text {
    std::string value;
    SourceLocation loc; // includes the quotes
    bool quoted = false;
};

// A reference to a named set: `$name`.
struct SetRef {
    std::string name; // without the `$`
    SourceLocation loc;
};

struct Metadata {
    enum class Key { Description, Version } key;
    Text value;
    SourceLocation loc;
};

struct Requires {
    enum class What { Kernel, Feature } what;
    Word value;
    SourceLocation loc;
};

struct Include {
    Text target;
    SourceLocation loc;
};

struct Let {
    Word name;
    Text value;
    SourceLocation loc;
};

// An item of a set or of a syscall list: a name (`ptrace`), a group (`@mount`), a set
// reference (`$privileged`) or, in path sets, a pattern.
struct Item {
    enum class Kind { Word, Group, SetRef, Pattern } kind;
    std::string text; // without `@` or `$`; patterns unquoted
    SourceLocation loc;
    bool quoted = false;
};

struct SetDef {
    enum class Kind { Paths, Syscalls } kind;
    Word name;
    std::vector<Item> items;
    SourceLocation loc;
};

struct SyscallAction {
    enum class Kind { Errno, Kill } kind;
    std::optional<Word> errno_value; // EPERM or a number
    SourceLocation loc;
};

struct DefaultStmt {
    enum class Scope { Paths, Net, Syscalls } scope; // `default` alone: paths and devices
    Action action;
    std::optional<SyscallAction> syscall_action;
    SourceLocation loc;
    std::string written; // the whole rule as written, on one line (parse.cc, written())
};

struct AccessName {
    std::string text; // the keyword as written
    SourceLocation loc;
};

using PathTarget = std::variant<Text, SetRef>;

struct PathRule {
    Action action;
    std::vector<AccessName> accesses;
    std::optional<SourceLocation> owner; // the `owner` qualifier
    PathTarget target;
    std::vector<Word> flags; // `flags O_TRUNC, ...`
    SourceLocation loc;      // the whole rule (first line)
    std::string written; // the whole rule as written, on one line (parse.cc, written())
};

struct SyscallRule {
    Action action;
    std::vector<Item> items;
    std::optional<SyscallAction> syscall_action;
    SourceLocation loc;
    std::string written; // the whole rule as written, on one line (parse.cc, written())
};

struct NetRule {
    enum class Kind { All, Family, Endpoint } kind;
    Action action;
    std::vector<Word> families;      // Family
    std::optional<Word> protocol;    // Endpoint: tcp | udp
    std::optional<Word> direction;   // Endpoint: connect | bind
    std::vector<Word> endpoints;     // Endpoint: 10.0.0.0/8:53, [::1]:1-1024, any:443
    SourceLocation loc;
    std::string written; // the whole rule as written, on one line (parse.cc, written())
};

struct DeviceNumber {
    Word kind; // char | block
    Word spec; // 226:128, 226:*, 226:128-255
};

struct DeviceRule {
    Action action;
    std::vector<AccessName> accesses;
    std::variant<Text, SetRef, DeviceNumber> target;
    std::optional<SourceLocation> ioctl;   // the `ioctl` clause, if any
    bool ioctl_any = false;
    std::vector<Word> ioctl_commands;      // 0x6400-0x64ff, 0x40086409
    SourceLocation loc;
    std::string written; // the whole rule as written, on one line (parse.cc, written())
};

struct Condition {
    enum class Kind { Exe, Uid, Gid } kind;
    Text exe;  // Exe
    Word id;   // Uid, Gid: 1000 or 1000-1999
    SourceLocation loc;
};

// `unsafe mount, ptrace`: sandbox invariants the policy switches off.
struct Unsafe {
    std::vector<Word> names;
    SourceLocation loc;
};

struct Statement;

struct WhenBlock {
    std::vector<Condition> conditions; // all must hold
    std::vector<Statement> body;
    SourceLocation loc; // the `when` line
};

struct Statement {
    std::variant<Metadata, Requires, Include, Let, SetDef, DefaultStmt, PathRule, SyscallRule, NetRule, DeviceRule,
                 WhenBlock, Unsafe>
        node;
};

struct Policy {
    std::string name;
    SourceLocation loc;      // the `policy` keyword
    SourceLocation name_loc; // the quoted name
    std::vector<Statement> body;
};

struct Module {
    FileId file = 0;
    std::vector<Policy> policies;
};

std::string to_string(Action action);

} // namespace bw::ast
