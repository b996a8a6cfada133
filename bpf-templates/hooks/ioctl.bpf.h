/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioctl: the tty invariant first (no input pushed into a terminal), then on a device node
 * the device rule that decides ioctl there, which allows only the commands it lists
 * (devices.bpf.h). file_ioctl_compat (Linux 6.8 and later) takes the ioctls of 32-bit
 * processes; bwrun does not load it on a kernel without it. Path rules' ioctl kind is not
 * checked yet, so an ioctl no device rule decides passes.
 */
#ifndef BUMBLEWRAP_HOOK_IOCTL_H
#define BUMBLEWRAP_HOOK_IOCTL_H

#include "devices.bpf.h"
#include "invariant_checks.bpf.h"

static __always_inline int bw_check_ioctl(struct file *file, unsigned int cmd, int ret)
{
	struct inode *inode = file->f_inode;
	__u32 kinds = BW_KIND(BW_ACCESS_IOCTL);
	struct bw_device_access a;
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	if (bw_tty_invariant(h.cgid, h.sandbox, file, cmd))
		return -EPERM;
	if (!bw_is_device(inode->i_mode))
		return 0;
	a.mnt = file->f_path.mnt;
	a.dentry = file->f_path.dentry;
	a.mode = inode->i_mode;
	a.dev = inode->i_rdev;
	a.cmd = cmd;
	return bw_device_check(&h, &a, &kinds);
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
