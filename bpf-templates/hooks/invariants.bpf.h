/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sandbox invariants that have no path rule (see docs/security.md): signals and ptrace
 * across the sandbox's border, mounts, BPF, perf, kernel modules, cgroup2 and bpffs
 * directories, device nodes (opens are checked by the file_open hook, with the same
 * helpers). Each program asks the sandbox's mask (bw_sandbox.invariants) whether its
 * invariant is in force.
 *
 * With `unsafe namespaces`, the sandbox may create user namespaces, and mount, unmount,
 * pivot_root and chroot inside a mount namespace that one of them owns (bw_own_mount_ns);
 * what it reaches there is still decided on its names in the sandbox's namespace
 * (path.bpf.h). Which file systems it may create there, hooks/new_fs.bpf.h decides.
 *
 * Every program returns an earlier program's denial unchanged, then looks up the current
 * cgroup's sandbox and returns 0 at once outside every sandbox. None of them is sleepable:
 * they read kernel memory and write the ring buffer only. Hook arguments read here are the
 * same, at the same positions, on 6.1 and 6.12 (include/linux/lsm_hook_defs.h).
 */
#ifndef BUMBLEWRAP_HOOK_INVARIANTS_H
#define BUMBLEWRAP_HOOK_INVARIANTS_H

#include "invariant_checks.bpf.h"

SEC("lsm/task_kill")
int BPF_PROG(bw_inv_task_kill, struct task_struct *p, void *info, int sig, const void *cred, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_SIGNAL);
	if (!sandbox || !bw_outside(sandbox, p))
		return 0;
	bw_report_op(cgid, BW_OP_SIGNAL, BW_INV_SIGNAL, BPF_CORE_READ(p, tgid), sig, p->comm, 0);
	return -EPERM;
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(bw_inv_ptrace_access_check, struct task_struct *child, unsigned int mode, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_PTRACE);
	if (!sandbox || !bw_outside(sandbox, child))
		return 0;
	/* Reads of /proc/PID/stat and the like ask quietly; only what the kernel would audit is reported. */
	if (!(mode & PTRACE_MODE_NOAUDIT))
		bw_report_op(cgid, BW_OP_PTRACE, BW_INV_PTRACE, BPF_CORE_READ(child, tgid), mode, child->comm, 0);
	return -EPERM;
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(bw_inv_ptrace_traceme, struct task_struct *parent, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_PTRACE);
	if (!sandbox || !bw_outside(sandbox, parent))
		return 0;
	bw_report_op(cgid, BW_OP_PTRACE, BW_INV_PTRACE, BPF_CORE_READ(parent, tgid), 0, parent->comm, 0);
	return -EPERM;
}

/* clone or unshare with CLONE_NEWUSER; "?": the hook is there from 6.1. */
SEC("?lsm/userns_create")
int BPF_PROG(bw_inv_userns_create, const struct cred *cred, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_invariant_sandbox(&cgid, BW_INV_NAMESPACES))
		return 0;
	bw_report_op(cgid, BW_OP_USERNS, BW_INV_NAMESPACES, 0, 0, 0, 0);
	return -EPERM;
}

/*
 * A mount moved, or attached from a detached tree (open_tree, fsmount), in a mount
 * namespace of the sandbox's own: its source needs `read` on its names in the sandbox's
 * namespace. (mount(2) with MS_BIND or MS_MOVE names its source by a string the kernel
 * resolves after the hook: there every access through the new mount is decided on the
 * file's own names, as here.) A specialised program without the file_open hook allows
 * every read.
 */
static __always_inline int bw_check_move_source(__u64 cgid, const struct bw_sandbox *sandbox,
						const struct path *from_path)
{
#if !defined(BW_HOOK_FILE_OPEN) || BW_HOOK_FILE_OPEN
	struct bw_hook h = { .cgid = cgid, .sandbox = sandbox };

	return bw_check(&h, from_path->mnt, from_path->dentry, BW_KIND(BW_ACCESS_READ));
#else
	return 0;
#endif
}

SEC("lsm/sb_mount")
int BPF_PROG(bw_inv_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_MOUNT);
	if (!sandbox || bw_own_mount_ns(sandbox))
		return 0;
	bw_report_op(cgid, BW_OP_MOUNT, BW_INV_MOUNT, 0, flags, dev_name,
		     BPF_CORE_READ(path, dentry, d_name.name));
	return -EPERM;
}

SEC("lsm/move_mount")
int BPF_PROG(bw_inv_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_MOUNT);
	if (!sandbox)
		return 0;
	if (bw_own_mount_ns(sandbox))
		return bw_check_move_source(cgid, sandbox, from_path);
	bw_report_op(cgid, BW_OP_MOUNT, BW_INV_MOUNT, 0, 0, 0, BPF_CORE_READ(to_path, dentry, d_name.name));
	return -EPERM;
}

SEC("lsm/sb_umount")
int BPF_PROG(bw_inv_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_MOUNT);
	if (!sandbox || bw_own_mount_ns(sandbox))
		return 0;
	bw_report_op(cgid, BW_OP_UMOUNT, BW_INV_MOUNT, 0, flags, 0, 0);
	return -EPERM;
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(bw_inv_sb_pivotroot, const struct path *old_path, const struct path *new_path, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_MOUNT);
	if (!sandbox || bw_own_mount_ns(sandbox))
		return 0;
	bw_report_op(cgid, BW_OP_PIVOT_ROOT, BW_INV_MOUNT, 0, 0, 0, BPF_CORE_READ(new_path, dentry, d_name.name));
	return -EPERM;
}

SEC("lsm/path_chroot")
int BPF_PROG(bw_inv_path_chroot, const struct path *path, int ret)
{
	const struct bw_sandbox *sandbox;
	__u64 cgid;

	if (ret)
		return ret;
	sandbox = bw_invariant_sandbox(&cgid, BW_INV_MOUNT);
	if (!sandbox || bw_own_mount_ns(sandbox))
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

#endif /* BUMBLEWRAP_HOOK_INVARIANTS_H */
