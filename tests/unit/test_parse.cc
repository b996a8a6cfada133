// The parse stage: text in, ast::Module or located diagnostics out.
#include "parse/parse.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

using namespace bw;

namespace {

// One parse of one file, with everything a test looks at.
class Parsed {
public:
    explicit Parsed(std::string text, std::string name = "test.bwp")
        : file_(sources_.add(std::move(name), std::move(text))),
          module_(run_parse(sources_.file(file_), diags_))
    {
    }

    const std::optional<ast::Module>& module() const { return module_; }
    const ast::Policy& policy(std::size_t i = 0) const { return module_.value().policies.at(i); }
    const std::vector<ast::Statement>& body(std::size_t i = 0) const { return policy(i).body; }
    const std::vector<Diagnostic>& diags() const { return diags_.all(); }
    const Diagnostic& only_diag() const
    {
        INFO(rendered());
        REQUIRE(diags_.all().size() == 1);
        return diags_.all().front();
    }
    std::string render(const Diagnostic& d) const { return diags_.render(d, false); }
    std::string rendered() const
    {
        std::string out;
        for (const auto& d : diags_.all())
            out += render(d);
        return out;
    }
    std::string_view slice(const SourceLocation& loc) const { return sources_.slice(loc); }

private:
    SourceManager sources_;
    Diagnostics diags_{sources_};
    FileId file_;
    std::optional<ast::Module> module_;
};

void check_loc(const SourceLocation& loc, std::uint32_t line, std::uint32_t column, std::uint32_t length)
{
    INFO("location " << loc.line << ":" << loc.column << " length " << loc.length);
    CHECK(loc.line == line);
    CHECK(loc.column == column);
    CHECK(loc.length == length);
}

// The statement as the node it must be.
template <typename T>
const T& as(const ast::Statement& statement)
{
    const T* node = std::get_if<T>(&statement.node);
    INFO("statement holds alternative " << statement.node.index());
    REQUIRE(node != nullptr);
    return *node;
}

template <typename T, typename Variant>
const T& target_as(const Variant& target)
{
    const T* node = std::get_if<T>(&target);
    INFO("target holds alternative " << target.index());
    REQUIRE(node != nullptr);
    return *node;
}

std::vector<std::string> texts(const std::vector<ast::Word>& words)
{
    std::vector<std::string> out;
    for (const auto& w : words)
        out.push_back(w.text);
    return out;
}

std::vector<std::string> texts(const std::vector<ast::AccessName>& accesses)
{
    std::vector<std::string> out;
    for (const auto& a : accesses)
        out.push_back(a.text);
    return out;
}

// Items as `kind:text`, quoted patterns as `"text"`.
std::vector<std::string> texts(const std::vector<ast::Item>& items)
{
    std::vector<std::string> out;
    for (const auto& item : items) {
        switch (item.kind) {
        case ast::Item::Kind::Word: out.push_back("word:" + item.text); break;
        case ast::Item::Kind::Group: out.push_back("group:" + item.text); break;
        case ast::Item::Kind::SetRef: out.push_back("set:" + item.text); break;
        case ast::Item::Kind::Pattern:
            out.push_back(item.quoted ? "\"" + item.text + "\"" : "pattern:" + item.text);
            break;
        }
    }
    return out;
}

using Strings = std::vector<std::string>;

} // namespace

TEST_CASE("the example policy parses into the AST", "[parse]")
{
    const Parsed p(R"(# comment to end of line
policy "demo" {
    description "A demo policy"
    version "1.2"
    default deny                  # or: default allow
    allow read, exec /usr/        # trailing slash: the directory and everything under it
    allow read /etc/ld.so.cache
    deny  all "/tmp/with space/"  # quoted form
}
)");
    REQUIRE(p.module());
    CHECK(p.diags().empty());
    REQUIRE(p.module()->policies.size() == 1);
    const auto& policy = p.policy();
    CHECK(policy.name == "demo");
    check_loc(policy.loc, 2, 1, 6);
    check_loc(policy.name_loc, 2, 8, 6);
    CHECK(p.slice(policy.name_loc) == "\"demo\"");
    REQUIRE(policy.body.size() == 6);

    const auto& description = as<ast::Metadata>(policy.body[0]);
    CHECK(description.key == ast::Metadata::Key::Description);
    CHECK(description.value.value == "A demo policy");
    CHECK(description.value.quoted);
    check_loc(description.loc, 3, 5, 27);
    check_loc(description.value.loc, 3, 17, 15);

    const auto& version = as<ast::Metadata>(policy.body[1]);
    CHECK(version.key == ast::Metadata::Key::Version);
    CHECK(version.value.value == "1.2");
    check_loc(version.loc, 4, 5, 13);

    const auto& def = as<ast::DefaultStmt>(policy.body[2]);
    CHECK(def.scope == ast::DefaultStmt::Scope::Paths);
    CHECK(def.action == ast::Action::Deny);
    CHECK_FALSE(def.syscall_action);
    check_loc(def.loc, 5, 5, 12);
    CHECK(p.slice(def.loc) == "default deny");

    const auto& usr = as<ast::PathRule>(policy.body[3]);
    CHECK(usr.action == ast::Action::Allow);
    CHECK(texts(usr.accesses) == Strings{"read", "exec"});
    check_loc(usr.accesses[0].loc, 6, 11, 4);
    check_loc(usr.accesses[1].loc, 6, 17, 4);
    CHECK_FALSE(usr.owner);
    CHECK(usr.flags.empty());
    const auto& usr_path = target_as<ast::Text>(usr.target);
    CHECK(usr_path.value == "/usr/");
    CHECK_FALSE(usr_path.quoted);
    check_loc(usr_path.loc, 6, 22, 5);
    check_loc(usr.loc, 6, 5, 22);
    CHECK(p.slice(usr.loc) == "allow read, exec /usr/");

    const auto& cache = as<ast::PathRule>(policy.body[4]);
    CHECK(cache.action == ast::Action::Allow);
    CHECK(target_as<ast::Text>(cache.target).value == "/etc/ld.so.cache");
    check_loc(target_as<ast::Text>(cache.target).loc, 7, 16, 16);
    check_loc(cache.loc, 7, 5, 27);

    const auto& tmp = as<ast::PathRule>(policy.body[5]);
    CHECK(tmp.action == ast::Action::Deny);
    CHECK(texts(tmp.accesses) == Strings{"all"});
    const auto& tmp_path = target_as<ast::Text>(tmp.target);
    CHECK(tmp_path.value == "/tmp/with space/");
    CHECK(tmp_path.quoted);
    check_loc(tmp_path.loc, 8, 15, 18);
    check_loc(tmp.loc, 8, 5, 28);
    CHECK(p.slice(tmp.loc) == "deny  all \"/tmp/with space/\"");
    CHECK(p.slice(tmp_path.loc) == "\"/tmp/with space/\"");
}

TEST_CASE("actions print as their keywords", "[parse]")
{
    CHECK(ast::to_string(ast::Action::Allow) == "allow");
    CHECK(ast::to_string(ast::Action::Deny) == "deny");
    CHECK(ast::to_string(ast::Action::Audit) == "audit");
}

