/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file decided on every name it has in the sandbox's mount namespace (the one the
 * sandbox started in), one per mount of its file system whose tree holds it (a bind
 * mount gives it a second name); any denial wins. Two kinds of access come here:
 *
 * - those the kernel hands the LSM as a dentry without its mount (extended attributes,
 *   ACLs, times: hooks/xattr.bpf.h);
 * - those through a mount of another namespace: one the sandbox made in a user namespace
 *   of its own (`unsafe namespaces`), where bind mounts, pivot_root and chroot give files
 *   names the sandbox chose, or a detached tree. Deciding them on their names in the
 *   sandbox's namespace is what keeps a bind mount of a denied folder, or a new root,
 *   from renaming a file into an allowed one.
 *
 * A file with no name in the namespace is denied, with three exceptions:
 * - one on a kernel-internal mount (memfd, pipe, socket) passes, as in decide.bpf.h;
 * - one on a file system the sandbox mounted in its own user namespace (a tmpfs, a new
 *   root), or anywhere under `unsafe mount`, is the sandbox's own: it passes, except
 *   where the hook denies pathless files (exec), as for a memfd;
 * - but a proc or sysfs instance the sandbox mounted so is the kernel's: its files are
 *   named under /proc and /sys, from the file system's root, so that the invariants and
 *   the policy's rules there hold wherever it is mounted.
 * The search is bounded: a file system with more mounts than it looks at, or a file with
 * more names, is denied.
 *
 * Stacking file systems (overlayfs) repeat the attribute calls on their layer's file with
 * borrowed credentials after the overlay's own name was decided: a call made with
 * borrowed credentials on a file system that a kernel-internal mount holds (an overlay's
 * layer) passes.
 *
 * The list of an sb's mounts is read without the mount lock: a racing mount or unmount
 * can only add or drop the name it changes, and every read is checked.
 */
#ifndef BUMBLEWRAP_NAMES_BPF_H
#define BUMBLEWRAP_NAMES_BPF_H

/* Mounts of one file system looked at, in every namespace (each namespace copies them). */
#define BW_SB_MOUNTS_MAX 1024
/* Mounts in the sandbox's namespace a file is decided through. */
#define BW_NAMES_MAX 16

/* The access a hook asks about (filled in by the hook: decide.bpf.h's bw_request), and
 * the mounts of the sandbox's namespace that may hold its file, kept by the walk. */
struct bw_request {
	struct bw_query query;
	__u64 mnt[BW_NAMES_MAX]; /* const struct vfsmount * */
	__u32 count;             /* of mnt */
	__u32 internal;          /* a kernel-internal mount holds the file system */
};

/* Per task, off the stack: 6.1 gives all the frames of a program 512 bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_request);
} bw_requests SEC(".maps");

/* The walk over a file system's mounts (bpf_loop state). */
struct bw_names {
	struct list_head *head; /* &sb->s_mounts */
	struct list_head *pos;
	struct bw_request *req;
	__u32 ns_inum;   /* the sandbox's mount namespace */
	__u32 check;     /* 0: only look for a kernel-internal mount */
	__u32 in_ns;     /* mounts met in the sandbox's namespace, kept in req */
	int internal;    /* a kernel-internal mount holds the file system */
	int ret;         /* a denial, or why the search failed */
	int done;
};

/* One mount of the file system: a bpf_loop callback over struct bw_names. */
static long bw_names_step(__u64 i, void *ctx)
{
	struct bw_names *n = ctx;
	struct list_head *pos = n->pos, *next;
	struct mnt_namespace *mnt_ns;
	unsigned int inum;
	struct mount *mnt;

	if (pos == n->head) {
		n->done = 1;
		return 1;
	}
	mnt = (struct mount *)((unsigned long)pos - bpf_core_field_offset(struct mount, mnt_instance));
	if (bpf_core_read(&mnt_ns, sizeof(mnt_ns), &mnt->mnt_ns) ||
	    bpf_core_read(&next, sizeof(next), &pos->next)) {
		n->ret = -EFAULT;
		return 1;
	}
	n->pos = next;
	if ((void *)mnt_ns == MNT_NS_INTERNAL) {
		n->internal = 1;
		return 0;
	}
	if (!n->check || !mnt_ns)
		return 0;
	if (bpf_core_read(&inum, sizeof(inum), &mnt_ns->ns.inum)) {
		n->ret = -EFAULT;
		return 1;
	}
	if (inum != n->ns_inum)
		return 0;
	if (n->in_ns >= BW_NAMES_MAX) {
		n->ret = -E2BIG;
		return 1;
	}
	n->req->mnt[n->in_ns & (BW_NAMES_MAX - 1)] = (__u64)&mnt->mnt;
	n->in_ns++;
	return 0;
}

