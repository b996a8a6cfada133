// Learn mode: a policy from what a program did while everything was allowed. bwrun
// --learn records every access (a Recording); this stage drafts the policy: standard
// library includes where they cover the accesses, directories folded into globs where
// that is sound, the rest as exact rules, counts in comments and sensitive accesses
// flagged for review. `bwc learn` renders the draft and checks it against the recording
// with the reference evaluator (driver.cc).
#pragma once

#include "ir/ir.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bw::learn {

// The policy learn mode runs the program under: everything allowed and every access
// recorded (an audit rule on every path, and every socket operation), the sandbox
// invariants kept.
ir::Policy recording_policy();

// A socket operation, with what the net rules decide it by (see ir::NetQuery).
struct SocketUse {
    ir::NetQuery::Op op = ir::NetQuery::Op::Create;
    int family = 0;
    int protocol = 0; // IPPROTO_TCP or IPPROTO_UDP when endpoint rules decide it, else 0
    std::array<std::uint8_t, 16> address{};
    std::uint16_t port = 0;
    auto operator<=>(const SocketUse&) const = default;
};

ir::NetQuery net_query(const SocketUse& use);

// What bwrun --learn saw: every path and the access kinds asked of it, every socket
// operation and how often.
struct Recording {
    std::string program;                         // the command line, for the header
    std::uint64_t dropped = 0;                   // events the ring buffer had no room for
    std::map<std::string, ir::AccessMask> paths; // path -> kinds, merged
    std::map<SocketUse, std::uint64_t> sockets;  // operation -> times
};

// "program TEXT" and "dropped N" lines, then one line per path: "KINDS PATH", KINDS a
// decimal ir::AccessMask; in TEXT and PATH, bytes below 0x21, 0x7f and `%` are %XX. Then
// one line per socket operation: "net OP FAMILY PROTOCOL ADDRESS PORT TIMES", OP one of
// create, connect, bind, ADDRESS 32 hex digits, the rest decimal.
std::string encode(const Recording& recording);
// nullopt, with the line number in `error`, when a line is not one of those.
std::optional<Recording> decode(const std::string& text, std::string& error);

// A standard library policy, by the name `include` gives it.
struct Library {
    std::string name;
    ir::Policy policy;
};

struct Rule {
    ir::AccessMask kinds = 0;
    std::string pattern;
    std::string comment; // the count, and why a line needs review
    bool review = false;
};

// A `net` statement: its text after `net`, and its comment.
struct NetLine {
    std::string rule;
    std::string comment;
};

struct Draft {
    std::string name;
    std::string header; // comment lines, without the `#`
    std::vector<std::pair<std::string, std::string>> includes; // name, comment
    std::vector<Rule> rules;
    std::vector<NetLine> net;
};

// `secrets` is the deny-secrets layer: a recorded access it denies is flagged, and the
// layer is included only when no recorded access needs what it denies.
Draft run_learn(const Recording& recording, const std::vector<Library>& libraries, const Library* secrets,
                const std::string& name);

// Adds an exact rule for each path that the draft, compiled, still denies (a broader rule
// or an include decided otherwise); the driver calls it with what the evaluator denied.
void add_exact(Draft& draft, const std::map<std::string, ir::AccessMask>& denied);

// The policy text (the formatter then makes it canonical).
std::string render(const Draft& draft);

} // namespace bw::learn
