/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `when exe`: which of the policy's exe patterns the task's executable matches. Each
 * binary and interpreter an exec checks is walked by bprm_check_security (exec.bpf.h),
 * which keeps its patterns as the task's pending ones; the last is the executable (a
 * script's interpreter, as /proc/PID/exe names it). bprm_committed_creds makes them the
 * task's once the exec can no longer fail, and task_alloc gives them to every new task
 * and thread, which run the same executable until they exec.
 */
#ifndef BUMBLEWRAP_HOOK_EXE_H
#define BUMBLEWRAP_HOOK_EXE_H

#include "decide.bpf.h"

SEC("lsm/bprm_committed_creds")
int BPF_PROG(bw_bprm_committed_creds, struct linux_binprm *bprm)
{
	struct bw_task *t;
	struct bw_hook h;

	if (!bw_hook_enter(&h))
		return 0;
	t = bpf_task_storage_get(&bw_tasks, bpf_get_current_task_btf(), 0, 0);
	if (t)
		t->exe = t->exe_pending;
	return 0;
}

/* A new task that cannot get its parent's patterns is not created: it would escape the
 * denials of the parent's `when exe` rules. */
SEC("lsm/task_alloc")
int BPF_PROG(bw_task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	struct bw_task *parent, *child;
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	parent = bpf_task_storage_get(&bw_tasks, bpf_get_current_task_btf(), 0, 0);
	if (!parent || !parent->exe)
		return 0;
	child = bpf_task_storage_get(&bw_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!child)
		return -ENOMEM;
	child->exe = parent->exe;
	return 0;
}

#endif /* BUMBLEWRAP_HOOK_EXE_H */
