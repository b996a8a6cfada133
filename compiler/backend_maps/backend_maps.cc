#include "backend_maps/backend_maps.h"

#include <algorithm>
#include <fmt/format.h>

namespace bw {

namespace {

// A chain link with its conditions; a condition that is absent holds for every value.
bw_link link(const Automaton& a, const Link& l)
{
    auto out = condition_link(a, a.conditions[l.conditions]);
    out.rule = l.rule;
    out.decision = l.decision;
    out.last = l.conditions == 0;
    out.kinds = l.kinds;
    return out;
}

} // namespace

MapTables run_backend_maps(const ir::Policy& policy, const Automaton& automaton)
{
    MapTables t;
    t.sandbox.nclasses = automaton.nclasses;
    t.sandbox.nstates = automaton.nstates;
    t.sandbox.default_decision = static_cast<std::uint32_t>(policy.path_default.decision);
    t.sandbox.default_rule = policy.path_default.id;
    std::copy(automaton.classes.begin(), automaton.classes.end(), t.sandbox.classes);
    t.sandbox.invariants = policy.invariants();
    t.sandbox.audits = policy.audits.empty() ? 0 : 1;
    t.trans.reserve(automaton.trans.size());
    for (const auto next : automaton.trans)
        t.trans.push_back(automaton.accepts[next].absorbing ? next | BW_ABSORBING : next);
    t.accepts.reserve(automaton.accepts.size());
    for (const auto& a : automaton.accepts) {
        bw_accept out{};
        std::copy(a.rule.begin(), a.rule.end(), out.rule);
        std::copy(a.decision.begin(), a.decision.end(), out.decision);
        out.exe = a.exe;
        out.audit = a.audit;
        out.devices = a.devices;
        t.accepts.push_back(out);
    }
    t.links.reserve(automaton.links.size());
    for (const auto& l : automaton.links)
        t.links.push_back(link(automaton, l));
    t.net = run_net(policy, automaton);
    t.devices = run_devices(policy, automaton);
    t.syscalls = live_syscall_table(run_compile_syscall_bitmap(policy, syscalls::kHostArch));
    return t;
}

artifact::KernelRequirements kernel_requirements()
{
    return {
        "5.17",
        "the newest release below; verified on Debian's 6.1 and 6.12 kernels",
        {
            {"BPF LSM", "5.7",
             "the program is an LSM program on file_open: CONFIG_BPF_LSM=y and `bpf` in the active LSM list "
             "(lsm= on the kernel command line)"},
            {"kernel BTF", "5.4",
             "/sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF): the LSM program attaches by the hook's BTF id, and "
             "its reads of struct file are CO-RE relocations"},
            {"cgroup v2 ids", "4.18", "sandboxes are keyed by the current task's cgroup id (bpf_get_current_cgroup_id)"},
            {"sleepable LSM programs, bpf_d_path", "5.11",
             "file_open is sleepable (lsm.s/) and resolves the opened file's path with bpf_d_path"},
            {"BPF ring buffer", "5.8", "denials go to the sandbox's ring buffer, which its bwrun reads"},
            {"hash-of-maps in sleepable programs", "5.12",
             "each sandbox's transition and decision arrays and its ring buffer are inner maps of hash-of-maps "
             "keyed by cgroup id, looked up from the sleepable file_open"},
            {"task local storage in sleepable programs", "5.17",
             "the 4 KiB path buffer is task storage (bpf_task_storage_get on bpf_get_current_task_btf); the map "
             "type is from 5.11, its use from a sleepable program from 5.17"},
            {"bpf_loop", "5.17", "the path is walked through the automaton one byte per bpf_loop step"},
            {"bpf_task_pt_regs", "5.15",
             "the live syscall programs read the current syscall's number from the task's saved registers"},
        },
    };
}

std::string dump(const MapTables& t)
{
    return fmt::format("map bw_sandboxes: 1 entry (nclasses={}, nstates={}, default={} rule #{}, invariants={})\n"
                       "map bw_trans:     {} entries of 4 bytes\n"
                       "map bw_accepts:   {} entries of {} bytes\n"
                       "map bw_links:     {} entries of {} bytes\n",
                       t.sandbox.nclasses, t.sandbox.nstates,
                       t.sandbox.default_decision == BW_DECISION_ALLOW ? "allow" : "deny",
                       t.sandbox.default_rule, ir::invariant_names(t.sandbox.invariants), t.trans.size(),
                       t.accepts.size(), sizeof(bw_accept), t.links.size(), sizeof(bw_link)) +
           dump(t.net) + dump(t.devices) +
           fmt::format("map bw_syscalls:  {} live syscalls denied\n", t.syscalls.denied);
}

} // namespace bw
