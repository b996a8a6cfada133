/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioctl: the tty invariant first (no input pushed into a terminal); then on a device node
 * the device rule that decides ioctl there, which allows only the commands it lists
 * (devices.bpf.h); then the path rules' `ioctl` kind, on every file with a path. The
 * commands that set the descriptor's flags, as fcntl does unchecked, are no access to the
 * file; those that set the inode's flags (chattr: immutable, append-only) change its
 * attributes and need `attr` as well, since an open with O_ACCMODE 3 asks for neither
 * read nor write. file_ioctl_compat (Linux 6.8 and later) takes the ioctls of 32-bit
 * processes; bwrun does not load it on a kernel without it.
 */
#ifndef BUMBLEWRAP_HOOK_IOCTL_H
#define BUMBLEWRAP_HOOK_IOCTL_H

#include "decide.bpf.h"
#include "invariant_checks.bpf.h"

static __always_inline int bw_descriptor_ioctl(unsigned int cmd)
{
	return cmd == FIOCLEX || cmd == FIONCLEX || cmd == FIONBIO || cmd == FIOASYNC;
}

static __always_inline int bw_attr_ioctl(unsigned int cmd)
{
	return cmd == FS_IOC_SETFLAGS || cmd == FS_IOC32_SETFLAGS || cmd == FS_IOC_FSSETXATTR;
}

static __always_inline int bw_check_ioctl(struct file *file, unsigned int cmd, int ret)
{
	__u32 kinds = BW_KIND(BW_ACCESS_IOCTL);
	struct bw_access a;
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	if (bw_tty_invariant(h.cgid, h.sandbox, file, cmd))
		return -EPERM;
	if (bw_descriptor_ioctl(cmd))
		return 0;
	if (bw_attr_ioctl(cmd))
		kinds |= BW_KIND(BW_ACCESS_ATTR);
	bw_file_access(file, cmd, &a);
	/* Flag conditions hold for the open itself, not for later accesses to the file. */
	a.open_flags = 0;
	return bw_check_access(&h, &a, kinds);
}

SEC("lsm/file_ioctl")
int BPF_PROG(bw_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	return bw_check_ioctl(file, cmd, ret);
}

SEC("?lsm/file_ioctl_compat")
int BPF_PROG(bw_file_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	return bw_check_ioctl(file, cmd, ret);
}

#endif /* BUMBLEWRAP_HOOK_IOCTL_H */
