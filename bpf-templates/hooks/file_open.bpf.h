/* SPDX-License-Identifier: GPL-2.0 */
/*
 * file_open: read, write, append and exec (execve's open of the binary and the
 * interpreter), decided on the path the resolver names, after the invariants that no
 * path decides (device numbers, cgroup2 and bpffs wherever mounted). On a device node
 * the device rules decide first (devices.bpf.h).
 */
#ifndef BUMBLEWRAP_HOOK_FILE_OPEN_H
#define BUMBLEWRAP_HOOK_FILE_OPEN_H

#include "decide.bpf.h"
#include "invariant_checks.bpf.h"

/* What an open asks for: exec, or read and/or write (append when O_APPEND). */
static __u32 bw_open_kinds(const struct file *file)
{
	__u32 kinds = 0;

	if ((file->f_mode & FMODE_EXEC) || (file->f_flags & __FMODE_EXEC))
		return BW_KIND(BW_ACCESS_EXEC);
	if (file->f_mode & FMODE_READ)
		kinds |= BW_KIND(BW_ACCESS_READ);
	if (file->f_mode & FMODE_WRITE)
		kinds |= BW_KIND((file->f_flags & O_APPEND) ? BW_ACCESS_APPEND : BW_ACCESS_WRITE);
	return kinds;
}

SEC("lsm/file_open")
int BPF_PROG(bw_file_open, struct file *file, int ret)
{
	__u32 kinds = bw_open_kinds(file);
	struct bw_access a;
	struct bw_hook h;
	int err;

	/* An earlier program already denied: keep its answer. */
	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	err = bw_open_invariants(h.cgid, h.sandbox, file);
	if (err)
		return err;
	/* An open with O_ACCMODE 3 asks for no access kind. */
	if (!kinds)
		return 0;
	bw_file_access(file, 0, &a);
	return bw_check_access(&h, &a, kinds);
}

#endif /* BUMBLEWRAP_HOOK_FILE_OPEN_H */
