#include "check/check.h"

#include "bumblewrap.h"
#include "check/values.h"
#include "diagnostics/suggest.h"
#include "syscalls/syscalls.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <pwd.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace bw {

namespace {

const std::vector<std::string> kBuiltins = {"HOME", "USER", "UID", "GID", "CWD", "EXE"};
// Built-ins that are absolute paths, so a pattern may start with them.
const std::set<std::string> kPathBuiltins = {"HOME", "CWD", "EXE"};
const std::vector<std::string> kFeatures = {"bpf_lsm", "cgroup2", "task_storage", "ringbuf", "bpf_loop",
                                            "clone_into_cgroup"};

bool valid_identifier(std::string_view s)
{
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
}

struct LetSymbol {
    const ast::Let* let;
    bool in_main;
    bool used = false;
};

struct SetSymbol {
    const ast::SetDef* set;
    bool in_main;
    bool used = false;
};

class Checker {
public:
    Checker(const ast::Program& program, const SourceManager& sources, const CheckOptions& options, Diagnostics& diags)
        : program_(program), sources_(sources), options_(options), diags_(diags)
    {
    }

    std::optional<CheckedPolicy> run()
    {
        const auto& main = program_.main();
        auto& p = out_.policy;
        p.name = main.name;
        if (main.name.empty())
            diags_.report(DiagKind::EmptyPolicyName, main.name_loc)
                .hints.push_back("the name identifies the sandbox in `bwctl list` and in denials");
        for (const auto& unit : program_.units)
            p.files.push_back(sources_.file(unit.file).name);

        collect_symbols();
        for (std::size_t i = 0; i < program_.units.size(); ++i) {
            const bool in_main = i == 0;
            for (const auto& statement : program_.units[i].policy->body)
                top_level(statement, in_main);
        }
        if (!have_default_) {
            diags_.report(DiagKind::MissingDefault, main.loc, main.name)
                .hints.push_back("add `default deny` (or `default allow`) inside the policy");
        }
        fill_defaults();
        report_unused();
        if (diags_.has_errors())
            return std::nullopt;
        return std::move(out_);
    }

private:
    // --- symbols ----------------------------------------------------------------------

    void collect_symbols()
    {
        for (std::size_t i = 0; i < program_.units.size(); ++i) {
            for (const auto& statement : program_.units[i].policy->body) {
                if (const auto* let = std::get_if<ast::Let>(&statement.node))
                    define(let->name, [&] { lets_.emplace(let->name.text, LetSymbol{let, i == 0}); });
                else if (const auto* set = std::get_if<ast::SetDef>(&statement.node))
                    define(set->name, [&] { sets_.emplace(set->name.text, SetSymbol{set, i == 0}); });
            }
        }
    }

    template <typename Insert>
    void define(const ast::Word& name, Insert insert)
    {
        if (!valid_identifier(name.text)) {
            diags_.report(DiagKind::BadName, name.loc, name.text)
                .hints.push_back("names are letters, digits, `_` and `-`, starting with a letter or `_`");
            return;
        }
        if (lets_.contains(name.text) || sets_.contains(name.text) ||
            std::find(kBuiltins.begin(), kBuiltins.end(), name.text) != kBuiltins.end()) {
            diags_.report(DiagKind::DuplicateDefinition, name.loc, name.text)
                .hints.push_back("lets and sets share one namespace across all included files, with the "
                                 "built-ins HOME, USER, UID, GID, CWD and EXE");
            return;
        }
        insert();
    }

    void report_unused()
    {
        for (const auto& [name, sym] : lets_) {
            if (sym.in_main && !sym.used)
                diags_.report(DiagKind::UnusedVariable, sym.let->name.loc, name).hints.push_back("remove it");
        }
        for (const auto& [name, sym] : sets_) {
            if (sym.in_main && !sym.used)
                diags_.report(DiagKind::UnusedSet, sym.set->name.loc, name).hints.push_back("remove it");
        }
    }

