/* SPDX-License-Identifier: GPL-2.0 */
/*
 * attr: chmod and chown (and their f- and at- forms), decided on the file's path.
 * utimes and extended attributes reach the LSM only as a dentry without its mount
 * (inode_setattr, inode_setxattr): they are not checked yet.
 */
#ifndef BUMBLEWRAP_HOOK_ATTR_H
#define BUMBLEWRAP_HOOK_ATTR_H

#include "decide.bpf.h"

static __always_inline int bw_check_attr(const struct path *path, int ret)
{
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	return bw_check(&h, path->mnt, path->dentry, BW_KIND(BW_ACCESS_ATTR));
}

SEC("lsm/path_chmod")
int BPF_PROG(bw_path_chmod, const struct path *path, unsigned short mode, int ret)
{
	return bw_check_attr(path, ret);
}

/* kuid_t and kgid_t are one-word structs, passed as a word each. */
SEC("lsm/path_chown")
int BPF_PROG(bw_path_chown, const struct path *path, unsigned int uid, unsigned int gid, int ret)
{
	return bw_check_attr(path, ret);
}

#endif /* BUMBLEWRAP_HOOK_ATTR_H */
