// The automaton must decide exactly as the reference evaluator, for any rules and paths.
#include "automata/automata.h"
#include "helpers.h"

#include <catch2/catch.hpp>
#include <random>

using namespace bw;


TEST_CASE("automata agree with the reference evaluator on random glob policies and paths")
{
    std::mt19937 rng(20261202);
    int queries = 0, overridden = 0;
    for (int round = 0; round < 1500; ++round) {
        const auto policy = test::random_policy(rng);
        // The same rules without the invariants' precedence, to count where it decides.
        auto flat = policy;
        for (auto& r : flat.rules)
            r.invariant = false;
        SourceManager sources;
        Diagnostics diags(sources);
        const auto automaton = run_compile_paths(policy, diags);
        REQUIRE(automaton);
        for (int q = 0; q < 20; ++q) {
            const auto path = test::random_path(rng, 5);
            for (const auto access : {ir::Access::Read, ir::Access::Write, ir::Access::Append, ir::Access::Exec}) {
                ir::PathQuery query;
                query.access = access;
                query.path = path;
                const auto expected = ir::evaluate(policy, query);
                const auto actual = simulate(*automaton, policy, query);
                INFO("round " << round << " path " << path << " access " << ir::name(access) << "\n"
                              << ir::dump(policy));
                REQUIRE(actual.decision == expected.decision);
                REQUIRE(actual.rule == expected.rule);
                overridden += !(ir::evaluate(flat, query) == expected);
                ++queries;
            }
        }
    }
    CHECK(queries == 120000);
    // Invariant rules outranked more specific policy rules often enough to matter.
    CHECK(overridden > 100);
}

namespace {

// Reverses every decision chain: its unconditional end then decides first.
void break_chain_order(Automaton& a)
{
    for (std::size_t begin = 1, i = 1; i < a.links.size(); ++i) {
        if (a.links[i].conditions == 0) {
            std::reverse(a.links.begin() + static_cast<std::ptrdiff_t>(begin),
                         a.links.begin() + static_cast<std::ptrdiff_t>(i + 1));
            begin = i + 1;
        }
    }
}

struct Agreement {
    int queries = 0;
    int disagreements = 0;
    int with_chains = 0; // queries against a policy with decision chains
    int exe_matched = 0; // queries whose executable matches an exe pattern of the policy
};

Agreement compare_conditional(std::uint32_t seed, bool broken)
{
    std::mt19937 rng(seed);
    Agreement out;
    for (int round = 0; round < 500; ++round) {
        auto policy = test::random_policy(rng);
        test::add_random_conditions(rng, policy);
        SourceManager sources;
        Diagnostics diags(sources);
        auto automaton = run_compile_paths(policy, diags);
        REQUIRE(automaton);
        const auto links = automaton->links.size();
        if (broken)
            break_chain_order(*automaton);
        for (int q = 0; q < 40; ++q) {
            const auto query = test::random_query(rng);
            const auto expected = ir::evaluate(policy, query);
            const auto actual = simulate(*automaton, policy, query);
            out.disagreements += !(actual == expected);
            out.with_chains += links > 1;
            out.exe_matched += std::any_of(automaton->exe_patterns.begin(), automaton->exe_patterns.end(),
                                           [&](const std::string& e) { return ir::glob_match(e, query.exe); });
            ++out.queries;
            if (!broken) {
                INFO("round " << round << " path " << query.path << " access " << ir::name(query.access) << " uid "
                              << query.uid << " gid " << query.gid << " owner " << query.owner << " flags "
                              << query.flags << " exe " << query.exe << "\n"
                              << ir::dump(policy) << dump(*automaton));
                REQUIRE(actual == expected);
            }
        }
    }
    return out;
}

} // namespace

TEST_CASE("decision chains agree with the reference evaluator on random conditional rules and queries")
{
    const auto a = compare_conditional(20261203, false);
    CHECK(a.queries == 20000);
    CHECK(a.disagreements == 0);
    // Most queries met a policy with chains, so the chains were exercised, and `when exe`
    // patterns matched hundreds of executables.
    CHECK(a.with_chains > 10000);
    CHECK(a.exe_matched > 300);
}

