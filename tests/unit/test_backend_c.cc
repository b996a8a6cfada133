// The specialised backend must decide as the reference evaluator: its renumbered tables
// are walked here as the kernel walks them, and its generated decision code is compiled
// for the host and run, so that the test checks what the code does, not how it reads.
#include "backend_c/backend_c.h"
#include "helpers.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <random>

using namespace bw;

namespace {

// The final state of a path, walked like decide.bpf.h.
std::uint32_t walk(const MapTables& t, std::string_view path)
{
    std::uint32_t state = BW_START_STATE;
    for (const unsigned char c : path) {
        const auto next = t.trans[std::size_t{state} * t.sandbox.nclasses + t.sandbox.classes[c]];
        state = next & ~BW_ABSORBING;
        if (state == BW_DEAD_STATE || (next & BW_ABSORBING))
            break;
    }
    return state;
}

// Whether the program decides paths: without file_open it has no decision function.
bool decides_paths(const CProgram& program)
{
    return std::find(program.hooks.begin(), program.hooks.end(), "file_open") != program.hooks.end();
}

// One C file holding every program's decision function under its own name, and a main
// that answers "program state kind exe-state" lines with decision | rule << 8, the
// `when exe` patterns of exe-state and the audit chain of state. A program without path
// hook has no decision function (it decides nothing): its slot stays empty; one without
// exe patterns matches none, one without audit rules has no audit chain.
std::string harness(const std::vector<CProgram>& programs)
{
    std::string c = "#include <stdio.h>\n#include \"bumblewrap.h\"\n"
                    "#define __noinline __attribute__((noinline))\n"
                    "#define BW_VERDICT(decision, rule) ((__u64)(rule) << 8 | (decision))\n";
    for (std::size_t i = 0; i < programs.size(); ++i) {
        c += fmt::format("#define bw_policy_decision decision_{0}\n#define bw_policy_classes classes_{0}\n"
                         "#define bw_policy_net net_{0}\n#define bw_policy_net_rules net_rules_{0}\n"
                         "#define bw_policy_exe_patterns exe_{0}\n#define bw_policy_audit_chain audit_{0}\n"
                         "#define bw_policy_syscalls syscalls_{0}\n", i);
        c += programs[i].header;
        c += "#undef bw_policy_decision\n#undef bw_policy_classes\n#undef BW_POLICY_NCLASSES\n"
             "#undef bw_policy_exe_patterns\n#undef BW_POLICY_EXE_PATTERNS\n"
             "#undef bw_policy_audit_chain\n#undef BW_POLICY_AUDITS\n"
             "#undef BW_POLICY_NSTATES\n#undef BW_POLICY_NLINKS\n#undef BW_POLICY_DEFAULT_DECISION\n#undef BW_POLICY_DEFAULT_RULE\n"
             "#undef BW_POLICY_HOOKS\n#undef BW_POLICY_INLINE_DECISIONS\n#undef BW_POLICY_INVARIANTS\n"
             "#undef bw_policy_net\n#undef bw_policy_net_rules\n#undef BW_POLICY_NET_RULES\n"
             "#undef bw_policy_syscalls\n";
        for (std::size_t at = programs[i].header.find("#define BW_HOOK_"); at != std::string::npos;
             at = programs[i].header.find("#define BW_HOOK_", at + 1)) {
            const auto name = at + std::string_view("#define ").size();
            c += "#undef " + programs[i].header.substr(name, programs[i].header.find(' ', name) - name) + "\n";
        }
    }
    c += "static __u64 (*const decisions[])(__u32, __u32) = {";
    for (std::size_t i = 0; i < programs.size(); ++i)
        c += decides_paths(programs[i]) ? fmt::format("decision_{}, ", i) : std::string("0, ");
    c += "};\nstatic __u32 (*const exes[])(__u32) = {";
    for (std::size_t i = 0; i < programs.size(); ++i)
        c += decides_paths(programs[i]) && programs[i].exe_patterns != 0 ? fmt::format("exe_{}, ", i)
                                                                          : std::string("0, ");
    c += "};\nstatic __u32 (*const audits[])(__u32) = {";
    for (std::size_t i = 0; i < programs.size(); ++i)
        c += decides_paths(programs[i]) && programs[i].tables.sandbox.audits ? fmt::format("audit_{}, ", i)
                                                                             : std::string("0, ");
    c += "};\nint main(void)\n{\n\tunsigned p, s, k, e;\n\twhile (scanf(\"%u %u %u %u\", &p, &s, &k, &e) == 4)\n"
         "\t\tprintf(\"%llu %u %u\\n\", (unsigned long long)decisions[p](s, k), exes[p] ? exes[p](e) : 0,\n"
         "\t\t       audits[p] ? audits[p](s) : 0);\n\treturn 0;\n}\n";
    return c;
}

// Compiles dir's harness.c with the host compiler and runs it over dir's queries.txt.
std::ifstream run_harness(const test::TempDir& dir)
{
    const auto d = dir.path().string();
    const auto command = fmt::format("{} -O1 -w -I{}/bpf-templates -o {}/harness {}/harness.c && {}/harness <{}/queries.txt "
                                     ">{}/answers.txt",
                                     BW_HOST_CC, BW_SOURCE_DIR, d, d, d, d, d);
    REQUIRE(std::system(command.c_str()) == 0);
    return std::ifstream(dir.path() / "answers.txt");
}

// The kernel's bw_link_holds, for a task whose executable matches the `when exe`
// patterns `exe`.
bool link_holds(const bw_link& l, const ir::PathQuery& q, std::uint32_t exe)
{
    return q.uid >= l.uid_lo && q.uid <= l.uid_hi && q.gid >= l.gid_lo && q.gid <= l.gid_hi &&
           (!l.owner || q.owner) && (q.flags & l.open_flags) == l.open_flags && (exe & l.exe) == l.exe;
}

// The kernel's bw_chain_decide over the tables' links.
ir::Verdict follow_chain(const MapTables& t, std::uint32_t first, const ir::PathQuery& q, std::uint32_t exe)
{
    for (auto i = first;; ++i) {
        const auto& l = t.links.at(i);
        if (!l.last && !link_holds(l, q, exe))
            continue;
        if (l.decision == BW_DECISION_NONE)
            return {static_cast<ir::Decision>(t.sandbox.default_decision), t.sandbox.default_rule};
        return {static_cast<ir::Decision>(l.decision), l.rule};
    }
}

// The kernel's bw_chain_audit over the tables' links: the audit rule, 0 when none.
ir::RuleId follow_audit_chain(const MapTables& t, std::uint32_t first, const ir::PathQuery& q, std::uint32_t exe)
{
    for (auto i = first; i != 0; ++i) {
        const auto& l = t.links.at(i);
        if (l.decision == BW_DECISION_NONE)
            return 0;
        if ((l.kinds & ir::bit(q.access)) && link_holds(l, q, exe))
            return l.rule;
    }
    return 0;
}

} // namespace