/* Walks the file system's mounts; 0 when the walk reached the end of the list. */
static int bw_names_walk(struct bw_names *n)
{
	struct list_head *head = n->head;

	n->done = 0;
	if (bpf_core_read(&n->pos, sizeof(n->pos), &head->next))
		return -EFAULT;
	bpf_loop(BW_SB_MOUNTS_MAX, bw_names_step, n, 0);
	if (n->ret)
		return n->ret;
	return n->done ? 0 : -E2BIG;
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
 * Finds the mounts of the sandbox's namespace that may hold the dentry (req->mnt, count)
 * and whether a kernel-internal mount holds its file system. A frame of its own: the walk's
 * state is not on the stack while the names are decided (6.1 gives all the frames of a
 * program 512 bytes).
 */
static __noinline int bw_names_collect(struct dentry *dentry, struct bw_request *req, __u32 ns_inum)
{
	struct super_block *sb;
	struct bw_names n = { .req = req, .ns_inum = ns_inum };
	int err;

	req->count = 0;
	req->internal = 0;
	if (bpf_core_read(&sb, sizeof(sb), &dentry->d_sb))
		return -EFAULT;
	n.head = &sb->s_mounts;
	if (bw_borrowed_creds()) {
		err = bw_names_walk(&n);
		if (err || n.internal) {
			req->internal = n.internal;
			return err;
		}
	}
	n.check = 1;
	err = bw_names_walk(&n);
	req->count = n.in_ns;
	req->internal = n.internal;
	return err;
}

/*
 * Whether the dentry's file system, which has no mount in the sandbox's namespace, is one
 * the sandbox mounted: in a user namespace other than the sandbox's, or anywhere under
 * `unsafe mount`; and if so where it is named (enum bw_fs_prefix). -1 when it is not (or
 * cannot be read).
 */
static __always_inline int bw_own_fs(const struct bw_sandbox *sandbox, struct dentry *dentry)
{
	unsigned long magic;
	unsigned int inum;

	if (BPF_CORE_READ_INTO(&inum, dentry, d_sb, s_user_ns, ns.inum) ||
	    BPF_CORE_READ_INTO(&magic, dentry, d_sb, s_magic) ||
	    (inum == sandbox->user_ns && (sandbox->invariants & BW_INV_MOUNT)))
		return -1;
	if (magic == PROC_SUPER_MAGIC)
		return BW_FS_PROC;
	if (magic == SYSFS_MAGIC)
		return BW_FS_SYS;
	return BW_FS_NONE;
}

/*
 * 0 when the policy allows req->query's kinds on every name of its dentry in the
 * sandbox's namespace (its mount is not used); -EACCES (reported) otherwise, or when the
 * names cannot all be found.
 */
static __always_inline int bw_check_names(const struct bw_hook *h, struct bw_request *req)
{
	struct dentry *dentry = req->query.a.dentry;
	__u32 kinds = req->query.kinds;
	int err, named = 0, fs;
	__u32 i;

	err = bw_names_collect(dentry, req, h->sandbox->mnt_ns);
	if (err)
		goto unresolved;
	req->query.kinds = kinds | BW_OTHER_TREE_SILENT;
	req->query.fs_prefix = BW_FS_NONE;
	/* Not a bpf_loop: a callback would be one more frame of the 512 bytes. */
	for (i = 0; i < BW_NAMES_MAX && i < req->count; i++) {
		req->query.a.mnt = (const struct vfsmount *)req->mnt[i];
		err = bw_check_query(&req->query);
		if (err == -EXDEV)
			continue;
		/* bw_check_path reported its denial */
		if (err)
			return -EACCES;
		named = 1;
	}
	if (named || req->internal)
		return 0;
	fs = bw_own_fs(h->sandbox, dentry);
	err = -EXDEV;
	if (fs < 0)
		goto unresolved;
	if (fs == BW_FS_NONE) {
		err = -ENODEV;
		if (kinds & BW_PATHLESS_DENIED)
			goto unresolved;
		return 0;
	}
	req->query.kinds = kinds;
	req->query.fs_prefix = fs;
	return bw_check_query(&req->query) ? -EACCES : 0;
unresolved:
	bw_report(h->cgid, 0, err, bw_first_kind(kinds), h->sandbox->default_rule);
	return -EACCES;
}

#endif /* BUMBLEWRAP_NAMES_BPF_H */
