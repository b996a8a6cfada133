// SPDX-License-Identifier: GPL-2.0
/*
 * The template of the specialised backend (bwc --backend=c): bwc generates bw_policy.h
 * from one policy and compiles this file with it, in-process. One program per policy,
 * shared by every sandbox that runs that policy.
 *
 * Compared with generic.bpf.c, the policy's shape is compiled in: the byte classes and
 * the row width are constants, the decisions are code rather than a table, the
 * transitions sit in one array map of exactly the policy's size (filled by bwrun from
 * the artifact), and only the hooks the policy needs are present. A policy with more
 * distinct decisions than code can hold (BPF jumps reach 32,767 instructions) keeps
 * them in a second array map instead.
 *
 * bw_policy.h defines:
 *   BW_POLICY_NCLASSES, BW_POLICY_NSTATES	the automaton's shape
 *   BW_POLICY_NLINKS				entries of the decision chains (at least 1)
 *   BW_POLICY_DEFAULT_DECISION, BW_POLICY_DEFAULT_RULE
 *   BW_HOOK_<NAME>				1 for each hook the policy needs
 *   BW_POLICY_HOOKS				how many that is
 *   BW_POLICY_INVARIANTS			enum bw_invariant: those with hooks the policy keeps
 *   BW_HOOK_INVARIANTS			1 when that is any
 *   bw_policy_classes[256]			byte -> class
 *   BW_POLICY_EXE_PATTERNS			the number of `when exe` patterns
 *   BW_HOOK_EXE				1 when there are any (hooks/exe.bpf.h)
 *   BW_POLICY_INLINE_DECISIONS			1 when it also defines
 *   __u64 bw_policy_decision(__u32 state, __u32 kind)
 *	decision | rule << 8 for a path ending in `state` (CHAIN: the rule is a link)
 *   __u32 bw_policy_exe_patterns(__u32 state)	when there are exe patterns: those a
 *	path ending in `state` matches
 *   BW_POLICY_AUDITS				1 when the policy has audit rules; then also
 *   __u32 bw_policy_audit_chain(__u32 state)	(with inline decisions) the first link
 *	of the state's audit chain, 0 when none
 *   BW_POLICY_DEVICE_PATTERNS			the number of device rule patterns; when
 *	any (with inline decisions), __u32 bw_policy_device_patterns(__u32 state): those
 *	a device node whose path ends in `state` matches
 *   BW_HOOK_IOCTL				1 when the policy has device rules, can deny
 *	ioctl or attr, or keeps the tty invariant
 *   BW_POLICY_DEVICE_RULES, BW_POLICY_DEVICE_RULES_MASK, bw_policy_device_rules[]
 *	the device rules, when any (the array padded to MASK + 1 entries)
 *   BW_HOOK_NET				1 when the network hooks are needed; then also
 *   BW_POLICY_NET_RULES, BW_POLICY_NET_RULES_MASK, bw_policy_net, bw_policy_net_rules[]
 *	the network tables (the array padded to MASK + 1 entries)
 */
#include "common.bpf.h"

/* What bw_policy_decision returns: the decision and the rule that made it. */
#define BW_VERDICT(decision, rule) ((__u64)(rule) << 8 | (decision))

#include "bw_policy.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_POLICY_NSTATES * BW_POLICY_NCLASSES);
	__type(key, __u32);
	__type(value, __u32);
} bw_trans SEC(".maps");

/* The decision chains of conditional rules, filled by bwrun from the artifact. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_POLICY_NLINKS);
	__type(key, __u32);
	__type(value, struct bw_link);
} bw_links SEC(".maps");

/* A policy that denies nothing has no hook, and then no use for the walk. */
#if BW_POLICY_HOOKS
static int bw_policy_tables(struct bw_walk *w)
{
	return 0;
}

/* One byte of the walk; as in generic.bpf.c, it stops at a dead or absorbing state. */
static __always_inline int bw_policy_byte(struct bw_walk *w, __u32 at)
{
	unsigned char c;
	__u32 index, *next;

	if (at >= BW_PATH_MAX)
		return 1;
	c = w->path[at];
	if (c == 0)
		return 1;
	index = w->state * BW_POLICY_NCLASSES + bw_policy_classes[c];
	next = bpf_map_lookup_elem(&bw_trans, &index);
	if (!next) {
		w->failed = 1;
		return 1;
	}
	w->state = *next & ~BW_ABSORBING;
	return w->state == BW_DEAD_STATE || (*next & BW_ABSORBING);
}

static const struct bw_link *bw_policy_link(struct bw_walk *w, __u32 index)
{
	return bpf_map_lookup_elem(&bw_links, &index);
}

#define BW_RECORDS_EXE (BW_POLICY_EXE_PATTERNS > 0)

#if BW_POLICY_INLINE_DECISIONS
static __u32 bw_policy_decide(struct bw_walk *w, __u32 kind, __u32 *rule)
{
	__u64 d = bw_policy_decision(w->state, kind);

	*rule = d >> 8;
	return d & 0xff;
}

static int bw_policy_exe(struct bw_walk *w, __u32 *patterns)
{
#if BW_POLICY_EXE_PATTERNS
	*patterns = bw_policy_exe_patterns(w->state);
#else
	*patterns = 0;
#endif
	return 0;
}

