/* SPDX-License-Identifier: GPL-2.0 */
/* delete: unlink and rmdir of the name. */
#ifndef BUMBLEWRAP_HOOK_DELETE_H
#define BUMBLEWRAP_HOOK_DELETE_H

#include "decide.bpf.h"

static __always_inline int bw_check_delete(const struct path *dir, struct dentry *dentry, int ret)
{
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	return bw_check(&h, dir->mnt, dentry, BW_KIND(BW_ACCESS_DELETE));
}

SEC("lsm/path_unlink")
int BPF_PROG(bw_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	return bw_check_delete(dir, dentry, ret);
}

SEC("lsm/path_rmdir")
int BPF_PROG(bw_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	return bw_check_delete(dir, dentry, ret);
}

#endif /* BUMBLEWRAP_HOOK_DELETE_H */
