// SPDX-License-Identifier: GPL-2.0
/*
 * The generic enforcement program of the map backend: one copy is attached per
 * machine, and each sandbox's policy lives in maps keyed by its cgroup id.
 *
 * A process outside every sandbox pays one array lookup per hook (bw_cg_filter).
 * Inside a sandbox the kernel-resolved path is walked through the sandbox's automaton
 * (see compiler/automata), BW_WALK_STRIDE bytes per bpf_loop step.
 */
#include "common.bpf.h"

/*
 * Tables key (bw_sandbox.tables) -> one of the sandbox's tables: an array of entries of
 * `value_bytes` each, made to the policy's size when bwrun installs the sandbox or bwctl
 * edits its policy. The inner value is given by
 * size: clang's BTF for a map-in-map keeps only a forward declaration of its type.
 */
#define BW_PER_SANDBOX_TABLE(value_bytes)                                                  \
	struct {                                                                          \
		__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);                                  \
		__uint(max_entries, BW_MAX_SANDBOXES);                                    \
		__type(key, __u64);                                                       \
		__array(values, struct {                                                  \
			__uint(type, BPF_MAP_TYPE_ARRAY);                                 \
			__uint(map_flags, BPF_F_INNER_MAP);                               \
			__uint(max_entries, 1);                                           \
			__uint(key_size, sizeof(__u32));                                  \
			__uint(value_size, value_bytes);                                  \
		});                                                                       \
	}

/* cgroup id -> transition table: next state = table[state * nclasses + class]. */
BW_PER_SANDBOX_TABLE(sizeof(__u32)) bw_trans SEC(".maps");

/* cgroup id -> per-state decisions. */
BW_PER_SANDBOX_TABLE(sizeof(struct bw_accept)) bw_accepts SEC(".maps");

/* cgroup id -> decision chains. */
BW_PER_SANDBOX_TABLE(sizeof(struct bw_link)) bw_links SEC(".maps");

static int bw_policy_tables(struct bw_walk *w)
{
	__u64 key = w->sandbox->tables;

	w->trans = bpf_map_lookup_elem(&bw_trans, &key);
	w->accepts = bpf_map_lookup_elem(&bw_accepts, &key);
	w->links = bpf_map_lookup_elem(&bw_links, &key);
	return !w->trans || !w->accepts || !w->links;
}

/*
 * The byte at path[at] of the walk; non-zero when the walk stops. The automaton decides
 * at the end of the path; it stops early at the dead state (no rule matches: the default
 * decides) or at an absorbing state (no suffix changes the decision).
 */
static __always_inline int bw_policy_byte(struct bw_walk *w, __u32 at)
{
	unsigned char c;
	__u32 index, *next;

	if (at >= BW_PATH_MAX)
		return 1;
	c = w->path[at];
	if (c == 0)
		return 1;
	index = w->state * w->sandbox->nclasses + w->sandbox->classes[c];
	next = bpf_map_lookup_elem(w->trans, &index);
	if (!next) {
		w->failed = 1;
		return 1;
	}
	w->state = *next & ~BW_ABSORBING;
	return w->state == BW_DEAD_STATE || (*next & BW_ABSORBING);
}

static __u32 bw_policy_decide(struct bw_walk *w, __u32 kind, __u32 *rule)
{
	return bw_accept_decide(bpf_map_lookup_elem(w->accepts, &w->state), w->sandbox, kind, rule);
}

static const struct bw_link *bw_policy_link(struct bw_walk *w, __u32 index)
{
	return bpf_map_lookup_elem(w->links, &index);
}

/*
 * Read by no hook: bwctl updates it to wait for an RCU grace period (a map-in-map update
 * from user space waits for one), after which no hook still runs on what it read before.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(max_entries, 1);
		__type(key, __u32);
		__type(value, __u32);
	});
} bw_barrier SEC(".maps");

/* Any sandbox's policy may have `when exe` rules. */
#define BW_RECORDS_EXE 1