    // Expands `${...}` in a string. `stack` holds the lets being expanded, for cycles.
    std::optional<std::string> expand(const ast::Text& text, std::vector<std::string>& stack)
    {
        const std::string& s = text.value;
        std::string out;
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (s[i] != '$' || i + 1 >= s.size() || s[i + 1] != '{') {
                out += s[i];
                continue;
            }
            const auto close = s.find('}', i + 2);
            if (close == std::string::npos) {
                diags_.report(DiagKind::UnterminatedVariable, text.loc);
                return std::nullopt;
            }
            const std::string name = s.substr(i + 2, close - i - 2);
            i = close;
            if (std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end()) {
                const auto it = options_.bindings.find(name);
                if (it == options_.bindings.end()) {
                    diags_.report(DiagKind::MissingBinding, text.loc, name)
                        .hints.push_back(fmt::format("built-ins are bound when compiling: pass `-D {}=VALUE` to bwc",
                                                     name));
                    return std::nullopt;
                }
                out_.policy.bindings[name] = it->second;
                out += it->second;
                continue;
            }
            const auto let = lets_.find(name);
            if (let == lets_.end()) {
                std::vector<std::string> known = kBuiltins;
                for (const auto& [n, _] : lets_)
                    known.push_back(n);
                auto& d = diags_.report(DiagKind::UnknownVariable, text.loc, name);
                if (auto hint = did_you_mean(name, known); !hint.empty())
                    d.hints.push_back(hint);
                d.hints.push_back("variables are the built-ins HOME, USER, UID, GID, CWD, EXE and `let` names");
                return std::nullopt;
            }
            let->second.used = true;
            if (std::find(stack.begin(), stack.end(), name) != stack.end()) {
                std::string chain;
                for (const auto& n : stack)
                    chain += n + " -> ";
                diags_.report(DiagKind::VariableCycle, let->second.let->name.loc, name, chain + name);
                return std::nullopt;
            }
            stack.push_back(name);
            auto value = expand(let->second.let->value, stack);
            stack.pop_back();
            if (!value)
                return std::nullopt;
            out += *value;
        }
        return out;
    }

    std::optional<std::string> expand(const ast::Text& text)
    {
        std::vector<std::string> stack;
        return expand(text, stack);
    }

    // --- statements -------------------------------------------------------------------

    void top_level(const ast::Statement& statement, bool in_main)
    {
        std::visit(
            [&](const auto& node) {
                using T = std::decay_t<decltype(node)>;
                if constexpr (std::is_same_v<T, ast::Metadata>) {
                    if (in_main)
                        metadata(node);
                } else if constexpr (std::is_same_v<T, ast::Requires>) {
                    requires_stmt(node);
                } else if constexpr (std::is_same_v<T, ast::DefaultStmt>) {
                    if (in_main)
                        default_stmt(node);
                } else if constexpr (std::is_same_v<T, ast::SyscallRule>) {
                    syscall_rule(node);
                } else if constexpr (std::is_same_v<T, ast::Unsafe>) {
                    unsafe_stmt(node);
                } else if constexpr (std::is_same_v<T, ast::Include> || std::is_same_v<T, ast::Let> ||
                                     std::is_same_v<T, ast::SetDef>) {
                    // Resolved already (includes) or expanded where used (lets, sets).
                    if constexpr (std::is_same_v<T, ast::SetDef>)
                        check_set(node);
                } else {
                    rule(statement, ir::Conditions{});
                }
            },
            statement.node);
    }

    // Statements that may appear inside `when`, with the conditions of the enclosing blocks.
    void rule(const ast::Statement& statement, const ir::Conditions& conditions)
    {
        std::visit(
            [&](const auto& node) {
                using T = std::decay_t<decltype(node)>;
                if constexpr (std::is_same_v<T, ast::PathRule>)
                    path_rule(node, conditions);
                else if constexpr (std::is_same_v<T, ast::NetRule>)
                    net_rule(node, conditions);
                else if constexpr (std::is_same_v<T, ast::DeviceRule>)
                    device_rule(node, conditions);
                else if constexpr (std::is_same_v<T, ast::WhenBlock>)
                    when_block(node, conditions);
                else
                    not_in_when(node.loc, statement_name(node));
            },
            statement.node);
    }

