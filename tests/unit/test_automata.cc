// The automaton must decide exactly as the reference evaluator, for any rules and paths.
#include "automata/automata.h"
#include "helpers.h"

#include <catch2/catch.hpp>
#include <random>
#include <set>

using namespace bw;

namespace {

// Few, overlapping names, so that random rules nest, collide and share prefixes.
const std::vector<std::string> kNames = {"a", "b", "ab", "a.b", "ba", "x y", "\xc3\xa9"};

std::string random_path(std::mt19937& rng, int max_depth)
{
    std::uniform_int_distribution<int> depth(0, max_depth);
    std::uniform_int_distribution<std::size_t> name(0, kNames.size() - 1);
    std::string p;
    for (int d = depth(rng); d > 0; --d)
        p += "/" + kNames[name(rng)];
    return p;
}

ir::Policy random_policy(std::mt19937& rng)
{
    ir::Policy p;
    p.name = "random";
    p.default_decision = rng() % 2 ? ir::Decision::Allow : ir::Decision::Deny;
    std::set<std::tuple<std::string, ir::MatchKind, ir::Decision>> seen;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
        ir::PathRule r;
        r.kind = rng() % 2 ? ir::MatchKind::Tree : ir::MatchKind::Exact;
        r.path = random_path(rng, 3);
        if (r.path.empty() && r.kind == ir::MatchKind::Exact)
            r.path = "/a";
        r.decision = rng() % 2 ? ir::Decision::Allow : ir::Decision::Deny;
        if (!seen.emplace(r.path, r.kind, r.decision).second)
            continue;
        r.id = ir::kDefaultRuleId + 1 + static_cast<ir::RuleId>(p.rules.size());
        p.rules.push_back(r);
    }
    return p;
}

} // namespace

TEST_CASE("automata agree with the reference evaluator on random policies and paths")
{
    std::mt19937 rng(20261202);
    int queries = 0;
    for (int round = 0; round < 2000; ++round) {
        const auto policy = random_policy(rng);
        SourceManager sources;
        Diagnostics diags(sources);
        const auto automaton = run_compile_paths(policy, diags);
        REQUIRE(automaton);
        for (int q = 0; q < 25; ++q) {
            auto path = random_path(rng, 5);
            if (path.empty())
                path = "/";
            if (rng() % 8 == 0)
                path += "/"; // kernel paths never end in '/', but the walk must not care
            const auto expected = ir::evaluate(policy, path);
            const auto actual = simulate(*automaton, policy, path);
            INFO("round " << round << " path " << path << "\n" << ir::dump(policy));
            REQUIRE(actual.decision == expected.decision);
            REQUIRE(actual.rule == expected.rule);
            ++queries;
        }
    }
    CHECK(queries == 50000);
}

TEST_CASE("bytes outside every pattern lead to the dead state")
{
    auto r = test::compile_text("policy \"p\" {\n default deny\n allow /ab/\n}\n");
    REQUIRE(r.compiled);
    const auto& a = r.compiled->automaton;
    CHECK(a.nclasses == 4); // class 0 plus '/', 'a', 'b'
    CHECK(a.next(BW_START_STATE, 'z') == BW_DEAD_STATE);
    CHECK(a.next(BW_START_STATE, '/') != BW_DEAD_STATE);
    CHECK(simulate(a, r.compiled->policy, "/ab/zzz").decision == ir::Decision::Allow);
    CHECK(simulate(a, r.compiled->policy, "/abz").decision == ir::Decision::Deny);
}
