// The seccomp stage against the reference evaluator: a classic-BPF interpreter runs each filter on every
// syscall number of both architectures, and its answer must be what ir::evaluate_syscall decides (with the
// LSM-covered syscalls always allowed). Also the shape: architecture check first, x32 killed, a tree whose depth
// grows with the log of the number of ranges, jumps that land inside the program.
#include "helpers.h"
#include "seccomp/seccomp.h"
#include "syscall_bitmap/syscall_bitmap.h"
#include "syscalls/syscalls.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <stdexcept>

using namespace bw;

namespace {

constexpr std::uint32_t kX32Bit = 0x40000000;

struct Outcome {
    std::uint32_t ret;
    int conditional_jumps;
};

// Exactly the instructions the stage may emit; anything else, or a jump out of the program, throws.
Outcome run_filter(const SeccompProgram& program, std::uint32_t arch, std::uint32_t nr)
{
    seccomp_data data{};
    data.nr = static_cast<int>(nr);
    data.arch = arch;
    std::uint32_t acc = 0;
    int conditional = 0;
    std::size_t pc = 0;
    while (pc < program.code.size()) {
        const auto& insn = program.code[pc];
        auto branch = [&](bool taken) {
            ++conditional;
            pc += 1 + (taken ? insn.jt : insn.jf);
        };
        switch (insn.code) {
        case BPF_LD | BPF_W | BPF_ABS:
            if (insn.k % 4 != 0 || insn.k + 4 > sizeof data)
                throw std::runtime_error("load outside seccomp_data");
            std::memcpy(&acc, reinterpret_cast<const unsigned char*>(&data) + insn.k, 4);
            ++pc;
            break;
        case BPF_JMP | BPF_JA:
            pc += 1 + insn.k;
            break;
        case BPF_JMP | BPF_JEQ | BPF_K:
            branch(acc == insn.k);
            break;
        case BPF_JMP | BPF_JGE | BPF_K:
            branch(acc >= insn.k);
            break;
        case BPF_JMP | BPF_JGT | BPF_K:
            branch(acc > insn.k);
            break;
        case BPF_JMP | BPF_JSET | BPF_K:
            branch((acc & insn.k) != 0);
            break;
        case BPF_RET | BPF_K:
            return {insn.k, conditional};
        default:
            throw std::runtime_error(fmt::format("unexpected instruction {:#x} at {}", insn.code, pc));
        }
    }
    throw std::runtime_error("ran off the end of the program");
}

// What the kernel checks at load time, for the instructions we emit: every jump lands inside the program and
// the last instruction returns.
bool jumps_valid(const SeccompProgram& program)
{
    const auto size = program.code.size();
    for (std::size_t pc = 0; pc < size; ++pc) {
        const auto& insn = program.code[pc];
        if (BPF_CLASS(insn.code) != BPF_JMP)
            continue;
        if (BPF_OP(insn.code) == BPF_JA ? pc + 1 + insn.k >= size
                                        : pc + 1 + insn.jt >= size || pc + 1 + insn.jf >= size)
            return false;
    }
    return size > 0 && program.code.back().code == (BPF_RET | BPF_K);
}

std::uint32_t action_ret(ir::Decision decision, const ir::SyscallAction& action)
{
    if (decision == ir::Decision::Allow)
        return SECCOMP_RET_ALLOW;
    if (action.kind == ir::SyscallAction::Kind::Kill)
        return SECCOMP_RET_KILL_PROCESS;
    return SECCOMP_RET_ERRNO | static_cast<std::uint32_t>(action.errno_value);
}

std::map<std::uint32_t, std::string_view> numbers(SeccompArch arch)
{
    const auto a = arch == SeccompArch::X86_64 ? syscalls::Arch::X86_64 : syscalls::Arch::Aarch64;
    std::map<std::uint32_t, std::string_view> out;
    for (const auto& s : syscalls::all()) {
        if (const auto nr = syscalls::number(s, a))
            out[static_cast<std::uint32_t>(*nr)] = s.name;
    }
    return out;
}

// The oracle: evaluate_syscall for the syscall with this number, ALLOW where an LSM hook enforces it instead.
std::uint32_t expected(const ir::Policy& policy, SeccompArch arch, const std::map<std::uint32_t, std::string_view>& names,
                       std::uint32_t nr)
{
    if (arch == SeccompArch::X86_64 && nr >= kX32Bit)
        return SECCOMP_RET_KILL_PROCESS;
    const auto it = names.find(nr);
    if (it == names.end())
        return action_ret(policy.syscall_default.decision, policy.syscall_default_action);
    if (!syscalls::live_hook(it->second).empty())
        return SECCOMP_RET_ALLOW;
    const auto v = ir::evaluate_syscall(policy, it->second);
    return action_ret(v.decision, v.action);
}

int ceil_log2(std::size_t x)
{
    int bits = 0;
    while ((std::size_t{1} << bits) < x)
        ++bits;
    return bits;
}

struct Stats {
    std::size_t max_instructions = 0;
    int max_depth = 0;
    std::size_t max_ranges = 0;
};

// Runs the filter on every number up to the largest syscall plus 10 and on a few huge ones, against the oracle;
// checks a wrong architecture, x32, the depth bound, the size and the jumps.
void check_against_oracle(const ir::Policy& policy, SeccompArch arch, Stats& stats)
{
    const auto names = numbers(arch);
    SourceManager sources;
    Diagnostics diags(sources);
    const auto program = run_compile_seccomp(policy, arch, diags);
    REQUIRE(program);
    REQUIRE(program->arch == arch);
    REQUIRE(program->code.size() <= BPF_MAXINSNS);
    REQUIRE(jumps_valid(*program));

    const std::uint32_t default_ret = action_ret(policy.syscall_default.decision, policy.syscall_default_action);
    const std::uint32_t last = names.rbegin()->first + 10;
    std::vector<std::uint32_t> inputs;
    for (std::uint32_t nr = 0; nr <= last; ++nr)
        inputs.push_back(nr);
    for (const std::uint32_t huge : {last + 1000, 0x3fffffffu, kX32Bit, kX32Bit | 1u, kX32Bit | 59u, 0x7fffffffu,
                                     0x80000000u, 0xfffffffeu, 0xffffffffu})
        inputs.push_back(huge);

    // Ranges of consecutive numbers whose action differs from the default, as the bound counts them.
    std::size_t ranges = 0;
    std::uint32_t previous = default_ret;
    int depth = 0;
    for (const auto nr : inputs) {
        const auto want = expected(policy, arch, names, nr);
        const auto got = run_filter(*program, audit_arch(arch), nr);
        if (got.ret != want) {
            INFO("arch " << to_string(arch) << " nr " << nr << " got " << got.ret << " want " << want);
            INFO(disassemble(*program));
            REQUIRE(got.ret == want);
        }
        if (nr <= last) {
            if (want != default_ret && want != previous)
                ++ranges;
            previous = want;
            depth = std::max(depth, got.conditional_jumps);
        }
    }
    CHECK(depth <= 2 * ceil_log2(ranges + 1) + 4);

    // Any other architecture is killed before the number is looked at.
    const std::uint32_t other_arch = arch == SeccompArch::X86_64 ? AUDIT_ARCH_AARCH64 : AUDIT_ARCH_X86_64;
    for (const std::uint32_t other : std::vector<std::uint32_t>{0, AUDIT_ARCH_I386, AUDIT_ARCH_ARM, other_arch}) {
        for (const std::uint32_t nr : {0u, 59u, 221u, kX32Bit | 59u})
            REQUIRE(run_filter(*program, other, nr).ret == SECCOMP_RET_KILL_PROCESS);
    }
    stats.max_instructions = std::max(stats.max_instructions, program->code.size());
    stats.max_depth = std::max(stats.max_depth, depth);
    stats.max_ranges = std::max(stats.max_ranges, ranges);
}

ir::SyscallAction random_action(std::mt19937& rng)
{
    ir::SyscallAction a;
    switch (rng() % 5) {
    case 0:
        a.kind = ir::SyscallAction::Kind::Kill;
        break;
    case 1:
        a.errno_value = 38; // ENOSYS
        break;
    case 2:
        a.errno_value = static_cast<int>(1 + rng() % 4095);
        break;
    default:
        a.errno_value = 1; // EPERM
    }
    return a;
}

ir::Policy random_policy(std::mt19937& rng)
{
    ir::Policy p;
    p.syscall_default = {rng() % 2 ? ir::Decision::Allow : ir::Decision::Deny, ir::kSyscallDefaultRuleId, {}};
    p.syscall_default_action = random_action(rng);
    const auto all = syscalls::all();
    const auto groups = syscalls::groups();
    // Mostly a few rules, sometimes hundreds, for trees deep enough to need trampolines.
    const std::size_t count = rng() % 4 == 0 ? rng() % 400 : rng() % 30;
    ir::RuleId id = ir::kFirstRuleId;
    for (std::size_t i = 0; i < count; ++i) {
        const auto decision = rng() % 3 == 0 ? ir::Decision::Allow : ir::Decision::Deny;
        const auto action = decision == ir::Decision::Deny ? random_action(rng) : ir::SyscallAction{};
        if (rng() % 8 == 0) {
            for (const auto member : syscalls::expand_group(groups[rng() % groups.size()]))
                p.syscalls.push_back({id++, decision, std::string(member), true, action, {}});
        } else {
            p.syscalls.push_back({id++, decision, std::string(all[rng() % all.size()].name), false, action, {}});
        }
    }
    return p;
}

// Default allow, and every syscall of `arch` that only seccomp can deny denied with an errno differing from that
// of the previous one in number order: one range per syscall, the most a filter can have.
ir::Policy alternating_policy(SeccompArch arch)
{
    ir::Policy p;
    p.syscall_default = {ir::Decision::Allow, ir::kSyscallDefaultRuleId, {}};
    ir::RuleId id = ir::kFirstRuleId;
    for (const auto& [nr, name] : numbers(arch)) {
        if (!syscalls::live_hook(name).empty())
            continue;
        ir::SyscallAction a;
        a.errno_value = 1 + static_cast<int>(id % 2);
        p.syscalls.push_back({id++, ir::Decision::Deny, std::string(name), false, a, {}});
    }
    return p;
}

} // namespace