    template <typename T>
    static std::string statement_name(const T&)
    {
        if constexpr (std::is_same_v<T, ast::Metadata>)
            return "metadata";
        else if constexpr (std::is_same_v<T, ast::Requires>)
            return "`requires`";
        else if constexpr (std::is_same_v<T, ast::Include>)
            return "`include`";
        else if constexpr (std::is_same_v<T, ast::Let>)
            return "`let`";
        else if constexpr (std::is_same_v<T, ast::SetDef>)
            return "`set`";
        else if constexpr (std::is_same_v<T, ast::DefaultStmt>)
            return "`default`";
        else if constexpr (std::is_same_v<T, ast::Unsafe>)
            return "`unsafe`";
        else
            return "a syscall rule";
    }

    void not_in_when(const SourceLocation& loc, const std::string& what)
    {
        auto& d = diags_.report(DiagKind::StatementNotAllowedHere, loc, what, "inside `when`");
        if (what == "a syscall rule")
            d.hints.push_back("seccomp filters are fixed when the sandbox starts, for every program in it");
        else
            d.hints.push_back("move it to the top level of the policy");
    }

    void metadata(const ast::Metadata& m)
    {
        auto& p = out_.policy;
        auto& field = m.key == ast::Metadata::Key::Description ? p.description : p.version;
        const char* key = m.key == ast::Metadata::Key::Description ? "description" : "version";
        if (!field.empty()) {
            diags_.report(DiagKind::DuplicateMetadata, m.loc, key);
            return;
        }
        field = m.value.value;
    }

    void requires_stmt(const ast::Requires& r)
    {
        if (r.what == ast::Requires::What::Kernel) {
            if (!parse_kernel_version(r.value.text)) {
                diags_.report(DiagKind::BadKernelVersion, r.value.loc, r.value.text)
                    .hints.push_back("write the oldest kernel the policy needs, e.g. `requires kernel 6.1`");
                return;
            }
            // Of several minimums, the highest holds.
            auto& k = out_.policy.min_kernel;
            if (k.empty() || *parse_kernel_version(r.value.text) > *parse_kernel_version(k))
                k = r.value.text;
            return;
        }
        if (std::find(kFeatures.begin(), kFeatures.end(), r.value.text) == kFeatures.end()) {
            auto& d = diags_.report(DiagKind::UnknownFeature, r.value.loc, r.value.text);
            d.hints.push_back(did_you_mean(r.value.text, kFeatures));
            d.hints.push_back(fmt::format("known features: {}", fmt::join(kFeatures, ", ")));
            return;
        }
        auto& f = out_.policy.features;
        if (std::find(f.begin(), f.end(), r.value.text) == f.end())
            f.push_back(r.value.text);
    }

    // Each name switches one invariant off, with a warning: `bwc check` in CI shows who did.
    void unsafe_stmt(const ast::Unsafe& u)
    {
        std::vector<std::string> loosenable;
        for (const auto& i : ir::invariants()) {
            if (i.invariant != ir::Invariant::Self)
                loosenable.emplace_back(i.name);
        }
        for (const auto& word : u.names) {
            const auto invariant = ir::parse_invariant(word.text);
            if (!invariant) {
                auto& d = diags_.report(DiagKind::UnknownInvariant, word.loc, word.text);
                d.hints.push_back(did_you_mean(word.text, loosenable));
                d.hints.push_back(fmt::format("invariants: {}", fmt::join(loosenable, ", ")));
                continue;
            }
            if (*invariant == ir::Invariant::Self) {
                diags_.report(DiagKind::InvariantNotLoosenable, word.loc, word.text)
                    .hints.push_back("a sandbox that reached bumblewrap's state could rewrite its own policy");
                continue;
            }
            const auto what = std::find_if(ir::invariants().begin(), ir::invariants().end(),
                                           [&](const ir::InvariantInfo& i) { return i.invariant == *invariant; });
            diags_.report(DiagKind::UnsafeInvariant, word.loc, word.text, what->what)
                .hints.push_back("docs/security.md says what each invariant protects");
            out_.policy.unsafe |= static_cast<ir::InvariantMask>(*invariant);
        }
    }

