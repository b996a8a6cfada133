// The syscall tables generated from the kernel headers, the groups built on them, LSM coverage, errno names and
// did-you-mean hints.
#include "syscalls/syscalls.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

using namespace bw;
using syscalls::Arch;

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name)
{
    return std::ranges::find(names, name) != names.end();
}

} // namespace

TEST_CASE("syscall numbers come from each architecture's table")
{
    const struct {
        std::string_view name;
        int x86_64;
        int aarch64;
    } expected[] = {
        {"read", 0, 63},
        {"openat", 257, 56},
        {"clone3", 435, 435},
        {"newfstatat", 262, 79}, // __NR3264_fstatat on aarch64
        {"fcntl", 72, 25},       // __NR3264_fcntl
        {"mmap", 9, 222},        // __NR3264_mmap
        {"open", 2, -1},
        {"arch_prctl", 158, -1},
    };
    for (const auto& e : expected) {
        INFO(e.name);
        const auto* s = syscalls::find(e.name);
        REQUIRE(s != nullptr);
        CHECK(s->x86_64 == e.x86_64);
        CHECK(s->aarch64 == e.aarch64);
    }
    const auto* open = syscalls::find("open");
    REQUIRE(open != nullptr);
    CHECK(syscalls::number(*open, Arch::X86_64) == 2);
    CHECK_FALSE(syscalls::number(*open, Arch::Aarch64).has_value());
    CHECK(syscalls::find("no_such_syscall") == nullptr);
    // Bookkeeping macros of the generic table are not syscalls.
    CHECK(syscalls::find("syscalls") == nullptr);
    CHECK(syscalls::find("arch_specific_syscall") == nullptr);
}

TEST_CASE("the table is the sorted union of both architectures")
{
    const auto table = syscalls::all();
    CHECK(std::ranges::is_sorted(table, {}, &syscalls::Syscall::name));
    CHECK(std::ranges::adjacent_find(table, {}, &syscalls::Syscall::name) == table.end());

    std::size_t x86_64 = 0, aarch64 = 0;
    for (const auto& s : table) {
        INFO(s.name);
        CHECK((s.x86_64 >= 0 || s.aarch64 >= 0));
        x86_64 += s.x86_64 >= 0 ? 1 : 0;
        aarch64 += s.aarch64 >= 0 ? 1 : 0;
    }
    // Linux 6.1 has ~360 x86_64 and ~300 aarch64 syscalls; far fewer means the generator lost some.
    CHECK(x86_64 > 330);
    CHECK(aarch64 > 280);
}

TEST_CASE("every group member is a known syscall")
{
    for (const auto& group : syscalls::groups()) {
        for (const auto member : group.members) {
            INFO("@" << group.name << ": " << member);
            if (member.starts_with('@'))
                CHECK(syscalls::find_group(member) != nullptr);
            else
                CHECK(syscalls::find(member) != nullptr);
        }
        for (const auto name : syscalls::expand_group(group)) {
            INFO("@" << group.name << " expands to " << name);
            CHECK(syscalls::find(name) != nullptr);
        }
    }
}

TEST_CASE("the systemd-style groups exist")
{
    for (const auto* name : {"mount", "module", "privileged", "network-io", "process", "ipc", "raw-io", "reboot",
                             "swap", "clock", "debug", "obsolete", "cpu-emulation", "keyring", "file-system",
                             "signal", "resources", "setuid", "timer", "memlock", "aio", "basic-io", "chown",
                             "sync"}) {
        INFO(name);
        const auto* group = syscalls::find_group(name);
        REQUIRE(group != nullptr);
        CHECK_FALSE(group->description.empty());
        CHECK_FALSE(syscalls::expand_group(*group).empty());
    }
}

TEST_CASE("find_group accepts the name with or without '@'")
{
    const auto* plain = syscalls::find_group("mount");
    REQUIRE(plain != nullptr);
    CHECK(plain->name == "mount");
    CHECK(syscalls::find_group("@mount") == plain);
    CHECK(syscalls::find_group("@no-such-group") == nullptr);
    CHECK(syscalls::find_group("") == nullptr);
}

