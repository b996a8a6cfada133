/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rename: the old name needs `rename`, the new name `create`, and a file the rename
 * replaces at the new name `delete` (it is gone afterwards). RENAME_EXCHANGE moves both
 * files: each name needs `rename` and `create`, and nothing is deleted.
 */
#ifndef BUMBLEWRAP_HOOK_RENAME_H
#define BUMBLEWRAP_HOOK_RENAME_H

#include "decide.bpf.h"

SEC("lsm/path_rename")
int BPF_PROG(bw_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags, int ret)
{
	__u32 moved = BW_KIND(BW_ACCESS_RENAME) | BW_KIND(BW_ACCESS_CREATE);
	__u32 old_kinds = BW_KIND(BW_ACCESS_RENAME), new_kinds = BW_KIND(BW_ACCESS_CREATE);
	struct bw_hook h;
	int err;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	if (flags & RENAME_EXCHANGE)
		old_kinds = new_kinds = moved;
	else if (BPF_CORE_READ(new_dentry, d_inode))
		new_kinds |= BW_KIND(BW_ACCESS_DELETE);
	err = bw_check(&h, old_dir->mnt, old_dentry, old_kinds);
	if (err)
		return err;
	return bw_check(&h, new_dir->mnt, new_dentry, new_kinds);
}

#endif /* BUMBLEWRAP_HOOK_RENAME_H */