    void default_stmt(const ast::DefaultStmt& d)
    {
        using Scope = ast::DefaultStmt::Scope;
        auto& p = out_.policy;
        auto* target = d.scope == Scope::Paths ? &p.path_default : d.scope == Scope::Net ? &p.net_default
                                                                                          : &p.syscall_default;
        bool& seen = d.scope == Scope::Paths ? have_default_ : d.scope == Scope::Net ? have_net_default_
                                                                                      : have_syscall_default_;
        if (d.action == ast::Action::Audit) {
            diags_.report(DiagKind::AuditNotHere, d.loc).hints.push_back("a default is `allow` or `deny`");
            return;
        }
        if (seen) {
            diags_.report(DiagKind::DuplicateDefault, d.loc)
                .hints.push_back(fmt::format("the first is on line {}", target->origin.line));
            return;
        }
        seen = true;
        target->decision = d.action == ast::Action::Allow ? ir::Decision::Allow : ir::Decision::Deny;
        target->origin = provenance(d);
        if (d.syscall_action) {
            if (d.scope != Scope::Syscalls || d.action != ast::Action::Deny) {
                diags_.report(DiagKind::ActionOnAllow, d.syscall_action->loc)
                    .hints.push_back("write `syscalls default deny action kill` or `... action errno(EPERM)`");
                return;
            }
            if (auto a = syscall_action(*d.syscall_action))
                p.syscall_default_action = *a;
        }
    }

    // Defaults that were not written: the net default follows the path default; syscalls
    // are allowed unless a policy says otherwise (seccomp is opt-in).
    void fill_defaults()
    {
        auto& p = out_.policy;
        p.path_default.id = ir::kDefaultRuleId;
        p.net_default.id = ir::kNetDefaultRuleId;
        p.syscall_default.id = ir::kSyscallDefaultRuleId;
        if (!have_net_default_) {
            p.net_default.decision = p.path_default.decision;
            p.net_default.origin = p.path_default.origin;
        }
        if (!have_syscall_default_) {
            p.syscall_default.decision = ir::Decision::Allow;
            p.syscall_default.origin = ir::Provenance{sources_.file(program_.units.front().file).name, 0, 0,
                                                      "syscalls default allow (implicit)", {}};
        }
    }

    // --- path rules -------------------------------------------------------------------

    std::optional<ir::AccessMask> accesses(const std::vector<ast::AccessName>& names)
    {
        ir::AccessMask mask = 0;
        for (const auto& a : names) {
            if (a.text == "all") {
                mask |= ir::kAllAccesses;
                continue;
            }
            // The grammar admits access keywords only.
            mask |= ir::bit(ir::parse_access(a.text).value());
        }
        // Whoever may write may also append.
        if (mask & ir::bit(ir::Access::Write))
            mask |= ir::bit(ir::Access::Append);
        return mask;
    }

    // The patterns a target stands for: one string, or every pattern of a path set.
    std::vector<std::pair<std::string, SourceLocation>> target_patterns(const ast::PathTarget& target)
    {
        if (const auto* text = std::get_if<ast::Text>(&target)) {
            auto value = expand(*text);
            if (!value)
                return {};
            return {{*value, text->loc}};
        }
        const auto& ref = std::get<ast::SetRef>(target);
        std::vector<std::pair<std::string, SourceLocation>> out;
        std::vector<std::string> stack;
        set_patterns(ref.name, ref.loc, ast::SetDef::Kind::Paths, stack, out);
        return out;
    }

    void set_patterns(const std::string& name, const SourceLocation& loc, ast::SetDef::Kind want,
                      std::vector<std::string>& stack, std::vector<std::pair<std::string, SourceLocation>>& out)
    {
        const auto* set = find_set(name, loc, want);
        if (set == nullptr)
            return;
        if (std::find(stack.begin(), stack.end(), name) != stack.end()) {
            diags_.report(DiagKind::VariableCycle, loc, name, fmt::format("{} -> {}", fmt::join(stack, " -> "), name));
            return;
        }
        stack.push_back(name);
        for (const auto& item : set->items) {
            if (item.kind == ast::Item::Kind::SetRef) {
                set_patterns(item.text, item.loc, want, stack, out);
            } else if (want == ast::SetDef::Kind::Paths) {
                if (item.kind != ast::Item::Kind::Pattern) {
                    diags_.report(DiagKind::BadGlob, item.loc, fmt::format("`{}` is not a path", item.text))
                        .hints.push_back("path sets hold quoted or absolute paths");
                    continue;
                }
                if (auto value = expand(ast::Text{item.text, item.loc, item.quoted}))
                    out.emplace_back(*value, item.loc);
            } else {
                out.emplace_back((item.kind == ast::Item::Kind::Group ? "@" : "") + item.text, item.loc);
            }
        }
        stack.pop_back();
    }

