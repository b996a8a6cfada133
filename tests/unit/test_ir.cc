// The language's precedence, as the reference evaluator implements it, and the IR's
// order independence.
#include "helpers.h"

#include <catch2/catch.hpp>

using namespace bw;
using bw::ir::Access;
using bw::ir::Decision;

namespace {

Decision decide(const ir::Policy& p, Access a, const char* path)
{
    ir::PathQuery q;
    q.access = a;
    q.path = path;
    return ir::evaluate(p, q).decision;
}

} // namespace

TEST_CASE("the most specific rule decides")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default deny
    allow read /home/
    deny  read /home/u/.ssh/
    allow read /home/u/.ssh/known_hosts
    deny  read /etc/
    allow read /etc/passwd
})");
    CHECK(decide(p, Access::Read, "/home/u/notes") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/home") == Decision::Allow); // a tree covers its own directory
    CHECK(decide(p, Access::Read, "/homeless") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/home/u/.ssh/id_rsa") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/home/u/.ssh") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/home/u/.ssh/known_hosts") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/home/u/.ssh/known_hosts.old") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/etc/passwd") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/etc/shadow") == Decision::Deny);
    CHECK(decide(p, Access::Write, "/home/u/notes") == Decision::Deny); // other accesses: the default
}

TEST_CASE("globs: `*` stays in a component, `**` spans any depth, `?` and classes match one byte")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default deny
    allow read /src/*.c
    allow read /lib/**/*.so
    allow read /dev/tty[0-9]
    allow read /log/app-?.txt
    allow read /etc/{passwd,group}
})");
    CHECK(decide(p, Access::Read, "/src/main.c") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/src/sub/main.c") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/lib/libc.so") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/lib/x86_64/deep/libm.so") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/lib/libc.so.6") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/dev/tty7") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/dev/ttyS0") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/log/app-1.txt") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/log/app-12.txt") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/etc/group") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/etc/shadow") == Decision::Deny);
}