TEST_CASE("statements need only whitespace between them", "[parse]")
{
    const Parsed p(R"(policy "x" { default allow deny read /a audit write "/b" syscalls deny ptrace net deny all })");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 5);
    CHECK(as<ast::DefaultStmt>(p.body()[0]).action == ast::Action::Allow);
    CHECK(as<ast::PathRule>(p.body()[1]).action == ast::Action::Deny);
    const auto& b = as<ast::PathRule>(p.body()[2]);
    CHECK(b.action == ast::Action::Audit);
    CHECK(target_as<ast::Text>(b.target).value == "/b");
    check_loc(b.loc, 1, 41, 16);
    CHECK(texts(as<ast::SyscallRule>(p.body()[3]).items) == Strings{"word:ptrace"});
    CHECK(as<ast::NetRule>(p.body()[4]).kind == ast::NetRule::Kind::All);
}

TEST_CASE("metadata: description and version", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  description \"Builds \\\"things\\\"\"\n"
                   "  version \"2.0.1\"\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 2);
    const auto& d = as<ast::Metadata>(p.body()[0]);
    CHECK(d.key == ast::Metadata::Key::Description);
    CHECK(d.value.value == "Builds \"things\"");
    CHECK(d.value.quoted);
    check_loc(d.value.loc, 2, 15, 19);
    check_loc(d.loc, 2, 3, 31);
    const auto& v = as<ast::Metadata>(p.body()[1]);
    CHECK(v.key == ast::Metadata::Key::Version);
    CHECK(v.value.value == "2.0.1");
    check_loc(v.value.loc, 3, 11, 7);
    check_loc(v.loc, 3, 3, 15);
}

TEST_CASE("requires: kernel and feature", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n  requires kernel 6.1\n  requires feature landlock\n  requires feature net\n}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 3);
    const auto& kernel = as<ast::Requires>(p.body()[0]);
    CHECK(kernel.what == ast::Requires::What::Kernel);
    CHECK(kernel.value.text == "6.1");
    check_loc(kernel.value.loc, 2, 19, 3);
    check_loc(kernel.loc, 2, 3, 19);
    const auto& feature = as<ast::Requires>(p.body()[1]);
    CHECK(feature.what == ast::Requires::What::Feature);
    CHECK(feature.value.text == "landlock");
    check_loc(feature.value.loc, 3, 20, 8);
    // A keyword is a name where a name is expected.
    CHECK(as<ast::Requires>(p.body()[2]).value.text == "net");
}

TEST_CASE("include names a policy file in a string", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n  include \"base\"\n  include \"../shared/net.bwp\"\n}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 2);
    const auto& base = as<ast::Include>(p.body()[0]);
    CHECK(base.target.value == "base");
    CHECK(base.target.quoted);
    check_loc(base.target.loc, 2, 11, 6);
    check_loc(base.loc, 2, 3, 14);
    CHECK(as<ast::Include>(p.body()[1]).target.value == "../shared/net.bwp");
}

TEST_CASE("let binds a string or a path", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  let PROJECT = \"/home/me/my project\"\n"
                   "  let CACHE = ${HOME}/.cache/\n"
                   "  let opt-dir=/opt/x\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 3);
    const auto& project = as<ast::Let>(p.body()[0]);
    CHECK(project.name.text == "PROJECT");
    check_loc(project.name.loc, 2, 7, 7);
    CHECK(project.value.value == "/home/me/my project");
    CHECK(project.value.quoted);
    check_loc(project.value.loc, 2, 17, 21);
    check_loc(project.loc, 2, 3, 35);

    const auto& cache = as<ast::Let>(p.body()[1]);
    CHECK(cache.name.text == "CACHE");
    CHECK(cache.value.value == "${HOME}/.cache/");
    CHECK_FALSE(cache.value.quoted);
    check_loc(cache.value.loc, 3, 15, 15);

    // `=` needs no spaces around it.
    const auto& opt = as<ast::Let>(p.body()[2]);
    CHECK(opt.name.text == "opt-dir");
    CHECK(opt.value.value == "/opt/x");
    check_loc(opt.value.loc, 4, 15, 6);
}

