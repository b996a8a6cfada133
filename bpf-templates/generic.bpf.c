// SPDX-License-Identifier: GPL-2.0
/*
 * The generic enforcement program of the map backend: one copy is attached per
 * machine, and each sandbox's policy lives in maps keyed by its cgroup id.
 *
 * A process outside every sandbox pays one hash lookup per hook. Inside a sandbox
 * the kernel-resolved path is walked through the sandbox's automaton (see
 * compiler/automata) one byte per step.
 */
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

/* cgroup id -> transition table: next state = table[state * nclasses + class]. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, BW_MAX_SANDBOXES);
	__type(key, __u64);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_INNER_MAP);
		__uint(max_entries, 1);
		__type(key, __u32);
		__type(value, __u32);
	});
} bw_trans SEC(".maps");

/* cgroup id -> per-state decisions. The inner value is given by size: clang's BTF
 * for a map-in-map keeps only a forward declaration of the inner value type. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, BW_MAX_SANDBOXES);
	__type(key, __u64);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_INNER_MAP);
		__uint(max_entries, 1);
		__uint(key_size, sizeof(__u32));
		__uint(value_size, sizeof(struct bw_accept));
	});
} bw_accepts SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_scratch);
} bw_scratch SEC(".maps");

struct walk {
	const char *path;
	void *trans;
	const struct bw_sandbox *sandbox;
	__u32 state;
	__u32 failed;
};

/*
 * One byte of the walk. The automaton decides at the end of the path; it stops early at
 * the dead state (no rule matches: the default decides) or at an absorbing state (no
 * suffix changes the decision).
 */
static long walk_step(__u64 i, void *ctx)
{
	struct walk *w = ctx;
	unsigned char c;
	__u32 index, *next;

	if (i >= BW_PATH_MAX)
		return 1;
	c = w->path[i];
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

static void report(__u64 cgid, const char *path, long len, __u32 access, __u32 rule)
{
	struct bw_event *e;
	void *ring;

	ring = bpf_map_lookup_elem(&bw_events, &cgid);
	if (!ring)
		return;
	e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);
	if (!e)
		return;
	e->cgroup_id = cgid;
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->rule_id = rule;
	e->access = access;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (len < 0) {
		e->path_error = (__s32)len;
		e->path_len = 0;
	} else {
		e->path_error = 0;
		/* len counts the NUL; the mask only convinces the verifier. */
		e->path_len = (len - 1) & (BW_PATH_MAX - 1);
		bpf_probe_read_kernel(e->path, e->path_len, path);
	}
	bpf_ringbuf_submit(e, 0);
}

/* The decision for one access kind at the walk's final state. */
static int decide(const struct bw_sandbox *sandbox, const struct bw_accept *a, __u32 kind, __u32 *rule)
{
	if (kind >= BW_ACCESS_KINDS)
		return BW_DECISION_DENY;
	if (a && a->decision[kind] != BW_DECISION_NONE) {
		*rule = a->rule[kind];
		return a->decision[kind];
	}
	*rule = sandbox->default_rule;
	return sandbox->default_decision;
}

SEC("lsm.s/file_open")
int BPF_PROG(bw_file_open, struct file *file, int ret)
{
	struct bw_sandbox *sandbox;
	struct bw_scratch *scratch;
	struct bw_accept *accept = 0;
	struct walk w = {};
	__u32 kinds[2], rule = 0;
	void *accepts;
	__u64 cgid;
	long len;
	int n = 0, i;

	/* An earlier program already denied: keep its answer. */
	if (ret)
		return ret;

	cgid = bpf_get_current_cgroup_id();
	sandbox = bpf_map_lookup_elem(&bw_sandboxes, &cgid);
	if (!sandbox)
		return 0;

	/* What this open asks for: exec, or read and/or write (append when O_APPEND). */
	if ((file->f_mode & FMODE_EXEC) || (file->f_flags & __FMODE_EXEC)) {
		kinds[n++] = BW_ACCESS_EXEC;
	} else {
		if (file->f_mode & FMODE_READ)
			kinds[n++] = BW_ACCESS_READ;
		if (file->f_mode & FMODE_WRITE)
			kinds[n++] = (file->f_flags & O_APPEND) ? BW_ACCESS_APPEND : BW_ACCESS_WRITE;
	}

	w.sandbox = sandbox;
	w.state = BW_START_STATE;
	w.trans = bpf_map_lookup_elem(&bw_trans, &cgid);
	accepts = bpf_map_lookup_elem(&bw_accepts, &cgid);
	scratch = bpf_task_storage_get(&bw_scratch, bpf_get_current_task_btf(), 0,
				       BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* A sandbox without its tables or scratch space fails closed. */
	if (!w.trans || !accepts || !scratch) {
		report(cgid, 0, -ENOMEM, n ? kinds[0] : BW_ACCESS_READ, sandbox->default_rule);
		return -EACCES;
	}

	/* An unresolvable path (too long, say) is denied: the buffer is never trusted then. */
	len = bpf_d_path(&file->f_path, scratch->path, sizeof(scratch->path));
	if (len <= 0 || len > BW_PATH_MAX) {
		report(cgid, 0, len <= 0 ? len : -ENAMETOOLONG, n ? kinds[0] : BW_ACCESS_READ,
		       sandbox->default_rule);
		return -EACCES;
	}
	w.path = scratch->path;
	bpf_loop(len, walk_step, &w, 0);
	if (w.failed) {
		report(cgid, w.path, len, n ? kinds[0] : BW_ACCESS_READ, sandbox->default_rule);
		return -EACCES;
	}
	if (w.state != BW_DEAD_STATE) {
		accept = bpf_map_lookup_elem(accepts, &w.state);
		if (!accept) {
			report(cgid, w.path, len, n ? kinds[0] : BW_ACCESS_READ, sandbox->default_rule);
			return -EACCES;
		}
	}

	for (i = 0; i < 2; i++) {
		if (i >= n)
			break;
		if (decide(sandbox, accept, kinds[i], &rule) != BW_DECISION_ALLOW) {
			report(cgid, w.path, len, kinds[i], rule);
			return -EACCES;
		}
	}
	return 0;
}