TEST_CASE("seccomp filters decide as the reference evaluator, on both architectures")
{
    std::mt19937 rng(20261202);
    Stats stats;
    for (int i = 0; i < 600; ++i) {
        const auto policy = random_policy(rng);
        check_against_oracle(policy, SeccompArch::X86_64, stats);
        check_against_oracle(policy, SeccompArch::Aarch64, stats);
    }
    WARN("600 random policies: up to " << stats.max_instructions << " instructions, " << stats.max_ranges
                                      << " ranges, " << stats.max_depth << " conditional jumps deep");
}

TEST_CASE("a filter with one range per syscall keeps its jumps in range and its depth logarithmic")
{
    for (const auto arch : {SeccompArch::X86_64, SeccompArch::Aarch64}) {
        const auto policy = alternating_policy(arch);
        Stats stats;
        check_against_oracle(policy, arch, stats);
        SourceManager sources;
        Diagnostics diags(sources);
        const auto program = run_compile_seccomp(policy, arch, diags);
        REQUIRE(program);
        // Lower halves longer than an 8-bit offset were jumped over by trampolines.
        CHECK(std::any_of(program->code.begin(), program->code.end(),
                          [](const sock_filter& insn) { return insn.code == (BPF_JMP | BPF_JA); }));
        CHECK(stats.max_ranges == policy.syscalls.size());
        CHECK(stats.max_depth <= ceil_log2(2 * stats.max_ranges + 1) + 2);
        WARN(to_string(arch) << ": " << stats.max_ranges << " ranges, " << program->code.size() << " instructions, "
                             << stats.max_depth << " conditional jumps deep");
    }
}