TEST_CASE("set defines named paths or syscalls, each kind of item", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  set secrets = paths { \"/etc/shadow\", /root/ , ${HOME}/.ssh/ , $more, }\n"
                   "  set privileged = syscalls {\n"
                   "    ptrace, @mount, $extra,\n"
                   "    read, kill, bind\n"
                   "  }\n"
                   "  set none = syscalls { }\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 3);

    const auto& secrets = as<ast::SetDef>(p.body()[0]);
    CHECK(secrets.kind == ast::SetDef::Kind::Paths);
    CHECK(secrets.name.text == "secrets");
    check_loc(secrets.name.loc, 2, 7, 7);
    // The trailing comma is allowed.
    CHECK(texts(secrets.items) ==
          Strings{"\"/etc/shadow\"", "pattern:/root/", "pattern:${HOME}/.ssh/", "set:more"});
    check_loc(secrets.items[0].loc, 2, 25, 13);
    check_loc(secrets.items[1].loc, 2, 40, 6);
    check_loc(secrets.items[2].loc, 2, 49, 13);
    check_loc(secrets.items[3].loc, 2, 65, 5);
    check_loc(secrets.loc, 2, 3, 70);

    const auto& privileged = as<ast::SetDef>(p.body()[1]);
    CHECK(privileged.kind == ast::SetDef::Kind::Syscalls);
    CHECK(privileged.name.text == "privileged");
    // Syscalls named like keywords (`read`, `kill`, `bind`) are names here.
    CHECK(texts(privileged.items) ==
          Strings{"word:ptrace", "group:mount", "set:extra", "word:read", "word:kill", "word:bind"});
    check_loc(privileged.items[1].loc, 4, 13, 6);
    check_loc(privileged.items[2].loc, 4, 21, 6);
    check_loc(privileged.items[5].loc, 5, 17, 4);
    // A statement over several lines is located on its first.
    check_loc(privileged.loc, 3, 3, 27);

    const auto& none = as<ast::SetDef>(p.body()[2]);
    CHECK(none.items.empty());
    check_loc(none.loc, 7, 3, 23);
}

TEST_CASE("default: plain, net and syscalls with their actions", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  default deny\n"
                   "  net default allow\n"
                   "  syscalls default deny action kill\n"
                   "  syscalls default deny action errno(EPERM)\n"
                   "  syscalls default audit action errno ( 13 )\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 5);

    const auto& plain = as<ast::DefaultStmt>(p.body()[0]);
    CHECK(plain.scope == ast::DefaultStmt::Scope::Paths);
    CHECK(plain.action == ast::Action::Deny);
    CHECK_FALSE(plain.syscall_action);

    const auto& net = as<ast::DefaultStmt>(p.body()[1]);
    CHECK(net.scope == ast::DefaultStmt::Scope::Net);
    CHECK(net.action == ast::Action::Allow);
    check_loc(net.loc, 3, 3, 17);

    const auto& kill = as<ast::DefaultStmt>(p.body()[2]);
    CHECK(kill.scope == ast::DefaultStmt::Scope::Syscalls);
    CHECK(kill.action == ast::Action::Deny);
    REQUIRE(kill.syscall_action);
    CHECK(kill.syscall_action->kind == ast::SyscallAction::Kind::Kill);
    CHECK_FALSE(kill.syscall_action->errno_value);
    check_loc(kill.syscall_action->loc, 4, 25, 11);
    check_loc(kill.loc, 4, 3, 33);

    const auto& eperm = as<ast::DefaultStmt>(p.body()[3]);
    REQUIRE(eperm.syscall_action);
    CHECK(eperm.syscall_action->kind == ast::SyscallAction::Kind::Errno);
    REQUIRE(eperm.syscall_action->errno_value);
    CHECK(eperm.syscall_action->errno_value->text == "EPERM");
    check_loc(eperm.syscall_action->errno_value->loc, 5, 38, 5);
    check_loc(eperm.syscall_action->loc, 5, 25, 19);
    CHECK(p.slice(eperm.syscall_action->loc) == "action errno(EPERM)");

    const auto& spaced = as<ast::DefaultStmt>(p.body()[4]);
    CHECK(spaced.action == ast::Action::Audit);
    REQUIRE(spaced.syscall_action);
    CHECK(spaced.syscall_action->errno_value->text == "13");
    CHECK(p.slice(spaced.syscall_action->loc) == "action errno ( 13 )");
}

TEST_CASE("path rules: actions, accesses, owner, targets and flags", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  allow read, write, append, exec, create, delete, rename, link, metadata, stat, attr, ioctl, "
                   "all /a\n"
                   "  deny stat \"/etc/with space\"\n"
                   "  audit read,write owner ${HOME}/notes/\n"
                   "  deny all $secrets\n"
                   "  allow write /var/log/app.log flags O_TRUNC, O_APPEND\n"
                   "  allow exec ${PROJECT}/bin/*\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 6);

    const auto& every = as<ast::PathRule>(p.body()[0]);
    CHECK(every.action == ast::Action::Allow);
    CHECK(texts(every.accesses) == Strings{"read", "write", "append", "exec", "create", "delete", "rename", "link",
                                           "metadata", "stat", "attr", "ioctl", "all"});
    check_loc(every.accesses[0].loc, 2, 9, 4);
    check_loc(every.accesses.back().loc, 2, 95, 3);

    const auto& quoted = as<ast::PathRule>(p.body()[1]);
    CHECK(quoted.action == ast::Action::Deny);
    CHECK(texts(quoted.accesses) == Strings{"stat"});
    CHECK(target_as<ast::Text>(quoted.target).value == "/etc/with space");
    CHECK(target_as<ast::Text>(quoted.target).quoted);

    const auto& owner = as<ast::PathRule>(p.body()[2]);
    CHECK(owner.action == ast::Action::Audit);
    CHECK(texts(owner.accesses) == Strings{"read", "write"});
    REQUIRE(owner.owner);
    check_loc(*owner.owner, 4, 20, 5);
    const auto& variable = target_as<ast::Text>(owner.target);
    CHECK(variable.value == "${HOME}/notes/"); // expanded by the check stage
    CHECK_FALSE(variable.quoted);
    check_loc(variable.loc, 4, 26, 14);
    check_loc(owner.loc, 4, 3, 37);

    const auto& set = as<ast::PathRule>(p.body()[3]);
    CHECK_FALSE(set.owner);
    const auto& ref = target_as<ast::SetRef>(set.target);
    CHECK(ref.name == "secrets");
    check_loc(ref.loc, 5, 12, 8);

    const auto& flags = as<ast::PathRule>(p.body()[4]);
    CHECK(texts(flags.flags) == Strings{"O_TRUNC", "O_APPEND"});
    check_loc(flags.flags[0].loc, 6, 38, 7);
    check_loc(flags.flags[1].loc, 6, 47, 8);
    check_loc(flags.loc, 6, 3, 52);

    CHECK(target_as<ast::Text>(as<ast::PathRule>(p.body()[5]).target).value == "${PROJECT}/bin/*");
}

TEST_CASE("syscall rules: names, groups, sets and actions", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  syscalls allow read, write, kill, bind, @basic-io, $extra\n"
                   "  syscalls deny ptrace action errno(EPERM)\n"
                   "  syscalls deny @mount, policy, default action kill\n"
                   "  syscalls audit execve\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 4);

    const auto& allow = as<ast::SyscallRule>(p.body()[0]);
    CHECK(allow.action == ast::Action::Allow);
    CHECK(texts(allow.items) ==
          Strings{"word:read", "word:write", "word:kill", "word:bind", "group:basic-io", "set:extra"});
    check_loc(allow.items[0].loc, 2, 18, 4);
    check_loc(allow.items[4].loc, 2, 43, 9);
    check_loc(allow.items[5].loc, 2, 54, 6);
    CHECK_FALSE(allow.syscall_action);
    check_loc(allow.loc, 2, 3, 57);

    const auto& eperm = as<ast::SyscallRule>(p.body()[1]);
    CHECK(eperm.action == ast::Action::Deny);
    CHECK(texts(eperm.items) == Strings{"word:ptrace"});
    REQUIRE(eperm.syscall_action);
    CHECK(eperm.syscall_action->kind == ast::SyscallAction::Kind::Errno);
    CHECK(eperm.syscall_action->errno_value->text == "EPERM");
    check_loc(eperm.syscall_action->loc, 3, 24, 19);
    check_loc(eperm.loc, 3, 3, 40);

    const auto& kill = as<ast::SyscallRule>(p.body()[2]);
    CHECK(texts(kill.items) == Strings{"group:mount", "word:policy", "word:default"});
    REQUIRE(kill.syscall_action);
    CHECK(kill.syscall_action->kind == ast::SyscallAction::Kind::Kill);

    CHECK(as<ast::SyscallRule>(p.body()[3]).action == ast::Action::Audit);
}

TEST_CASE("net rules: all, families and endpoints", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  net allow all\n"
                   "  net deny family inet6, netlink, unix\n"
                   "  net allow tcp connect 10.0.0.0/8:53, [::1]:1024-65535, any:443\n"
                   "  net deny udp bind any:53\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 4);

    const auto& all = as<ast::NetRule>(p.body()[0]);
    CHECK(all.kind == ast::NetRule::Kind::All);
    CHECK(all.action == ast::Action::Allow);
    CHECK(all.families.empty());
    CHECK_FALSE(all.protocol);
    CHECK(all.endpoints.empty());
    check_loc(all.loc, 2, 3, 13);

    const auto& family = as<ast::NetRule>(p.body()[1]);
    CHECK(family.kind == ast::NetRule::Kind::Family);
    CHECK(family.action == ast::Action::Deny);
    CHECK(texts(family.families) == Strings{"inet6", "netlink", "unix"});
    check_loc(family.families[1].loc, 3, 26, 7);

    const auto& tcp = as<ast::NetRule>(p.body()[2]);
    CHECK(tcp.kind == ast::NetRule::Kind::Endpoint);
    REQUIRE(tcp.protocol);
    CHECK(tcp.protocol->text == "tcp");
    check_loc(tcp.protocol->loc, 4, 13, 3);
    REQUIRE(tcp.direction);
    CHECK(tcp.direction->text == "connect");
    check_loc(tcp.direction->loc, 4, 17, 7);
    CHECK(texts(tcp.endpoints) == Strings{"10.0.0.0/8:53", "[::1]:1024-65535", "any:443"});
    check_loc(tcp.endpoints[0].loc, 4, 25, 13);
    check_loc(tcp.endpoints[1].loc, 4, 40, 16);
    check_loc(tcp.endpoints[2].loc, 4, 58, 7);
    check_loc(tcp.loc, 4, 3, 62);

    const auto& udp = as<ast::NetRule>(p.body()[3]);
    CHECK(udp.protocol->text == "udp");
    CHECK(udp.direction->text == "bind");
    CHECK(texts(udp.endpoints) == Strings{"any:53"});
}

TEST_CASE("device rules: paths, numbers and ioctl clauses", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  device allow read, write /dev/null\n"
                   "  device allow read, write char 226:128-255 ioctl 0x6400-0x64ff, 0x40086409\n"
                   "  device deny all block 8:*\n"
                   "  device allow ioctl \"/dev/dri/card0\" ioctl any\n"
                   "  device audit read $gpus\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 5);

    const auto& null = as<ast::DeviceRule>(p.body()[0]);
    CHECK(null.action == ast::Action::Allow);
    CHECK(texts(null.accesses) == Strings{"read", "write"});
    const auto& null_path = target_as<ast::Text>(null.target);
    CHECK(null_path.value == "/dev/null");
    check_loc(null_path.loc, 2, 28, 9);
    CHECK_FALSE(null.ioctl);
    CHECK_FALSE(null.ioctl_any);
    CHECK(null.ioctl_commands.empty());
    check_loc(null.loc, 2, 3, 34);

    const auto& dri = as<ast::DeviceRule>(p.body()[1]);
    const auto& number = target_as<ast::DeviceNumber>(dri.target);
    CHECK(number.kind.text == "char");
    check_loc(number.kind.loc, 3, 28, 4);
    CHECK(number.spec.text == "226:128-255");
    check_loc(number.spec.loc, 3, 33, 11);
    REQUIRE(dri.ioctl);
    check_loc(*dri.ioctl, 3, 45, 5);
    CHECK_FALSE(dri.ioctl_any);
    CHECK(texts(dri.ioctl_commands) == Strings{"0x6400-0x64ff", "0x40086409"});
    check_loc(dri.ioctl_commands[1].loc, 3, 66, 10);
    check_loc(dri.loc, 3, 3, 73);

    const auto& block = as<ast::DeviceRule>(p.body()[2]);
    CHECK(block.action == ast::Action::Deny);
    CHECK(texts(block.accesses) == Strings{"all"});
    CHECK(target_as<ast::DeviceNumber>(block.target).kind.text == "block");
    CHECK(target_as<ast::DeviceNumber>(block.target).spec.text == "8:*");

    const auto& any = as<ast::DeviceRule>(p.body()[3]);
    CHECK(texts(any.accesses) == Strings{"ioctl"});
    CHECK(target_as<ast::Text>(any.target).value == "/dev/dri/card0");
    CHECK(target_as<ast::Text>(any.target).quoted);
    REQUIRE(any.ioctl);
    check_loc(*any.ioctl, 5, 39, 5);
    CHECK(any.ioctl_any);
    CHECK(any.ioctl_commands.empty());

    const auto& gpus = as<ast::DeviceRule>(p.body()[4]);
    CHECK(gpus.action == ast::Action::Audit);
    CHECK(target_as<ast::SetRef>(gpus.target).name == "gpus");
    check_loc(target_as<ast::SetRef>(gpus.target).loc, 6, 21, 5);
}

TEST_CASE("when blocks: conditions, `and`, nesting", "[parse][statements]")
{
    const Parsed p("policy \"x\" {\n"
                   "  default deny\n"
                   "  when exe /usr/bin/git {\n"
                   "    allow read ${HOME}/.gitconfig\n"
                   "  }\n"
                   "  when uid 1000-1999 and gid 100 and exe \"/opt/my tool\" {\n"
                   "    net allow all\n"
                   "    when uid 0 {\n"
                   "      syscalls deny ptrace\n"
                   "      when gid 0 { }\n"
                   "    }\n"
                   "    deny all /root/\n"
                   "  }\n"
                   "}\n");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 3);

    const auto& git = as<ast::WhenBlock>(p.body()[1]);
    REQUIRE(git.conditions.size() == 1);
    CHECK(git.conditions[0].kind == ast::Condition::Kind::Exe);
    CHECK(git.conditions[0].exe.value == "/usr/bin/git");
    CHECK_FALSE(git.conditions[0].exe.quoted);
    check_loc(git.conditions[0].exe.loc, 3, 12, 12);
    check_loc(git.conditions[0].loc, 3, 8, 16);
    check_loc(git.loc, 3, 3, 23); // `when` to `{`
    REQUIRE(git.body.size() == 1);
    CHECK(target_as<ast::Text>(as<ast::PathRule>(git.body[0]).target).value == "${HOME}/.gitconfig");

    const auto& users = as<ast::WhenBlock>(p.body()[2]);
    REQUIRE(users.conditions.size() == 3);
    CHECK(users.conditions[0].kind == ast::Condition::Kind::Uid);
    CHECK(users.conditions[0].id.text == "1000-1999");
    check_loc(users.conditions[0].id.loc, 6, 12, 9);
    check_loc(users.conditions[0].loc, 6, 8, 13);
    CHECK(users.conditions[1].kind == ast::Condition::Kind::Gid);
    CHECK(users.conditions[1].id.text == "100");
    check_loc(users.conditions[1].loc, 6, 26, 7);
    CHECK(users.conditions[2].kind == ast::Condition::Kind::Exe);
    CHECK(users.conditions[2].exe.value == "/opt/my tool");
    CHECK(users.conditions[2].exe.quoted);
    check_loc(users.loc, 6, 3, 55);

    REQUIRE(users.body.size() == 3);
    CHECK(as<ast::NetRule>(users.body[0]).kind == ast::NetRule::Kind::All);
    const auto& root = as<ast::WhenBlock>(users.body[1]);
    REQUIRE(root.conditions.size() == 1);
    CHECK(root.conditions[0].kind == ast::Condition::Kind::Uid);
    CHECK(root.conditions[0].id.text == "0");
    check_loc(root.loc, 8, 5, 12);
    REQUIRE(root.body.size() == 2);
    CHECK(texts(as<ast::SyscallRule>(root.body[0]).items) == Strings{"word:ptrace"});
    const auto& innermost = as<ast::WhenBlock>(root.body[1]);
    CHECK(innermost.conditions.at(0).kind == ast::Condition::Kind::Gid);
    CHECK(innermost.body.empty());
    CHECK(target_as<ast::Text>(as<ast::PathRule>(users.body[2]).target).value == "/root/");
}