    const ast::SetDef* find_set(const std::string& name, const SourceLocation& loc, ast::SetDef::Kind want)
    {
        const auto it = sets_.find(name);
        if (it == sets_.end()) {
            std::vector<std::string> known;
            for (const auto& [n, _] : sets_)
                known.push_back(n);
            auto& d = diags_.report(DiagKind::UnknownSet, loc, name);
            if (auto hint = did_you_mean(name, known, "$"); !hint.empty())
                d.hints.push_back(hint);
            return nullptr;
        }
        it->second.used = true;
        const auto* set = it->second.set;
        if (set->kind != want) {
            const char* kinds = want == ast::SetDef::Kind::Paths ? "paths" : "syscalls";
            const char* has = set->kind == ast::SetDef::Kind::Paths ? "paths" : "syscalls";
            diags_.report(DiagKind::SetKindMismatch, loc, name, has, kinds);
            return nullptr;
        }
        return set;
    }

    // Validates a set's items once, where it is defined, even if it is never used.
    void check_set(const ast::SetDef& set)
    {
        for (const auto& item : set.items) {
            if (set.kind == ast::SetDef::Kind::Syscalls && item.kind == ast::Item::Kind::Pattern)
                diags_.report(DiagKind::UnknownSyscall, item.loc, item.text)
                    .hints.push_back("syscall sets hold names, `@groups` and `$sets`");
            else if (set.kind == ast::SetDef::Kind::Syscalls && item.kind == ast::Item::Kind::Word)
                known_syscall(item.text, item.loc);
            else if (set.kind == ast::SetDef::Kind::Syscalls && item.kind == ast::Item::Kind::Group)
                known_group(item.text, item.loc);
        }
    }

    // A pattern, expanded and validated, as the normalised alternatives it stands for.
    std::vector<std::string> patterns(const std::string& value, const SourceLocation& loc)
    {
        auto alternatives = normalise_pattern(value, loc, kMaxAlternatives, diags_);
        if (options_.check_symlinks)
            check_symlinks(alternatives, loc);
        return alternatives;
    }

    void check_symlinks(const std::vector<std::string>& alternatives, const SourceLocation& loc)
    {
        for (const auto& pattern : alternatives) {
            if (const auto link = symlink_on_path(pattern)) {
                auto& d = diags_.report(DiagKind::PathThroughSymlink, loc, pattern, link->link);
                d.hints.push_back(fmt::format("write `{}`", link->resolved_pattern));
                return;
            }
        }
    }

    std::optional<std::uint32_t> open_flags(const std::vector<ast::Word>& words)
    {
        std::uint32_t flags = 0;
        for (const auto& w : words) {
            const auto f = open_flag(w.text);
            if (!f) {
                auto& d = diags_.report(DiagKind::UnknownOpenFlag, w.loc, w.text);
                if (auto hint = did_you_mean(w.text, open_flag_names()); !hint.empty())
                    d.hints.push_back(hint);
                return std::nullopt;
            }
            flags |= *f;
        }
        return flags;
    }

    void path_rule(const ast::PathRule& r, const ir::Conditions& conditions)
    {
        const auto mask = accesses(r.accesses);
        if (!mask)
            return;
        auto rule_conditions = conditions;
        rule_conditions.owner = r.owner.has_value();
        if (!r.flags.empty()) {
            const auto flags = open_flags(r.flags);
            if (!flags)
                return;
            const ir::AccessMask opens = ir::bit(ir::Access::Read) | ir::bit(ir::Access::Write) |
                                         ir::bit(ir::Access::Append) | ir::bit(ir::Access::Exec);
            if (*mask & ~opens) {
                diags_.report(DiagKind::FlagsNeedOpen, r.flags.front().loc, ir::to_string(*mask & ~opens))
                    .hints.push_back("use `flags` with read, write, append or exec only");
                return;
            }
            rule_conditions.open_flags = *flags;
        }
        for (const auto& [value, loc] : target_patterns(r.target)) {
            for (auto& pattern : patterns(value, loc)) {
                if (r.action == ast::Action::Audit) {
                    out_.policy.audits.push_back(ir::AuditRule{0, *mask, pattern, rule_conditions, provenance(r)});
                } else {
                    const auto decision = r.action == ast::Action::Allow ? ir::Decision::Allow : ir::Decision::Deny;
                    out_.policy.rules.push_back(
                        ir::PathRule{0, decision, *mask, std::move(pattern), rule_conditions, provenance(r)});
                }
            }
        }
    }