TEST_CASE("seccomp decides every syscall that no hook of ours checks live, even one an LSM hook could cover")
{
    ir::Policy policy;
    policy.syscall_default = {ir::Decision::Deny, ir::kSyscallDefaultRuleId, {}};
    policy.syscall_default_action.kind = ir::SyscallAction::Kind::Kill;
    const auto names = numbers(SeccompArch::X86_64);
    const auto nr_of = [&](std::string_view name) {
        return std::find_if(names.begin(), names.end(), [&](const auto& e) { return e.second == name; })->first;
    };
    SourceManager sources;
    Diagnostics diags(sources);
    const auto program = run_compile_seccomp(policy, SeccompArch::X86_64, diags);
    REQUIRE(program);
    for (const auto name : {"kill", "mount", "personality"}) {
        INFO(name);
        const auto ret = run_filter(*program, AUDIT_ARCH_X86_64, nr_of(name)).ret;
        CHECK(ret == (syscalls::live_hook(name).empty() ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ALLOW));
    }
    CHECK_FALSE(syscalls::lsm_hook("kill").empty());
    CHECK(syscalls::live_hook("personality").empty());
}

TEST_CASE("live syscall bitmaps hold exactly the syscalls our hooks check, decided as the reference evaluator")
{
    std::mt19937 rng(4242);
    std::size_t denied = 0, allowed = 0;
    for (int round = 0; round < 300; ++round) {
        const auto policy = random_policy(rng);
        for (const auto arch : {syscalls::Arch::X86_64, syscalls::Arch::Aarch64}) {
            const auto bitmap = run_compile_syscall_bitmap(policy, arch);
            std::size_t covered = 0;
            for (const auto& s : syscalls::all()) {
                const auto nr = syscalls::number(s, arch);
                if (!nr)
                    continue;
                const auto n = static_cast<std::size_t>(*nr);
                REQUIRE(n < SyscallBitmap::kBits);
                INFO(s.name);
                if (syscalls::live_hook(s.name).empty()) {
                    CHECK_FALSE(bitmap.covered.test(n));
                    CHECK_FALSE(bitmap.denied.test(n));
                    continue;
                }
                ++covered;
                const auto v = ir::evaluate_syscall(policy, s.name);
                REQUIRE(bitmap.covered.test(n));
                REQUIRE(bitmap.denied.test(n) == (v.decision == ir::Decision::Deny));
                const auto it = std::find_if(bitmap.syscalls.begin(), bitmap.syscalls.end(),
                                             [&](const LiveSyscall& l) { return l.number == n; });
                REQUIRE(it != bitmap.syscalls.end());
                CHECK(it->rule == v.rule);
                CHECK(it->action == v.action);
                (v.decision == ir::Decision::Deny ? denied : allowed) += 1;
            }
            CHECK(bitmap.covered.count() == covered);
        }
        // The table the LSM programs read, on this machine: what hooks/syscalls.bpf.h returns for each number.
        const auto table = live_syscall_table(run_compile_syscall_bitmap(policy, syscalls::kHostArch));
        std::uint32_t table_denied = 0;
        for (int n = 0; n < BW_SYSCALL_NUMBERS; ++n) {
            const auto& entry = table.numbers[n];
            const auto* s = syscalls::by_number(n, syscalls::kHostArch);
            if (s == nullptr || syscalls::live_hook(s->name).empty()) {
                CHECK(entry.decision == BW_DECISION_NONE);
                continue;
            }
            INFO(s->name);
            const auto v = ir::evaluate_syscall(policy, s->name);
            const bool deny = v.decision == ir::Decision::Deny;
            CHECK(entry.decision == (deny ? BW_DECISION_DENY : BW_DECISION_ALLOW));
            CHECK(entry.rule == v.rule);
            table_denied += deny ? 1 : 0;
            if (deny) {
                CHECK(entry.kill == (v.action.kind == ir::SyscallAction::Kind::Kill ? 1 : 0));
                if (v.action.kind == ir::SyscallAction::Kind::Errno)
                    CHECK(entry.error == v.action.errno_value);
            }
        }
        CHECK(table.denied == table_denied);
    }
    CHECK(denied > 1000);
    CHECK(allowed > 1000);
}