TEST_CASE("quoted strings resolve their escapes", "[parse]")
{
    const Parsed p(R"(policy "a \"b\" \\ c" {
    default deny
    allow read "/q\"uote/back\\slash/tab\there/nl\n"
    deny read "relative/is/kept/as/is"
    allow read "/has # and } inside"
    let V = "\"${X}\""
    set s = paths { "/a\\b", }
})");
    REQUIRE(p.module());
    CHECK(p.policy().name == "a \"b\" \\ c");
    check_loc(p.policy().name_loc, 1, 8, 14);
    const auto& body = p.body();
    REQUIRE(body.size() == 6);
    const auto& escaped = target_as<ast::Text>(as<ast::PathRule>(body[1]).target);
    CHECK(escaped.value == "/q\"uote/back\\slash/tab\there/nl\n");
    check_loc(escaped.loc, 3, 16, 37);
    // The check stage, not the parser, says that a path is not absolute.
    CHECK(target_as<ast::Text>(as<ast::PathRule>(body[2]).target).value == "relative/is/kept/as/is");
    CHECK(target_as<ast::Text>(as<ast::PathRule>(body[3]).target).value == "/has # and } inside");
    CHECK(as<ast::Let>(body[4]).value.value == "\"${X}\"");
    CHECK(texts(as<ast::SetDef>(body[5]).items) == Strings{"\"/a\\b\""});
}

