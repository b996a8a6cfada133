/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metadata: stat, lstat, fstat, statx (fstat of a pipe or socket passes: decide.bpf.h).
 */
#ifndef BUMBLEWRAP_HOOK_METADATA_H
#define BUMBLEWRAP_HOOK_METADATA_H

#include "decide.bpf.h"

SEC("lsm/inode_getattr")
int BPF_PROG(bw_inode_getattr, const struct path *path, int ret)
{
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	return bw_check(&h, path->mnt, path->dentry, BW_KIND(BW_ACCESS_METADATA));
}

#endif /* BUMBLEWRAP_HOOK_METADATA_H */