TEST_CASE("the specialised backend's decision chains decide as the reference evaluator")
{
    std::mt19937 rng(7032);
    std::vector<ir::Policy> policies;
    std::vector<CProgram> programs;
    for (int i = 0; i < 200; ++i) {
        policies.push_back(test::random_policy(rng));
        test::add_random_conditions(rng, policies.back());
        test::add_random_audits(rng, policies.back());
        SourceManager sources;
        Diagnostics diags(sources);
        const auto automaton = run_compile_paths(policies.back(), diags);
        REQUIRE(automaton);
        programs.push_back(run_backend_c(policies.back(), *automaton));
    }
    std::vector<std::pair<std::size_t, ir::PathQuery>> queries;
    std::string input;
    for (std::size_t p = 0; p < policies.size(); ++p) {
        for (int q = 0; q < 80; ++q) {
            queries.emplace_back(p, test::random_query(rng));
            const auto& query = queries.back().second;
            if (decides_paths(programs[p]))
                input += fmt::format("{} {} {} {}\n", p, walk(programs[p].tables, query.path),
                                     static_cast<unsigned>(query.access), walk(programs[p].tables, query.exe));
        }
    }
    test::TempDir dir;
    dir.write("harness.c", harness(programs));
    dir.write("queries.txt", input);
    std::ifstream answers = run_harness(dir);
    std::size_t chained = 0, with_exe = 0, recorded = 0;
    for (const auto& [p, query] : queries) {
        const auto expected = ir::evaluate(policies[p], query);
        if (!decides_paths(programs[p])) {
            REQUIRE(expected.decision == ir::Decision::Allow);
            continue;
        }
        std::uint64_t verdict = 0;
        std::uint32_t exe = 0, audit = 0;
        REQUIRE(answers >> verdict >> exe >> audit);
        const auto audited = follow_audit_chain(programs[p].tables, audit, query, exe);
        recorded += audited != 0;
        ir::Verdict actual{static_cast<ir::Decision>(verdict & 0xff), static_cast<ir::RuleId>(verdict >> 8)};
        if ((verdict & 0xff) == BW_DECISION_CHAIN) {
            actual = follow_chain(programs[p].tables, static_cast<std::uint32_t>(verdict >> 8), query, exe);
            ++chained;
            with_exe += exe != 0;
        }
        INFO("policy " << p << " path " << query.path << " access " << ir::name(query.access) << " uid " << query.uid
                       << " gid " << query.gid << " owner " << query.owner << " flags " << query.flags << " exe "
                       << query.exe << "\n"
                       << ir::dump(policies[p]));
        REQUIRE(actual == expected);
        REQUIRE(audited == ir::evaluate_audit(policies[p], query));
    }
    // Chains decided hundreds of the queries, so they were put to the test, some of them
    // for an executable that matches exe patterns; audit rules recorded hundreds.
    CHECK(chained > 300);
    CHECK(with_exe > 30);
    CHECK(recorded > 300);
}