static int bw_policy_exe(struct bw_walk *w, __u32 *patterns)
{
	const struct bw_accept *a = bpf_map_lookup_elem(w->accepts, &w->state);

	if (!a)
		return -1;
	*patterns = a->exe;
	return 0;
}

/* A sandbox without audit rules pays no lookup. */
static __u32 bw_policy_audit(struct bw_walk *w)
{
	const struct bw_accept *a;

	if (!w->sandbox->audits)
		return 0;
	a = bpf_map_lookup_elem(w->accepts, &w->state);
	return a ? a->audit : 0;
}

static int bw_policy_devices(struct bw_walk *w, __u32 *patterns)
{
	const struct bw_accept *a = bpf_map_lookup_elem(w->accepts, &w->state);

	if (!a)
		return -1;
	*patterns = a->devices;
	return 0;
}

/* The path hooks. */
#include "hooks/file_open.bpf.h"
#include "hooks/create.bpf.h"
#include "hooks/delete.bpf.h"
#include "hooks/rename.bpf.h"
#include "hooks/link.bpf.h"
#include "hooks/attr.bpf.h"
#include "hooks/xattr.bpf.h"
#include "hooks/truncate.bpf.h"
#include "hooks/metadata.bpf.h"
#include "hooks/exec.bpf.h"
#include "hooks/exe.bpf.h"
#include "hooks/unix.bpf.h"
#include "hooks/ioctl.bpf.h"

/* Tables key -> the sandbox's device rules, most specific first (devices.bpf.h); the array
 * ends with the last rule. */
BW_PER_SANDBOX_TABLE(sizeof(struct bw_device_rule)) bw_devices SEC(".maps");

static int bw_device_rules(const struct bw_hook *h, void **rules)
{
	__u64 key = h->sandbox->tables;

	*rules = bpf_map_lookup_elem(&bw_devices, &key);
	return !*rules;
}

static const struct bw_device_rule *bw_device_rule_at(void *rules, __u32 i)
{
	return bpf_map_lookup_elem(rules, &i);
}

/* Sandbox invariants: every sandbox has them, whatever its policy. */
#include "hooks/invariants.bpf.h"
#include "hooks/new_fs.bpf.h"

/* --- network (hooks/net.bpf.h) --- */

/* Tables key -> the sandbox's network policy (per-family verdicts, endpoint rule count). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct bw_net_policy);
} bw_net SEC(".maps");

/* Tables key -> the sandbox's endpoint rules, most specific first. */
BW_PER_SANDBOX_TABLE(sizeof(struct bw_net_rule)) bw_net_rules SEC(".maps");

#include "hooks/net.bpf.h"

/* The sandbox entry is read again here, once: the tables of the policy it names decide. */
static int bw_net_tables(struct bw_net_tables *t, __u64 cgid)
{
	const struct bw_sandbox *sandbox = bpf_map_lookup_elem(&bw_sandboxes, &cgid);
	__u64 key;

	if (!sandbox)
		return 1;
	key = sandbox->tables;
	t->policy = bpf_map_lookup_elem(&bw_net, &key);
	t->rules = bpf_map_lookup_elem(&bw_net_rules, &key);
	return !t->policy || !t->rules;
}

static const struct bw_net_rule *bw_net_rule_at(const struct bw_net_tables *t, __u32 i)
{
	return bpf_map_lookup_elem(t->rules, &i);
}

/* --- live syscall rules (hooks/syscalls.bpf.h) --- */

/* Tables key -> the sandbox's live syscall rules; absent while it denies none of them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, BW_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct bw_syscall_policy);
} bw_syscalls SEC(".maps");

static const struct bw_syscall_policy *bw_syscall_table(const struct bw_sandbox *sandbox)
{
	__u64 key = sandbox->tables;

	return bpf_map_lookup_elem(&bw_syscalls, &key);
}

#include "hooks/syscalls.bpf.h"
