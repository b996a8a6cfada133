#include "helpers.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fcntl.h>
#include <set>
#include <tuple>
#include <stdexcept>

namespace bw::test {

TempDir::TempDir()
{
    std::string templ = (std::filesystem::temp_directory_path() / "bw-test.XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed");
    path_ = templ;
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const
{
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

PipelineOptions test_options()
{
    auto o = default_options();
    o.check.bindings = {{"HOME", "/home/user"}, {"USER", "user"}, {"UID", "1000"},
                        {"GID", "1000"}, {"CWD", "/home/user/project"}};
    o.check.check_symlinks = false;
    return o;
}

CompileResult compile_file(const std::string& path, const PipelineOptions& options)
{
    CompileResult r{std::make_unique<Compilation>(), std::nullopt, std::nullopt};
    std::string dump;
    r.compiled = run_pipeline(path, *r.compilation, options, dump);
    return r;
}

CompileResult check_file(const std::string& path, const PipelineOptions& options)
{
    CompileResult r{std::make_unique<Compilation>(), std::nullopt, std::nullopt};
    std::string dump;
    if (const auto file = load_file(path, r.compilation->sources, r.compilation->diags))
        r.policy = run_frontend(*file, *r.compilation, options, dump);
    return r;
}

CompileResult check_text(const std::string& text, const std::string& name)
{
    TempDir dir;
    return check_file(dir.write(name, text));
}

ir::Policy checked_policy(const std::string& text)
{
    auto r = check_text(text);
    std::string rendered;
    for (const auto& d : r.diags().all())
        rendered += r.diags().render(d, false);
    INFO(rendered);
    REQUIRE(r.policy);
    return *r.policy;
}

CompileResult compile_text(const std::string& text, const std::string& name)
{
    TempDir dir;
    return compile_file(dir.write(name, text));
}

namespace {

// Few, overlapping names, so that random rules nest, collide and share prefixes.
const std::vector<std::string> kNames = {"a", "b", "ab", "a.b", "ba", "x y", "\xc3\xa9"};
const std::vector<std::string> kGlobs = {"*", "a*", "*b", "?", "[ab]", "[!a]*", "**", "**"};

std::string random_pattern(std::mt19937& rng)
{
    std::string p;
    const int depth = 1 + static_cast<int>(rng() % 4);
    for (int d = 0; d < depth; ++d) {
        const bool glob = rng() % 3 == 0;
        p += "/" + (glob ? kGlobs[rng() % kGlobs.size()] : kNames[rng() % kNames.size()]);
    }
    return p;
}

} // namespace

std::string random_path(std::mt19937& rng, int max_depth)
{
    std::uniform_int_distribution<int> depth(0, max_depth);
    std::string p;
    for (int d = depth(rng); d > 0; --d)
        p += "/" + kNames[rng() % kNames.size()];
    return p.empty() ? "/" : p;
}


ir::Policy random_policy(std::mt19937& rng)
{
    ir::Policy p;
    p.name = "random";
    p.path_default = {rng() % 2 ? ir::Decision::Allow : ir::Decision::Deny, ir::kDefaultRuleId, {}};
    std::set<std::tuple<std::string, ir::AccessMask, ir::Decision>> seen;
    const int n = static_cast<int>(rng() % 10);
    for (int i = 0; i < n; ++i) {
        ir::PathRule r;
        r.pattern = random_pattern(rng);
        r.accesses = static_cast<ir::AccessMask>(1 + rng() % 15); // read, write, append, exec
        r.decision = rng() % 2 ? ir::Decision::Allow : ir::Decision::Deny;
        if (!seen.emplace(r.pattern, r.accesses, r.decision).second)
            continue;
        p.rules.push_back(r);
    }
    // The pipeline's order: sorted, then numbered.
    std::sort(p.rules.begin(), p.rules.end(), [](const auto& a, const auto& b) {
        return std::tie(a.pattern, a.accesses, a.decision) < std::tie(b.pattern, b.accesses, b.decision);
    });
    ir::RuleId id = ir::kFirstRuleId;
    for (auto& r : p.rules)
        r.id = id++;
    // Invariant rules, as the lower stage appends them: denials above every policy rule.
    // Their patterns are random too, so that they overlap the policy's rules.
    for (int i = static_cast<int>(rng() % 6) - 3; i > 0; --i) {
        ir::PathRule r;
        r.pattern = random_pattern(rng);
        r.accesses = static_cast<ir::AccessMask>(1 + rng() % 15);
        r.decision = ir::Decision::Deny;
        r.invariant = true;
        r.origin.file = std::string(ir::kInvariantFile);
        r.origin.text = "invariant: random";
        r.id = id++;
        p.rules.push_back(r);
    }
    return p;
}

// Random uid, gid, owner and open-flag conditions on some of the rules, over few values so
// that they overlap the queries' and each other's.
void add_random_conditions(std::mt19937& rng, ir::Policy& policy)
{
    for (auto& r : policy.rules) {
        if (r.invariant || rng() % 2)
            continue;
        auto& c = r.conditions;
        if (rng() % 2) {
            const auto lo = static_cast<std::uint32_t>(rng() % 3) * 1000;
            c.uid = ir::IdRange{lo, lo + static_cast<std::uint32_t>(rng() % 2) * 1000};
        }
        if (rng() % 3 == 0)
            c.gid = ir::IdRange{100, 100};
        c.owner = rng() % 3 == 0;
        if (rng() % 3 == 0)
            c.open_flags = rng() % 2 ? O_TRUNC : O_TRUNC | O_APPEND;
        // Nested `when exe` blocks give a rule two patterns, which must both match.
        for (int n = rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 2) : 0; n > 0; --n)
            c.exe.push_back(random_pattern(rng));
    }
}

void add_random_audits(std::mt19937& rng, ir::Policy& policy)
{
    ir::RuleId id = ir::kFirstRuleId + static_cast<ir::RuleId>(policy.rules.size());
    for (int n = static_cast<int>(rng() % 5); n > 0; --n) {
        ir::AuditRule r;
        r.id = id++;
        r.pattern = random_pattern(rng);
        r.accesses = static_cast<ir::AccessMask>(1 + rng() % 15); // read, write, append, exec
        if (rng() % 3 == 0)
            r.conditions.uid = ir::IdRange{1000, 1999};
        if (rng() % 4 == 0)
            r.conditions.exe.push_back(random_pattern(rng));
        policy.audits.push_back(r);
    }
}

ir::PathQuery random_query(std::mt19937& rng)
{
    ir::PathQuery q;
    q.access = static_cast<ir::Access>(rng() % 4); // read, write, append, exec
    q.path = random_path(rng, 5);
    q.uid = static_cast<std::uint32_t>(rng() % 4) * 1000 + static_cast<std::uint32_t>(rng() % 2);
    q.gid = rng() % 2 ? 100 : 0;
    q.owner = rng() % 2;
    q.flags = static_cast<std::uint32_t>(rng() % 2 ? O_TRUNC : 0) | static_cast<std::uint32_t>(rng() % 2 ? O_APPEND : 0);
    q.exe = random_path(rng, 4);
    return q;
}

} // namespace bw::test
