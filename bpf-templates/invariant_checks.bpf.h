/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checks behind the sandbox invariants that have no path rule (see docs/security.md),
 * shared by the invariant hooks (hooks/invariants.bpf.h) and the file_open hook: which
 * sandbox has an invariant in force, whether a task is outside the sandbox, forbidden
 * device nodes, the file systems whose directories are kernel objects, and the report of
 * a denied operation. `unsafe` in a policy clears bits of bw_sandbox.invariants.
 */
#ifndef BUMBLEWRAP_INVARIANT_CHECKS_BPF_H
#define BUMBLEWRAP_INVARIANT_CHECKS_BPF_H

#include <bpf/bpf_core_read.h>

/* The sandbox of the current task when `invariant` is in force there, else NULL. */
static __always_inline const struct bw_sandbox *bw_invariant_sandbox(__u64 *cgid, __u32 invariant)
{
	const struct bw_sandbox *sandbox;

	*cgid = bpf_get_current_cgroup_id();
	sandbox = bw_sandbox_lookup(cgid);
	if (!sandbox || !(sandbox->invariants & invariant))
		return NULL;
	return sandbox;
}

/*
 * Whether the current task's mount namespace is one the sandbox may mount in: the policy
 * says `unsafe namespaces`, and a user namespace other than the sandbox's owns it, one
 * the sandbox created. The kernel then allows only what a user namespace may mount (no
 * block device), keeps the mounts it copied locked together, and lets none propagate
 * back to the namespace it copied.
 */
static __always_inline int bw_own_mount_ns(const struct bw_sandbox *sandbox)
{
	struct task_struct___paths *task = (void *)bpf_get_current_task();
	unsigned int inum;

	if (sandbox->invariants & BW_INV_NAMESPACES)
		return 0;
	if (BPF_CORE_READ_INTO(&inum, task, nsproxy, mnt_ns, user_ns, ns.inum))
		return 0;
	return inum != sandbox->user_ns;
}

/*
 * Reports a denied operation. `name` is a short kernel string (a task's comm, a mount's
 * source) and `path` a longer one (a mount point's or a new directory's name); either may
 * be NULL. Inlined: a BPF call takes at most five arguments.
 */
static __always_inline __attribute__((unused)) void bw_report_op(__u64 cgid, __u32 op, __u32 invariant, __u64 target,
						 __u64 arg, const void *name, const void *path)
{
	struct bw_event *e;
	void *ring;
	long len;

	ring = bpf_map_lookup_elem(&bw_events, &cgid);
	if (!ring)
		return;
	e = bw_event_start(cgid, op);
	if (!e)
		return;
	e->invariant = invariant;
	e->target = target;
	e->arg = arg;
	if (name)
		bpf_probe_read_kernel_str(e->target_comm, sizeof(e->target_comm), name);
	if (path) {
		len = bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
		/* len counts the NUL; the mask only convinces the verifier. */
		if (len > 0)
			e->path_len = (len - 1) & (BW_PATH_MAX - 1);
		else
			e->path_error = len;
	}
	bw_event_send(ring, e);
}

/* The cgroup v2 id of a task, as bpf_get_current_cgroup_id() gives it for the current one. */
static __always_inline __u64 bw_task_cgroup_id(const struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
}

/*
 * Whether `task` is outside `sandbox`: its cgroup has no entry in this program, or the entry
 * of another sandbox. A nested sandbox's processes are inside the sandbox that encloses it.
 */
static __always_inline int bw_outside(const struct bw_sandbox *sandbox, const struct task_struct *task)
{
	__u64 cgid = bw_task_cgroup_id(task);
	const struct bw_sandbox *other = bw_sandbox_lookup(&cgid);

	return !other || other->id != sandbox->id;
}

/*
 * Device nodes no sandbox opens: every block device (raw disk access bypasses every path
 * rule), and the character devices of physical and kernel memory and I/O ports. Decided on
 * the inode's type and number, so a copy made with mknod is covered as well.
 */
