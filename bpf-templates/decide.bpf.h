/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every path hook does: find the current task's sandbox (one lookup, and nothing
 * more for a process outside every sandbox), resolve the path (path.bpf.h), walk it
 * through the automaton, and deny with a report when the policy does not allow an
 * access kind. A hook is then a few lines: bw_hook_enter, then bw_check per path.
 *
 * The including program defines, before including a hook:
 *   int bw_policy_tables(struct bw_walk *w, __u64 cgid)
 *	finds the sandbox's tables; non-zero when they are missing (the access fails closed);
 *   long bw_policy_step(__u64 i, void *walk)
 *	one byte of the walk, a bpf_loop callback over struct bw_walk;
 *   __u32 bw_policy_decide(struct bw_walk *w, __u32 kind, __u32 *rule)
 *	the decision (enum bw_decision) for `kind` at the walk's final state, and its rule.
 */
#ifndef BUMBLEWRAP_DECIDE_BPF_H
#define BUMBLEWRAP_DECIDE_BPF_H

#include "path.bpf.h"

struct bw_hook {
	__u64 cgid;
	const struct bw_sandbox *sandbox;
};

#define BW_KIND(kind) (1u << (kind))
/* With the kinds of bw_check: a file that no path names is denied rather than passed. */
#define BW_PATHLESS_DENIED (1u << 31)
/* With the kinds of bw_check: a dentry outside the mount's tree returns -EXDEV unreported. */
#define BW_OTHER_TREE_SILENT (1u << 30)

/* Non-zero when the current task runs in a sandbox; the hook has nothing to do otherwise. */
static __always_inline int bw_hook_enter(struct bw_hook *h)
{
	h->cgid = bpf_get_current_cgroup_id();
	h->sandbox = bpf_map_lookup_elem(&bw_sandboxes, &h->cgid);
	return h->sandbox != 0;
}

static __always_inline __u32 bw_first_kind(__u32 kinds)
{
	return kinds ? __builtin_ctz(kinds) : BW_ACCESS_READ;
}

/*
 * 0 when the sandbox's policy allows every access kind in `kinds` (a mask of BW_KIND) on
 * the path of (mnt, dentry); otherwise reports the first kind denied and returns -EACCES.
 * A path that cannot be resolved, or a sandbox without its tables, is denied.
 */
static int bw_check(const struct bw_hook *h, const struct vfsmount *mnt, struct dentry *dentry, __u32 kinds)
{
	struct bw_scratch *scratch;
	struct bw_walk w = {};
	__u32 k, rule = 0;
	long start;

	w.sandbox = h->sandbox;
	w.state = BW_START_STATE;
	scratch = bpf_task_storage_get(&bw_scratch, bpf_get_current_task_btf(), 0,
				       BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!scratch || bw_policy_tables(&w, h->cgid)) {
		bw_report(h->cgid, 0, -ENOMEM, bw_first_kind(kinds), h->sandbox->default_rule);
		return -EACCES;
	}
	start = bw_resolve_path(scratch->path, mnt, dentry);
	/*
	 * Files on kernel-internal mounts have no path a policy could name: pipes, sockets
	 * and memfds reached through a held fd (fstat, ftruncate, reopening /proc/self/fd/N),
	 * and the layers overlayfs opens for itself after the overlay's own path was
	 * decided (from 6.2, its backing files reach file_open and file_mprotect with the
	 * layer's path). They pass, except where the hook asks otherwise: execve and
	 * PROT_EXEC mmap of a memfd are denied.
	 */
	if (start == -ENODEV && !(kinds & BW_PATHLESS_DENIED))
		return 0;
	if (start == -EXDEV && (kinds & BW_OTHER_TREE_SILENT))
		return -EXDEV;
	if (start < 0) {
		bw_report(h->cgid, 0, start, bw_first_kind(kinds), h->sandbox->default_rule);
		return -EACCES;
	}
	start &= BW_PATH_MAX - 1;
	w.path = scratch->path;
	w.start = start;
	bpf_loop(BW_PATH_MAX - 1 - start, bw_policy_step, &w, 0);
	if (w.failed) {
		bw_report(h->cgid, scratch->path + start, BW_PATH_MAX - start, bw_first_kind(kinds),
			  h->sandbox->default_rule);
		return -EACCES;
	}
	for (k = 0; k < BW_ACCESS_KINDS; k++) {
		if (!(kinds & BW_KIND(k)))
			continue;
		if (bw_policy_decide(&w, k, &rule) != BW_DECISION_ALLOW) {
			bw_report(h->cgid, scratch->path + start, BW_PATH_MAX - start, k, rule);
			return -EACCES;
		}
	}
	return 0;
}

#endif /* BUMBLEWRAP_DECIDE_BPF_H */
