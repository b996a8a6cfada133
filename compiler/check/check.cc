#include "check/check.h"

#include "bumblewrap.h"

#include <map>

namespace bw {

namespace {

ir::Decision to_decision(ast::Action action)
{
    return action == ast::Action::Allow ? ir::Decision::Allow : ir::Decision::Deny;
}

// Validates a pattern; on success returns its normalised form and match kind.
std::optional<std::pair<std::string, ir::MatchKind>> check_path(const ast::PathRule& rule,
                                                                Diagnostics& diags)
{
    const std::string& p = rule.pattern;
    const auto loc = rule.pattern_loc;
    if (p.empty() || p.front() != '/') {
        diags.report(DiagKind::PathNotAbsolute, loc, p)
            .hints.push_back("rules match kernel-resolved paths, which always start with `/`");
        return std::nullopt;
    }
    if (p.size() >= BW_PATH_MAX) {
        diags.report(DiagKind::PathTooLong, loc, p.size(), BW_PATH_MAX - 1);
        return std::nullopt;
    }
    for (const char c : p) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            diags.report(DiagKind::PathControlChar, loc, static_cast<unsigned>(byte));
            return std::nullopt;
        }
    }
    const bool tree = p.back() == '/';
    std::string path = tree ? p.substr(0, p.size() - 1) : p;
    // Components between slashes; the root tree "/" normalises to "".
    std::size_t start = 1;
    while (!path.empty() && start <= path.size()) {
        auto end = path.find('/', start);
        if (end == std::string::npos)
            end = path.size();
        const std::string_view component(path.data() + start, end - start);
        if (component.empty()) {
            diags.report(DiagKind::PathEmptyComponent, loc, p)
                .hints.push_back("remove the repeated `/`");
            return std::nullopt;
        }
        if (component == "." || component == "..") {
            diags.report(DiagKind::PathDotComponent, loc, p, component)
                .hints.push_back("the kernel resolves `.` and `..` before the check: write the path "
                                 "they lead to");
            return std::nullopt;
        }
        start = end + 1;
    }
    return std::pair{path, tree ? ir::MatchKind::Tree : ir::MatchKind::Exact};
}

} // namespace

std::optional<CheckedPolicy> run_check(const ast::Module& module, Diagnostics& diags)
{
    if (module.policies.empty()) {
        diags.report(DiagKind::NoPolicy, SourceLocation{module.file, 1, 1, 0})
            .hints.push_back("start the file with `policy \"name\" { default deny ... }`");
        return std::nullopt;
    }
    for (std::size_t i = 1; i < module.policies.size(); ++i)
        diags.report(DiagKind::ExtraPolicy, module.policies[i].name_loc, module.policies[i].name)
            .hints.push_back("put each policy in a file of its own");

    const auto& policy = module.policies.front();
    CheckedPolicy out;
    out.name = policy.name;
    out.file = module.file;
    if (policy.name.empty())
        diags.report(DiagKind::EmptyPolicyName, policy.name_loc)
            .hints.push_back("the name identifies the sandbox in `bwctl list` and in denials");

    if (policy.defaults.empty()) {
        diags.report(DiagKind::MissingDefault, policy.loc, policy.name)
            .hints.push_back("add `default deny` (or `default allow`) inside the policy");
    } else {
        out.default_decision = to_decision(policy.defaults.front().action);
        out.default_loc = policy.defaults.front().loc;
        for (std::size_t i = 1; i < policy.defaults.size(); ++i)
            diags.report(DiagKind::DuplicateDefault, policy.defaults[i].loc)
                .hints.push_back(fmt::format("the first `default` is on line {}",
                                             policy.defaults.front().loc.line));
    }

    // (path, kind) -> first rule seen per decision, for the duplicate and conflict lints.
    std::map<std::pair<std::string, ir::MatchKind>, std::map<ir::Decision, SourceLocation>> seen;
    for (const auto& rule : policy.rules) {
        auto checked = check_path(rule, diags);
        if (!checked)
            continue;
        auto& [path, kind] = *checked;
        const auto decision = to_decision(rule.action);
        auto& by_decision = seen[{path, kind}];
        if (auto it = by_decision.find(decision); it != by_decision.end()) {
            diags.report(DiagKind::DuplicateRule, rule.loc, rule.pattern, it->second.line)
                .hints.push_back("remove one of them");
        } else {
            const auto other = decision == ir::Decision::Allow ? ir::Decision::Deny : ir::Decision::Allow;
            if (by_decision.contains(other))
                diags.report(DiagKind::ConflictingRule, rule.loc, rule.pattern)
                    .hints.push_back(fmt::format("the other rule is on line {}", by_decision[other].line));
            by_decision.emplace(decision, rule.loc);
        }
        out.rules.push_back(CheckedRule{decision, kind, std::move(path), rule.loc});
    }
    if (diags.has_errors())
        return std::nullopt;
    return out;
}

} // namespace bw