    void when_block(const ast::WhenBlock& w, ir::Conditions conditions)
    {
        for (const auto& c : w.conditions) {
            if (c.kind == ast::Condition::Kind::Exe) {
                const auto value = expand(c.exe);
                if (!value)
                    return;
                const auto alternatives = patterns(*value, c.exe.loc);
                if (alternatives.size() != 1) {
                    if (!alternatives.empty())
                        diags_.report(DiagKind::EmptyCondition, c.exe.loc,
                                      "`when exe` takes one pattern, without `{...}` alternatives")
                            .hints.push_back("write one `when` block per program");
                    return;
                }
                conditions.exe.push_back(alternatives.front());
                continue;
            }
            const auto range = parse_id_range(c.id.text);
            if (!range) {
                diags_.report(DiagKind::EmptyCondition, c.id.loc, fmt::format("`{}` is not an id or a range of ids", c.id.text))
                    .hints.push_back("write `uid 1000` or `uid 1000-1999`");
                return;
            }
            auto& slot = c.kind == ast::Condition::Kind::Uid ? conditions.uid : conditions.gid;
            // Nested blocks narrow each other.
            ir::IdRange merged = *range;
            if (slot) {
                merged.lo = std::max(slot->lo, range->lo);
                merged.hi = std::min(slot->hi, range->hi);
            }
            if (merged.lo > merged.hi) {
                diags_.report(DiagKind::EmptyCondition, c.loc, "no id satisfies this condition and the enclosing ones");
                return;
            }
            slot = merged;
        }
        for (const auto& statement : w.body)
            rule(statement, conditions);
    }

    // --- syscalls ---------------------------------------------------------------------

    bool known_syscall(const std::string& name, const SourceLocation& loc)
    {
        if (syscalls::find(name) != nullptr)
            return true;
        auto& d = diags_.report(DiagKind::UnknownSyscall, loc, name);
        const auto suggestions = syscalls::suggest_syscall(name);
        if (!suggestions.empty())
            d.hints.push_back(fmt::format("did you mean `{}`?", fmt::join(suggestions, "`, `")));
        d.hints.push_back("names are checked against the x86_64 and aarch64 syscall tables");
        return false;
    }

    const syscalls::Group* known_group(const std::string& name, const SourceLocation& loc)
    {
        if (const auto* g = syscalls::find_group(name))
            return g;
        auto& d = diags_.report(DiagKind::UnknownSyscallGroup, loc, name);
        const auto suggestions = syscalls::suggest_group("@" + name);
        if (!suggestions.empty())
            d.hints.push_back(fmt::format("did you mean `{}`?", fmt::join(suggestions, "`, `")));
        return nullptr;
    }

    std::optional<ir::SyscallAction> syscall_action(const ast::SyscallAction& a)
    {
        if (a.kind == ast::SyscallAction::Kind::Kill)
            return ir::SyscallAction{ir::SyscallAction::Kind::Kill, 0};
        const auto& w = *a.errno_value;
        auto value = syscalls::errno_value(w.text);
        if (!value) {
            char* end = nullptr;
            const long n = std::strtol(w.text.c_str(), &end, 10);
            if (!w.text.empty() && *end == '\0' && n >= 1 && n <= 4095)
                value = static_cast<int>(n);
        }
        if (!value) {
            diags_.report(DiagKind::BadErrno, w.loc, w.text).hints.push_back("e.g. `errno(EPERM)` or `errno(1)`");
            return std::nullopt;
        }
        return ir::SyscallAction{ir::SyscallAction::Kind::Errno, *value};
    }