TEST_CASE("expand_group follows nested groups and keeps each syscall once")
{
    const auto* privileged = syscalls::find_group("@privileged");
    const auto* mount = syscalls::find_group("@mount");
    const auto* chown = syscalls::find_group("@chown");
    REQUIRE(privileged != nullptr);
    REQUIRE(mount != nullptr);
    REQUIRE(chown != nullptr);

    const auto expanded = syscalls::expand_group(*privileged);
    CHECK(std::ranges::is_sorted(expanded));
    CHECK(std::ranges::adjacent_find(expanded) == expanded.end());
    for (const auto* nested : {mount, chown}) {
        for (const auto name : syscalls::expand_group(*nested)) {
            INFO(name);
            CHECK(std::ranges::binary_search(expanded, name));
        }
    }
    // chroot and pivot_root are listed both directly and through @mount.
    CHECK(std::ranges::count(expanded, std::string_view("chroot")) == 1);
    CHECK(std::ranges::count(expanded, std::string_view("pivot_root")) == 1);
    // Group names never leak into the expansion.
    CHECK(std::ranges::none_of(expanded, [](std::string_view n) { return n.starts_with('@'); }));
}

TEST_CASE("lsm_hook names the hook that can deny a syscall live")
{
    CHECK(syscalls::lsm_hook("kill") == "task_kill");
    CHECK(syscalls::lsm_hook("tkill") == "task_kill");
    CHECK(syscalls::lsm_hook("tgkill") == "task_kill");
    CHECK(syscalls::lsm_hook("mount") == "sb_mount");
    CHECK(syscalls::lsm_hook("umount2") == "sb_umount");
    CHECK(syscalls::lsm_hook("bpf") == "bpf");
    CHECK(syscalls::lsm_hook("init_module") == "kernel_load_data");
    CHECK(syscalls::lsm_hook("finit_module") == "kernel_read_file");
    CHECK(syscalls::lsm_hook("socket") == "socket_create");
    CHECK(syscalls::lsm_hook("ioctl") == "file_ioctl");
    CHECK(syscalls::lsm_hook("setuid") == "task_fix_setuid");

    CHECK(syscalls::lsm_hook("read").empty());
    CHECK(syscalls::lsm_hook("no_such_syscall").empty());
    // Paths around the hooks keep these out (see the table in syscalls.cc).
    for (const auto* name : {"ptrace", "rt_sigqueueinfo", "pidfd_send_signal", "openat", "unlinkat",
                             "clock_settime", "kexec_file_load", "ftruncate", "setfsuid", "prlimit64"}) {
        INFO(name);
        CHECK(syscalls::lsm_hook(name).empty());
    }
}

TEST_CASE("errno names map to the generic numbers")
{
    CHECK(syscalls::errno_value("EPERM") == 1);
    CHECK(syscalls::errno_value("ENOENT") == 2);
    CHECK(syscalls::errno_value("EHWPOISON") == 133);
    CHECK(syscalls::errno_value("EWOULDBLOCK") == 11);
    CHECK_FALSE(syscalls::errno_value("EBOGUS").has_value());
    CHECK_FALSE(syscalls::errno_value("eperm").has_value());

    CHECK(syscalls::errno_name(1) == "EPERM");
    CHECK(syscalls::errno_name(11) == "EAGAIN");
    CHECK(syscalls::errno_name(35) == "EDEADLK");
    CHECK(syscalls::errno_name(0).empty());
    CHECK(syscalls::errno_name(100000).empty());
}

TEST_CASE("suggestions for misspelt syscalls and groups")
{
    CHECK(contains(syscalls::suggest_syscall("opnat"), "openat"));
    CHECK(syscalls::suggest_syscall("opneat").front() == "openat"); // one transposition
    CHECK(syscalls::suggest_syscall("OPENAT").front() == "openat");
    CHECK(syscalls::suggest_syscall("xqzzyvw").empty());
    CHECK(syscalls::suggest_syscall("setuidd").size() <= 3);

    CHECK(contains(syscalls::suggest_group("@mont"), "@mount"));
    CHECK(contains(syscalls::suggest_group("mont"), "@mount"));
    CHECK(syscalls::suggest_group("@netwrok-io").front() == "@network-io");
    CHECK(syscalls::suggest_group("@zzzzzz").empty());
}
