// The layouts the BPF programs and user space share. A change here is an ABI change:
// bump BW_ABI_VERSION in bpf-templates/bumblewrap.h with it.
#include "bumblewrap.h"
#include "ir/ir.h"

#include <cstddef>

static_assert(BW_ABI_VERSION == 15);
static_assert(sizeof(bw_sandbox) == 312);
static_assert(offsetof(bw_sandbox, id) == 0);
static_assert(offsetof(bw_sandbox, nclasses) == 8);
static_assert(offsetof(bw_sandbox, nstates) == 12);
static_assert(offsetof(bw_sandbox, default_decision) == 16);
static_assert(offsetof(bw_sandbox, default_rule) == 20);
static_assert(offsetof(bw_sandbox, classes) == 24);
static_assert(offsetof(bw_sandbox, invariants) == 280);
static_assert(offsetof(bw_sandbox, audits) == 284);
static_assert(offsetof(bw_sandbox, mnt_ns) == 288);
static_assert(offsetof(bw_sandbox, user_ns) == 292);
static_assert(offsetof(bw_sandbox, tables) == 296);
static_assert(offsetof(bw_sandbox, version) == 304);
static_assert(BW_ACCESS_KINDS == bw::ir::kAccessKinds);
static_assert(BW_ACCESS_EXEC == static_cast<int>(bw::ir::Access::Exec));
static_assert(BW_ACCESS_IOCTL == static_cast<int>(bw::ir::Access::Ioctl));
static_assert(sizeof(bw_accept) == 68);
static_assert(offsetof(bw_accept, rule) == 0);
static_assert(offsetof(bw_accept, exe) == 44);
static_assert(offsetof(bw_accept, audit) == 48);
static_assert(offsetof(bw_accept, devices) == 52);
static_assert(offsetof(bw_accept, decision) == 56);
static_assert(sizeof(bw_link) == 36);
static_assert(offsetof(bw_link, rule) == 0);
static_assert(offsetof(bw_link, decision) == 4);
static_assert(offsetof(bw_link, last) == 5);
static_assert(offsetof(bw_link, owner) == 6);
static_assert(offsetof(bw_link, open_flags) == 8);
static_assert(offsetof(bw_link, uid_lo) == 12);
static_assert(offsetof(bw_link, gid_hi) == 24);
static_assert(offsetof(bw_link, exe) == 28);
static_assert(offsetof(bw_link, kinds) == 32);
static_assert(sizeof(bw_event) == 96 + BW_PATH_MAX);
static_assert(offsetof(bw_event, cgroup_id) == 0);
static_assert(offsetof(bw_event, rule_id) == 16);
static_assert(offsetof(bw_event, path_error) == 24);
static_assert(offsetof(bw_event, path_len) == 28);
static_assert(offsetof(bw_event, comm) == 32);
static_assert(offsetof(bw_event, op) == 48);
static_assert(offsetof(bw_event, invariant) == 52);
static_assert(offsetof(bw_event, target) == 56);
static_assert(offsetof(bw_event, arg) == 64);
static_assert(offsetof(bw_event, target_comm) == 72);
static_assert(offsetof(bw_event, version) == 88);
static_assert(offsetof(bw_event, path) == 96);
static_assert(offsetof(bw_scratch, spill) == BW_PATH_MAX);
static_assert(offsetof(bw_scratch, twin) == BW_PATH_MAX + BW_NAME_MAX + 1);
static_assert(offsetof(bw_scratch, mounts) == BW_PATH_MAX + BW_NAME_MAX + 1 + 8 * (2 * BW_NAMES_MAX + BW_COVERED_MAX));
static_assert(sizeof(bw_mounts_walk) == 32);
static_assert(sizeof(bw_net_family) == 12);
static_assert(offsetof(bw_net_family, create_rule) == 0);
static_assert(offsetof(bw_net_family, other_rule) == 4);
static_assert(offsetof(bw_net_family, create_decision) == 8);
static_assert(offsetof(bw_net_family, other_decision) == 9);
static_assert(sizeof(bw_net_policy) == 16 + 12 * BW_NET_FAMILIES);
static_assert(offsetof(bw_net_policy, nrules) == 0);
static_assert(offsetof(bw_net_policy, conditional) == 4);
static_assert(offsetof(bw_net_policy, record) == 8);
static_assert(offsetof(bw_net_policy, families) == 16);
static_assert(sizeof(bw_net_rule) == 48 + sizeof(bw_link));
static_assert(offsetof(bw_net_rule, addr) == 0);
static_assert(offsetof(bw_net_rule, mask) == 16);
static_assert(offsetof(bw_net_rule, port_lo) == 32);
static_assert(offsetof(bw_net_rule, port_hi) == 34);
static_assert(offsetof(bw_net_rule, family) == 36);
static_assert(offsetof(bw_net_rule, protocol) == 38);
static_assert(offsetof(bw_net_rule, op) == 39);
static_assert(offsetof(bw_net_rule, decision) == 40);
static_assert(offsetof(bw_net_rule, rule) == 44);
static_assert(offsetof(bw_net_rule, when) == 48);
static_assert(sizeof(bw_net_object) == 28);
static_assert(sizeof(bw_syscall_verdict) == 8);
static_assert(offsetof(bw_syscall_verdict, error) == 4);
static_assert(offsetof(bw_syscall_verdict, decision) == 6);
static_assert(offsetof(bw_syscall_verdict, kill) == 7);
static_assert(sizeof(bw_syscall_policy) == 8 + 8 * BW_SYSCALL_NUMBERS);
static_assert(offsetof(bw_syscall_policy, numbers) == 8);
static_assert(offsetof(bw_net_object, family) == 16);
static_assert(offsetof(bw_net_object, port) == 18);
static_assert(offsetof(bw_net_object, type) == 20);
static_assert(offsetof(bw_net_object, protocol) == 22);
static_assert(offsetof(bw_net_object, op) == 24);
// A socket denial's object fits the event's path buffer, and its marker is no access kind.
static_assert(sizeof(bw_net_object) < BW_PATH_MAX && BW_NET_EVENT >= BW_ACCESS_KINDS);
// The families table covers AF_MAX (46 on 6.1 and 6.12) and indexes with a mask.
static_assert(BW_NET_FAMILIES >= 46 && (BW_NET_FAMILIES & (BW_NET_FAMILIES - 1)) == 0);
// The kernel's d_path() limit; the walk and the event buffer rely on it being a power of two.
static_assert(BW_PATH_MAX == 4096 && (BW_PATH_MAX & (BW_PATH_MAX - 1)) == 0);

