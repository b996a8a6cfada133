/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sandbox invariants that have no path rule (see docs/security.md): signals and ptrace
 * across the sandbox's border, mounts, BPF, perf, kernel modules, cgroup2 and bpffs
 * directories, device nodes. Each program asks the sandbox's mask (bw_sandbox.invariants)
 * whether its invariant is in force; `unsafe` in a policy clears bits of it.
 *
 * Every program returns an earlier program's denial unchanged, then looks up the current
 * cgroup's sandbox and returns 0 at once outside every sandbox. None of them is sleepable:
 * they read kernel memory and write the ring buffer only. Hook arguments read here are the
 * same, at the same positions, on 6.1 and 6.12 (include/linux/lsm_hook_defs.h).
 */
#ifndef BUMBLEWRAP_HOOK_INVARIANTS_H
#define BUMBLEWRAP_HOOK_INVARIANTS_H

#include <bpf/bpf_core_read.h>

/* The sandbox of the current task when `invariant` is in force there, else NULL. */
static __always_inline const struct bw_sandbox *bw_invariant_sandbox(__u64 *cgid, __u32 invariant)
{
	const struct bw_sandbox *sandbox;

	*cgid = bpf_get_current_cgroup_id();
	sandbox = bpf_map_lookup_elem(&bw_sandboxes, cgid);
	if (!sandbox || !(sandbox->invariants & invariant))
		return NULL;
	return sandbox;
}

/*
 * Reports a denied operation. `name` is a short kernel string (a task's comm, a mount's
 * source) and `path` a longer one (a mount point's or a new directory's name); either may
 * be NULL.
 */
static __attribute__((unused)) void bw_report_op(__u64 cgid, __u32 op, __u32 invariant, __u64 target,
						 __u64 arg, const void *name, const void *path)
{
	struct bw_event *e;
	void *ring;
	long len;

	ring = bpf_map_lookup_elem(&bw_events, &cgid);
	if (!ring)
		return;
	e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);
	if (!e)
		return;
	e->cgroup_id = cgid;
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->rule_id = 0;
	e->access = 0;
	e->op = op;
	e->invariant = invariant;
	e->target = target;
	e->arg = arg;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->target_comm[0] = 0;
	if (name)
		bpf_probe_read_kernel_str(e->target_comm, sizeof(e->target_comm), name);
	e->path_error = 0;
	e->path_len = 0;
	if (path) {
		len = bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
		/* len counts the NUL; the mask only convinces the verifier. */
		if (len > 0)
			e->path_len = (len - 1) & (BW_PATH_MAX - 1);
		else
			e->path_error = len;
	}
	bpf_ringbuf_submit(e, 0);
}

/* The cgroup v2 id of a task, as bpf_get_current_cgroup_id() gives it for the current one. */
static __always_inline __u64 bw_task_cgroup_id(const struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
}

/* Whether `task` is outside the sandbox whose cgroup is `cgid`. */
static __always_inline int bw_outside(__u64 cgid, const struct task_struct *task)
{
	return bw_task_cgroup_id(task) != cgid;
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

SEC("lsm/task_kill")
int BPF_PROG(bw_inv_task_kill, struct task_struct *p, void *info, int sig, const void *cred, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_SIGNAL) || !bw_outside(cgid, p))
		return 0;
	bw_report_op(cgid, BW_OP_SIGNAL, BW_INV_SIGNAL, BPF_CORE_READ(p, tgid), sig, p->comm, 0);
	return -EPERM;
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(bw_inv_ptrace_access_check, struct task_struct *child, unsigned int mode, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_PTRACE) || !bw_outside(cgid, child))
		return 0;
	/* Reads of /proc/PID/stat and the like ask quietly; only what the kernel would audit is reported. */
	if (!(mode & PTRACE_MODE_NOAUDIT))
		bw_report_op(cgid, BW_OP_PTRACE, BW_INV_PTRACE, BPF_CORE_READ(child, tgid), mode, child->comm, 0);
	return -EPERM;
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(bw_inv_ptrace_traceme, struct task_struct *parent, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_PTRACE) || !bw_outside(cgid, parent))
		return 0;
	bw_report_op(cgid, BW_OP_PTRACE, BW_INV_PTRACE, BPF_CORE_READ(parent, tgid), 0, parent->comm, 0);
	return -EPERM;
}

SEC("lsm/sb_mount")
int BPF_PROG(bw_inv_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_MOUNT))
		return 0;
	bw_report_op(cgid, BW_OP_MOUNT, BW_INV_MOUNT, 0, flags, dev_name,
		     BPF_CORE_READ(path, dentry, d_name.name));
	return -EPERM;
}

SEC("lsm/move_mount")
int BPF_PROG(bw_inv_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_MOUNT))
		return 0;
	bw_report_op(cgid, BW_OP_MOUNT, BW_INV_MOUNT, 0, 0, 0, BPF_CORE_READ(to_path, dentry, d_name.name));
	return -EPERM;
}

SEC("lsm/sb_umount")
int BPF_PROG(bw_inv_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_MOUNT))
		return 0;
	bw_report_op(cgid, BW_OP_UMOUNT, BW_INV_MOUNT, 0, flags, 0, 0);
	return -EPERM;
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(bw_inv_sb_pivotroot, const struct path *old_path, const struct path *new_path, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_MOUNT))
		return 0;
	bw_report_op(cgid, BW_OP_PIVOT_ROOT, BW_INV_MOUNT, 0, 0, 0, BPF_CORE_READ(new_path, dentry, d_name.name));
	return -EPERM;
}

