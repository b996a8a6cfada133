/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the BPF programs touch, marked for CO-RE relocation so one
 * object loads on every kernel with BTF. Far cheaper to compile than a full vmlinux.h.
 */
#ifndef BUMBLEWRAP_KERNEL_H
#define BUMBLEWRAP_KERNEL_H

#include <linux/types.h>

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct vfsmount;
struct dentry;
struct task_struct;

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
	unsigned int f_mode;
	unsigned int f_flags;
};

#pragma clang attribute pop

/* paths and mounts */
#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct qstr {
	union {
		struct {
			__u32 hash;
			__u32 len;
		};
		__u64 hash_len;
	};
	const unsigned char *name;
};

struct inode;

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
};

struct vfsmount {
	struct dentry *mnt_root;
};

struct mnt_namespace;

/* fs/mount.h: the mount tree node around each vfsmount */
struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
	struct mnt_namespace *mnt_ns;
};

struct mnt_namespace {
	struct mount *root;
};

struct nsproxy {
	struct mnt_namespace *mnt_ns;
};

/* A flavour (libbpf ignores the ___ suffix), so other blocks may define task_struct. */
struct task_struct___paths {
	struct nsproxy *nsproxy;
};

struct linux_binprm {
	struct file *file;
};

struct vm_area_struct {
	struct file *vm_file;
};

#pragma clang attribute pop

/* fs/mount.h: the mnt_ns of kern_mount()ed filesystems (pipes, sockets, memfds) */
#define MNT_NS_INTERNAL ((void *)-22L)
/* include/uapi/asm-generic/mman-common.h */
#define PROT_EXEC 0x4
/* include/uapi/linux/fs.h */
#define RENAME_EXCHANGE (1 << 1)

#define ENOENT 2
#define ENODEV 19
#define EXDEV 18
#define EFAULT 14
#define ELOOP 40

/* include/linux/fs.h */
#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
#define FMODE_EXEC 0x20

/* include/uapi/asm-generic/fcntl.h */
#define O_APPEND 02000
/* include/linux/fs.h: exec opens carry it in f_flags; some kernels copy it to f_mode */
#define __FMODE_EXEC 0x20

#define EACCES 13
#define ENOMEM 12
#define ENAMETOOLONG 36

#endif /* BUMBLEWRAP_KERNEL_H */