TEST_CASE("globs need no quoting; a `,` or `}` outside braces ends a path", "[parse]")
{
    const Parsed ok("policy \"x\" { default deny allow read /x/{a,b}/[a-z]*?.so }");
    REQUIRE(ok.module());
    CHECK(target_as<ast::Text>(as<ast::PathRule>(ok.body().at(1)).target).value == "/x/{a,b}/[a-z]*?.so");

    const Parsed glued("policy \"x\" {\n  default deny\n  allow read /usr/}\n");
    REQUIRE(glued.module());
    CHECK(target_as<ast::Text>(as<ast::PathRule>(glued.body().at(1)).target).value == "/usr/");

    const Parsed set("policy \"x\" {\n  set s = paths { /a, /b/{c,d}, ${HOME}/e }\n}\n");
    REQUIRE(set.module());
    CHECK(texts(as<ast::SetDef>(set.body().at(0)).items) ==
          Strings{"pattern:/a", "pattern:/b/{c,d}", "pattern:${HOME}/e"});
}

TEST_CASE("comments run to the end of the line", "[parse]")
{
    const Parsed p("#!/usr/bin/env bwc\n"
                   "policy \"x\" { # opening\n"
                   "  # default allow\n"
                   "  default deny#glued\n"
                   "  allow read /a#b\n"
                   "  allow read \"/c#d\"\n"
                   "  syscalls deny ptrace# glued\n"
                   "} # end");
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 4);
    CHECK(as<ast::DefaultStmt>(p.body()[0]).action == ast::Action::Deny);
    CHECK(target_as<ast::Text>(as<ast::PathRule>(p.body()[1]).target).value == "/a");
    CHECK(target_as<ast::Text>(as<ast::PathRule>(p.body()[2]).target).value == "/c#d");
    CHECK(texts(as<ast::SyscallRule>(p.body()[3]).items) == Strings{"word:ptrace"});
}

TEST_CASE("CRLF line endings give the same AST and locations as LF", "[parse]")
{
    const Parsed p("policy \"x\" {\r\n  default allow\r\n  deny write /tmp/\r\n  when uid 0 {\r\n  }\r\n}\r\n");
    REQUIRE(p.module());
    check_loc(as<ast::DefaultStmt>(p.body().at(0)).loc, 2, 3, 13);
    const auto& rule = as<ast::PathRule>(p.body().at(1));
    const auto& path = target_as<ast::Text>(rule.target);
    CHECK(path.value == "/tmp/");
    check_loc(rule.loc, 3, 3, 16);
    check_loc(path.loc, 3, 14, 5);
    check_loc(as<ast::WhenBlock>(p.body().at(2)).loc, 4, 3, 12);

    const Parsed bad("policy \"x\" {\r\n  default deny\r\n  allow read tmp\r\n}\r\n");
    check_loc(bad.only_diag().loc, 3, 14, 3);
    CHECK(bad.render(bad.only_diag()).find("\r") == std::string::npos);
}

TEST_CASE("columns and lengths count bytes", "[parse]")
{
    const Parsed p("policy \"été\" { default deny allow read /é/日本 description \"ü\" }");
    REQUIRE(p.module());
    CHECK(p.policy().name == "été");
    check_loc(p.policy().name_loc, 1, 8, 7);
    check_loc(as<ast::DefaultStmt>(p.body().at(0)).loc, 1, 18, 12);
    const auto& rule = as<ast::PathRule>(p.body().at(1));
    const auto& path = target_as<ast::Text>(rule.target);
    CHECK(path.value == "/é/日本");
    check_loc(path.loc, 1, 42, 10);
    CHECK(p.slice(path.loc) == "/é/日本");
    check_loc(rule.loc, 1, 31, 21);
    const auto& description = as<ast::Metadata>(p.body().at(2));
    check_loc(description.loc, 1, 53, 16);
    CHECK(p.slice(description.value.loc) == "\"ü\"");
}

TEST_CASE("a UTF-8 byte order mark is skipped but still counted", "[parse]")
{
    const Parsed p("\xef\xbb\xbfpolicy \"x\" { default deny }");
    REQUIRE(p.module());
    check_loc(p.policy().loc, 1, 4, 6);
    check_loc(as<ast::DefaultStmt>(p.body().at(0)).loc, 1, 17, 12);

    // Only the first one is a byte order mark; a second is text.
    const Parsed twice("\xef\xbb\xbf\xef\xbb\xbfpolicy \"x\" { default deny }");
    check_loc(twice.only_diag().loc, 1, 4, 9);
}

TEST_CASE("a statement split over lines is located on its first line", "[parse]")
{
    const Parsed p("policy\n\"x\"\n{\ndefault\ndeny\nallow\n  read\n ,\nexec\n  /x\nflags\nO_TRUNC\n}\n");
    REQUIRE(p.module());
    check_loc(p.policy().name_loc, 2, 1, 3);
    check_loc(as<ast::DefaultStmt>(p.body().at(0)).loc, 4, 1, 7);
    const auto& rule = as<ast::PathRule>(p.body().at(1));
    check_loc(rule.loc, 6, 1, 5);
    check_loc(rule.accesses.at(1).loc, 9, 1, 4);
    check_loc(target_as<ast::Text>(rule.target).loc, 10, 3, 2);
    check_loc(rule.flags.at(0).loc, 12, 1, 7);
}

TEST_CASE("a rule split over lines is named as written on one line, comments left out", "[parse]")
{
    const Parsed p("policy \"x\" {\ndefault\ndeny\nallow  read ,\n   exec # why\n\n  # more\n\t\"/a #b\\\"\"\n"
                   "net allow tcp\n connect 127.0.0.1:80\n}\n");
    REQUIRE(p.module());
    CHECK(as<ast::DefaultStmt>(p.body().at(0)).written == "default deny");
    // Blanks within a line stay as written, as does a `#` inside a string.
    CHECK(as<ast::PathRule>(p.body().at(1)).written == "allow  read , exec \"/a #b\\\"\"");
    CHECK(as<ast::NetRule>(p.body().at(2)).written == "net allow tcp connect 127.0.0.1:80");
}

TEST_CASE("every policy block of a file is returned, in order", "[parse]")
{
    const Parsed p("policy \"one\" { default deny }\n"
                   "policy \"two\" { default allow deny read /x }\n"
                   "policy \"three\" { }\n");
    REQUIRE(p.module());
    REQUIRE(p.module()->policies.size() == 3);
    CHECK(p.policy(0).name == "one");
    CHECK(p.policy(1).name == "two");
    CHECK(p.body(1).size() == 2);
    CHECK(p.policy(2).name == "three");
    CHECK(p.body(2).empty());
    check_loc(p.policy(2).loc, 3, 1, 6);
}

TEST_CASE("an empty file is a module without policies", "[parse]")
{
    for (const auto* text : {"", "\n\n", "   # only a comment\n", "\r\n", "\xef\xbb\xbf"}) {
        const Parsed p(text);
        REQUIRE(p.module());
        CHECK(p.module()->policies.empty());
        CHECK(p.diags().empty());
    }
}

TEST_CASE("locations name the file they come from", "[parse]")
{
    SourceManager sources;
    sources.add("first.bwp", "");
    const auto second = sources.add("second.bwp", "policy \"x\" { default deny allow read x }");
    Diagnostics diags(sources);
    CHECK_FALSE(run_parse(sources.file(second), diags));
    REQUIRE(diags.all().size() == 1);
    CHECK(diags.all()[0].loc.file == second);
    CHECK(diags.render(diags.all()[0], false).starts_with("second.bwp:1:38: error:"));

    const auto third = sources.add("third.bwp", "policy \"x\" { default deny }");
    const auto module = run_parse(sources.file(third), diags);
    REQUIRE(module);
    CHECK(module->file == third);
    CHECK(module->policies.at(0).loc.file == third);
    CHECK(as<ast::DefaultStmt>(module->policies.at(0).body.at(0)).loc.file == third);
}

