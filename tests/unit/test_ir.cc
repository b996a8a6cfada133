// The language's precedence, as the reference evaluator implements it, and the IR's
// order independence.
#include "helpers.h"

#include <catch2/catch.hpp>

using namespace bw;
using bw::ir::Decision;

namespace {

ir::Policy frontend(const std::string& text)
{
    auto r = test::compile_text(text);
    INFO((r.diags().all().empty() ? std::string() : r.diags().render(r.diags().all().front(), false)));
    REQUIRE(r.compiled);
    return r.compiled->policy;
}

const ir::PathRule& rule_for(const ir::Policy& p, ir::RuleId id)
{
    for (const auto& r : p.rules) {
        if (r.id == id)
            return r;
    }
    FAIL("no rule " << id);
    return p.rules.front();
}

} // namespace

TEST_CASE("the most specific rule decides")
{
    const auto p = frontend(R"(policy "p" {
    default deny
    allow /home/
    deny  /home/u/.ssh/
    allow /home/u/.ssh/known_hosts
    deny  /etc/
    allow /etc/passwd
})");
    auto decide = [&](const char* path) { return ir::evaluate(p, path).decision; };
    CHECK(decide("/home/u/notes") == Decision::Allow);
    CHECK(decide("/home") == Decision::Allow);        // a tree rule covers its own directory
    CHECK(decide("/homeless") == Decision::Deny);     // ...but not a longer name
    CHECK(decide("/home/u/.ssh/id_rsa") == Decision::Deny);
    CHECK(decide("/home/u/.ssh") == Decision::Deny);
    CHECK(decide("/home/u/.ssh/known_hosts") == Decision::Allow);
    CHECK(decide("/home/u/.ssh/known_hosts.old") == Decision::Deny);
    CHECK(decide("/etc/passwd") == Decision::Allow);
    CHECK(decide("/etc/shadow") == Decision::Deny);
    CHECK(decide("/usr/bin/sh") == Decision::Deny); // the default
    CHECK(ir::evaluate(p, "/usr/bin/sh").rule == ir::kDefaultRuleId);
}

TEST_CASE("an exact rule beats a tree rule of the same path, and deny wins a tie")
{
    const auto p = frontend(R"(policy "p" {
    default allow
    deny /data/
    allow /data
    allow /x/
    deny /x/
})");
    CHECK(ir::evaluate(p, "/data").decision == Decision::Allow);
    CHECK(ir::evaluate(p, "/data/f").decision == Decision::Deny);
    CHECK(ir::evaluate(p, "/x/f").decision == Decision::Deny);
    CHECK(rule_for(p, ir::evaluate(p, "/x/f").rule).origin.line == 6);
}

TEST_CASE("the root tree covers every path")
{
    const auto p = frontend("policy \"p\" {\n default deny\n allow /\n deny /secret\n}\n");
    CHECK(ir::evaluate(p, "/").decision == Decision::Allow);
    CHECK(ir::evaluate(p, "/anything/at/all").decision == Decision::Allow);
    CHECK(ir::evaluate(p, "/secret").decision == Decision::Deny);
    CHECK(ir::evaluate(p, "/secret/inner").decision == Decision::Allow); // exact, not a tree
}

TEST_CASE("rules are sorted and deduplicated, with the first-written provenance")
{
    const auto p = frontend(R"(policy "p" {
    default deny
    allow /b/
    allow /a
    allow /b/
})");
    REQUIRE(p.rules.size() == 2);
    CHECK(p.rules[0].path == "/a");
    CHECK(p.rules[0].id == ir::kDefaultRuleId + 1);
    CHECK(p.rules[1].path == "/b");
    CHECK(p.rules[1].kind == ir::MatchKind::Tree);
    CHECK(p.rules[1].origin.line == 3);
    CHECK(p.rules[1].origin.text == "allow /b/");
    CHECK(p.default_origin.text == "default deny");
}

TEST_CASE("the IR dump names every rule with its origin")
{
    const auto p = frontend("policy \"dump\" {\n  default deny\n  allow /usr/\n}\n");
    const auto text = ir::dump(p);
    CHECK_THAT(text, Catch::Contains("policy \"dump\""));
    CHECK_THAT(text, Catch::Contains("#2    allow tree  \"/usr/\""));
    CHECK_THAT(text, Catch::Contains("test.bwp:3"));
}
