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
                const auto actual = simulate(*automaton, policy, access, path);
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
    CHECK(simulate(a, r.compiled->policy, ir::Access::Read, "/ab/zzz").decision == ir::Decision::Allow);
    CHECK(simulate(a, r.compiled->policy, ir::Access::Read, "/abz").decision == ir::Decision::Deny);
}

TEST_CASE("rules the kernel side cannot enforce yet are refused, not dropped")
{
    auto r = test::compile_text(R"(policy "p" {
    default allow
    allow read, create /tmp/**
    net allow all
    when exe /usr/bin/git {
        deny read /etc/**
        net deny all
    }
})");
    CHECK_FALSE(r.compiled);
    std::vector<std::uint32_t> refused;
    for (const auto& d : r.diags().all()) {
        if (d.kind == DiagKind::NotEnforced)
            refused.push_back(d.loc.line);
    }
    std::sort(refused.begin(), refused.end());
    // Unconditional network rules are enforced; conditional rules of any kind are not yet.
    CHECK(refused == std::vector<std::uint32_t>{6, 7});
}

TEST_CASE("denials of access kinds without hooks yet are compiled with a warning")
{
    auto r = test::compile_text("policy \"p\" {\n default allow\n deny ioctl /dev/**\n}\n");
    REQUIRE(r.compiled);
    const auto& d = r.diags().all();
    const auto it = std::find_if(d.begin(), d.end(), [](const auto& x) { return x.kind == DiagKind::UnenforcedAccesses; });
    REQUIRE(it != d.end());
    CHECK(it->message == "the kernel side of this build does not check ioctl yet");
}

TEST_CASE("a pattern whose states grow exponentially is refused at the bounds")
{
    // Every `?` doubles the states a `*` before it leaves possible.
    auto r = test::compile_text("policy \"p\" {\n default deny\n allow read /*a" + std::string(24, '?') + "\n}\n");
    CHECK_FALSE(r.compiled);
    REQUIRE(r.diags().has_errors());
    CHECK(r.diags().all().back().kind == DiagKind::AutomatonTooLarge);
}