static __u32 bw_policy_audit(struct bw_walk *w)
{
#if BW_POLICY_AUDITS
	return bw_policy_audit_chain(w->state);
#else
	return 0;
#endif
}

static int bw_policy_devices(struct bw_walk *w, __u32 *patterns)
{
#if BW_POLICY_DEVICE_PATTERNS
	*patterns = bw_policy_device_patterns(w->state);
#else
	*patterns = 0;
#endif
	return 0;
}
#else
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_POLICY_NSTATES);
	__type(key, __u32);
	__type(value, struct bw_accept);
} bw_accepts SEC(".maps");

static __u32 bw_policy_decide(struct bw_walk *w, __u32 kind, __u32 *rule)
{
	return bw_accept_decide(bpf_map_lookup_elem(&bw_accepts, &w->state), w->sandbox, kind, rule);
}

static int bw_policy_exe(struct bw_walk *w, __u32 *patterns)
{
	const struct bw_accept *a = bpf_map_lookup_elem(&bw_accepts, &w->state);

	if (!a)
		return -1;
	*patterns = a->exe;
	return 0;
}

static __u32 bw_policy_audit(struct bw_walk *w)
{
	const struct bw_accept *a;

	if (!BW_POLICY_AUDITS)
		return 0;
	a = bpf_map_lookup_elem(&bw_accepts, &w->state);
	return a ? a->audit : 0;
}

static int bw_policy_devices(struct bw_walk *w, __u32 *patterns)
{
	const struct bw_accept *a = bpf_map_lookup_elem(&bw_accepts, &w->state);

	if (!a)
		return -1;
	*patterns = a->devices;
	return 0;
}
#endif

#endif /* BW_POLICY_HOOKS */

/* The path hooks. */
#if BW_HOOK_FILE_OPEN
#include "hooks/file_open.bpf.h"
#endif
#if BW_HOOK_CREATE
#include "hooks/create.bpf.h"
#endif
#if BW_HOOK_DELETE
#include "hooks/delete.bpf.h"
#endif
#if BW_HOOK_RENAME
#include "hooks/rename.bpf.h"
#endif
#if BW_HOOK_LINK
#include "hooks/link.bpf.h"
#endif
#if BW_HOOK_ATTR
#include "hooks/attr.bpf.h"
#include "hooks/xattr.bpf.h"
#endif
#if BW_HOOK_TRUNCATE
#include "hooks/truncate.bpf.h"
#endif
#if BW_HOOK_METADATA
#include "hooks/metadata.bpf.h"
#endif
#if BW_HOOK_EXEC
#include "hooks/exec.bpf.h"
#endif
#if BW_HOOK_EXE
#include "hooks/exe.bpf.h"
#endif
#if BW_HOOK_UNIX
#include "hooks/unix.bpf.h"
#endif
#if BW_HOOK_IOCTL
#include "hooks/ioctl.bpf.h"
#endif

/* The device rules are constants: devices.bpf.h scans them for the hooks above. */
#if BW_POLICY_HOOKS
static int bw_device_rules(const struct bw_hook *h, void **rules)
{
	*rules = 0;
	return 0;
}

static const struct bw_device_rule *bw_device_rule_at(void *rules, __u32 i)
{
#if BW_POLICY_DEVICE_RULES
	if (i >= BW_POLICY_DEVICE_RULES)
		return 0;
	/* The mask bounds the index for the verifier, as in bw_net_rule_at below. */
	barrier_var(i);
	return &bw_policy_device_rules[i & BW_POLICY_DEVICE_RULES_MASK];
#else
	return 0;
#endif
}
#endif

/* Sandbox invariants, unless the policy declared every one of them unsafe. */
#if BW_HOOK_INVARIANTS
#include "hooks/invariants.bpf.h"
#endif
/* The file systems the sandbox makes, for the mount invariant and the path resolver. */
#if BW_HOOK_NEW_FS
#include "hooks/new_fs.bpf.h"
#endif

/* --- network: bw_policy.h's constant tables (see hooks/net.bpf.h) --- */
#if BW_HOOK_NET
#include "hooks/net.bpf.h"

static int bw_net_tables(struct bw_net_tables *t, __u64 cgid)
{
	t->policy = &bw_policy_net;
	return 0;
}

static const struct bw_net_rule *bw_net_rule_at(const struct bw_net_tables *t, __u32 i)
{
	if (i >= BW_POLICY_NET_RULES)
		return 0;
	/*
	 * clang may test a copy of i (i >= 2 becomes (i & ~1) != 0) and index with i, which
	 * the verifier then sees unbounded. The mask bounds the register that indexes (the
	 * array is padded to BW_POLICY_NET_RULES_MASK + 1); barrier_var keeps clang from
	 * dropping it as implied by the test.
	 */
	barrier_var(i);
	return &bw_policy_net_rules[i & BW_POLICY_NET_RULES_MASK];
}
#endif

/* --- live syscall rules: bw_policy.h's constant table (see hooks/syscalls.bpf.h) --- */
#if BW_HOOK_SYSCALLS
static const struct bw_syscall_policy *bw_syscall_table(const struct bw_sandbox *sandbox)
{
	return &bw_policy_syscalls;
}

#include "hooks/syscalls.bpf.h"
#endif