SEC("lsm/path_chroot")
int BPF_PROG(bw_inv_path_chroot, const struct path *path, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_MOUNT))
		return 0;
	bw_report_op(cgid, BW_OP_CHROOT, BW_INV_MOUNT, 0, 0, 0, BPF_CORE_READ(path, dentry, d_name.name));
	return -EPERM;
}

SEC("lsm/bpf")
int BPF_PROG(bw_inv_bpf, int cmd, void *attr, unsigned int size, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_BPF))
		return 0;
	bw_report_op(cgid, BW_OP_BPF, BW_INV_BPF, 0, cmd, 0, 0);
	return -EPERM;
}

/*
 * perf_event_open's own hook lost its attr argument in 6.12 (measured in the kernels' BTF),
 * which moves `ret`; perf_event_alloc has one argument on both and runs for every event
 * a task creates, hardware breakpoints set through ptrace included.
 */
SEC("lsm/perf_event_alloc")
int BPF_PROG(bw_inv_perf_event_alloc, void *event, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_PERF))
		return 0;
	bw_report_op(cgid, BW_OP_PERF, BW_INV_PERF, 0, 0, 0, 0);
	return -EPERM;
}

/* finit_module and kexec_file_load read their image through kernel_read_file. */
SEC("lsm/kernel_read_file")
int BPF_PROG(bw_inv_kernel_read_file, struct file *file, enum kernel_read_file_id id, int contents, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (id != bpf_core_enum_value(enum kernel_read_file_id, READING_MODULE) &&
	    id != bpf_core_enum_value(enum kernel_read_file_id, READING_KEXEC_IMAGE) &&
	    id != bpf_core_enum_value(enum kernel_read_file_id, READING_KEXEC_INITRAMFS))
		return 0;
	if (!bw_invariant_sandbox(&cgid, BW_INV_MODULES))
		return 0;
	bw_report_op(cgid, BW_OP_MODULE, BW_INV_MODULES, 0, id, 0, 0);
	return -EPERM;
}

/* init_module and kexec_load hand the image over in memory. */
SEC("lsm/kernel_load_data")
int BPF_PROG(bw_inv_kernel_load_data, enum kernel_load_data_id id, int contents, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (id != bpf_core_enum_value(enum kernel_load_data_id, LOADING_MODULE) &&
	    id != bpf_core_enum_value(enum kernel_load_data_id, LOADING_KEXEC_IMAGE) &&
	    id != bpf_core_enum_value(enum kernel_load_data_id, LOADING_KEXEC_INITRAMFS))
		return 0;
	if (!bw_invariant_sandbox(&cgid, BW_INV_MODULES))
		return 0;
	bw_report_op(cgid, BW_OP_MODULE, BW_INV_MODULES, 0, id, 0, 0);
	return -EPERM;
}

/* A socket of an unloaded family makes the kernel run modprobe: a module load by proxy. */
SEC("lsm/kernel_module_request")
int BPF_PROG(bw_inv_kernel_module_request, char *kmod_name, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_MODULES))
		return 0;
	bw_report_op(cgid, BW_OP_MODULE, BW_INV_MODULES, 0, 0, 0, kmod_name);
	return -EPERM;
}

/* A directory on cgroup2 is a new cgroup, one on bpffs a pin folder, whatever its path. */
SEC("lsm/inode_mkdir")
int BPF_PROG(bw_inv_inode_mkdir, struct inode *dir, struct dentry *dentry, __u16 mode, int ret)
{
	__u32 invariant;
	__u64 cgid;

	if (ret)
		return ret;
	invariant = bw_fs_invariant(dir);
	if (!invariant || !bw_invariant_sandbox(&cgid, invariant))
		return 0;
	bw_report_op(cgid, BW_OP_MKDIR, invariant, 0, BPF_CORE_READ(dir, i_sb, s_magic), 0,
		     BPF_CORE_READ(dentry, d_name.name));
	return -EPERM;
}

SEC("lsm/inode_mknod")
int BPF_PROG(bw_inv_inode_mknod, struct inode *dir, struct dentry *dentry, __u16 mode, __u32 dev, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_DEVICES);
	if (!sandbox || !bw_mknod_invariant(sandbox, mode, dev))
		return 0;
	bw_report_op(cgid, BW_OP_MKNOD, BW_INV_DEVICES, dev, mode, 0, BPF_CORE_READ(dentry, d_name.name));
	return -EPERM;
}

/*
 * Opens that no path rule decides well: device nodes by number (a mknod'd copy has any
 * path), and the cgroup2 and bpf file systems wherever they are mounted (writes to
 * cgroup.procs move a process between cgroups).
 */
SEC("lsm/file_open")
int BPF_PROG(bw_inv_file_open, struct file *file, int ret)
{
	const struct bw_sandbox *sandbox;
	struct inode *inode;
	__u32 invariant;
	__u64 cgid;

	if (ret)
		return ret;
	cgid = bpf_get_current_cgroup_id();
	sandbox = bpf_map_lookup_elem(&bw_sandboxes, &cgid);
	if (!sandbox)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
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

#endif /* BUMBLEWRAP_HOOK_INVARIANTS_H */
