/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live syscall rules. Each program here sits on an LSM hook that the kernel reaches on
 * every call of some syscalls (compiler/syscalls, kLsmCoverage), and denies the syscall the
 * current task is in when the sandbox's table denies its number. The seccomp filter lets
 * those syscalls through, so that bwctl can deny and re-allow them while the sandbox runs.
 * A hook is also reached from other syscalls (mmap_file from execve, socket_create from
 * socketpair): deciding by the current syscall's number, not by the hook, keeps those apart.
 *
 * The program that includes this defines
 *	bw_syscall_table(sandbox): the sandbox's struct bw_syscall_policy, or NULL for none.
 * Keep the hooks in step with kLiveHooks (compiler/syscalls/syscalls.cc); a unit test
 * compares them. A program runs only while the ones before it on the hook allowed: the
 * trampoline stops at the first denial.
 */
#ifndef BUMBLEWRAP_HOOK_SYSCALLS_H
#define BUMBLEWRAP_HOOK_SYSCALLS_H

#define BW_SIGKILL 9
#define BW_TS_COMPAT 0x0002     /* arch/x86/include/asm/thread_info.h */
#define BW_PSR_MODE32_BIT 0x10  /* arch/arm64/include/uapi/asm/ptrace.h */
/* bw_current_syscall's answer for a syscall of another ABI than the table's */
#define BW_SYSCALL_FOREIGN BW_SYSCALL_NUMBERS

/* The current task's syscall number; -1 outside a syscall; BW_SYSCALL_FOREIGN for an
 * i386, x32 or AArch32 one, whose numbers the table does not hold. */
static __always_inline long bw_current_syscall(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs___syscall *regs = (void *)bpf_task_pt_regs(task);
	long nr;

#if defined(__TARGET_ARCH_arm64)
	if (BPF_CORE_READ(regs, pstate) & BW_PSR_MODE32_BIT)
		return BW_SYSCALL_FOREIGN;
	nr = BPF_CORE_READ(regs, syscallno);
#else
	if (BPF_CORE_READ((struct task_struct___syscall *)task, thread_info.status) & BW_TS_COMPAT)
		return BW_SYSCALL_FOREIGN;
	nr = BPF_CORE_READ(regs, orig_ax);
#endif
	if (nr < 0)
		return -1;
	return nr < BW_SYSCALL_NUMBERS ? nr : BW_SYSCALL_FOREIGN;
}

static __always_inline void bw_report_syscall(__u64 cgid, __u32 rule, long nr)
{
	struct bw_event *e;
	void *ring;

	ring = bpf_map_lookup_elem(&bw_events, &cgid);
	if (!ring)
		return;
	e = bw_event_start(cgid, BW_OP_SYSCALL);
	if (!e)
		return;
	e->rule_id = rule;
	e->arg = nr;
	e->target = nr == BW_SYSCALL_FOREIGN;
	bw_event_send(ring, e);
}

static __always_inline int bw_syscall_check(void)
{
	const struct bw_syscall_policy *table;
	const struct bw_syscall_verdict *v;
	const struct bw_sandbox *sandbox;
	__u64 cgid = bpf_get_current_cgroup_id();
	int error, zero = 0;
	long nr;

	sandbox = bw_sandbox_lookup(&cgid);
	if (!sandbox)
		return 0;
	table = bw_syscall_table(sandbox);
	if (!table || !table->denied)
		return 0;
	nr = bw_current_syscall();
	if (nr < 0)
		return 0;
	if (nr == BW_SYSCALL_FOREIGN) {
		bw_report_syscall(cgid, 0, nr);
		return -EPERM;
	}
	v = &table->numbers[nr & (BW_SYSCALL_NUMBERS - 1)];
	if (v->decision != BW_DECISION_DENY)
		return 0;
	bw_report_syscall(cgid, v->rule, nr);
	/* `action kill`: seccomp's SIGSYS is not ours to send; SIGKILL is as final. */
	if (v->kill)
		bpf_send_signal(BW_SIGKILL);
	error = v->error;
	if (error < 1 || error > MAX_ERRNO)
		error = EPERM;
	/* 0 - error, not -error: the verifier keeps the bounds of a subtraction, which an
	 * LSM program's return value must show to be in [-MAX_ERRNO, 0]. */
	barrier_var(zero);
	return zero - error;
}

#define BW_LIVE_SYSCALL_HOOK(hook)		\
	SEC("lsm/" #hook)			\
	int bw_syscall_##hook(void *ctx)	\
	{					\
		return bw_syscall_check();	\
	}

BW_LIVE_SYSCALL_HOOK(bpf)
BW_LIVE_SYSCALL_HOOK(kernel_load_data)
BW_LIVE_SYSCALL_HOOK(kernel_read_file)
BW_LIVE_SYSCALL_HOOK(move_mount)
BW_LIVE_SYSCALL_HOOK(path_chmod)
BW_LIVE_SYSCALL_HOOK(path_chown)
BW_LIVE_SYSCALL_HOOK(path_chroot)
BW_LIVE_SYSCALL_HOOK(perf_event_open)
BW_LIVE_SYSCALL_HOOK(quotactl)
BW_LIVE_SYSCALL_HOOK(sb_mount)
BW_LIVE_SYSCALL_HOOK(sb_pivotroot)
BW_LIVE_SYSCALL_HOOK(sb_umount)
BW_LIVE_SYSCALL_HOOK(settime)
BW_LIVE_SYSCALL_HOOK(socket_accept)
BW_LIVE_SYSCALL_HOOK(socket_bind)
BW_LIVE_SYSCALL_HOOK(socket_connect)
BW_LIVE_SYSCALL_HOOK(socket_create)
BW_LIVE_SYSCALL_HOOK(socket_getpeername)
BW_LIVE_SYSCALL_HOOK(socket_getsockname)
BW_LIVE_SYSCALL_HOOK(socket_getsockopt)
BW_LIVE_SYSCALL_HOOK(socket_listen)
BW_LIVE_SYSCALL_HOOK(socket_setsockopt)
BW_LIVE_SYSCALL_HOOK(socket_shutdown)
BW_LIVE_SYSCALL_HOOK(syslog)
BW_LIVE_SYSCALL_HOOK(task_kill)

#endif /* BUMBLEWRAP_HOOK_SYSCALLS_H */
