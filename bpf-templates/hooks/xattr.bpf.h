/* SPDX-License-Identifier: GPL-2.0 */
/*
 * attr on what the kernel hands the LSM as a dentry without its mount: extended
 * attributes (setxattr, removexattr and their f- and l- forms; from 6.2 POSIX ACLs go to
 * inode_set_acl and inode_remove_acl instead) and time changes (utime, utimes, utimensat,
 * futimens: inode_setattr).
 *
 * Without the mount there is no one path: the file is decided on every name it has in the
 * sandbox's mount namespace, one per mount of its file system whose tree holds it (a bind
 * mount gives it a second name), and any denial wins. A file with no name in the
 * namespace is denied, unless it lives on a kernel-internal mount (memfd, pipe, socket)
 * or on a file system the sandbox mounted itself: such files pass, as in decide.bpf.h.
 * The search is bounded (path.bpf.h): a file system with more mounts than it looks at,
 * or a file with more names, is denied.
 *
 * Stacking file systems (overlayfs) repeat the call on their layer's file with borrowed
 * credentials after the overlay's own name was decided: a call made with borrowed
 * credentials on a file system that a kernel-internal mount holds (an overlay's layer)
 * passes.
 */
#ifndef BUMBLEWRAP_HOOK_XATTR_H
#define BUMBLEWRAP_HOOK_XATTR_H

#include "decide.bpf.h"

/* One name to decide, in the only form a global function takes: memory of plain values. */
struct bw_name_query {
	__u64 cgid;
	__u64 mnt;    /* const struct vfsmount * */
	__u64 dentry; /* struct dentry * */
};

/* The mounts of the sandbox's namespace that may hold the file, kept by the walk, and
 * the query for each in turn. */
struct bw_name_mounts {
	__u64 mnt[BW_NAMES_MAX]; /* struct mount * */
	__u32 count;             /* of mnt */
	__u32 internal;          /* a kernel-internal mount holds the file system */
	struct bw_name_query query;
	struct bw_mounts_walk walk;
};

/* Per task, off the stack: 6.1 gives all the frames of a program 512 bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_name_mounts);
} bw_name_mounts SEC(".maps");

/*
 * bw_check of the dentry through one mount, -EXDEV unreported when the mount's tree does
 * not hold it. The sandbox is looked up again: a global function takes no pointer to a
 * map value.
 */
static __always_inline int bw_check_name(const struct bw_name_query *q, __u32 kinds)
{
	struct bw_hook h;

	if (!q)
		return -EACCES;
	h.cgid = q->cgid;
	h.sandbox = bpf_map_lookup_elem(&bw_sandboxes, &h.cgid);
	/* The calling hook found it: only the sandbox's removal races here. */
	if (!h.sandbox)
		return -EACCES;
	return bw_check(&h, (const struct vfsmount *)q->mnt, (struct dentry *)q->dentry, kinds | BW_OTHER_TREE_SILENT);
}

/*
 * Global functions, one per access kind: the verifier checks each once, with unknown
 * arguments but a known kind. With the kind unknown too, it walked every decision of the
 * policy: on 6.1, setxattr's program took 106,000 instructions and 1.4 s to verify,
 * against 8,600 and 0.1 s with the kind known. A static function would be checked again
 * in every state of its caller: 6.12's verifier went past its million instructions so.
 */
__noinline int bw_check_name_attr(const struct bw_name_query *q)
{
	return bw_check_name(q, BW_KIND(BW_ACCESS_ATTR));
}

__noinline int bw_check_name_write(const struct bw_name_query *q)
{
	return bw_check_name(q, BW_KIND(BW_ACCESS_WRITE));
}

/* A call of a stacking file system on its layer, made with the credentials it borrows. */
static __always_inline int bw_borrowed_creds(void)
{
	struct task_struct___paths *task = (void *)bpf_get_current_task();
	const struct cred *cred, *real_cred;

	if (bpf_core_read(&cred, sizeof(cred), &task->cred) ||
	    bpf_core_read(&real_cred, sizeof(real_cred), &task->real_cred))
		return 0;
	return cred != real_cred;
}

/*
 * Finds the mounts of the sandbox's namespace that may hold the dentry (found->mnt, count)
 * and whether a kernel-internal mount holds its file system. A frame of its own: the walk's
 * state is not on the stack while the names are decided (6.1 gives all the frames of a
 * program 512 bytes).
 */
static __noinline int bw_names_collect(const struct bw_sandbox *sandbox, struct super_block *sb,
				       struct bw_name_mounts *found)
{
	struct bw_mounts_walk *n = &found->walk;
	struct bw_sb_mounts c = { .w = n, .found = found->mnt };
	int err;

	found->count = 0;
	found->internal = 0;
	if (bw_borrowed_creds()) {
		bw_sb_mounts_start(n, sb, sandbox->mnt_ns, 0);
		err = bw_sb_mounts_walk(&c);
		if (err || n->internal) {
			found->internal = n->internal;
			return err;
		}
	}
	bw_sb_mounts_start(n, sb, sandbox->mnt_ns, 1);
	err = bw_sb_mounts_walk(&c);
	found->count = n->count;
	found->internal = n->internal;
	return err;
}

/*
 * 0 when the policy allows `kinds` (attr or write, one of them) on every name of the
 * dentry in the namespace; -EACCES (reported) otherwise, or when the names cannot all be
 * found.
 */
static __always_inline int bw_check_names(const struct bw_hook *h, struct dentry *dentry, __u32 kinds)
{
	struct bw_name_mounts *found;
	struct super_block *sb;
	int err, named = 0;
	__u32 i;

	found = bpf_task_storage_get(&bw_name_mounts, bpf_get_current_task_btf(), 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!found) {
		err = -ENOMEM;
		goto unresolved;
	}
	err = -EFAULT;
	if (bpf_core_read(&sb, sizeof(sb), &dentry->d_sb))
		goto unresolved;
	err = bw_names_collect(h->sandbox, sb, found);
	if (err)
		goto unresolved;
	/* Not a bpf_loop: a callback would be one more frame of the 512 bytes. */
	found->query.cgid = h->cgid;
	found->query.dentry = (__u64)dentry;
	for (i = 0; i < BW_NAMES_MAX && i < found->count; i++) {
		found->query.mnt = found->mnt[i] + bpf_core_field_offset(struct mount, mnt);
		if (kinds == BW_KIND(BW_ACCESS_WRITE))
			err = bw_check_name_write(&found->query);
		else
			err = bw_check_name_attr(&found->query);
		if (err == -EXDEV)
			continue;
		/* bw_check reported its denial */
		if (err)
			return -EACCES;
		named = 1;
	}
	/* A file system the sandbox mounted itself has no name, and its files pass. */
	if (named || found->internal || bw_own_sb(h->sandbox, sb))
		return 0;
	err = -EXDEV;
unresolved:
	bw_report(h->cgid, 0, err, bw_first_kind(kinds), h->sandbox->default_rule);
	return -EACCES;
}

static __always_inline int bw_check_dentry_attr(struct dentry *dentry, int ret)
{
	struct bw_hook h;

	if (ret)
		return ret;
	if (!bw_hook_enter(&h))
		return 0;
	return bw_check_names(&h, dentry, BW_KIND(BW_ACCESS_ATTR));
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
	return bw_check_names(&h, (struct dentry *)arg, BW_KIND(valid & ATTR_TOUCH ? BW_ACCESS_WRITE : BW_ACCESS_ATTR));
}

#endif /* BUMBLEWRAP_HOOK_XATTR_H */
