/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The path resolver every hook shares: the name of (mount, dentry) in the sandbox's mount
 * namespace (the one it started in), written right to left into the task's scratch
 * buffer.
 *
 * The walk climbs d_parent to the mount's root, then crosses to the mount it sits on,
 * and stops at the root mount of the namespace, not at the task's root directory: a
 * chroot inside the sandbox cannot rename what it reaches (bpf_d_path would follow the
 * task's root). It needs no sleepable hook, so every hook can use it.
 *
 * A mount of another namespace (one the sandbox made in a user namespace of its own, a
 * detached tree, a descriptor from outside) has names the sandbox may have chosen: bind
 * mounts, pivot_root and chroot there would rename files. Such a file is named through a
 * mount of its file system in the sandbox's namespace instead (a twin): the walk climbs
 * the dentries, whatever mounts the other namespace has, until it meets a twin's root,
 * and goes on from that twin. The name is one the sandbox could open in its own
 * namespace, so nothing is reached that its policy denies there. A name that a mount of
 * the sandbox's namespace covers (a file hidden under a mount point) is no such name and
 * is refused. A file system with no mount there is named only when it is:
 *   - one the sandbox mounted itself (a tmpfs, bubblewrap's new root: bw_own_sbs): no
 *     name; it passes, but exec, as a memfd does (-ENODEV);
 *   - a proc or sysfs instance: named from its root under /proc or /sys, so that the
 *     invariants and the policy's rules there hold wherever it is mounted.
 *
 * It fails, and the hook denies, when the name cannot be trusted:
 *   -ENAMETOOLONG	the path does not fit in BW_PATH_MAX bytes, NUL included;
 *   -ENODEV		the file lives on a kernel-internal mount (pipe, socket, memfd,
 *			an overlayfs layer) or a file system the sandbox mounted: no path
 *			names it (decide.bpf.h says which accesses pass);
 *   -EXDEV		it has no name in the sandbox's namespace: its mount is attached
 *			to no namespace (a lazily unmounted tree) and no twin holds it, a
 *			mount there covers the name, or the dentry is not connected to
 *			its mount's root;
 *   -E2BIG		its file system has more mounts than the twin search looks at;
 *   -EFAULT		a kernel read failed;
 *   -ELOOP		more components than the walk's bound.
 *
 * Lists of mounts are read without the mount lock: a racing mount or unmount can only
 * add or drop the name it changes, and every read is checked.
 */
#ifndef BUMBLEWRAP_PATH_BPF_H
#define BUMBLEWRAP_PATH_BPF_H

#include <bpf/bpf_core_read.h>

/* Each component takes at least two bytes ("/x"): no real path has more. */
#define BW_PATH_MAX_COMPONENTS (BW_PATH_MAX / 2)
/* Mounts of one file system looked at, in every namespace (each namespace copies them). */
#define BW_SB_MOUNTS_MAX 1024
/* Mounts sitting on one mount, looked at for one covering a twin walk's name. */
#define BW_CHILD_MOUNTS_MAX 1024

/* Where a file system with no mount in the sandbox's namespace is named. */
enum bw_fs_prefix {
	BW_FS_NONE,
	BW_FS_PROC,
	BW_FS_SYS,
};

struct bw_resolve {
	struct bw_scratch *scratch; /* path: BW_PATH_MAX + BW_NAME_MAX + 1 bytes with its spill */
	struct dentry *dentry;	/* the next dentry to name */
	struct mount *mnt;	/* the mount it is seen through */
	struct dentry *mnt_root; /* that mount's root, read once per mount */
	struct mount *root;	/* the namespace's root mount: the walk ends at its root */
	__u32 start;		/* the path so far is path[start .. BW_PATH_MAX - 1) */
	/* Narrow: 6.1 gives all the frames of a program 512 bytes. */
	__s16 error;
	__u8 done;
	__u8 twin_walk;
	__u8 twins;		/* a twin walk: how many of scratch->twin it looks for */
	__u8 covered;		/* of scratch->covered: mount points the twin walk passed */
	__u8 prefix;		/* a twin walk ending at the file system's root: enum bw_fs_prefix */
	__u8 met;		/* 1 + the index of the twin the walk met; 0 before */
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
	if (bpf_core_read(&r->mnt_root, sizeof(r->mnt_root), &parent->mnt.mnt_root)) {
		r->error = -EFAULT;
		return 1;
	}
	r->mnt = parent;
	return 0;
}

/* What one step reads of a dentry: its parent and its name. */
struct bw_dentry_link {
	struct dentry *parent;
	__u32 len;
	const unsigned char *name;
};

/*
 * Reads a dentry's parent and name. Where d_name follows d_parent (6.1 and 6.12 lay them
 * out so), one read takes both: a step then costs two helper calls instead of five, with
 * its mount's root read once per mount. The offsets are CO-RE constants, so the verifier
 * sees one branch only.
 */
static __always_inline int bw_dentry_read(struct dentry *dentry, struct bw_dentry_link *l)
{
	__u64 block[3];
	__u32 parent = bpf_core_field_offset(struct dentry, d_parent);

	if (bpf_core_field_offset(struct dentry, d_name.len) == parent + 12 &&
	    bpf_core_field_offset(struct dentry, d_name.name) == parent + 16) {
		if (bpf_probe_read_kernel(block, sizeof(block), (char *)dentry + parent))
			return -EFAULT;
		l->parent = (struct dentry *)block[0];
		l->len = block[1] >> 32;
		l->name = (const unsigned char *)block[2];
		return 0;
	}
	if (bpf_core_read(&l->parent, sizeof(l->parent), &dentry->d_parent) ||
	    bpf_core_read(&l->len, sizeof(l->len), &dentry->d_name.len) ||
	    bpf_core_read(&l->name, sizeof(l->name), &dentry->d_name.name))
		return -EFAULT;
	return 0;
}

/* Prepends "/name" of r->dentry (its link l) and moves to its parent. */
static int bw_resolve_name(struct bw_resolve *r, const struct bw_dentry_link *l)
{
	const unsigned char *name = l->name;
	__u32 len = l->len;

	if (len > BW_NAME_MAX || len + 1 > r->start) {
		r->error = -ENAMETOOLONG;
		return 1;
	}
	r->start -= len;
	/* The masks only convince the verifier: start + len < BW_PATH_MAX already. */
	if (bpf_probe_read_kernel(r->scratch->path + (r->start & (BW_PATH_MAX - 1)), len & BW_NAME_MAX, name)) {
		r->error = -EFAULT;
		return 1;
	}
	r->start--;
	r->scratch->path[r->start & (BW_PATH_MAX - 1)] = '/';
	r->dentry = l->parent;
	return 0;
}

/*
 * One step of a twin walk: the mounts of the other namespace are ignored; the walk goes
 * on from the first twin whose root it meets. A dentry some mount sits on is kept: a
 * mount of the sandbox's namespace there would cover the name (bw_resolve_uncovered).
 */
static int bw_resolve_twin_step(struct bw_resolve *r, const struct bw_dentry_link *l)
{
	struct dentry *dentry = r->dentry;
	unsigned int flags;
	__u32 k;

	if (bpf_core_read(&flags, sizeof(flags), &dentry->d_flags)) {
		r->error = -EFAULT;
		return 1;
	}
	if (flags & DCACHE_MOUNTED) {
		if (r->covered >= BW_COVERED_MAX) {
			r->error = -EXDEV;
			return 1;
		}
		r->scratch->covered[r->covered & (BW_COVERED_MAX - 1)] = (__u64)dentry;
		r->covered++;
	}
	for (k = 0; k < BW_NAMES_MAX && k < r->twins; k++) {
		if (r->scratch->twin_root[k] != (__u64)dentry)
			continue;
		r->mnt = (struct mount *)r->scratch->twin[k];
		r->mnt_root = dentry;
		r->met = k + 1;
		r->twin_walk = 0;
		return bw_resolve_cross(r);
	}
	if (l->parent == dentry) {
		if (r->prefix == BW_FS_NONE)
			r->error = -EXDEV;
		else
			r->done = 1;
		return 1;
	}
	return bw_resolve_name(r, l);
}

/* One step up: a bpf_loop callback over struct bw_resolve. */
static long bw_resolve_step(__u64 i, void *ctx)
{
	struct bw_resolve *r = ctx;
	struct dentry *dentry = r->dentry;
	struct bw_dentry_link l;

	if (!r->twin_walk && dentry == r->mnt_root)
		return bw_resolve_cross(r);
	if (bw_dentry_read(dentry, &l)) {
		r->error = -EFAULT;
		return 1;
	}
	if (r->twin_walk)
		return bw_resolve_twin_step(r, &l);
	/* A filesystem root that is not its mount's root: not connected (open_by_handle). */
	if (l.parent == dentry) {
		r->error = -EXDEV;
		return 1;
	}
	return bw_resolve_name(r, &l);
}

/* A walk over a file system's mounts, the bpf_loop context: its state (struct
 * bw_mounts_walk, in a map value) and where it keeps the mounts of one namespace. */
struct bw_sb_mounts {
	struct bw_mounts_walk *w;
	__u64 *found; /* BW_NAMES_MAX struct mount * */
};

/* One mount of the file system: a bpf_loop callback over struct bw_sb_mounts. */
static long bw_sb_mounts_step(__u64 i, void *ctx)
{
	struct bw_sb_mounts *c = ctx;
	struct bw_mounts_walk *n = c->w;
	struct list_head *pos = (struct list_head *)n->pos, *next;
	struct mnt_namespace *mnt_ns;
	unsigned int inum;
	struct mount *mnt;

	if (n->pos == n->head) {
		n->done = 1;
		return 1;
	}
	mnt = (struct mount *)((unsigned long)pos - bpf_core_field_offset(struct mount, mnt_instance));
	if (bpf_core_read(&mnt_ns, sizeof(mnt_ns), &mnt->mnt_ns) ||
	    bpf_core_read(&next, sizeof(next), &pos->next)) {
		n->error = -EFAULT;
		return 1;
	}
	n->pos = (__u64)next;
	if ((void *)mnt_ns == MNT_NS_INTERNAL) {
		n->internal = 1;
		return 0;
	}
	if (!n->check || !mnt_ns)
		return 0;
	if (bpf_core_read(&inum, sizeof(inum), &mnt_ns->ns.inum)) {
		n->error = -EFAULT;
		return 1;
	}
	if (inum != n->ns_inum)
		return 0;
	if (n->count >= BW_NAMES_MAX) {
		n->error = -E2BIG;
		return 1;
	}
	c->found[n->count & (BW_NAMES_MAX - 1)] = (__u64)mnt;
	n->count++;
	return 0;
}

/* Starts a walk over sb's mounts that keeps those of namespace ns_inum (check) or only
 * notes a kernel-internal one. The state outlives the walk: every field is set. */
static __always_inline void bw_sb_mounts_start(struct bw_mounts_walk *n, struct super_block *sb, __u32 ns_inum,
					       __u8 check)
{
	n->head = (__u64)&sb->s_mounts;
	n->pos = 0;
	n->ns_inum = ns_inum;
	n->error = 0;
	n->count = 0;
	n->check = check;
	n->internal = 0;
	n->done = 0;
}

/* Walks a file system's mounts from where c->w stands at; 0 when the walk reached the
 * end of the list. */
static int bw_sb_mounts_walk(struct bw_sb_mounts *c)
{
	struct bw_mounts_walk *n = c->w;
	struct list_head *head = (struct list_head *)n->head, *first;

	n->done = 0;
	if (bpf_core_read(&first, sizeof(first), &head->next))
		return -EFAULT;
	n->pos = (__u64)first;
	bpf_loop(BW_SB_MOUNTS_MAX, bw_sb_mounts_step, c, 0);
	if (n->error)
		return n->error;
	return n->done ? 0 : -E2BIG;
}

/* Whether the sandbox mounted this file system itself (hooks/invariants.bpf.h keeps them). */
static __always_inline int bw_own_sb(const struct bw_sandbox *sandbox, struct super_block *sb)
{
	__u64 key = (__u64)sb;
	__u64 *owner = bpf_map_lookup_elem(&bw_own_sbs, &key);

	return owner && *owner == sandbox->id;
}

/*
 * Starts a twin walk of a file on `sb`, which the sandbox reaches through a mount of
 * another namespace: finds the twins (their roots, for bw_resolve_twin_step) and the
 * file system's prefix. 0, or a negative errno as bw_resolve_path returns. A frame of its
 * own, as bw_resolve_uncovered's: 6.1 gives all the frames of a program 512 bytes.
 */
static __noinline int bw_resolve_twins(struct bw_resolve *r, const struct bw_sandbox *sandbox, struct super_block *sb)
{
	struct bw_mounts_walk *n = &r->scratch->mounts;
	struct bw_sb_mounts c = { .w = n, .found = r->scratch->twin };
	unsigned long magic;
	struct mount *twin = 0;
	__u32 k, count;
	int err;

	if (bw_own_sb(sandbox, sb))
		return -ENODEV;
	bw_sb_mounts_start(n, sb, sandbox->mnt_ns, 1);
	err = bw_sb_mounts_walk(&c);
	if (err)
		return err;
	count = n->count;
	for (k = 0; k < BW_NAMES_MAX && k < count; k++) {
		twin = (struct mount *)r->scratch->twin[k];
		if (bpf_core_read(&r->scratch->twin_root[k], sizeof(__u64), &twin->mnt.mnt_root))
			return -EFAULT;
	}
	/* The walk ends at the root of the namespace the twins are in. */
	if (count && BPF_CORE_READ_INTO(&r->root, twin, mnt_ns, root))
		return -EFAULT;
	if (bpf_core_read(&magic, sizeof(magic), &sb->s_magic))
		return -EFAULT;
	if (magic == PROC_SUPER_MAGIC)
		r->prefix = BW_FS_PROC;
	else if (magic == SYSFS_MAGIC)
		r->prefix = BW_FS_SYS;
	else if (!count)
		return -EXDEV;
	r->twins = count;
	r->twin_walk = 1;
	return 0;
}

/* The walk over a mount's children (bpf_loop state), for one on a kept mount point. */
struct bw_children {
	struct list_head *head;	/* &mount->mnt_mounts */
	struct list_head *pos;
	struct bw_resolve *r;
	int covered;
	int error;
	int done;
};

/* One child: a bpf_loop callback over struct bw_children. */
static long bw_children_step(__u64 i, void *ctx)
{
	struct bw_children *c = ctx;
	struct list_head *pos = c->pos;
	struct dentry *mountpoint;
	struct mount *child;
	__u32 k;

	if (pos == c->head) {
		c->done = 1;
		return 1;
	}
	child = (struct mount *)((unsigned long)pos - bpf_core_field_offset(struct mount, mnt_child));
	if (bpf_core_read(&mountpoint, sizeof(mountpoint), &child->mnt_mountpoint) ||
	    bpf_core_read(&c->pos, sizeof(c->pos), &pos->next)) {
		c->error = -EFAULT;
		return 1;
	}
	for (k = 0; k < BW_COVERED_MAX && k < c->r->covered; k++) {
		if (c->r->scratch->covered[k] == (__u64)mountpoint) {
			c->covered = 1;
			return 1;
		}
	}
	return 0;
}

/* 0 when no mount sits on the twin the walk met at a mount point the walk passed below
 * it: there the name would lead to the mount's files instead; -EXDEV otherwise. */
static __noinline int bw_resolve_uncovered(struct bw_resolve *r)
{
	struct mount *met = (struct mount *)r->scratch->twin[(r->met - 1) & (BW_NAMES_MAX - 1)];
	struct list_head *head = &met->mnt_mounts;
	struct bw_children c = { .head = head, .r = r };

	if (!r->covered)
		return 0;
	if (bpf_core_read(&c.pos, sizeof(c.pos), &head->next))
		return -EFAULT;
	bpf_loop(BW_CHILD_MOUNTS_MAX, bw_children_step, &c, 0);
	if (c.error)
		return c.error;
	return c.done && !c.covered ? 0 : -EXDEV;
}

/* Prepends "/proc" or "/sys"; 0, or -ENAMETOOLONG. Byte by byte: no string constant. */
static __always_inline int bw_resolve_prefix(struct bw_resolve *r)
{
	char *at;

	if (r->start < 5 || r->start > BW_PATH_MAX - 1)
		return -ENAMETOOLONG;
	if (r->prefix == BW_FS_PROC) {
		r->start -= 5;
		at = r->scratch->path + (r->start & (BW_PATH_MAX - 1));
		at[0] = '/', at[1] = 'p', at[2] = 'r', at[3] = 'o', at[4] = 'c';
	} else {
		r->start -= 4;
		at = r->scratch->path + (r->start & (BW_PATH_MAX - 1));
		at[0] = '/', at[1] = 's', at[2] = 'y', at[3] = 's';
	}
	return 0;
}

/*
 * Resolves (mnt, dentry) into scratch->path in the sandbox's mount namespace. Returns the
 * offset of the path's first byte (the path ends with the NUL at BW_PATH_MAX - 1), or a
 * negative errno as listed above.
 */
static long bw_resolve_path(struct bw_scratch *scratch, const struct bw_sandbox *sandbox, const struct vfsmount *mnt,
			    struct dentry *dentry)
{
	struct mount *real = bw_real_mount(mnt);
	struct mnt_namespace *mnt_ns;
	struct super_block *sb;
	unsigned int inum = 0;
	struct bw_resolve r = {
		.scratch = scratch,
		.dentry = dentry,
		.mnt = real,
		.start = BW_PATH_MAX - 1,
	};
	int err;

	if (bpf_core_read(&mnt_ns, sizeof(mnt_ns), &real->mnt_ns))
		return -EFAULT;
	if ((void *)mnt_ns == MNT_NS_INTERNAL)
		return -ENODEV;
	if (mnt_ns && bpf_core_read(&inum, sizeof(inum), &mnt_ns->ns.inum))
		return -EFAULT;
	if (mnt_ns && inum == sandbox->mnt_ns) {
		if (bpf_core_read(&r.root, sizeof(r.root), &mnt_ns->root))
			return -EFAULT;
	} else {
		if (bpf_core_read(&sb, sizeof(sb), &dentry->d_sb))
			return -EFAULT;
		err = bw_resolve_twins(&r, sandbox, sb);
		if (err)
			return err;
	}

	if (bpf_core_read(&r.mnt_root, sizeof(r.mnt_root), &real->mnt.mnt_root))
		return -EFAULT;
	scratch->path[BW_PATH_MAX - 1] = 0;
	bpf_loop(BW_PATH_MAX_COMPONENTS, bw_resolve_step, &r, 0);
	if (r.error)
		return r.error;
	if (!r.done)
		return -ELOOP;
	if (r.met) {
		err = bw_resolve_uncovered(&r);
		if (err)
			return err;
	} else if (r.prefix != BW_FS_NONE && bw_resolve_prefix(&r)) {
		return -ENAMETOOLONG;
	}
	/* The root itself: the walk named nothing. */
	if (r.start == BW_PATH_MAX - 1) {
		r.start--;
		scratch->path[BW_PATH_MAX - 2] = '/';
	}
	return r.start;
}

#endif /* BUMBLEWRAP_PATH_BPF_H */