static_assert(static_cast<int>(bw::ir::Decision::Allow) == BW_DECISION_ALLOW);
static_assert(static_cast<int>(bw::ir::Decision::Deny) == BW_DECISION_DENY);

// The invariant bits are one enum on both sides.
static_assert(static_cast<unsigned>(bw::ir::Invariant::Cgroup) == BW_INV_CGROUP);
static_assert(static_cast<unsigned>(bw::ir::Invariant::Ptrace) == BW_INV_PTRACE);
static_assert(static_cast<unsigned>(bw::ir::Invariant::Devices) == BW_INV_DEVICES);
static_assert(static_cast<unsigned>(bw::ir::Invariant::Self) == BW_INV_SELF);
static_assert(static_cast<unsigned>(bw::ir::Invariant::Tty) == BW_INV_TTY);
static_assert(static_cast<unsigned>(bw::ir::Invariant::Namespaces) == BW_INV_NAMESPACES);
static_assert(bw::ir::kAllInvariants == BW_INV_ALL);
static_assert(sizeof(bw_ioctl_range) == 8);
static_assert(sizeof(bw_device_rule) == 32 + 8 * BW_DEVICE_IOCTLS + 36);
static_assert(offsetof(bw_device_rule, major_lo) == 0);
static_assert(offsetof(bw_device_rule, minor_lo) == 8);
static_assert(offsetof(bw_device_rule, kinds) == 16);
static_assert(offsetof(bw_device_rule, rule) == 20);
static_assert(offsetof(bw_device_rule, pattern) == 24);
static_assert(offsetof(bw_device_rule, type) == 28);
static_assert(offsetof(bw_device_rule, decision) == 29);
static_assert(offsetof(bw_device_rule, ioctl_any) == 30);
static_assert(offsetof(bw_device_rule, nioctls) == 31);
static_assert(offsetof(bw_device_rule, ioctls) == 32);
static_assert(offsetof(bw_device_rule, when) == 32 + 8 * BW_DEVICE_IOCTLS);
// A rule's ioctl count fits its __u8.
static_assert(BW_DEVICE_IOCTLS <= 255);