TEST_CASE("precedence: longest literal prefix, then literal over glob, then fewer wildcards")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default allow
    deny  read /data/**
    allow read /data/public/**
    deny  read /data/public/*.key
    allow read /data/public/server.key
    deny  read /x/*/y/**
    allow read /x/**
})");
    CHECK(decide(p, Access::Read, "/data/other") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/data/public/readme") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/data/public/client.key") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/data/public/server.key") == Decision::Allow);
    // `/x/*/y/**` has the longer literal prefix (`/x/` against `/x`)
    CHECK(decide(p, Access::Read, "/x/a/y/z") == Decision::Deny);
    CHECK(decide(p, Access::Read, "/x/a/b") == Decision::Allow);
}

TEST_CASE("deny wins a tie, and write implies append")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default allow
    allow read, write /x/**
    deny  read /x/**
    allow append /log/**
})");
    CHECK(decide(p, Access::Read, "/x/f") == Decision::Deny);
    CHECK(decide(p, Access::Write, "/x/f") == Decision::Allow);
    CHECK(decide(p, Access::Append, "/x/f") == Decision::Allow);
}

TEST_CASE("conditions: rules in `when` blocks apply to matching processes and beat equal rules")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default deny
    deny read /home/user/.gitconfig
    when exe /usr/bin/git {
        allow read /home/user/.gitconfig
    }
    when uid 0 {
        allow write /var/**
    }
    allow write owner /tmp/**
})");
    ir::PathQuery q;
    q.access = Access::Read;
    q.path = "/home/user/.gitconfig";
    q.exe = "/usr/bin/cat";
    CHECK(ir::evaluate(p, q).decision == Decision::Deny);
    q.exe = "/usr/bin/git";
    CHECK(ir::evaluate(p, q).decision == Decision::Allow);
    q = {};
    q.access = Access::Write;
    q.path = "/var/log/x";
    q.uid = 1000;
    CHECK(ir::evaluate(p, q).decision == Decision::Deny);
    q.uid = 0;
    CHECK(ir::evaluate(p, q).decision == Decision::Allow);
    q.path = "/tmp/f";
    q.owner = false;
    CHECK(ir::evaluate(p, q).decision == Decision::Deny);
    q.owner = true;
    CHECK(ir::evaluate(p, q).decision == Decision::Allow);
}

TEST_CASE("variables, lets and sets expand; built-ins are bound and recorded")
{
    const auto p = test::checked_policy(R"(policy "p" {
    let project = "${CWD}"
    set secrets = paths { "${HOME}/.ssh/", "${HOME}/.gnupg/" }
    default deny
    allow read, write ${project}/**
    deny all $secrets
})");
    CHECK(decide(p, Access::Write, "/home/user/project/main.c") == Decision::Allow);
    CHECK(decide(p, Access::Read, "/home/user/.ssh/id_rsa") == Decision::Deny);
    CHECK(p.bindings.at("CWD") == "/home/user/project");
    CHECK(p.bindings.at("HOME") == "/home/user");
}

TEST_CASE("syscalls: a name beats a group; the default allows")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default deny
    syscalls deny @mount
    syscalls allow umount2
    syscalls deny ptrace action kill
})");
    CHECK(ir::evaluate_syscall(p, "mount").decision == Decision::Deny);
    CHECK(ir::evaluate_syscall(p, "mount").action.errno_value == 1);
    CHECK(ir::evaluate_syscall(p, "umount2").decision == Decision::Allow);
    CHECK(ir::evaluate_syscall(p, "ptrace").action.kind == ir::SyscallAction::Kind::Kill);
    CHECK(ir::evaluate_syscall(p, "read").decision == Decision::Allow);
}

TEST_CASE("rules are sorted and deduplicated, with the first-written provenance")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default deny
    allow read /b/
    allow read /a
    allow read "/b/"
})");
    // The invariant rules come last, numbered after the policy's own.
    REQUIRE(p.rules.size() == 2 + ir::invariant_rules(ir::kAllInvariants).size());
    CHECK(p.rules[2].invariant);
    CHECK(p.rules[0].pattern == "/a");
    CHECK(p.rules[0].id == ir::kFirstRuleId);
    CHECK(p.rules[1].pattern == "/b/**");
    CHECK(p.rules[1].origin.line == 3);
    CHECK(p.rules[1].origin.text == "allow read /b/");
    CHECK(p.path_default.origin.text == "default deny");
}

TEST_CASE("the IR dump names every rule with its origin")
{
    const auto p = test::checked_policy("policy \"dump\" {\n  default deny\n  allow read, exec /usr/\n}\n");
    const auto text = ir::dump(p);
    CHECK_THAT(text, Catch::Contains("policy \"dump\""));
    CHECK_THAT(text, Catch::Contains("allow read, exec \"/usr/**\""));
    CHECK_THAT(text, Catch::Contains("test.bwp:3"));
}

TEST_CASE("network: endpoints beat families beat `all`; an allowed endpoint enables its family")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default deny
    net deny all
    net allow family unix
    net allow tcp connect 127.0.0.1:8080
    net allow udp connect 10.0.0.0/8:53
    net deny udp connect 10.9.0.0/16:53
})");
    ir::NetQuery q;
    q.op = ir::NetQuery::Op::Create;
    q.family = 1; // AF_UNIX
    CHECK(ir::evaluate_net(p, q).decision == Decision::Allow);
    q.family = 2; // AF_INET: denied by `all`, enabled by the endpoint rules
    CHECK(ir::evaluate_net(p, q).decision == Decision::Allow);
    q.family = 10; // AF_INET6: nothing allows it
    CHECK(ir::evaluate_net(p, q).decision == Decision::Deny);
    q = {};
    q.op = ir::NetQuery::Op::Connect;
    q.family = 2;
    q.protocol = 6;
    q.address = {127, 0, 0, 1};
    q.port = 8080;
    CHECK(ir::evaluate_net(p, q).decision == Decision::Allow);
    q.port = 8081;
    CHECK(ir::evaluate_net(p, q).decision == Decision::Deny);
    q.protocol = 17;
    q.port = 53;
    q.address = {10, 1, 2, 3};
    CHECK(ir::evaluate_net(p, q).decision == Decision::Allow);
    q.address = {10, 9, 2, 3}; // the longer prefix denies
    CHECK(ir::evaluate_net(p, q).decision == Decision::Deny);
}

TEST_CASE("devices: a device rule decides for its nodes, with an ioctl allowlist")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default deny
    allow read, write /dev/null
    device allow read, write, ioctl /dev/dri/renderD* ioctl 0x6400-0x64ff
    device deny all char 226:*
    device allow read char 226:5
})");
    ir::DeviceQuery q;
    q.access.access = Access::Ioctl;
    q.access.path = "/dev/dri/renderD128";
    q.major = 226;
    q.minor = 128;
    q.ioctl_command = 0x6440;
    CHECK(ir::evaluate_device(p, q).decision == Decision::Allow);
    q.ioctl_command = 0x6500;
    CHECK(ir::evaluate_device(p, q).decision == Decision::Deny);
    q.access.path = "/dev/dri/card0"; // no path rule: the number rules decide
    q.access.access = Access::Read;
    q.minor = 0;
    CHECK(ir::evaluate_device(p, q).decision == Decision::Deny);
    q.minor = 5; // the exact number beats the range
    CHECK(ir::evaluate_device(p, q).decision == Decision::Allow);
    q.access.path = "/dev/null"; // no device rule: the path rules decide
    q.major = 1;
    q.minor = 3;
    CHECK(ir::evaluate_device(p, q).decision == Decision::Allow);
}
