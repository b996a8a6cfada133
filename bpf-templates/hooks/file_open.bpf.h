/* SPDX-License-Identifier: GPL-2.0 */
/*
 * file_open: read, write, append and exec, decided on the kernel-resolved path.
 *
 * The including program defines, before including this file:
 *   int bw_policy_tables(struct bw_walk *w, __u64 cgid)
 *	finds the sandbox's tables; non-zero when they are missing (the open fails closed);
 *   long bw_policy_step(__u64 i, void *walk)
 *	one byte of the walk, a bpf_loop callback over struct bw_walk;
 *   __u32 bw_policy_decide(struct bw_walk *w, __u32 kind, __u32 *rule)
 *	the decision (enum bw_decision) for `kind` at the walk's final state, and its rule.
 */
#ifndef BUMBLEWRAP_HOOK_FILE_OPEN_H
#define BUMBLEWRAP_HOOK_FILE_OPEN_H

/* What an open asks for: exec, or read and/or write (append when O_APPEND). */
static int bw_open_kinds(const struct file *file, __u32 kinds[2])
{
	int n = 0;

	if ((file->f_mode & FMODE_EXEC) || (file->f_flags & __FMODE_EXEC)) {
		kinds[n++] = BW_ACCESS_EXEC;
		return n;
	}
	if (file->f_mode & FMODE_READ)
		kinds[n++] = BW_ACCESS_READ;
	if (file->f_mode & FMODE_WRITE)
		kinds[n++] = (file->f_flags & O_APPEND) ? BW_ACCESS_APPEND : BW_ACCESS_WRITE;
	return n;
}

SEC("lsm.s/file_open")
int BPF_PROG(bw_file_open, struct file *file, int ret)
{
	struct bw_sandbox *sandbox;
	struct bw_scratch *scratch;
	struct bw_walk w = {};
	__u32 kinds[2], first, rule = 0;
	__u64 cgid;
	long len;
	int n, i;

	/* An earlier program already denied: keep its answer. */
	if (ret)
		return ret;

	cgid = bpf_get_current_cgroup_id();
	sandbox = bpf_map_lookup_elem(&bw_sandboxes, &cgid);
	if (!sandbox)
		return 0;

	n = bw_open_kinds(file, kinds);
	first = n ? kinds[0] : BW_ACCESS_READ;
	w.sandbox = sandbox;
	w.state = BW_START_STATE;
	scratch = bpf_task_storage_get(&bw_scratch, bpf_get_current_task_btf(), 0,
				       BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* A sandbox without its tables or scratch space fails closed. */
	if (!scratch || bw_policy_tables(&w, cgid)) {
		bw_report(cgid, 0, -ENOMEM, first, sandbox->default_rule);
		return -EACCES;
	}

	/* An unresolvable path (too long, say) is denied: the buffer is never trusted then. */
	len = bpf_d_path(&file->f_path, scratch->path, sizeof(scratch->path));
	if (len <= 0 || len > BW_PATH_MAX) {
		bw_report(cgid, 0, len <= 0 ? len : -ENAMETOOLONG, first, sandbox->default_rule);
		return -EACCES;
	}
	w.path = scratch->path;
	bpf_loop(len, bw_policy_step, &w, 0);
	if (w.failed) {
		bw_report(cgid, w.path, len, first, sandbox->default_rule);
		return -EACCES;
	}

	for (i = 0; i < 2; i++) {
		if (i >= n)
			break;
		if (bw_policy_decide(&w, kinds[i], &rule) != BW_DECISION_ALLOW) {
			bw_report(cgid, w.path, len, kinds[i], rule);
			return -EACCES;
		}
	}
	return 0;
}

#endif /* BUMBLEWRAP_HOOK_FILE_OPEN_H */
