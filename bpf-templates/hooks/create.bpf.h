/* SPDX-License-Identifier: GPL-2.0 */
/*
 * create: a new name in a directory, decided before it exists. path_mknod also runs for
 * open(O_CREAT) of a file that does not exist yet (may_o_create), so a denied create
 * leaves no empty file behind. The device rules decide first on a new device node.
 */
#ifndef BUMBLEWRAP_HOOK_CREATE_H
#define BUMBLEWRAP_HOOK_CREATE_H

#include "decide.bpf.h"

static __always_inline int bw_check_create(const struct path *dir, struct dentry *dentry, int ret)
{
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	return bw_check(&h, dir->mnt, dentry, BW_KIND(BW_ACCESS_CREATE));
}

SEC("lsm/path_mknod")
int BPF_PROG(bw_path_mknod, const struct path *dir, struct dentry *dentry, unsigned short mode,
	     unsigned int dev, int ret)
{
	struct bw_access a = {
		.mnt = dir->mnt,
		.dentry = dentry,
		.mode = mode,
		.dev = bw_decode_user_dev(dev),
	};
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	return bw_check_access(&h, &a, BW_KIND(BW_ACCESS_CREATE));
}

SEC("lsm/path_mkdir")
int BPF_PROG(bw_path_mkdir, const struct path *dir, struct dentry *dentry, unsigned short mode, int ret)
{
	return bw_check_create(dir, dentry, ret);
}

SEC("lsm/path_symlink")
int BPF_PROG(bw_path_symlink, const struct path *dir, struct dentry *dentry, const char *old_name, int ret)
{
	return bw_check_create(dir, dentry, ret);
}

#endif /* BUMBLEWRAP_HOOK_CREATE_H */
