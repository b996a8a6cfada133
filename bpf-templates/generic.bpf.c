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
	void *accepts;
	const struct bw_sandbox *sandbox;
	__u32 state;
	__u32 decision;
	__u32 rule;
	__u32 failed;
};

static __u32 lookup_accept(struct walk *w, __u32 state, int exact)
{
	struct bw_accept *a = bpf_map_lookup_elem(w->accepts, &state);

	if (!a) {
		w->failed = 1;
		return 0;
	}
	if (exact && a->exact_decision) {
		w->decision = a->exact_decision;
		w->rule = a->exact_rule;
	} else if (!exact && a->tree_decision) {
		w->decision = a->tree_decision;
		w->rule = a->tree_rule;
	}
	return 1;
}

/*
 * Step i of the walk: the automaton has consumed path[0..i). At a component
 * boundary the current state's tree decision becomes the candidate (deeper beats
 * shallower); at the end its exact decision, if any, overrides.
 */
static long walk_step(__u64 i, void *ctx)
{
	struct walk *w = ctx;
	unsigned char c;
	__u32 index, *next;

	if (i >= BW_PATH_MAX)
		return 1;
	c = w->path[i];
	if (c == '/' || c == 0) {
		if (!lookup_accept(w, w->state, 0))
			return 1;
	}
	if (c == 0) {
		lookup_accept(w, w->state, 1);
		return 1;
	}
	index = w->state * w->sandbox->nclasses + w->sandbox->classes[c];
	next = bpf_map_lookup_elem(w->trans, &index);
	if (!next) {
		w->failed = 1;
		return 1;
	}
	w->state = *next;
	return w->state == BW_DEAD_STATE;
}

static void report(__u64 cgid, struct file *file, const char *path, long len, __u32 rule)
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
	e->access = 0;
	if (file->f_mode & FMODE_READ)
		e->access |= BW_ACCESS_READ;
	if (file->f_mode & FMODE_WRITE)
		e->access |= BW_ACCESS_WRITE;
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

SEC("lsm.s/file_open")
int BPF_PROG(bw_file_open, struct file *file, int ret)
{
	struct bw_sandbox *sandbox;
	struct bw_scratch *scratch;
	struct walk w = {};
	__u64 cgid;
	long len;

	/* An earlier program already denied: keep its answer. */
	if (ret)
		return ret;

	cgid = bpf_get_current_cgroup_id();
	sandbox = bpf_map_lookup_elem(&bw_sandboxes, &cgid);
	if (!sandbox)
		return 0;

	w.sandbox = sandbox;
	w.state = BW_START_STATE;
	w.trans = bpf_map_lookup_elem(&bw_trans, &cgid);
	w.accepts = bpf_map_lookup_elem(&bw_accepts, &cgid);
	scratch = bpf_task_storage_get(&bw_scratch, bpf_get_current_task_btf(), 0,
				       BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* A sandbox without its tables or scratch space fails closed. */
	if (!w.trans || !w.accepts || !scratch) {
		report(cgid, file, 0, -ENOMEM, sandbox->default_rule);
		return -EACCES;
	}

	/* An unresolvable path (too long, say) is denied: the buffer is never trusted then. */
	len = bpf_d_path(&file->f_path, scratch->path, sizeof(scratch->path));
	if (len <= 0 || len > BW_PATH_MAX) {
		report(cgid, file, 0, len <= 0 ? len : -ENAMETOOLONG, sandbox->default_rule);
		return -EACCES;
	}
	w.path = scratch->path;
	bpf_loop(len, walk_step, &w, 0);

	if (w.failed) {
		report(cgid, file, w.path, len, sandbox->default_rule);
		return -EACCES;
	}
	if (w.decision == BW_DECISION_NONE) {
		w.decision = sandbox->default_decision;
		w.rule = sandbox->default_rule;
	}
	if (w.decision == BW_DECISION_ALLOW)
		return 0;
	report(cgid, file, w.path, len, w.rule);
	return -EACCES;
}