    void syscall_rule(const ast::SyscallRule& r)
    {
        if (r.action == ast::Action::Audit) {
            diags_.report(DiagKind::AuditNotHere, r.loc).hints.push_back("write `syscalls allow` or `syscalls deny`");
            return;
        }
        const auto decision = r.action == ast::Action::Allow ? ir::Decision::Allow : ir::Decision::Deny;
        ir::SyscallAction action;
        if (r.syscall_action) {
            if (decision == ir::Decision::Allow) {
                diags_.report(DiagKind::ActionOnAllow, r.syscall_action->loc).hints.push_back("remove the `action`");
                return;
            }
            const auto a = syscall_action(*r.syscall_action);
            if (!a)
                return;
            action = *a;
        }
        // Items, with set references replaced by their members.
        std::vector<std::pair<std::string, SourceLocation>> items;
        for (const auto& item : r.items) {
            if (item.kind == ast::Item::Kind::SetRef) {
                std::vector<std::string> stack;
                set_patterns(item.text, item.loc, ast::SetDef::Kind::Syscalls, stack, items);
            } else if (item.kind == ast::Item::Kind::Pattern) {
                diags_.report(DiagKind::UnknownSyscall, item.loc, item.text)
                    .hints.push_back("syscall rules name syscalls, `@groups` and `$sets`");
            } else {
                items.emplace_back((item.kind == ast::Item::Kind::Group ? "@" : "") + item.text, item.loc);
            }
        }
        std::vector<std::string> not_live;
        for (const auto& [item, loc] : items) {
            std::vector<std::pair<std::string, bool>> names; // (syscall, via a group)
            if (item.starts_with("@")) {
                const auto* group = known_group(item.substr(1), loc);
                if (group == nullptr)
                    continue;
                for (const auto n : syscalls::expand_group(*group))
                    names.emplace_back(std::string(n), true);
            } else if (known_syscall(item, loc)) {
                names.emplace_back(item, false);
            }
            for (auto& [name, via_group] : names) {
                if (decision == ir::Decision::Deny && syscalls::live_hook(name).empty())
                    not_live.push_back(name);
                out_.policy.syscalls.push_back(ir::SyscallRule{0, decision, name, via_group, action, provenance(r)});
            }
        }
        if (!not_live.empty()) {
            std::sort(not_live.begin(), not_live.end());
            not_live.erase(std::unique(not_live.begin(), not_live.end()), not_live.end());
            const bool one = not_live.size() == 1;
            const auto shown = fmt::format("`{}`{}", fmt::join(not_live.begin(), not_live.begin() + std::min<std::ptrdiff_t>(4, std::ssize(not_live)), "`, `"),
                                           not_live.size() > 4 ? fmt::format(" and {} more", not_live.size() - 4) : "");
            diags_.report(DiagKind::SyscallNotLive, r.loc, shown, one ? "has" : "have", one ? "it" : "them")
                .hints.push_back("`bwctl syscall allow` can only re-allow syscalls an LSM hook covers");
        }
    }

    // --- network and devices ------------------------------------------------------------

    void net_rule(const ast::NetRule& r, const ir::Conditions& conditions)
    {
        if (r.action == ast::Action::Audit) {
            diags_.report(DiagKind::AuditNotHere, r.loc).hints.push_back("write `net allow` or `net deny`");
            return;
        }
        ir::NetRule base;
        base.decision = r.action == ast::Action::Allow ? ir::Decision::Allow : ir::Decision::Deny;
        base.conditions = conditions;
        base.origin = provenance(r);
        switch (r.kind) {
        case ast::NetRule::Kind::All:
            out_.policy.net.push_back(base);
            return;
        case ast::NetRule::Kind::Family:
            for (const auto& f : r.families) {
                const auto family = socket_family(f.text);
                if (!family) {
                    auto& d = diags_.report(DiagKind::UnknownFamily, f.loc, f.text);
                    if (auto hint = did_you_mean(f.text, socket_family_names()); !hint.empty())
                        d.hints.push_back(hint);
                    continue;
                }
                auto rule = base;
                rule.kind = ir::NetRule::Kind::Family;
                rule.family = *family;
                out_.policy.net.push_back(rule);
            }
            return;
        case ast::NetRule::Kind::Endpoint:
            for (const auto& e : r.endpoints) {
                auto parsed = parse_endpoint(e.text);
                if (auto* error = std::get_if<std::string>(&parsed)) {
                    diags_.report(DiagKind::BadEndpoint, e.loc, e.text, *error)
                        .hints.push_back("e.g. `127.0.0.1:8080`, `10.0.0.0/8:53`, `[::1]:1024-65535` or `any:443`");
                    continue;
                }
                for (const auto& endpoint : std::get<std::vector<ir::NetEndpoint>>(parsed)) {
                    auto rule = base;
                    rule.kind = ir::NetRule::Kind::Endpoint;
                    rule.protocol = r.protocol->text == "tcp" ? 6 : 17;
                    rule.bind = r.direction->text == "bind";
                    rule.endpoint = endpoint;
                    out_.policy.net.push_back(rule);
                }
            }
            return;
        }
    }