TEST_CASE("the live syscall hooks the BPF programs attach are those the compiler counts on")
{
    std::ifstream in(std::string(BW_SOURCE_DIR) + "/bpf-templates/hooks/syscalls.bpf.h");
    REQUIRE(in);
    std::set<std::string> attached;
    const std::regex hook(R"(^BW_LIVE_SYSCALL_HOOK\((\w+)\)$)");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_match(line, m, hook))
            attached.insert(m[1]);
    }
    const std::set<std::string> expected(syscalls::live_hooks().begin(), syscalls::live_hooks().end());
    CHECK(attached == expected);
    // Each hook makes some syscall live, and a live syscall is one of the kernel's every-call hooks.
    for (const auto& h : expected) {
        INFO(h);
        CHECK(std::ranges::any_of(syscalls::all(), [&](const auto& s) { return syscalls::live_hook(s.name) == h; }));
    }
}

TEST_CASE("a filter over the size limit is refused")
{
    const auto policy = alternating_policy(SeccompArch::Aarch64);
    SourceManager sources;
    Diagnostics diags(sources);
    CHECK_FALSE(run_compile_seccomp(policy, SeccompArch::Aarch64, diags, 100));
    REQUIRE(diags.all().size() == 1);
    CHECK(diags.all().front().kind == DiagKind::SeccompTooLarge);
}

