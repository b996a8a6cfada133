// Live edits (compiler/live, bwctl's rules) and learn mode (compiler/learn, bwc learn),
// judged by the reference evaluator: a live rule must decide as the same rule written in
// the policy, and a learned policy must allow what was recorded and no secret besides.
#include "helpers.h"

#include "automata/automata.h"
#include "format/format.h"
#include "learn/learn.h"
#include "live/live.h"

#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <sys/socket.h>

using namespace bw;
using bw::test::checked_policy;

namespace {

const char* kBase = R"(policy "base" {
    default deny
    allow read /srv/
    deny read /srv/private/
    allow read, write /srv/data/*.txt
%s}
)";

std::string with_rule(const std::string& rule)
{
    std::string text = kBase;
    text.replace(text.find("%s"), 2, rule.empty() ? "" : "    " + rule + "\n");
    return text;
}

// Whether a learned policy is what `bwc fmt` would write.
bool canonical(const std::string& text)
{
    SourceManager sources;
    Diagnostics diags(sources);
    const auto file = sources.add("learned.bwp", text);
    return run_format(sources.file(file), diags) == text;
}

ir::Policy rule_policy(const std::string& rule)
{
    Compilation c;
    auto p = run_rule_frontend(rule, "<bwctl>", c);
    INFO(rule);
    REQUIRE(p);
    return std::move(*p);
}

ir::Verdict decide(const ir::Policy& p, ir::Access a, const std::string& path)
{
    return ir::evaluate(p, {a, path, "", 0, 0, false, 0});
}

const std::vector<std::string> kPaths = {
    "/srv/a",           "/srv/private/key", "/srv/private/x/y", "/srv/data/a.txt", "/srv/data/b.log",
    "/srv/data/c.txt",  "/srv/data/sub/d.txt", "/etc/passwd",   "/srv",            "/srv/privatex",
};

} // namespace

TEST_CASE("a live rule decides as the same rule written in the policy")
{
    for (const std::string rule :
         {"allow read \"/srv/private/key\"", "deny read, write \"/srv/data/*.txt\"", "allow write \"/srv/{a,b}\"",
          "deny read \"/srv/**\"", "allow read \"/etc/\"", "deny write \"/srv/data/c.txt\"", "allow all \"/srv/data/**\""}) {
        auto edited = checked_policy(with_rule(""));
        ir::RuleId next = 0;
        const auto before = edited.rules;
        const auto ids = live::add_rules(edited, rule_policy(rule), {0, 0}, rule, next);
        REQUIRE_FALSE(ids.empty());
        const auto written = checked_policy(with_rule(rule));
        for (const auto& path : kPaths) {
            for (const auto a : {ir::Access::Read, ir::Access::Write}) {
                INFO(rule << ": " << ir::name(a) << " " << path);
                CHECK(decide(edited, a, path).decision == decide(written, a, path).decision);
            }
        }
        // The rules in force keep their ids; the new ones come after every id in use.
        for (const auto& r : before)
            CHECK(std::any_of(edited.rules.begin(), edited.rules.end(),
                              [&](const ir::PathRule& e) { return e.id == r.id && e.pattern == r.pattern; }));
        for (const auto id : ids) {
            for (const auto& r : before)
                CHECK(id > r.id);
            const auto* origin = ir::find_origin(edited, id);
            REQUIRE(origin != nullptr);
            CHECK(origin->text == rule);
            CHECK(origin->file.starts_with("live edit at 1970-01-01T00:00:00Z by uid 0"));
        }
        // And the tables the kernel gets mean what the evaluator says.
        SourceManager sources;
        Diagnostics diags(sources);
        const auto automaton = run_compile_paths(edited, diags);
        REQUIRE(automaton);
        for (const auto& path : kPaths) {
            const ir::PathQuery q{ir::Access::Read, path, "", 0, 0, false, 0};
            CHECK(simulate(*automaton, edited, q) == ir::evaluate(edited, q));
        }
    }
}

TEST_CASE("a live rule in force already is not added again, and a removed id is not reused")
{
    auto policy = checked_policy(with_rule(""));
    ir::RuleId next = 0;
    const auto rule = rule_policy("allow read \"/srv/private/key\"");
    const auto first = live::add_rules(policy, rule, {0, 0}, "r", next);
    REQUIRE(first.size() == 1);
    CHECK(live::add_rules(policy, rule, {0, 0}, "r", next).empty());
    REQUIRE(live::remove_rule(policy, first[0]));
    CHECK_FALSE(live::remove_rule(policy, first[0]));
    const auto again = live::add_rules(policy, rule, {0, 0}, "r", next);
    REQUIRE(again.size() == 1);
    CHECK(again[0] > first[0]);
}

TEST_CASE("rules are removed by id or by pattern, never an invariant's")
{
    auto policy = checked_policy(with_rule(""));
    CHECK(decide(policy, ir::Access::Read, "/srv/a").decision == ir::Decision::Allow);
    const auto removed = live::remove_pattern(policy, "/srv/**");
    REQUIRE(removed.size() == 1);
    CHECK(decide(policy, ir::Access::Read, "/srv/a").decision == ir::Decision::Deny);
    const auto invariant = std::find_if(policy.rules.begin(), policy.rules.end(),
                                        [](const ir::PathRule& r) { return r.invariant; });
    REQUIRE(invariant != policy.rules.end());
    CHECK_FALSE(live::remove_rule(policy, invariant->id));
    CHECK(live::remove_pattern(policy, invariant->pattern).empty());
}

TEST_CASE("a live network rule decides as one written in the policy")
{
    auto policy = checked_policy(with_rule(""));
    ir::RuleId next = 0;
    const auto ids = live::add_rules(policy, rule_policy("net allow tcp connect 10.0.0.1:443"), {0, 0}, "n", next);
    REQUIRE(ids.size() == 1);
    ir::NetQuery q;
    q.op = ir::NetQuery::Op::Connect;
    q.family = AF_INET;
    q.protocol = IPPROTO_TCP;
    q.address[0] = 10;
    q.address[3] = 1;
    q.port = 443;
    CHECK(ir::evaluate_net(policy, q) == ir::Verdict{ir::Decision::Allow, ids[0]});
    q.port = 80;
    CHECK(ir::evaluate_net(policy, q).decision == ir::Decision::Deny);
    REQUIRE(live::remove_rule(policy, ids[0]));
    q.port = 443;
    CHECK(ir::evaluate_net(policy, q).decision == ir::Decision::Deny);
}

TEST_CASE("a recording round-trips through its text, odd bytes and all")
{
    learn::Recording r;
    r.program = "sh -c 'true\nfalse'";
    r.dropped = 3;
    r.paths["/tmp/a b%c\n\x7f"] = ir::bit(ir::Access::Read);
    r.paths["/usr/bin/true"] = ir::bit(ir::Access::Read) | ir::bit(ir::Access::Exec);
    std::string error;
    const auto back = learn::decode(learn::encode(r), error);
    REQUIRE(back);
    CHECK(back->program == r.program);
    CHECK(back->dropped == 3);
    CHECK(back->paths == r.paths);
    CHECK(back->sockets.empty());
    learn::SocketUse v6{ir::NetQuery::Op::Bind, AF_INET6, IPPROTO_UDP, {}, 5353};
    v6.address[15] = 1;
    r.sockets[v6] = 2;
    r.sockets[{ir::NetQuery::Op::Create, AF_UNIX, 0, {}, 0}] = 7;
    const auto with_sockets = learn::decode(learn::encode(r), error);
    REQUIRE(with_sockets);
    CHECK(with_sockets->sockets == r.sockets);
    CHECK_FALSE(learn::decode("net connect 2 6 00 443 1\n", error));
    CHECK(error == "line 1 is not `net OP FAMILY PROTOCOL ADDRESS PORT TIMES`");
    CHECK_FALSE(learn::decode("net listen 2 6 00000000000000000000000000000000 443 1\n", error));
    CHECK_FALSE(learn::decode("12 relative/path\n", error));
    CHECK(error == "line 1 is not `KINDS PATH`");
    CHECK_FALSE(learn::decode("1 /a%zz\n", error));
    CHECK_FALSE(learn::decode("99999 /a\n", error));
}

TEST_CASE("a learned policy allows every recorded access, and no secret besides")
{
    learn::Recording r;
    r.program = "tool";
    const auto read = ir::bit(ir::Access::Read);
    for (const auto* p : {"/usr/share/tool/a", "/usr/share/tool/b", "/usr/share/tool/c", "/usr/share/tool/x/1",
                          "/usr/share/tool/x/2", "/usr/share/tool/x/3", "/usr/share/tool/y/1", "/usr/share/tool/y/2",
                          "/usr/share/tool/y/3", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/etc/ld.so.cache",
                          "/proc/4242/maps", "/srv/odd*name"})
        r.paths[p] = read;
    r.paths["/usr/bin/tool"] = read | ir::bit(ir::Access::Exec);
    r.paths["/srv/out/result"] = ir::bit(ir::Access::Write) | ir::bit(ir::Access::Create);
    r.paths["/etc/shadow"] = read;
    Compilation c;
    const auto text = run_learn_pipeline(r, "learned-tool", "learned.bwp", c);
    REQUIRE(text);
    INFO(*text);
    const auto policy = checked_policy(*text);
    for (const auto& [path, kinds] : r.paths) {
        for (std::size_t k = 0; k < ir::kAccessKinds; ++k) {
            const auto a = static_cast<ir::Access>(k);
            if (kinds & ir::bit(a)) {
                INFO(ir::name(a) << " " << path);
                CHECK(decide(policy, a, path).decision == ir::Decision::Allow);
            }
        }
    }
    // Folded where sound, flagged where sensitive or changed, secrets left denied.
    CHECK(text->find("\"/usr/share/tool/**\"") != std::string::npos);
    CHECK(text->find("\"/proc/[0-9]*/maps\"") != std::string::npos);
    CHECK(text->find("\"/etc/shadow\"  # review: sensitive") != std::string::npos);
    CHECK(text->find("\"/srv/odd?name\"  # review: glob characters") != std::string::npos);
    CHECK(text->find("    include \"") != std::string::npos);
    CHECK(text->find("\"/usr/share/tool/*\"") == std::string::npos);
    CHECK(decide(policy, ir::Access::Read, "/etc/gshadow").decision == ir::Decision::Deny);
    CHECK(decide(policy, ir::Access::Write, "/usr/share/tool/a").decision == ir::Decision::Deny);
    CHECK(decide(policy, ir::Access::Read, "/srv/other").decision == ir::Decision::Deny);
    CHECK(canonical(*text));
}

