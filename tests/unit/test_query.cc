// `bwc query` (parsing queries, answering them with the reference evaluator) and
// `bwc --stats` (sizes consistent with the automaton, contributors ranked).
#include "helpers.h"
#include "query/query.h"
#include "stats/stats.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

using namespace bw;

namespace {

std::variant<query::Query, std::string> parse(std::vector<std::string> words)
{
    return query::parse(words);
}

query::Query parse_ok(std::vector<std::string> words)
{
    auto q = parse(std::move(words));
    if (const auto* e = std::get_if<std::string>(&q))
        FAIL(*e);
    return std::get<query::Query>(q);
}

std::string parse_error(std::vector<std::string> words)
{
    auto q = parse(std::move(words));
    REQUIRE(std::holds_alternative<std::string>(q));
    return std::get<std::string>(q);
}

const char* kPolicy = R"(policy "q" {
    default deny
    allow read /home/user/
    deny all /home/user/.ssh/
    allow write /tmp/** flags O_TRUNC
    syscalls deny ptrace action kill
    syscalls deny personality action errno(EINVAL)
    net deny all
    net allow tcp connect 127.0.0.1:8080
}
)";

} // namespace

TEST_CASE("query: file accesses parse with their process options")
{
    const auto q = std::get<ir::PathQuery>(
        parse_ok({"write", "/tmp/x", "--exe", "/usr/bin/sh", "--uid", "1000", "--gid", "100", "--owner", "--flags",
                  "O_TRUNC,O_CREAT"}));
    CHECK(q.access == ir::Access::Write);
    CHECK(q.path == "/tmp/x");
    CHECK(q.exe == "/usr/bin/sh");
    CHECK(q.uid == 1000);
    CHECK(q.gid == 100);
    CHECK(q.owner);
    CHECK(q.flags == (O_TRUNC | O_CREAT));
    CHECK(std::get<ir::PathQuery>(parse_ok({"stat", "/"})).access == ir::Access::Metadata);

    const auto d = std::get<query::DeviceQuery>(parse_ok({"ioctl", "/dev/null", "--device", "c:1:3"}));
    CHECK(d.device.type == 'c');
    CHECK(d.device.major == 1);
    CHECK(d.device.minor == 3);
    CHECK(d.device.access.path == "/dev/null");
    CHECK(std::get<query::DeviceQuery>(parse_ok({"ioctl", "/dev/tty", "--device", "c:5:0", "--ioctl", "0x5401"}))
              .device.ioctl_command == 0x5401);
}

TEST_CASE("query: bad queries say what is wrong")
{
    CHECK_THAT(parse_error({"raed", "/etc/passwd"}), Catch::Contains("unknown access `raed`") && Catch::Contains("read"));
    CHECK_THAT(parse_error({"read"}), Catch::Contains("wants a path"));
    CHECK_THAT(parse_error({}), Catch::Contains("ACCESS PATH"));
    CHECK_THAT(parse_error({"read", "etc/passwd"}), Catch::Contains("not absolute"));
    CHECK_THAT(parse_error({"read", "/etc/../etc/passwd"}), Catch::Contains("query `/etc/passwd`"));
    CHECK_THAT(parse_error({"read", "/etc//passwd"}), Catch::Contains("query `/etc/passwd`"));
    CHECK_THAT(parse_error({"read", "/etc/"}), Catch::Contains("query `/etc`"));
    CHECK_THAT(parse_error({"read", "/" + std::string(5000, 'a')}), Catch::Contains("bytes long"));
    CHECK_THAT(parse_error({"read", "/x", "--uid", "me"}), Catch::Contains("--uid wants a number"));
    CHECK_THAT(parse_error({"read", "/x", "--flags", "O_TRUNK"}), Catch::Contains("O_TRUNC"));
    CHECK_THAT(parse_error({"read", "/x", "--exe"}), Catch::Contains("needs a value"));
    CHECK_THAT(parse_error({"read", "/x", "--exe", "sh"}), Catch::Contains("not absolute"));
    CHECK_THAT(parse_error({"read", "/x", "--bogus"}), Catch::Contains("unknown option"));
    CHECK_THAT(parse_error({"read", "/x", "--device", "x:1:3"}), Catch::Contains("TYPE:MAJOR:MINOR"));
    CHECK_THAT(parse_error({"ioctl", "/dev/tty", "--ioctl", "0x5401"}), Catch::Contains("goes with --device"));
    CHECK_THAT(parse_error({"syscall"}), Catch::Contains("one name"));
    CHECK_THAT(parse_error({"syscall", "ptrac"}), Catch::Contains("did you mean `ptrace`"));
    CHECK_THAT(parse_error({"connect", "tcp"}), Catch::Contains("wants a protocol and an address"));
    CHECK_THAT(parse_error({"connect", "sctp", "1.2.3.4:80"}), Catch::Contains("tcp or udp"));
    CHECK_THAT(parse_error({"connect", "tcp", "1.2.3.4"}), Catch::Contains("one port"));
    CHECK_THAT(parse_error({"connect", "tcp", "1.2.3.4:1-2"}), Catch::Contains("one port"));
    CHECK_THAT(parse_error({"connect", "tcp", "10.0.0.0/8:53"}), Catch::Contains("not a prefix"));
    CHECK_THAT(parse_error({"connect", "tcp", "any:53"}), Catch::Contains("not `any`"));
    CHECK_THAT(parse_error({"connect", "tcp", "1.2.3:80"}), Catch::Contains("malformed address"));
    CHECK_THAT(parse_error({"bind", "udp", "::1:53"}), Catch::Contains("brackets"));
    CHECK_THAT(parse_error({"connect", "tcp", "1.2.3.4:80", "--owner"}), Catch::Contains("file accesses only"));
    CHECK_THAT(parse_error({"socket", "inet7"}), Catch::Contains("unknown socket family"));
}

TEST_CASE("query: net and syscall queries parse")
{
    const auto c = std::get<ir::NetQuery>(parse_ok({"connect", "tcp", "127.0.0.1:8080", "--uid", "5"}));
    CHECK(c.op == ir::NetQuery::Op::Connect);
    CHECK(c.family == AF_INET);
    CHECK(c.protocol == IPPROTO_TCP);
    CHECK(c.port == 8080);
    CHECK(c.address[0] == 127);
    CHECK(c.address[3] == 1);
    CHECK(c.process.uid == 5);
    const auto b = std::get<ir::NetQuery>(parse_ok({"bind", "udp", "[::1]:53"}));
    CHECK(b.op == ir::NetQuery::Op::Bind);
    CHECK(b.family == AF_INET6);
    CHECK(b.address[15] == 1);
    const auto s = std::get<ir::NetQuery>(parse_ok({"socket", "inet6"}));
    CHECK(s.op == ir::NetQuery::Op::Create);
    CHECK(s.family == AF_INET6);
    CHECK(std::get<query::SyscallQuery>(parse_ok({"syscall", "ptrace"})).name == "ptrace");
}

TEST_CASE("query: answers agree with the reference evaluator and name the rule")
{
    const auto policy = test::checked_policy(kPolicy);
    for (const auto& [access, path] : std::vector<std::pair<std::string, std::string>>{
             {"read", "/home/user/notes"}, {"read", "/home/user/.ssh/id_rsa"}, {"write", "/home/user/x"},
             {"write", "/tmp/a"}, {"exec", "/usr/bin/sh"}}) {
        const auto q = std::get<ir::PathQuery>(parse_ok({access, path}));
        const auto v = ir::evaluate(policy, q);
        const auto text = query::answer(policy, q);
        INFO(text);
        CHECK(text.starts_with(ir::to_string(v.decision) + " " + access + " " + path + "\n"));
    }

    const auto deny = query::answer(policy, parse_ok({"read", "/home/user/.ssh/id_rsa"}));
    const auto* ssh = ir::find_origin(policy, ir::evaluate(policy, std::get<ir::PathQuery>(parse_ok(
                                                                        {"read", "/home/user/.ssh/id_rsa"})))
                                                  .rule);
    REQUIRE(ssh);
    CHECK(deny == fmt::format("deny read /home/user/.ssh/id_rsa\n  by `deny all /home/user/.ssh/` ({}:4), rule #{}\n",
                              ssh->file,
                              ir::evaluate(policy, std::get<ir::PathQuery>(parse_ok({"read", "/home/user/.ssh/id_rsa"})))
                                  .rule));
    CHECK_THAT(query::answer(policy, parse_ok({"exec", "/bin/sh"})),
               Catch::StartsWith("deny exec /bin/sh\n  by the default (") && Catch::EndsWith(":2)\n"));

    // The flags condition: only an open with O_TRUNC is allowed.
    CHECK_THAT(query::answer(policy, parse_ok({"write", "/tmp/a"})), Catch::StartsWith("deny write"));
    CHECK_THAT(query::answer(policy, parse_ok({"write", "/tmp/a", "--flags", "O_TRUNC"})),
               Catch::StartsWith("allow write /tmp/a\n  by `allow write /tmp/** flags O_TRUNC`") &&
                   Catch::Contains(":5)"));
    CHECK_THAT(query::answer(policy, parse_ok({"stat", "/home/user/.ssh/id_rsa"})), Catch::Contains("deny metadata"));
    CHECK_THAT(query::answer(policy, parse_ok({"ioctl", "/home/user/.ssh/id_rsa"})), Catch::Contains("deny ioctl"));
}

TEST_CASE("query: a device rule without an ioctl list denies every command but the descriptor's")
{
    const auto policy = test::checked_policy(
        "policy \"p\" {\n default allow\n device allow read, write char 1:3\n}\n");
    CHECK_THAT(query::answer(policy, parse_ok({"ioctl", "/dev/null", "--device", "c:1:3", "--ioctl", "0x5401"})),
               Catch::StartsWith("deny ioctl /dev/null\n  by `device allow read, write char 1:3`"));
    // FIOCLEX, as the kernel side passes it: fcntl sets the same flag unchecked.
    CHECK_THAT(query::answer(policy, parse_ok({"ioctl", "/dev/null", "--device", "c:1:3", "--ioctl", "0x5451"})),
               Catch::StartsWith("allow ioctl /dev/null\n") && Catch::Contains("sets the descriptor's flags"));
}

TEST_CASE("query: syscall and net answers")
{
    const auto policy = test::checked_policy(kPolicy);
    CHECK_THAT(query::answer(policy, parse_ok({"syscall", "ptrace"})),
               Catch::StartsWith("deny syscall ptrace with kill\n  by `") && Catch::Contains(":6), rule #"));
    CHECK_THAT(query::answer(policy, parse_ok({"syscall", "personality"})),
               Catch::StartsWith("deny syscall personality with errno(22)\n"));
    CHECK_THAT(query::answer(policy, parse_ok({"syscall", "read"})),
               Catch::Equals("allow syscall read\n  by the implicit default (the policy states none)\n"));

    const auto connect = std::get<ir::NetQuery>(parse_ok({"connect", "tcp", "127.0.0.1:8080"}));
    CHECK(ir::evaluate_net(policy, connect).decision == ir::Decision::Allow);
    CHECK_THAT(query::answer(policy, connect),
               Catch::StartsWith("allow connect tcp 127.0.0.1:8080\n  by `") && Catch::Contains(":9), rule #"));
    CHECK_THAT(query::answer(policy, parse_ok({"connect", "tcp", "127.0.0.1:8081"})),
               Catch::StartsWith("deny connect tcp 127.0.0.1:8081\n") && Catch::Contains(":8), rule #"));
    CHECK_THAT(query::answer(policy, parse_ok({"bind", "udp", "[::1]:53"})), Catch::StartsWith("deny bind udp [::1]:53\n"));
    // An allowed endpoint of the family lets its sockets be created.
    CHECK_THAT(query::answer(policy, parse_ok({"socket", "inet"})), Catch::StartsWith("allow socket inet\n"));
    CHECK_THAT(query::answer(policy, parse_ok({"socket", "unix"})), Catch::StartsWith("deny socket unix\n"));
}

TEST_CASE("stats: sizes match the automaton and the tables")
{
    auto r = test::compile_text(R"(policy "s" {
    default deny
    allow read /usr/
    allow read, write /tmp/project/
    deny write /tmp/project/.git/
}
)");
    REQUIRE(r.compiled);
    const auto& c = *r.compiled;
    const auto s = stats::compute(c.policy, c.automaton, c.tables);
    CHECK(s.path_rules == 3);
    CHECK(s.syscall_rules == 0);
    CHECK(s.states == c.automaton.nstates);
    CHECK(s.classes == c.automaton.nclasses);
    CHECK(s.transitions == c.automaton.trans.size());
    CHECK(s.trans_bytes == c.automaton.trans.size() * 4);
    CHECK(s.accepts_bytes == std::size_t{c.automaton.nstates} * sizeof(bw_accept));
    CHECK(s.header_bytes == sizeof(bw_sandbox));
    CHECK(s.method == stats::Stats::Method::Removal);
    REQUIRE(s.contributors.size() == 3);
    for (std::size_t i = 1; i < s.contributors.size(); ++i)
        CHECK(s.contributors[i - 1].score >= s.contributors[i].score);
    const auto text = stats::render(s);
    CHECK_THAT(text, Catch::Contains(fmt::format("automaton:    {} states, {} byte classes, {} transitions",
                                                 s.states, s.classes, s.transitions)));
    CHECK_THAT(text, Catch::Contains("rules:        3 path, 0 audit, 0 syscall, 0 net, 0 device"));
}

TEST_CASE("stats: the rule that multiplies states is named first")
{
    // `**` then four `*`: the automaton remembers which of the last components were `x`.
    auto r = test::compile_text(R"(policy "s" {
    default deny
    allow read /etc/hostname
    allow read /etc/passwd
    allow read /a/**/x/*/*/*/*
    allow read /usr/share/zoneinfo/UTC
    allow read /var/lib/misc/state
    deny read /a/b/c/d/e/x
}
)");
    REQUIRE(r.compiled);
    const auto& c = *r.compiled;
    const auto s = stats::compute(c.policy, c.automaton, c.tables);
    REQUIRE(s.contributors.size() == stats::kTopContributors);
    CHECK(s.contributors[0].rule->pattern == "/a/**/x/*/*/*/*");
    CHECK(s.contributors[0].score > s.contributors[1].score);
    CHECK_THAT(stats::render(s), Catch::Contains("largest contributors") &&
                                     Catch::Contains("/a/**/x/*/*/*/*  from `allow read /a/**/x/*/*/*/*`"));

    // Beyond the rebuild limit, the heuristic ranks the wildcard-heavy pattern first too.
    const auto h = stats::compute(c.policy, c.automaton, c.tables, 2);
    CHECK(h.method == stats::Stats::Method::Heuristic);
    CHECK(h.contributors[0].rule->pattern == "/a/**/x/*/*/*/*");
    CHECK_THAT(stats::render(h), Catch::Contains("likely contributors (heuristic"));
}
