/* SPDX-License-Identifier: GPL-2.0 */
/*
 * attr on what the kernel hands the LSM as a dentry without its mount: extended
 * attributes (setxattr, removexattr and their f- and l- forms; from 6.2 POSIX ACLs go to
 * inode_set_acl and inode_remove_acl instead) and time changes (utime, utimes, utimensat,
 * futimens: inode_setattr).
 *
 * Without the mount there is no one path: the file is decided on every name it has in the
 * sandbox's mount namespace (names.bpf.h).
 */
#ifndef BUMBLEWRAP_HOOK_XATTR_H
#define BUMBLEWRAP_HOOK_XATTR_H

#include "decide.bpf.h"

/* bw_check_names of a dentry, for `kinds`. */
static __always_inline int bw_check_dentry(const struct bw_hook *h, struct dentry *dentry, __u32 kinds)
{
	struct bw_request *req = bw_request(h, kinds);

	if (!req)
		return -EACCES;
	req->query.a.dentry = dentry;
	return bw_check_names(h, req);
}

static __always_inline int bw_check_dentry_attr(struct dentry *dentry, int ret)
{
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	return bw_check_dentry(&h, dentry, BW_KIND(BW_ACCESS_ATTR));
}

/* The first argument is a user_namespace on 6.1 and a mnt_idmap from 6.3: unused. */
SEC("lsm/inode_setxattr")
int BPF_PROG(bw_inode_setxattr, void *idmap, struct dentry *dentry, const char *name, const void *value,
	     __u64 size, int flags, int ret)
{
	return bw_check_dentry_attr(dentry, ret);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(bw_inode_removexattr, void *idmap, struct dentry *dentry, const char *name, int ret)
{
	return bw_check_dentry_attr(dentry, ret);
}

/* From 6.2; "?": bwrun loads them only where the kernel has the hooks. */
SEC("?lsm/inode_set_acl")
int BPF_PROG(bw_inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name, void *kacl, int ret)
{
	return bw_check_dentry_attr(dentry, ret);
}

SEC("?lsm/inode_remove_acl")
int BPF_PROG(bw_inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name, int ret)
{
	return bw_check_dentry_attr(dentry, ret);
}

/*
 * Time changes: explicit times need `attr`; times set to now (ATTR_TOUCH: utimes(NULL),
 * UTIME_NOW) are what any write does, and need `write`. chmod, chown and truncate also
 * come here, but their path hooks decided them already. The hook gained a leading
 * mnt_idmap (6.1: dentry, iattr; 6.12: idmap, dentry, iattr), so the arguments are read
 * by position from the argument count.
 */
SEC("lsm/inode_setattr")
int bw_inode_setattr(__u64 *ctx)
{
	__u64 first = bpf_get_func_arg_cnt(ctx) == 3 ? 1 : 0, arg = 0;
	unsigned int valid;
	struct bw_hook h;

	/*
	 * One slot for the return value and each argument in turn: this frame and the ones
	 * below it share 6.1's 512 bytes. An earlier program's denial is passed on; from
	 * 6.12 the verifier wants it to be an errno.
	 */
	if (!bpf_get_func_ret(ctx, &arg) && (int)arg)
		return (int)arg < 0 && (int)arg >= -MAX_ERRNO ? (int)arg : -EACCES;
	if (!bw_hook_enter(&h))
		return 0;
	if (bpf_get_func_arg(ctx, first + 1, &arg) ||
	    bpf_core_read(&valid, sizeof(valid), &((struct iattr *)arg)->ia_valid) ||
	    bpf_get_func_arg(ctx, first, &arg)) {
		bw_report(h.cgid, 0, -EFAULT, BW_ACCESS_ATTR, h.sandbox->default_rule);
		return -EACCES;
	}
	if (!(valid & (ATTR_ATIME | ATTR_MTIME)) || (valid & (ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_SIZE)))
		return 0;
	return bw_check_dentry(&h, (struct dentry *)arg, BW_KIND(valid & ATTR_TOUCH ? BW_ACCESS_WRITE : BW_ACCESS_ATTR));
}

#endif /* BUMBLEWRAP_HOOK_XATTR_H */