namespace {

struct SyntaxCase {
    const char* what;
    const char* text;
    std::uint32_t line;
    std::uint32_t column;
    std::uint32_t length;
    const char* message;
    const char* hint; // nullptr: no hint
};

// One clear error each, never a cascade.
const SyntaxCase kSyntaxCases[] = {
    // Paths and their accesses.
    {"accesses missing before a path", "policy \"x\" {\n  allow /usr/\n}\n", 2, 9, 5,
     "expected the accesses to allow before the path, found `/usr/`",
     "name them, e.g. `allow read, exec /usr/`, or `allow all /usr/`"},
    {"accesses missing before a quoted path", "policy \"x\" {\n  deny \"/tmp/a b\"\n}\n", 2, 8, 10,
     "expected the accesses to deny before the path, found `\"/tmp/a b\"`",
     "name them, e.g. `deny read, exec \"/tmp/a b\"`, or `deny all \"/tmp/a b\"`"},
    {"accesses missing in a when block", "policy \"x\" {\n  when uid 0 {\n    audit /etc/\n  }\n}\n", 3, 11, 5,
     "expected the accesses to audit before the path, found `/etc/`",
     "name them, e.g. `audit read, exec /etc/`, or `audit all /etc/`"},
    {"misspelt access", "policy \"x\" {\n  allow reed /usr/\n}\n", 2, 9, 4,
     "expected an access (`read`, `write`, `exec`, ..., `all`), found `reed`", nullptr},
    {"access list ending in a comma", "policy \"x\" {\n  allow read, /a\n}\n", 2, 15, 2,
     "expected an access (`read`, `write`, `exec`, ..., `all`), found `/a`", nullptr},
    {"relative path", "policy \"x\" {\n  default deny\n  allow read usr/lib\n}\n", 3, 14, 7,
     "expected a path after `read`, found `usr/lib`", "an unquoted path starts with `/`: did you mean `/usr/lib`?"},
    {"relative path after `owner`", "policy \"x\" {\n  allow write owner tmp/\n}\n", 2, 21, 4,
     "expected a path after `owner`, found `tmp/`", "an unquoted path starts with `/`: did you mean `/tmp/`?"},
    {"home-relative path", "policy \"x\" {\n  deny read ~/.ssh/\n}\n", 2, 13, 7,
     "expected a path after `read`, found `~/.ssh/`", "`~` is not expanded; write `${HOME}` or the absolute path"},
    {"relative path in `when exe`", "policy \"x\" {\n  when exe bin/git {\n  }\n}\n", 2, 12, 7,
     "expected a path after `exe`, found `bin/git`", "an unquoted path starts with `/`: did you mean `/bin/git`?"},
    {"rule without a path", "policy \"x\" {\n  allow read\n  deny read /x\n}\n", 3, 3, 4,
     "expected a path after `read`, found `deny`", nullptr},
    {"action and path glued", "policy \"x\" {\n  allow/usr\n}\n", 2, 3, 9,
     "expected a statement or `}`, found `allow/usr`", "put a space between the action and the path"},
    {"two paths in one rule", "policy \"x\" {\n  allow read /a /b\n}\n", 2, 17, 2,
     "expected a statement or `}`, found `/b`", "a rule names one path: write one rule per path, or a `set` of paths"},
    {"path without an action", "policy \"x\" {\n  default deny\n  /usr/bin/\n}\n", 3, 3, 9,
     "expected a statement or `}`, found `/usr/bin/`",
     "start the rule with `allow`, `deny` or `audit` and its accesses: `allow read /path`"},

    // `default`.
    {"`default` without an action", "policy \"x\" {\n  default\n}\n", 3, 1, 1,
     "expected `allow` or `deny` after `default`, found `}`", "write `default allow` or `default deny`"},
    {"`default` with a wrong action", "policy \"x\" {\n  default block\n}\n", 2, 11, 5,
     "expected `allow` or `deny` after `default`, found `block`", "write `default allow` or `default deny`"},
    {"`default` followed by a comment", "policy \"x\" {\n  default # for now\n}\n", 3, 1, 1,
     "expected `allow` or `deny` after `default`, found `}`", "write `default allow` or `default deny`"},
    {"`default` takes the action of the next rule", "policy \"x\" {\n  default\n  allow read /usr/\n}\n", 3, 9, 4,
     "expected a statement or `}`, found `read`",
     "`default` on line 2 took `allow` as its action: write `default allow` or `default deny`"},
    {"`default` takes the action of the next rule without accesses",
     "policy \"x\" {\n  default\n  deny /usr/\n}\n", 3, 8, 5, "expected a statement or `}`, found `/usr/`",
     "`default` on line 2 took `deny` as its action: write `default allow` or `default deny`"},
    {"semicolon", "policy \"x\" {\n  default deny;\n  allow read /a\n}\n", 2, 11, 5,
     "expected `allow` or `deny` after `default`, found `deny;`", "statements need no `;`: remove it"},

    // Policies and blocks.
    {"missing `{`", "policy \"demo\"\n  allow read /usr/\n}\n", 2, 3, 5,
     "expected `{` after the policy name, found `allow`", nullptr},
    {"unquoted policy name", "policy demo {\n  default deny\n}\n", 1, 8, 4,
     "expected a quoted policy name after `policy`, found `demo`", "quote the name: `policy \"demo\"`"},
    {"unquoted policy name after a comment", "policy # the name:\n  demo {\n}\n", 2, 3, 4,
     "expected a quoted policy name after `policy`, found `demo`", "quote the name: `policy \"demo\"`"},
    {"missing policy name", "policy {\n  default deny\n}\n", 1, 8, 1,
     "expected a quoted policy name after `policy`, found `{`", nullptr},
    {"misspelt keyword", "policy \"x\" {\n  alow read /a\n}\n", 2, 3, 4,
     "expected a statement or `}`, found `alow`", nullptr},
    {"rule outside a policy", "allow read /usr/\n", 1, 1, 5, "expected `policy` or end of file, found `allow`",
     "a file holds `policy \"name\" { ... }` blocks"},
    {"stray `}`", "policy \"x\" {\n  default deny\n}\n}\n", 4, 1, 1,
     "expected `policy` or end of file, found `}`", "this `}` has no matching `{`"},
    {"unclosed policy at end of file", "policy \"x\" {\n  default deny\n  allow read /usr/\n\n# end\n", 3, 19, 1,
     "expected `}` to close the block opened on line 1, found end of file", nullptr},
    {"unclosed policy before the next one", "policy \"a\" {\n  default deny\npolicy \"b\" {\n}\n", 3, 1, 6,
     "expected `}` to close the block opened on line 1, found `policy`", nullptr},
    {"unclosed when block before the next policy",
     "policy \"a\" {\n  when uid 0 {\n    allow read /a\npolicy \"b\" {\n}\n", 4, 1, 6,
     "expected `}` to close the block opened on line 2, found `policy`", nullptr},
    {"`when` without a condition", "policy \"x\" {\n  when {\n  }\n}\n", 2, 8, 1,
     "expected `exe`, `uid` or `gid`, found `{`", nullptr},

    // Other statements: a generic message naming what was expected.
    {"`let` without `=`", "policy \"x\" {\n  let HOME \"/home\"\n}\n", 2, 12, 7, "expected `=`, found `\"/home\"`",
     nullptr},
    {"`include` of an unquoted name", "policy \"x\" {\n  include base\n}\n", 2, 11, 4,
     "expected a string, found `base`", nullptr},
    {"endpoint rule without a direction", "policy \"x\" {\n  net allow tcp 10.0.0.1:53\n}\n", 2, 17, 11,
     "expected `connect` or `bind`, found `10.0.0.1:53`", nullptr},
    {"family rule without a family", "policy \"x\" {\n  net allow family\n}\n", 3, 1, 1,
     "expected a name, found `}`", nullptr},
    {"syscall rule without a syscall", "policy \"x\" {\n  syscalls deny\n}\n", 3, 1, 1,
     "expected a name, a string, a path, a `@group` or a `$set`, found `}`", nullptr},
    {"device number without its numbers", "policy \"x\" {\n  device allow read char\n}\n", 3, 1, 1,
     "expected a name, found `}`", nullptr},

    // Strings.
    {"unterminated path", "policy \"x\" {\n  allow read \"/tmp/x\n  deny read /y\n}\n", 2, 14, 7,
     "unterminated string", "close it with `\"` on the same line; strings cannot span lines"},
    {"unterminated name", "policy \"x {\n  default deny\n}\n", 1, 8, 4, "unterminated string",
     "close it with `\"` on the same line; strings cannot span lines"},
    {"string ending in a backslash", "policy \"x\" {\n  allow read \"/a\\\n}\n", 2, 14, 4, "unterminated string",
     "close it with `\"` on the same line; strings cannot span lines"},
    {"unterminated string at end of file", "policy \"x\" { allow read \"/a", 1, 25, 3, "unterminated string",
     "close it with `\"` on the same line; strings cannot span lines"},
};

} // namespace