TEST_CASE("the disassembly names syscalls, actions and jump targets")
{
    ir::Policy policy;
    policy.syscall_default = {ir::Decision::Allow, ir::kSyscallDefaultRuleId, {}};
    ir::SyscallAction kill;
    kill.kind = ir::SyscallAction::Kind::Kill;
    policy.syscalls.push_back({ir::kFirstRuleId, ir::Decision::Deny, "personality", false, {}, {}});
    policy.syscalls.push_back({ir::kFirstRuleId + 1, ir::Decision::Deny, "reboot", false, kill, {}});
    SourceManager sources;
    Diagnostics diags(sources);
    const auto program = run_compile_seccomp(policy, SeccompArch::X86_64, diags);
    REQUIRE(program);
    const auto text = disassemble(*program);
    CHECK(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) == program->code.size() + 1);
    for (const char* part : {"ld arch", "AUDIT_ARCH_X86_64", "__X32_SYSCALL_BIT", "ld nr", "(personality)",
                             "(reboot)", "ret ALLOW", "ret ERRNO(1) EPERM", "ret KILL_PROCESS"})
        CHECK_THAT(text, Catch::Contains(part));
}

TEST_CASE("bwc --emit=seccomp prints both architectures' filters before the kernel-side stages")
{
    test::TempDir dir;
    const auto path = dir.write("p.bwp", "policy \"p\" {\n    default allow\n    syscalls deny personality\n}\n");
    auto options = test::test_options();
    options.emit = Emit::Seccomp;
    Compilation c;
    std::string dump;
    CHECK_FALSE(run_pipeline(path, c, options, dump));
    CHECK_FALSE(c.diags.has_errors());
    const auto x86 = dump.find("seccomp filter for x86_64");
    const auto arm = dump.find("seccomp filter for aarch64");
    REQUIRE(x86 != std::string::npos);
    REQUIRE(arm != std::string::npos);
    CHECK(x86 < arm);
    CHECK_THAT(dump, Catch::Contains("(personality)"));
    CHECK_THAT(dump, Catch::Contains("live syscalls, x86_64: "));
    CHECK_THAT(dump, Catch::Contains("live syscalls, aarch64: "));
}
