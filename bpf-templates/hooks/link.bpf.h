/* SPDX-License-Identifier: GPL-2.0 */
/*
 * link: a hard link needs `link` on the existing file and `create` on the new name. The
 * hook gives the existing file as a dentry only; linkat refuses links across mounts
 * (EXDEV) before the hook runs, so it is seen through new_dir's mount.
 */
#ifndef BUMBLEWRAP_HOOK_LINK_H
#define BUMBLEWRAP_HOOK_LINK_H

#include "decide.bpf.h"

SEC("lsm/path_link")
int BPF_PROG(bw_path_link, struct dentry *old_dentry, const struct path *new_dir, struct dentry *new_dentry,
	     int ret)
{
	struct bw_hook h;
	int err;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	err = bw_check(&h, new_dir->mnt, old_dentry, BW_KIND(BW_ACCESS_LINK));
	if (err)
		return err;
	return bw_check(&h, new_dir->mnt, new_dentry, BW_KIND(BW_ACCESS_CREATE));
}

#endif /* BUMBLEWRAP_HOOK_LINK_H */
