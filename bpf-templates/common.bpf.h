/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every enforcement program shares, whichever backend built it: the sandbox table
 * keyed by cgroup id, the per-sandbox denial ring buffers, the per-task path buffer and
 * the denial report. A program includes this, defines how it walks and decides (see
 * decide.bpf.h for the contract), then includes the hooks it needs.
 */
#ifndef BUMBLEWRAP_COMMON_BPF_H
#define BUMBLEWRAP_COMMON_BPF_H

#include "kernel.h"
#include "bumblewrap.h"

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct bw_sandbox);
} bw_sandboxes SEC(".maps");

/*
 * Which cgroup ids may be a sandbox's, by their low bits: bwrun sets a sandbox's slot before
 * it adds the sandbox's entry, and nothing clears a slot while the program is loaded. A zero
 * slot spares a process outside every sandbox the hash lookup on every hook; a set one only
 * sends it to the lookup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_CG_FILTER_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} bw_cg_filter SEC(".maps");

/* The sandbox whose cgroup id is *cgid, NULL when there is none. */
static __always_inline const struct bw_sandbox *bw_sandbox_lookup(__u64 *cgid)
{
	__u32 slot = *cgid & (BW_CG_FILTER_SLOTS - 1);
	__u32 *set = bpf_map_lookup_elem(&bw_cg_filter, &slot);

	if (set && !*set)
		return 0;
	return bpf_map_lookup_elem(&bw_sandboxes, cgid);
}

/* cgroup id -> that sandbox's denial ring buffer, read by its bwrun. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, BW_MAX_SANDBOXES);
	__type(key, __u64);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, BW_EVENTS_BYTES);
	});
} bw_events SEC(".maps");

/* cgroup id -> events its ring had no room for: under a flood, events are dropped rather
 * than the sandbox slowed, and its bwrun reports how many. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, __u64);
} bw_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_scratch);
} bw_scratch SEC(".maps");

/* A task's event under construction (bw_event_start): task-local, as bw_scratch is. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_event);
} bw_event_buf SEC(".maps");

/*
 * The file systems sandboxes mounted themselves (a tmpfs in a user namespace of their
 * own): super_block address -> the sandbox's id. Kept from the mount (hooks/invariants.bpf.h)
 * until the kernel frees the super block; path.bpf.h lets their files pass, but exec.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, BW_MAX_OWN_SBS);
	__type(key, __u64);
	__type(value, __u64);
} bw_own_sbs SEC(".maps");

/*
 * A task's `when exe` patterns (hooks/exe.bpf.h): exe, those its executable matches; and
 * exe_pending, those of the last binary or interpreter its exec in progress checked,
 * which become exe when the exec can no longer fail. A task without this has none.
 * And its last audit record (decide.bpf.h): the inode, access kind and audit rule.
 */
struct bw_task {
	__u32 exe;
	__u32 exe_pending;
	__u64 audit_inode;
	__u32 audit_kind;
	__u32 audit_rule;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_task);
} bw_tasks SEC(".maps");

/* A walk of one path through the sandbox's automaton: path[start] is its first byte. */
struct bw_walk {
	const char *path;
	__u32 start;
	const struct bw_sandbox *sandbox;
	void *trans;   /* the transition table, when it is a per-sandbox map */
	void *accepts; /* the per-state decisions, when they are a per-sandbox map */
	void *links;   /* the decision chains, when they are a per-sandbox map */
	__u32 state;
	__u32 failed;
};

/* The decision for `kind` from a state's row of decisions (NONE: the default decides;
 * CHAIN: *rule is the first link of the state's decision chain). */
static __always_inline __u32 bw_accept_decide(const struct bw_accept *a,
					      const struct bw_sandbox *sandbox, __u32 kind,
					      __u32 *rule)
{
	*rule = sandbox->default_rule;
	if (kind >= BW_ACCESS_KINDS)
		return BW_DECISION_DENY;
	/* A state without its decisions fails closed. */
	if (!a)
		return BW_DECISION_DENY;
	if (a->decision[kind] == BW_DECISION_NONE)
		return sandbox->default_decision;
	*rule = a->rule[kind];
	return a->decision[kind];
}

/* With the access of bw_report: the event is an audit record, not a denial; bits from
 * BW_REPORT_ASKED_SHIFT then hold every kind the operation asked, for the event's arg.
 * The bits below it hold the access itself, BW_NET_EVENT included. */
#define BW_REPORT_AUDIT (1u << 31)
#define BW_REPORT_ASKED_SHIFT 9

/*
 * Starts an event of the current task in sandbox cgid: the header filled but for the
 * object, no path. NULL when the task's event buffer cannot be had; the event is lost.
 */
static __always_inline struct bw_event *bw_event_start(__u64 cgid, __u32 op)
{
	const struct bw_sandbox *sandbox;
	struct bw_event *e;
	__u64 id;

	e = bpf_task_storage_get(&bw_event_buf, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!e)
		return 0;
	sandbox = bpf_map_lookup_elem(&bw_sandboxes, &cgid);
	e->version = sandbox ? sandbox->version : 0;
	id = bpf_get_current_pid_tgid();
	e->cgroup_id = cgid;
	e->pid = (__u32)id;
	e->tgid = id >> 32;
	e->rule_id = 0;
	e->access = 0;
	e->path_error = 0;
	e->path_len = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->op = op;
	e->invariant = 0;
	e->target = 0;
	e->arg = 0;
	e->target_comm[0] = 0;
	return e;
}

/* Sends an event to the ring: its header and path_len bytes of path, so that a short path
 * takes a short slot. The mask only convinces the verifier. */
static __always_inline void bw_event_send(void *ring, const struct bw_event *e)
{
	__u64 one = 1, *drops;

	if (!bpf_ringbuf_output(ring, (void *)e, offsetof(struct bw_event, path) + (e->path_len & (BW_PATH_MAX - 1)), 0))
		return;
	drops = bpf_map_lookup_elem(&bw_drops, &e->cgroup_id);
	if (drops)
		__sync_fetch_and_add(drops, 1);
	else
		bpf_map_update_elem(&bw_drops, &e->cgroup_id, &one, BPF_NOEXIST);
}

/* An event's path: len bytes of path, the NUL counted; a negative len is the errno of a
 * path that could not be resolved. */
static __always_inline void bw_event_path(struct bw_event *e, const char *path, long len)
{
	if (len < 0) {
		e->path_error = (__s32)len;
		e->path_len = 0;
	} else {
		e->path_error = 0;
		/* The mask only convinces the verifier. */
		e->path_len = (len - 1) & (BW_PATH_MAX - 1);
		bpf_probe_read_kernel(e->path, e->path_len, path);
	}
}

/* Unused in a specialised program whose policy needs no hook. */
static __attribute__((unused)) void bw_report(__u64 cgid, const char *path, long len, __u32 access, __u32 rule)
{
	struct bw_event *e;
	void *ring;

	ring = bpf_map_lookup_elem(&bw_events, &cgid);
	if (!ring)
		return;
	e = bw_event_start(cgid, access & BW_REPORT_AUDIT ? BW_OP_AUDIT : BW_OP_PATH);
	if (!e)
		return;
	e->rule_id = rule;
	if (access & BW_REPORT_AUDIT) {
		e->access = access & ((1u << BW_REPORT_ASKED_SHIFT) - 1);
		e->arg = (access & ~BW_REPORT_AUDIT) >> BW_REPORT_ASKED_SHIFT;
	} else {
		e->access = access;
	}
	bw_event_path(e, path, len);
	bw_event_send(ring, e);
}

#endif /* BUMBLEWRAP_COMMON_BPF_H */
