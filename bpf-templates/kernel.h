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
