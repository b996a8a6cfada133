/* SPDX-License-Identifier: GPL-2.0 */
/*
 * New file systems a sandbox makes. Every program that names paths needs this hook, not
 * only those that keep the mount invariant: a file system the sandbox mounted itself
 * has no name in its namespace, and path.bpf.h lets its files pass only when it is
 * recorded here (bw_own_sbs), also under `unsafe mount`.
 */
#ifndef BUMBLEWRAP_HOOK_NEW_FS_H
#define BUMBLEWRAP_HOOK_NEW_FS_H

#include "invariant_checks.bpf.h"

/*
 * What a new super block is to the sandbox that creates it, by its type: 1, one it mounted
 * itself, whose files are made by the sandbox (tmpfs, ramfs, a new devpts instance:
 * each mount makes a fresh one); 0, one named wherever it is mounted (proc, sysfs:
 * path.bpf.h); -1, any other, refused. Others would reach files under no name the
 * policy decides: an overlay opens its layers through kernel-internal mounts, and a
 * FUSE or cgroup file system has no twin in the sandbox's namespace.
 */
static __always_inline int bw_sb_new(unsigned long magic)
{
	if (magic == TMPFS_MAGIC || magic == RAMFS_MAGIC || magic == DEVPTS_SUPER_MAGIC)
		return 1;
	if (magic == PROC_SUPER_MAGIC || magic == SYSFS_MAGIC)
		return 0;
	return -1;
}

/*
 * Every new tree of a file system, mount(2) and fsmount(2) alike (vfs_get_tree): the mount
 * invariant refuses it but in a mount namespace of the sandbox's own, where only the
 * types bw_sb_new allows are made; those of the sandbox's own are kept in bw_own_sbs.
 * A super block the kernel mounts for itself (the mqueue of a new IPC namespace) or
 * mounts where a path walk crossed an automount point (an NFS export, tracefs) passes:
 * the sandbox did not choose it, and its files are still named by the resolver.
 */
SEC("lsm/sb_set_mnt_opts")
int BPF_PROG(bw_inv_sb_set_mnt_opts, struct super_block *sb, void *mnt_opts, unsigned long kern_flags,
	     unsigned long *set_kern_flags, int ret)
{
	const struct bw_sandbox *sandbox;
	unsigned long magic = sb->s_magic;
	__u64 cgid, key = (__u64)sb;
	int own = bw_sb_new(magic);

	if (ret)
		return ret;
	cgid = bpf_get_current_cgroup_id();
	sandbox = bw_sandbox_lookup(&cgid);
	if (!sandbox || (sb->s_flags & (SB_KERNMOUNT | SB_SUBMOUNT)))
		return 0;
	if ((sandbox->invariants & BW_INV_MOUNT) && (own < 0 || !bw_own_mount_ns(sandbox))) {
		bw_report_op(cgid, BW_OP_NEW_FS, BW_INV_MOUNT, 0, magic, sb->s_type->name, 0);
		return -EPERM;
	}
	if (own > 0 && bpf_map_update_elem(&bw_own_sbs, &key, &sandbox->id, BPF_ANY)) {
		bw_report_op(cgid, BW_OP_NEW_FS, BW_INV_MOUNT, 0, magic, sb->s_type->name, 0);
		return -ENOMEM;
	}
	return 0;
}

SEC("lsm/sb_free_security")
int BPF_PROG(bw_inv_sb_free_security, struct super_block *sb)
{
	__u64 key = (__u64)sb;

	bpf_map_delete_elem(&bw_own_sbs, &key);
	return 0;
}

#endif /* BUMBLEWRAP_HOOK_NEW_FS_H */