TEST_CASE("a learned policy allows the socket operations recorded, and no other address")
{
    learn::Recording r;
    r.program = "client";
    r.paths["/usr/bin/client"] = ir::bit(ir::Access::Read) | ir::bit(ir::Access::Exec);
    const auto v4 = [](ir::NetQuery::Op op, int protocol, std::uint8_t last, std::uint16_t port) {
        learn::SocketUse use{op, AF_INET, protocol, {}, port};
        use.address[0] = 10;
        use.address[3] = last;
        return use;
    };
    r.sockets[{ir::NetQuery::Op::Create, AF_UNIX, 0, {}, 0}] = 2;
    r.sockets[{ir::NetQuery::Op::Connect, AF_UNIX, 0, {}, 0}] = 1;
    r.sockets[{ir::NetQuery::Op::Create, AF_INET, 0, {}, 0}] = 3;
    r.sockets[v4(ir::NetQuery::Op::Connect, IPPROTO_TCP, 1, 443)] = 2;
    r.sockets[v4(ir::NetQuery::Op::Connect, IPPROTO_UDP, 53, 53)] = 1;
    r.sockets[v4(ir::NetQuery::Op::Bind, IPPROTO_UDP, 0, 0)] = 1;
    r.sockets[{ir::NetQuery::Op::Create, AF_NETLINK, 0, {}, 0}] = 1;
    Compilation c;
    const auto text = run_learn_pipeline(r, "learned-client", "learned.bwp", c);
    REQUIRE(text);
    INFO(*text);
    const auto policy = checked_policy(*text);
    for (const auto& [use, times] : r.sockets) {
        INFO("family " << use.family << " port " << use.port);
        CHECK(ir::evaluate_net(policy, learn::net_query(use)).decision == ir::Decision::Allow);
    }
    // Exact endpoints: another port, address or protocol, or another family, stays denied.
    CHECK(ir::evaluate_net(policy, learn::net_query(v4(ir::NetQuery::Op::Connect, IPPROTO_TCP, 1, 80))).decision ==
          ir::Decision::Deny);
    CHECK(ir::evaluate_net(policy, learn::net_query(v4(ir::NetQuery::Op::Connect, IPPROTO_TCP, 2, 443))).decision ==
          ir::Decision::Deny);
    CHECK(ir::evaluate_net(policy, learn::net_query(v4(ir::NetQuery::Op::Connect, IPPROTO_UDP, 1, 443))).decision ==
          ir::Decision::Deny);
    CHECK(ir::evaluate_net(policy, learn::net_query({ir::NetQuery::Op::Create, AF_INET6, 0, {}, 0})).decision ==
          ir::Decision::Deny);
    CHECK(ir::evaluate_net(policy, learn::net_query({ir::NetQuery::Op::Create, AF_PACKET, 0, {}, 0})).decision ==
          ir::Decision::Deny);
    CHECK(text->find("net allow family unix  # 3 operations") != std::string::npos);
    CHECK(text->find("net allow tcp connect 10.0.0.1:443  # 2 times") != std::string::npos);
    CHECK(text->find("net allow family inet") == std::string::npos);
    CHECK(text->find("11 socket operations recorded") != std::string::npos);
    CHECK(canonical(*text));
}