TEST_CASE("each syntax error is one located SyntaxError", "[parse][errors]")
{
    for (const auto& c : kSyntaxCases) {
        DYNAMIC_SECTION(c.what)
        {
            const Parsed p(c.text);
            CHECK_FALSE(p.module());
            const auto& d = p.only_diag();
            CHECK(d.kind == DiagKind::SyntaxError);
            CHECK(d.severity == Severity::Error);
            CHECK(d.message == c.message);
            check_loc(d.loc, c.line, c.column, c.length);
            if (c.hint) {
                REQUIRE(d.hints.size() == 1);
                CHECK(d.hints[0] == c.hint);
            } else {
                CHECK(d.hints.empty());
            }
        }
    }
}

TEST_CASE("10,000 nested braces end in one error", "[parse][errors][robustness]")
{
    const std::string braces(10'000, '{');
    const Parsed top(braces + "\n" + braces);
    CHECK(top.only_diag().message == "expected `policy` or end of file, found `{`");
    check_loc(top.only_diag().loc, 1, 1, 1);

    const Parsed inside("policy \"x\" {" + braces + std::string(10'000, '}'));
    CHECK(inside.only_diag().message == "expected a statement or `}`, found `{`");
    check_loc(inside.only_diag().loc, 1, 13, 1);

    std::string policies;
    for (int i = 0; i < 10'000; ++i)
        policies += "policy \"x\" {";
    const Parsed nested(policies);
    CHECK_FALSE(nested.module());
    CHECK(nested.diags().size() == 20);
}

TEST_CASE("`when` blocks nest 100 deep, and 10,000 are one error, not a crash", "[parse][errors][robustness]")
{
    const auto nested = [](int depth, const std::string& inside) {
        std::string text = "policy \"x\" {\n";
        for (int i = 0; i < depth; ++i)
            text += "when uid 0 {\n";
        return text + inside + std::string(static_cast<std::size_t>(depth), '}') + "\n}\n";
    };
    const Parsed deepest(nested(100, "allow read /deep\n"));
    REQUIRE(deepest.module());
    const auto* body = &deepest.body();
    for (int depth = 0; depth < 100; ++depth) {
        REQUIRE(body->size() == 1);
        body = &as<ast::WhenBlock>(body->front()).body;
    }
    REQUIRE(body->size() == 1);
    CHECK(target_as<ast::Text>(as<ast::PathRule>(body->front()).target).value == "/deep");

    for (const int depth : {101, 10'000}) {
        INFO("depth " << depth);
        const Parsed too_deep(nested(depth, "allow read /deep\n"));
        CHECK_FALSE(too_deep.module());
        const auto& d = too_deep.only_diag();
        CHECK(d.kind == DiagKind::SyntaxError);
        CHECK(d.message == "`when` blocks are nested more than 100 deep");
        check_loc(d.loc, 102, 1, 4); // the 101st `when`
        REQUIRE(d.hints.size() == 1);
        CHECK(d.hints[0].starts_with("one `when` can test several conditions"));
    }

    // An error before the limit is reported with it; the limit stops the parse without the
    // note that says syntax errors were cut short.
    const Parsed both(nested(10'000, "").insert(13, "allow /a\n"));
    CHECK_FALSE(both.module());
    INFO(both.rendered());
    REQUIRE(both.diags().size() == 2);
    check_loc(both.diags()[0].loc, 2, 7, 2);
    check_loc(both.diags()[1].loc, 103, 1, 4);
    CHECK(both.diags()[1].hints.size() == 1);
}

TEST_CASE("a syntax error renders with its source line and underline", "[parse][errors]")
{
    const Parsed p("policy \"demo\" {\n    default deny\n    allow /usr/lib/\n}\n", "demo.bwp");
    CHECK(p.render(p.only_diag()) ==
          "demo.bwp:3:11: error: expected the accesses to allow before the path, found `/usr/lib/` [BW1002]\n"
          "    3 |     allow /usr/lib/\n"
          "      |           ^^^^^^^^^\n"
          "      = hint: name them, e.g. `allow read, exec /usr/lib/`, or `allow all /usr/lib/`\n");

    const Parsed relative("policy \"demo\" {\n    default deny\n    allow read usr/lib\n}\n", "demo.bwp");
    CHECK(relative.render(relative.only_diag()) ==
          "demo.bwp:3:16: error: expected a path after `read`, found `usr/lib` [BW1002]\n"
          "    3 |     allow read usr/lib\n"
          "      |                ^^^^^^^\n"
          "      = hint: an unquoted path starts with `/`: did you mean `/usr/lib`?\n");
}

TEST_CASE("independent syntax errors are all reported, in source order", "[parse][errors]")
{
    const Parsed p("policy \"x\" {\n"
                   "  default deny;\n"
                   "  allow read /a /b\n"
                   "  deny read \"/tmp\n"
                   "  allow /ok\n"
                   "  syscalls allow read\n"
                   "}\n"
                   "}\n");
    CHECK_FALSE(p.module());
    INFO(p.rendered());
    REQUIRE(p.diags().size() == 5);
    check_loc(p.diags()[0].loc, 2, 11, 5);
    check_loc(p.diags()[1].loc, 3, 17, 2);
    check_loc(p.diags()[2].loc, 4, 13, 5);
    CHECK(p.diags()[2].message == "unterminated string");
    check_loc(p.diags()[3].loc, 5, 9, 3);
    CHECK(p.diags()[3].message == "expected the accesses to allow before the path, found `/ok`");
    check_loc(p.diags()[4].loc, 8, 1, 1);
}

TEST_CASE("syntax errors stop at 20", "[parse][errors]")
{
    std::string text = "policy \"x\" {\n";
    for (int i = 0; i < 100; ++i)
        text += "  allow read relative\n";
    text += "}\n";
    const Parsed p(text);
    CHECK_FALSE(p.module());
    REQUIRE(p.diags().size() == 20);
    check_loc(p.diags().back().loc, 21, 14, 8);
    CHECK(p.diags().back().hints.back() == "stopped after 20 syntax errors");
}

TEST_CASE("unknown escapes are reported at the backslash", "[parse][errors]")
{
    const Parsed p(R"(policy "x\y" { default deny allow read "/a\qb\éc" deny read "\n" let V = "\z" })");
    CHECK_FALSE(p.module());
    REQUIRE(p.diags().size() == 4);
    for (const auto& d : p.diags())
        CHECK(d.kind == DiagKind::BadStringEscape);
    CHECK(p.diags()[0].message == "unknown escape `\\y` in string");
    check_loc(p.diags()[0].loc, 1, 10, 2);
    CHECK(p.diags()[1].message == "unknown escape `\\q` in string");
    check_loc(p.diags()[1].loc, 1, 43, 2);
    CHECK(p.slice(p.diags()[1].loc) == "\\q");
    // A multi-byte character is named and underlined whole.
    CHECK(p.diags()[2].message == "unknown escape `\\é` in string");
    check_loc(p.diags()[2].loc, 1, 46, 3);
    CHECK(p.diags()[3].message == "unknown escape `\\z` in string");
    check_loc(p.diags()[3].loc, 1, 76, 2);

    const Parsed item(R"(policy "x" { set s = paths { "/ok", "/b\ad" } })");
    CHECK(item.only_diag().kind == DiagKind::BadStringEscape);
    check_loc(item.only_diag().loc, 1, 40, 2);
}

TEST_CASE("a NUL byte is located and stops parsing", "[parse][encoding]")
{
    using namespace std::string_literals;
    const Parsed p("policy \"x\" {\n  allow read /a\0b\n  allow nonsense\n}\n"s);
    CHECK_FALSE(p.module());
    const auto& d = p.only_diag();
    CHECK(d.kind == DiagKind::InvalidEncoding);
    CHECK(d.message == "file contains a NUL byte");
    check_loc(d.loc, 2, 16, 1);
    CHECK(d.hints.empty());

    const Parsed first("\0"s);
    check_loc(first.only_diag().loc, 1, 1, 1);
}

TEST_CASE("invalid UTF-8 is located at its first byte and stops parsing", "[parse][encoding]")
{
    struct Bad {
        std::string text;
        std::uint32_t line;
        std::uint32_t column;
        const char* message;
    };
    const Bad cases[] = {
        {"policy \"x\" {\n  allow read /\xff\n}\n", 2, 15, "invalid UTF-8 (byte 0xff)"},
        {"policy \"é\" {\n  allow read /日本/\x80\n}\n", 2, 22, "invalid UTF-8 (byte 0x80)"},
        {"# overlong slash \xc0\xaf\n", 1, 18, "invalid UTF-8 (byte 0xc0)"},
        {"# overlong \xe0\x80\xaf\n", 1, 12, "invalid UTF-8 (byte 0xe0)"},
        {"# surrogate \xed\xa0\x80\n", 1, 13, "invalid UTF-8 (byte 0xed)"},
        {"# above U+10FFFF \xf4\x90\x80\x80\n", 1, 18, "invalid UTF-8 (byte 0xf4)"},
        {"# cut short \xe6\x97\n", 1, 13, "invalid UTF-8 (byte 0xe6)"},
        {"# cut short at the end \xf0\x9f\x98", 1, 24, "invalid UTF-8 (byte 0xf0)"},
    };
    for (const auto& c : cases) {
        INFO(c.message << " at " << c.line << ":" << c.column);
        const Parsed p(c.text);
        CHECK_FALSE(p.module());
        const auto& d = p.only_diag();
        CHECK(d.kind == DiagKind::InvalidEncoding);
        CHECK(d.message == c.message);
        check_loc(d.loc, c.line, c.column, 1);
        CHECK(d.hints == std::vector<std::string>{"policy files are UTF-8"});
    }

    const Parsed emoji("policy \"\xf0\x9f\x90\x9d\" { default deny description \"\xf0\x9f\x90\x9d\" }");
    REQUIRE(emoji.module());
    CHECK(emoji.policy().name == "\xf0\x9f\x90\x9d");
    check_loc(as<ast::Metadata>(emoji.body().at(1)).value.loc, 1, 42, 6);
}

TEST_CASE("10 MB of garbage ends in a few errors, not an exception", "[parse][robustness]")
{
    std::mt19937 rng(42);
    const std::vector<std::string> pieces = {
        "policy", "default", "allow", "deny", "audit", "read", "all", "syscalls", "net", "tcp", "device",
        "char", "ioctl", "when", "uid", "and", "let", "set", "paths", "action", "errno", "kill", " ",
        "/", "{", "}", "(", ")", "\"", "#", "\\", "\n", "\t", ";", "*", "?", "[", "]", ",", ".", "-",
        "_", "\r", "=", "@", "$", "${", "x"};
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
    std::string text;
    text.reserve(10'000'100);
    while (text.size() < 10'000'000)
        text += pieces[pick(rng)];
    const Parsed p(std::move(text));
    CHECK_FALSE(p.module());
    CHECK_FALSE(p.diags().empty());
    CHECK(p.diags().size() <= 20);
    for (const auto& d : p.diags())
        CHECK(d.kind == DiagKind::SyntaxError);
}

TEST_CASE("one 10 MB token is quoted short", "[parse][robustness]")
{
    const Parsed p(std::string(10'000'000, 'x'));
    const auto& d = p.only_diag();
    CHECK(d.message == "expected `policy` or end of file, found `" + std::string(40, 'x') + "...`");
    check_loc(d.loc, 1, 1, 10'000'000);

    // Cut at a character boundary: the message stays valid UTF-8.
    std::string accented = "x";
    for (int i = 0; i < 100; ++i)
        accented += "é";
    const Parsed cut("policy \"x\" { allow read " + accented + " }");
    CHECK(cut.only_diag().message == "expected a path after `read`, found `x" + accented.substr(1, 38) + "...`");
}

TEST_CASE("a very long line parses with exact columns", "[parse][robustness]")
{
    std::string text = "policy \"x\" { default deny";
    for (int i = 0; i < 50'000; ++i)
        text += " allow read /p" + std::to_string(i) + "/é";
    const auto last_column = static_cast<std::uint32_t>(text.size() - std::string("/p49999/é").size() + 1);
    text += " }";
    const Parsed p(std::move(text));
    REQUIRE(p.module());
    REQUIRE(p.body().size() == 50'001);
    const auto& last = target_as<ast::Text>(as<ast::PathRule>(p.body().back()).target);
    CHECK(last.value == "/p49999/é");
    check_loc(last.loc, 1, last_column, 10);
}

namespace {

// The header format of tests/policies (see test_policy_files.cc): `# expect: error BW1002 5:11`.
std::multiset<std::string> expectations(const std::string& text)
{
    std::multiset<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.starts_with("# expect: "))
            out.insert(line.substr(10));
    }
    return out;
}

} // namespace

// The whole pipeline runs these too; here they check that the parse stage alone finds the errors.
TEST_CASE("the syntax test files fail as their header says", "[parse][files]")
{
    const auto dir = std::filesystem::path(BW_TEST_POLICIES_DIR) / "syntax";
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".bwp")
            continue;
        ++files;
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream buffer;
        buffer << in.rdbuf();
        const auto expected = expectations(buffer.str());
        const Parsed p(buffer.str(), entry.path().filename().string());
        std::multiset<std::string> actual;
        for (const auto& d : p.diags())
            actual.insert(fmt::format("error {} {}:{}", diag_code(d.kind), d.loc.line, d.loc.column));
        INFO(entry.path().filename().string() << "\n" << p.rendered());
        CHECK_FALSE(expected.empty());
        CHECK(actual == expected);
        CHECK_FALSE(p.module());
    }
    CHECK(files >= 6);
}
