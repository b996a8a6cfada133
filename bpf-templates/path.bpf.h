/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The path resolver every hook shares: the name of (mount, dentry) in the current task's
 * mount namespace, written right to left into the task's scratch buffer.
 *
 * The walk climbs d_parent to the mount's root, then crosses to the mount it sits on,
 * and stops at the root mount of the namespace, not at the task's root directory: a
 * chroot inside the sandbox cannot rename what it reaches (bpf_d_path would follow the
 * task's root). It needs no sleepable hook, so every hook can use it.
 *
 * It fails, and the hook denies, when the name cannot be trusted:
 *   -ENAMETOOLONG	the path does not fit in BW_PATH_MAX bytes, NUL included;
 *   -ENODEV		the file lives on a kernel-internal mount (pipe, socket, memfd,
 *			an overlayfs layer): no path names it (decide.bpf.h says which
 *			accesses pass);
 *   -EXDEV		its mount is not attached to the task's namespace (a detached
 *			open_tree clone, a lazily unmounted tree), or the dentry is not
 *			connected to its mount's root;
 *   -EFAULT		a kernel read failed;
 *   -ELOOP		more components than the walk's bound.
 */
#ifndef BUMBLEWRAP_PATH_BPF_H
#define BUMBLEWRAP_PATH_BPF_H

#include <bpf/bpf_core_read.h>

/* Each component takes at least two bytes ("/x"): no real path has more. */
#define BW_PATH_MAX_COMPONENTS (BW_PATH_MAX / 2)

struct bw_resolve {
	char *buf;		/* the scratch buffer, BW_PATH_MAX + BW_NAME_MAX + 1 bytes */
	struct dentry *dentry;	/* the next dentry to name */
	struct mount *mnt;	/* the mount it is seen through */
	struct mount *root;	/* the namespace's root mount: the walk ends at its root */
	__u32 start;		/* the path so far is buf[start .. BW_PATH_MAX - 1) */
	int error;
	int done;
};

/* The struct mount around a vfsmount (container_of, with the offset CO-RE-relocated). */
static __always_inline struct mount *bw_real_mount(const struct vfsmount *mnt)
{
	return (struct mount *)((unsigned long)mnt - bpf_core_field_offset(struct mount, mnt));
}

/* Climbs from a mount's root to the mountpoint it covers; done at the namespace's root. */
static int bw_resolve_cross(struct bw_resolve *r)
{
	struct mount *mnt = r->mnt, *parent;

	if (r->mnt == r->root) {
		r->done = 1;
		return 1;
	}
	if (bpf_core_read(&parent, sizeof(parent), &mnt->mnt_parent) ||
	    bpf_core_read(&r->dentry, sizeof(r->dentry), &mnt->mnt_mountpoint)) {
		r->error = -EFAULT;
		return 1;
	}
	/* A mount that is its own parent heads a tree outside the namespace. */
	if (parent == r->mnt) {
		r->error = -EXDEV;
		return 1;
	}
	r->mnt = parent;
	return 0;
}

/* Prepends "/name" of r->dentry and moves to its parent. */
static int bw_resolve_name(struct bw_resolve *r, struct dentry *parent)
{
	struct dentry *dentry = r->dentry;
	const unsigned char *name;
	__u32 len;

	if (bpf_core_read(&len, sizeof(len), &dentry->d_name.len) ||
	    bpf_core_read(&name, sizeof(name), &dentry->d_name.name)) {
		r->error = -EFAULT;
		return 1;
	}
	if (len > BW_NAME_MAX || len + 1 > r->start) {
		r->error = -ENAMETOOLONG;
		return 1;
	}
	r->start -= len;
	/* The masks only convince the verifier: start + len < BW_PATH_MAX already. */
	if (bpf_probe_read_kernel(r->buf + (r->start & (BW_PATH_MAX - 1)), len & BW_NAME_MAX, name)) {
		r->error = -EFAULT;
		return 1;
	}
	r->start--;
	r->buf[r->start & (BW_PATH_MAX - 1)] = '/';
	r->dentry = parent;
	return 0;
}

/* One step up: a bpf_loop callback over struct bw_resolve. */
static long bw_resolve_step(__u64 i, void *ctx)
{
	struct bw_resolve *r = ctx;
	struct dentry *dentry = r->dentry, *mnt_root, *parent;
	struct mount *mnt = r->mnt;

	if (bpf_core_read(&mnt_root, sizeof(mnt_root), &mnt->mnt.mnt_root) ||
	    bpf_core_read(&parent, sizeof(parent), &dentry->d_parent)) {
		r->error = -EFAULT;
		return 1;
	}
	if (dentry == mnt_root)
		return bw_resolve_cross(r);
	/* A filesystem root that is not its mount's root: not connected (open_by_handle). */
	if (parent == dentry) {
		r->error = -EXDEV;
		return 1;
	}
	return bw_resolve_name(r, parent);
}

/*
 * Resolves (mnt, dentry) into buf, which holds BW_PATH_MAX + BW_NAME_MAX + 1 bytes. Returns
 * the offset of the path's first byte (the path ends with the NUL at BW_PATH_MAX - 1), or
 * a negative errno as listed above.
 */
static long bw_resolve_path(char *buf, const struct vfsmount *mnt, struct dentry *dentry)
{
	struct task_struct___paths *task = (void *)bpf_get_current_task();
	struct mount *real = bw_real_mount(mnt);
	struct mnt_namespace *ns, *mnt_ns;
	struct nsproxy *nsproxy;
	struct bw_resolve r = {
		.buf = buf,
		.dentry = dentry,
		.mnt = real,
		.start = BW_PATH_MAX - 1,
	};

	if (bpf_core_read(&nsproxy, sizeof(nsproxy), &task->nsproxy) ||
	    bpf_core_read(&ns, sizeof(ns), &nsproxy->mnt_ns) ||
	    bpf_core_read(&r.root, sizeof(r.root), &ns->root) ||
	    bpf_core_read(&mnt_ns, sizeof(mnt_ns), &real->mnt_ns))
		return -EFAULT;
	if ((void *)mnt_ns == MNT_NS_INTERNAL)
		return -ENODEV;
	if (mnt_ns != ns)
		return -EXDEV;

	buf[BW_PATH_MAX - 1] = 0;
	bpf_loop(BW_PATH_MAX_COMPONENTS, bw_resolve_step, &r, 0);
	if (r.error)
		return r.error;
	if (!r.done)
		return -ELOOP;
	/* The root itself: the walk named nothing. */
	if (r.start == BW_PATH_MAX - 1) {
		r.start--;
		buf[BW_PATH_MAX - 2] = '/';
	}
	return r.start;
}

#endif /* BUMBLEWRAP_PATH_BPF_H */