    void device_rule(const ast::DeviceRule& r, const ir::Conditions& conditions)
    {
        if (r.action == ast::Action::Audit) {
            diags_.report(DiagKind::AuditNotHere, r.loc).hints.push_back("write `device allow` or `device deny`");
            return;
        }
        const auto mask = accesses(r.accesses);
        if (!mask)
            return;
        ir::DeviceRule base;
        base.decision = r.action == ast::Action::Allow ? ir::Decision::Allow : ir::Decision::Deny;
        base.accesses = *mask;
        base.conditions = conditions;
        base.origin = provenance(r);
        base.ioctl_any = r.ioctl_any;
        for (const auto& cmd : r.ioctl_commands) {
            const auto range = parse_ioctl_range(cmd.text);
            if (!range) {
                diags_.report(DiagKind::BadIoctl, cmd.loc, cmd.text)
                    .hints.push_back("write a number (`0x40086409`) or a range (`0x6400-0x64ff`), or `any`");
                return;
            }
            base.ioctl_commands.push_back(*range);
        }
        if (const auto* number = std::get_if<ast::DeviceNumber>(&r.target)) {
            auto parsed = parse_device_number(number->spec.text);
            if (auto* error = std::get_if<std::string>(&parsed)) {
                diags_.report(DiagKind::BadDeviceNumber, number->spec.loc, number->spec.text, *error)
                    .hints.push_back("write MAJOR:MINOR, each a number, a range `128-255` or `*`");
                return;
            }
            auto rule = base;
            rule.type = number->kind.text == "char" ? 'c' : 'b';
            std::tie(rule.major, rule.minor) = std::get<std::pair<ir::IdRange, ir::IdRange>>(parsed);
            out_.policy.devices.push_back(rule);
            return;
        }
        ast::PathTarget target = std::holds_alternative<ast::Text>(r.target) ? ast::PathTarget{std::get<ast::Text>(r.target)}
                                                                                : ast::PathTarget{std::get<ast::SetRef>(r.target)};
        for (const auto& [value, loc] : target_patterns(target)) {
            for (auto& pattern : patterns(value, loc)) {
                auto rule = base;
                rule.pattern = std::move(pattern);
                out_.policy.devices.push_back(rule);
            }
        }
    }

    // Where a rule (or default) was written, and its text as written.
    template <class Node>
    ir::Provenance provenance(const Node& node) const
    {
        const auto& loc = node.loc;
        return ir::Provenance{sources_.file(loc.file).name, loc.line, loc.column, node.written, loc};
    }

    const ast::Program& program_;
    const SourceManager& sources_;
    const CheckOptions& options_;
    Diagnostics& diags_;
    CheckedPolicy out_;
    std::map<std::string, LetSymbol> lets_;
    std::map<std::string, SetSymbol> sets_;
    bool have_default_ = false;
    bool have_net_default_ = false;
    bool have_syscall_default_ = false;
};

} // namespace

std::map<std::string, std::string> environment_bindings()
{
    std::map<std::string, std::string> b;
    const struct passwd* pw = getpwuid(getuid());
    if (const char* home = std::getenv("HOME"))
        b["HOME"] = home;
    else if (pw != nullptr)
        b["HOME"] = pw->pw_dir;
    if (pw != nullptr)
        b["USER"] = pw->pw_name;
    else if (const char* user = std::getenv("USER"))
        b["USER"] = user;
    b["UID"] = std::to_string(getuid());
    b["GID"] = std::to_string(getgid());
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) != nullptr)
        b["CWD"] = cwd;
    return b;
}

std::optional<CheckedPolicy> run_check(const ast::Program& program, const SourceManager& sources,
                                       const CheckOptions& options, Diagnostics& diags)
{
    return Checker(program, sources, options, diags).run();
}

} // namespace bw