TEST_CASE("the specialised backend decides as the reference evaluator on random policies and paths")
{
    std::mt19937 rng(7031);
    std::vector<ir::Policy> policies;
    std::vector<CProgram> programs;
    for (int i = 0; i < 300; ++i) {
        policies.push_back(test::random_policy(rng));
        SourceManager sources;
        Diagnostics diags(sources);
        const auto automaton = run_compile_paths(policies.back(), diags);
        REQUIRE(automaton);
        programs.push_back(run_backend_c(policies.back(), *automaton));
        REQUIRE(programs.back().inline_decisions);
    }

    struct Query {
        std::size_t policy;
        ir::Access access;
        std::string path;
        std::uint32_t state;
    };
    std::vector<Query> queries;
    for (std::size_t p = 0; p < policies.size(); ++p) {
        for (int q = 0; q < 20; ++q) {
            const auto path = test::random_path(rng, 5);
            for (const auto access : {ir::Access::Read, ir::Access::Write, ir::Access::Append, ir::Access::Exec})
                queries.push_back({p, access, path, walk(programs[p].tables, path)});
        }
    }

    test::TempDir dir;
    dir.write("harness.c", harness(programs));
    std::string input;
    for (const auto& q : queries) {
        if (decides_paths(programs[q.policy]))
            input += fmt::format("{} {} {} 0\n", q.policy, q.state, static_cast<unsigned>(q.access));
    }
    dir.write("queries.txt", input);
    std::ifstream answers = run_harness(dir);
    std::size_t checked = 0, denied = 0, without_hooks = 0;
    for (const auto& q : queries) {
        ir::PathQuery query;
        query.access = q.access;
        query.path = q.path;
        const auto expected = ir::evaluate(policies[q.policy], query);
        INFO("policy " << q.policy << " path " << q.path << " access " << ir::name(q.access) << "\n"
                       << ir::dump(policies[q.policy]));
        ++checked;
        // No hook: the kernel never asks, so everything must be allowed.
        if (!decides_paths(programs[q.policy])) {
            REQUIRE(expected.decision == ir::Decision::Allow);
            ++without_hooks;
            continue;
        }
        std::uint64_t verdict = 0;
        std::uint32_t exe = 0, audit = 0;
        REQUIRE(answers >> verdict >> exe >> audit);
        REQUIRE((verdict & 0xff) == static_cast<std::uint64_t>(expected.decision));
        REQUIRE((verdict >> 8) == expected.rule);
        denied += expected.decision == ir::Decision::Deny;
    }
    CHECK(checked == 24000);
    CHECK(without_hooks > 0);
    CHECK(without_hooks < checked / 4);
    // Both outcomes, or the comparison proves little.
    CHECK(denied > checked / 10);
    CHECK(denied < checked * 9 / 10);
}

TEST_CASE("the specialised backend keeps the invariants' hooks, every path hook for bumblewrap's own state, and the new file systems' hook")
{
    SourceManager sources;
    Diagnostics diags(sources);
    auto allow_all = test::checked_policy("policy \"p\" {\n    default allow\n    allow read /usr/\n}\n");
    auto a = run_compile_paths(allow_all, diags);
    REQUIRE(a);
    // bumblewrap's own state is denied to every access kind, so every path hook stays.
    const std::vector<std::string> path_hooks = {"file_open", "create", "delete", "rename", "link", "attr",
                                                 "truncate",  "metadata", "exec", "ioctl",  "unix"};
    // new_fs comes last: path hooks need the file systems the sandbox made itself.
    auto with_invariants = path_hooks;
    with_invariants.emplace_back("invariants");
    with_invariants.emplace_back("new_fs");
    CHECK(run_backend_c(allow_all, *a).hooks == with_invariants);
    ir::PathQuery pins;
    pins.access = ir::Access::Read;
    pins.path = "/sys/fs/bpf/bumblewrap/abi3-0/bw_sandboxes";
    CHECK(ir::evaluate(allow_all, pins).decision == ir::Decision::Deny);

    // Every invariant that can be loosened is: the path hooks stay for bumblewrap's own state.
    auto unsafe = test::checked_policy("policy \"p\" {\n    default allow\n    unsafe cgroup, bpf, perf, signal, "
                                       "ptrace, mount, modules, sysctl, devices, tty, namespaces\n}\n");
    auto b = run_compile_paths(unsafe, diags);
    REQUIRE(b);
    auto with_new_fs = path_hooks;
    with_new_fs.emplace_back("new_fs");
    CHECK(run_backend_c(unsafe, *b).hooks == with_new_fs);
    CHECK(ir::evaluate(unsafe, pins).decision == ir::Decision::Deny);
    pins.path = "/sys/fs/bpf/other";
    CHECK(ir::evaluate(unsafe, pins).decision == ir::Decision::Allow);
    CHECK(ir::evaluate(allow_all, pins).decision == ir::Decision::Deny);
}
