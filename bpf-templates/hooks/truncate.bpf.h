/* SPDX-License-Identifier: GPL-2.0 */
/*
 * truncate(2) is a `write` of the file. ftruncate and open(O_TRUNC) need a file open for
 * writing, which file_open decided already (on 6.1 they also come here; from 6.2 they
 * go to file_truncate instead).
 */
#ifndef BUMBLEWRAP_HOOK_TRUNCATE_H
#define BUMBLEWRAP_HOOK_TRUNCATE_H

#include "decide.bpf.h"

SEC("lsm/path_truncate")
int BPF_PROG(bw_path_truncate, const struct path *path, int ret)
{
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	return bw_check(&h, path->mnt, path->dentry, BW_KIND(BW_ACCESS_WRITE));
}

#endif /* BUMBLEWRAP_HOOK_TRUNCATE_H */