static __always_inline int bw_forbidden_device(__u16 mode, __u32 dev)
{
	__u32 major = dev >> MINORBITS, minor = dev & MINORMASK;

	if ((mode & S_IFMT) == S_IFBLK)
		return 1;
	/* drivers/char/mem.c: 1:1 mem, 1:2 kmem, 1:4 port */
	return (mode & S_IFMT) == S_IFCHR && major == 1 && (minor == 1 || minor == 2 || minor == 4);
}

/* The device invariant on an open: 0, or -EPERM for a forbidden device node. */
static __always_inline int bw_device_invariant(const struct bw_sandbox *sandbox, const struct file *file)
{
	struct inode *inode = BPF_CORE_READ(file, f_inode);

	if (!(sandbox->invariants & BW_INV_DEVICES) || !inode)
		return 0;
	return bw_forbidden_device(BPF_CORE_READ(inode, i_mode), BPF_CORE_READ(inode, i_rdev)) ? -EPERM : 0;
}

/* The device invariant on a mknod: 0, or -EPERM for a forbidden device node. */
static __always_inline int bw_mknod_invariant(const struct bw_sandbox *sandbox, __u16 mode, unsigned int dev)
{
	if (!(sandbox->invariants & BW_INV_DEVICES))
		return 0;
	return bw_forbidden_device(mode, dev) ? -EPERM : 0;
}

/*
 * The tty invariant on an ioctl: TIOCSTI pushes bytes into a terminal's input as if typed,
 * and TIOCLINUX can paste the console's selection there, so whatever reads the terminal
 * next, the shell outside the sandbox that bwrun was started from, would run them. Decided
 * on the command alone: both are tty commands, which no other driver takes. 0, or -EPERM
 * after a report.
 */
static __always_inline int bw_tty_invariant(__u64 cgid, const struct bw_sandbox *sandbox, const struct file *file,
					    unsigned int cmd)
{
	if (!(sandbox->invariants & BW_INV_TTY) || (cmd != TIOCSTI && cmd != TIOCLINUX))
		return 0;
	bw_report_op(cgid, BW_OP_TTY, BW_INV_TTY, BPF_CORE_READ(file, f_inode, i_rdev), cmd, 0,
		     BPF_CORE_READ(file, f_path.dentry, d_name.name));
	return -EPERM;
}

/* The file systems whose directories are kernel objects: a cgroup, a BPF pin folder. */
static __always_inline __u32 bw_fs_invariant(const struct inode *inode)
{
	unsigned long magic = BPF_CORE_READ(inode, i_sb, s_magic);

	if (magic == CGROUP2_SUPER_MAGIC)
		return BW_INV_CGROUP;
	if (magic == BPF_FS_MAGIC)
		return BW_INV_BPF;
	return 0;
}

/*
 * The invariants of an open that no path rule decides well: device nodes by number (a
 * mknod'd copy has any path), and the cgroup2 and bpf file systems wherever they are
 * mounted (writes to cgroup.procs move a process between cgroups). 0, or -EPERM after a
 * report.
 */
static __always_inline int bw_open_invariants(__u64 cgid, const struct bw_sandbox *sandbox, const struct file *file)
{
	struct inode *inode = BPF_CORE_READ(file, f_inode);
	__u32 invariant;

	if (!inode)
		return 0;
	if (bw_device_invariant(sandbox, file)) {
		bw_report_op(cgid, BW_OP_DEVICE, BW_INV_DEVICES, BPF_CORE_READ(inode, i_rdev),
			     BPF_CORE_READ(inode, i_mode), 0, BPF_CORE_READ(file, f_path.dentry, d_name.name));
		return -EPERM;
	}
	invariant = bw_fs_invariant(inode);
	/* cgroup2 files may be read (runtimes read their CPU and memory limits there). */
	if (invariant == BW_INV_CGROUP && !(BPF_CORE_READ(file, f_mode) & FMODE_WRITE))
		return 0;
	if (!(sandbox->invariants & invariant))
		return 0;
	bw_report_op(cgid, BW_OP_OPEN, invariant, BPF_CORE_READ(inode, i_sb, s_magic),
		     BPF_CORE_READ(file, f_mode), 0, BPF_CORE_READ(file, f_path.dentry, d_name.name));
	return -EPERM;
}

#endif /* BUMBLEWRAP_INVARIANT_CHECKS_BPF_H */
