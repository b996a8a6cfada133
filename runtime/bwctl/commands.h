// bwctl's verbs, one function each; main.cc parses the command line and picks one.
// Each returns bwctl's exit status: 0 done, 1 refused or failed (with a message), 2 usage.
#pragma once

#include "ir/ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bw::ctl {

int cmd_list();
int cmd_show(const std::string& name);
int cmd_log(const std::string& name, bool follow, bool json);
int cmd_stop(const std::string& name);

struct RuleEdit {
    std::string name;
    ir::Decision decision = ir::Decision::Allow;
    std::string pattern;
    std::string access;                    // as given: "read,write"
    std::optional<std::int64_t> for_seconds; // --for
};
int cmd_rule(const RuleEdit& edit);
// net allow|deny NAME WORDS...: WORDS as after `net allow` in a policy.
int cmd_net(const std::string& name, ir::Decision decision, const std::vector<std::string>& words,
            std::optional<std::int64_t> for_seconds);
// syscall list NAME, syscall allow|deny NAME SYSCALL.
int cmd_syscall_list(const std::string& name);
int cmd_syscall_edit(const std::string& name, ir::Decision decision, const std::string& syscall);
// `what` is a rule id (`12` or `#12`) or a pattern.
int cmd_remove(const std::string& name, const std::string& what);
int cmd_reload(const std::string& name, const std::string& artifact);

// Where a rule comes from: `file:line`, or a live edit's "live edit at TIME by uid N".
std::string where(const ir::Provenance& origin);
// The message for a name that no running sandbox has.
int no_such_sandbox(const std::string& name);

} // namespace bw::ctl