TEST_CASE("audit chains name the audit rule the reference evaluator names")
{
    std::mt19937 rng(20261204);
    int queries = 0, recorded = 0, conditional = 0;
    for (int round = 0; round < 500; ++round) {
        auto policy = test::random_policy(rng);
        test::add_random_conditions(rng, policy);
        test::add_random_audits(rng, policy);
        SourceManager sources;
        Diagnostics diags(sources);
        const auto automaton = run_compile_paths(policy, diags);
        REQUIRE(automaton);
        for (int q = 0; q < 40; ++q) {
            const auto query = test::random_query(rng);
            const auto expected = ir::evaluate_audit(policy, query);
            INFO("round " << round << " path " << query.path << " access " << ir::name(query.access) << " uid "
                          << query.uid << " exe " << query.exe << "\n"
                          << ir::dump(policy) << dump(*automaton));
            REQUIRE(simulate_audit(*automaton, query) == expected);
            // The decisions stay the evaluator's with audit rules in the automaton.
            REQUIRE(simulate(*automaton, policy, query) == ir::evaluate(policy, query));
            ++queries;
            if (expected != 0) {
                ++recorded;
                for (const auto& a : policy.audits)
                    conditional += a.id == expected && a.conditions.count() > 0;
            }
        }
    }
    CHECK(queries == 20000);
    // Audit rules matched often, some of them conditional, so the chains were exercised.
    CHECK(recorded > 400);
    CHECK(conditional > 30);
}

TEST_CASE("the chain test notices chains whose order is broken")
{
    const auto a = compare_conditional(20261203, true);
    CHECK(a.disagreements > 100);
}

TEST_CASE("a state with only unconditional candidates keeps its plain decision")
{
    auto r = test::compile_text("policy \"p\" {\n default deny\n allow read /a/**\n"
                                " when uid 1000-1999 { allow write /a/** }\n}\n");
    REQUIRE(r.compiled);
    const auto& a = r.compiled->automaton;
    const auto& policy = r.compiled->policy;
    ir::PathQuery q;
    q.access = ir::Access::Write;
    q.path = "/a/x";
    q.uid = 1500;
    CHECK(simulate(a, policy, q).decision == ir::Decision::Allow);
    q.uid = 0;
    CHECK(simulate(a, policy, q) == ir::Verdict{ir::Decision::Deny, ir::kDefaultRuleId});
    q.access = ir::Access::Read;
    CHECK(simulate(a, policy, q).decision == ir::Decision::Allow);
    // One chain: the conditional write rule, then the default.
    CHECK(a.links.size() == 3);
}

TEST_CASE("bytes outside every pattern lead to the dead state; `**` makes a state absorbing")
{
    auto r = test::compile_text("policy \"p\" {\n default deny\n allow read /ab/**\n}\n");
    REQUIRE(r.compiled);
    const auto& a = r.compiled->automaton;
    CHECK(a.next(BW_START_STATE, 'z') == BW_DEAD_STATE);
    auto s = a.next(BW_START_STATE, '/');
    s = a.next(s, 'a');
    s = a.next(s, 'b');
    s = a.next(s, '/');
    CHECK(a.accepts[s].absorbing);
    ir::PathQuery q;
    q.path = "/ab/zzz";
    CHECK(simulate(a, r.compiled->policy, q).decision == ir::Decision::Allow);
    q.path = "/abz";
    CHECK(simulate(a, r.compiled->policy, q).decision == ir::Decision::Deny);
}

TEST_CASE("rules the kernel side cannot enforce are refused, not dropped")
{
    // 32 distinct `when exe` patterns fit the kernel's mask; a network rule's 33rd does not.
    std::string text = "policy \"p\" {\n    default allow\n";
    for (int i = 0; i < 32; ++i)
        text += "    when exe /usr/bin/p" + std::to_string(i) + " {\n        deny read /etc/\n    }\n";
    text += "    when exe /usr/bin/p32 {\n        net deny all\n    }\n}\n";
    auto r = test::compile_text(text);
    CHECK_FALSE(r.compiled);
    std::vector<std::uint32_t> refused;
    for (const auto& d : r.diags().all()) {
        if (d.kind == DiagKind::NotEnforced)
            refused.push_back(d.loc.line);
    }
    CHECK(refused == std::vector<std::uint32_t>{3 + 32 * 3 + 1});
}

TEST_CASE("a pattern whose states grow exponentially is refused at the bounds")
{
    // Every `?` doubles the states a `*` before it leaves possible.
    auto r = test::compile_text("policy \"p\" {\n default deny\n allow read /*a" + std::string(24, '?') + "\n}\n");
    CHECK_FALSE(r.compiled);
    REQUIRE(r.diags().has_errors());
    CHECK(r.diags().all().back().kind == DiagKind::AutomatonTooLarge);
}
