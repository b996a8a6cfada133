/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every path hook does: find the current task's sandbox (one lookup, and nothing
 * more for a process outside every sandbox), resolve the path (path.bpf.h), walk it
 * through the automaton, and deny with a report when the policy does not allow an
 * access kind. A hook is then a few lines: bw_hook_enter, then bw_check per path.
 *
 * The including program defines, before including a hook:
 *   int bw_policy_tables(struct bw_walk *w)
 *	finds the sandbox's tables; non-zero when they are missing (the access fails closed);
 *   int bw_policy_byte(struct bw_walk *w, __u32 at)
 *	the byte at w->path[at] of the walk (always inline); non-zero when the walk stops;
 *   __u32 bw_policy_decide(struct bw_walk *w, __u32 kind, __u32 *rule)
 *	the decision (enum bw_decision) for `kind` at the walk's final state, and its rule;
 *	BW_DECISION_CHAIN when conditions decide, with the chain's first link as the rule;
 *   const struct bw_link *bw_policy_link(struct bw_walk *w, __u32 index)
 *	a link of the decision chains, NULL when there is none at that index;
 *   int bw_policy_exe(struct bw_walk *w, __u32 *patterns)
 *	the `when exe` patterns a path ending in the walk's final state matches; non-zero
 *	when they are missing (the exec fails closed);
 *   __u32 bw_policy_audit(struct bw_walk *w)
 *	the first link of the audit chain of the walk's final state; 0 when it has none;
 *   int bw_policy_devices(struct bw_walk *w, __u32 *patterns)
 *	the device rules' patterns a path ending in the walk's final state matches;
 *	non-zero when they are missing (the access fails closed);
 *   and what hooks/devices.bpf.h asks for;
 *   BW_RECORDS_EXE
 *	1 when the policy has `when exe` patterns, so that exec records them.
 */
#ifndef BUMBLEWRAP_DECIDE_BPF_H
#define BUMBLEWRAP_DECIDE_BPF_H

#include "path.bpf.h"

struct bw_hook {
	__u64 cgid;
	const struct bw_sandbox *sandbox;
};

#define BW_KIND(kind) (1u << (kind))
#define BW_ALL_KINDS (BW_KIND(BW_ACCESS_KINDS) - 1)

/* An access to a file by name: for an open its flags, and for a device node its mode,
 * number and the ioctl command. */
struct bw_access {
	const struct vfsmount *mnt;
	struct dentry *dentry;
	__u32 open_flags; /* what flag conditions see; 0 for any access but an open */
	__u32 mode;       /* a device node's, else 0 */
	__u32 dev;
	__u32 cmd;        /* when the access is ioctl */
};

/* With the kinds of bw_check: a file that no path names is denied rather than passed. */
#define BW_PATHLESS_DENIED (1u << 31)
/* With the kinds of bw_check: a dentry outside the mount's tree returns -EXDEV unreported. */
#define BW_OTHER_TREE_SILENT (1u << 30)
/* With the kinds of bw_check: an allowed path is an executable; record its `when exe`
 * patterns as the task's pending ones (hooks/exe.bpf.h commits them). */
#define BW_RECORD_EXE (1u << 29)

/* Bytes of the walk per bpf_loop step: the loop's call and the walk's state are paid once
 * per stride, not once per byte. */
#define BW_WALK_STRIDE 4

static long bw_walk_step(__u64 i, void *ctx)
{
	struct bw_walk *w = ctx;
	__u32 at = w->start + (__u32)i * BW_WALK_STRIDE;
	int k;

#pragma unroll
	for (k = 0; k < BW_WALK_STRIDE; k++) {
		if (bw_policy_byte(w, at + k))
			return 1;
	}
	return 0;
}

/* Non-zero when the current task runs in a sandbox; the hook has nothing to do otherwise. */
static __always_inline int bw_hook_enter(struct bw_hook *h)
{
	h->cgid = bpf_get_current_cgroup_id();
	h->sandbox = bw_sandbox_lookup(&h->cgid);
	return h->sandbox != 0;
}

static __always_inline __u32 bw_first_kind(__u32 kinds)
{
	return kinds ? __builtin_ctz(kinds) : BW_ACCESS_READ;
}

/* What conditions see of an access: the task's fsuid and fsgid, whether it owns the file,
 * the open's flags, and the `when exe` patterns of the task's executable; and, for an
 * audit chain, the kinds of the access. */
struct bw_chain {
	struct bw_walk *w;
	__u32 fsuid;
	__u32 fsgid;
	__u32 owner;
	__u32 open_flags;
	__u32 exe;
	__u32 kinds;
	__u32 at;
	__u32 decision;
	__u32 rule;
};

/* Longer than any chain: a chain holds at most every rule of the policy, once. */
#define BW_MAX_CHAIN (1u << 20)

static __always_inline int bw_link_holds(const struct bw_link *l, const struct bw_chain *c)
{
	return c->fsuid >= l->uid_lo && c->fsuid <= l->uid_hi && c->fsgid >= l->gid_lo &&
	       c->fsgid <= l->gid_hi && (!l->owner || c->owner) &&
	       (c->open_flags & l->open_flags) == l->open_flags && (c->exe & l->exe) == l->exe;
}

/* One link: the first that holds decides; the last holds whatever the access. */
static long bw_chain_step(__u64 i, void *ctx)
{
	struct bw_chain *c = ctx;
	const struct bw_link *l;

	l = bw_policy_link(c->w, c->at + (__u32)i);
	/* A missing link leaves the denial in place: the access fails closed. */
	if (!l)
		return 1;
	if (!l->last && !bw_link_holds(l, c))
		return 0;
	c->decision = l->decision;
	c->rule = l->rule;
	return 1;
}

/*
 * What the conditions of a link see of the current task: its `when exe` patterns, fsuid
 * and fsgid; non-zero when they cannot be read. The task's own credentials: the subjective
 * ones (task->cred) are the mounter's while overlayfs opens its layers, after the overlay
 * file was decided with ours.
 */
static __always_inline int bw_task_context(struct bw_chain *c)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct cred *cred;
	struct bw_task *t;

	t = bpf_task_storage_get(&bw_tasks, task, 0, 0);
	if (t)
		c->exe = t->exe;
	if (bpf_core_read(&cred, sizeof(cred), &task->real_cred) || !cred ||
	    bpf_core_read(&c->fsuid, sizeof(c->fsuid), &cred->fsuid.val) ||
	    bpf_core_read(&c->fsgid, sizeof(c->fsgid), &cred->fsgid.val))
		return -1;
	return 0;
}

/* The task's context (bw_task_context) and whether it owns the file at `dentry`. */
static int bw_chain_init(struct bw_chain *c, struct dentry *dentry)
{
	struct inode *inode;
	__u32 owner;

	if (bw_task_context(c) || bpf_core_read(&inode, sizeof(inode), &dentry->d_inode))
		return -1;
	/* A name that does not exist yet (create) has no owner. */
	if (inode) {
		if (bpf_core_read(&owner, sizeof(owner), &inode->i_uid.val))
			return -1;
		c->owner = owner == c->fsuid;
	}
	return 0;
}

/* The device rules, whose conditions are links' too. */
#include "hooks/devices.bpf.h"

/* The decision of the chain that starts at link *rule, for the current task and this
 * access; *rule becomes the rule that made it. */
static __u32 bw_chain_decide(struct bw_walk *w, struct dentry *dentry, __u32 open_flags, __u32 *rule)
{
	struct bw_chain c = {
		.w = w,
		.open_flags = open_flags,
		.at = *rule,
		.decision = BW_DECISION_DENY,
		.rule = w->sandbox->default_rule,
	};

	*rule = c.rule;
	/* Conditions that cannot be read cannot hold or fail: the access is denied. */
	if (bw_chain_init(&c, dentry))
		return BW_DECISION_DENY;
	bpf_loop(BW_MAX_CHAIN, bw_chain_step, &c, 0);
	if (c.decision == BW_DECISION_NONE) {
		c.decision = w->sandbox->default_decision;
		c.rule = w->sandbox->default_rule;
	}
	*rule = c.rule;
	return c.decision;
}

/* One link of an audit chain: the first that records one of the access's kinds and
 * holds names the audit rule; the chain ends with a link of decision NONE. */
static long bw_audit_step(__u64 i, void *ctx)
{
	struct bw_chain *c = ctx;
	const struct bw_link *l;

	l = bw_policy_link(c->w, c->at + (__u32)i);
	if (!l || l->decision == BW_DECISION_NONE)
		return 1;
	if (!(l->kinds & c->kinds) || !bw_link_holds(l, c))
		return 0;
	c->rule = l->rule;
	c->kinds &= l->kinds;
	return 1;
}

/*
 * Whether the task's last audit record was of this kind, on this file, by this rule; if
 * not, this one becomes its last. One operation passes several hooks (execve opens,
 * checks and maps its binary; overlayfs up to 6.1 opens the lower file under the
 * overlay's path): it makes one record.
 */
static int bw_audit_repeated(struct dentry *dentry, __u32 kind, __u32 rule)
{
	struct bw_task *t;
	struct inode *inode;

	if (bpf_core_read(&inode, sizeof(inode), &dentry->d_inode))
		return 0;
	t = bpf_task_storage_get(&bw_tasks, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;
	if (t->audit_inode == (__u64)inode && t->audit_kind == kind && t->audit_rule == rule)
		return 1;
	t->audit_inode = (__u64)inode;
	t->audit_kind = kind;
	t->audit_rule = rule;
	return 0;
}

/* The audit rule that records an access of `kinds` (a mask of BW_KIND) that the policy
 * allowed, on the walk's path; 0 when none does, or when it repeats the task's last
 * record. *kind becomes the kind it records. Its own frame keeps its chain off
 * bw_check_access's stack. */
static __noinline __u32 bw_chain_audit(struct bw_walk *w, struct dentry *dentry, __u32 open_flags, __u32 kinds,
				       __u32 *kind)
{
	struct bw_chain c = {
		.w = w,
		.open_flags = open_flags,
		.kinds = kinds,
	};

	c.at = bw_policy_audit(w);
	/* Conditions that cannot be read: nothing is recorded (the access was allowed). */
	if (!c.at || bw_chain_init(&c, dentry))
		return 0;
	bpf_loop(BW_MAX_CHAIN, bw_audit_step, &c, 0);
	*kind = bw_first_kind(c.kinds);
	if (!c.rule || bw_audit_repeated(dentry, *kind, c.rule))
		return 0;
	return c.rule;
}

/* Keeps the `when exe` patterns of an executable the walk reached as the task's pending
 * ones; non-zero when they cannot be kept. */
static int bw_record_exe(struct bw_walk *w)
{
	struct bw_task *t;
	__u32 patterns;

	if (bw_policy_exe(w, &patterns))
		return -1;
	t = bpf_task_storage_get(&bw_tasks, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return -1;
	t->exe_pending = patterns;
	return 0;
}

/*
 * 0 when the sandbox's policy allows every access kind in `kinds` (a mask of BW_KIND) of
 * the access `a`; otherwise reports the first kind denied and returns -EACCES. A path that
 * cannot be resolved, or a sandbox without its tables, is denied. An allowed access that
 * an audit rule records is reported as an audit record. On a device node the device rules
 * decide first, by the patterns its path matches and by its number; the path rules decide
 * the kinds they leave.
 */
static int bw_check_access(const struct bw_hook *h, const struct bw_access *a, __u32 kinds)
{
	struct dentry *dentry = a->dentry;
	__u32 open_flags = a->open_flags;
	struct bw_device_node node = { .a = a };
	__u32 asked = kinds & BW_ALL_KINDS;
	int err;
	__u32 decision;
	struct bw_scratch *scratch;
	struct bw_walk w = {};
	__u32 k, rule = 0;
	long start;

	w.sandbox = h->sandbox;
	w.state = BW_START_STATE;
	scratch = bpf_task_storage_get(&bw_scratch, bpf_get_current_task_btf(), 0,
				       BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!scratch || bw_policy_tables(&w)) {
		bw_report(h->cgid, 0, -ENOMEM, bw_first_kind(kinds), h->sandbox->default_rule);
		return -EACCES;
	}
	start = bw_resolve_path(scratch, h->sandbox, a->mnt, dentry);
	/*
	 * Files on kernel-internal mounts have no path a policy could name: pipes, sockets
	 * and memfds reached through a held fd (fstat, ftruncate, reopening /proc/self/fd/N),
	 * and the layers overlayfs opens for itself after the overlay's own path was
	 * decided (from 6.2, its backing files reach file_open and file_mprotect with the
	 * layer's path). Nor have those of a file system the sandbox mounted itself in a
	 * namespace of its own. They pass, except where the hook asks otherwise: execve and
	 * PROT_EXEC mmap of a memfd are denied. A device node there is decided by the
	 * device rules by number.
	 */
	if (start == -ENODEV && !(kinds & BW_PATHLESS_DENIED)) {
		node.len = start;
		return bw_is_device(a->mode) ? bw_device_check(h, &node, &kinds) : 0;
	}
	if (start == -EXDEV && (kinds & BW_OTHER_TREE_SILENT))
		return -EXDEV;
	if (start < 0) {
		bw_report(h->cgid, 0, start, bw_first_kind(kinds), h->sandbox->default_rule);
		return -EACCES;
	}
	start &= BW_PATH_MAX - 1;
	w.path = scratch->path;
	w.start = start;
	bpf_loop((BW_PATH_MAX - 1 - start + BW_WALK_STRIDE - 1) / BW_WALK_STRIDE, bw_walk_step, &w, 0);
	if (w.failed) {
		bw_report(h->cgid, scratch->path + start, BW_PATH_MAX - start, bw_first_kind(kinds),
			  h->sandbox->default_rule);
		return -EACCES;
	}
	if (bw_is_device(a->mode)) {
		if (bw_policy_devices(&w, &node.patterns)) {
			bw_report(h->cgid, scratch->path + start, BW_PATH_MAX - start, bw_first_kind(kinds),
				  h->sandbox->default_rule);
			return -EACCES;
		}
		node.path = scratch->path + start;
		node.len = BW_PATH_MAX - start;
		/* The kinds a device rule allowed are cleared: the path rules decide the rest. */
		err = bw_device_check(h, &node, &kinds);
		if (err)
			return err;
	}
	for (k = 0; k < BW_ACCESS_KINDS; k++) {
		if (!(kinds & BW_KIND(k)))
			continue;
		decision = bw_policy_decide(&w, k, &rule);
		if (decision == BW_DECISION_CHAIN)
			decision = bw_chain_decide(&w, dentry, open_flags, &rule);
		if (decision != BW_DECISION_ALLOW) {
			bw_report(h->cgid, scratch->path + start, BW_PATH_MAX - start, k, rule);
			return -EACCES;
		}
	}
	if ((kinds & BW_RECORD_EXE) && bw_record_exe(&w)) {
		bw_report(h->cgid, scratch->path + start, BW_PATH_MAX - start, BW_ACCESS_EXEC,
			  h->sandbox->default_rule);
		return -EACCES;
	}
	rule = bw_chain_audit(&w, dentry, open_flags, asked, &k);
	if (rule)
		bw_report(h->cgid, scratch->path + start, BW_PATH_MAX - start,
			  k | asked << BW_REPORT_ASKED_SHIFT | BW_REPORT_AUDIT, rule);
	return 0;
}

/* bw_check_access for every access but an open, to a file that is no device node: flag
 * conditions never hold. */
static __always_inline int bw_check(const struct bw_hook *h, const struct vfsmount *mnt, struct dentry *dentry,
				    __u32 kinds)
{
	struct bw_access a = {
		.mnt = mnt,
		.dentry = dentry,
	};

	return bw_check_access(h, &a, kinds);
}

/* The access to an open file: its flags, and for a device node its mode and number. */
static __always_inline void bw_file_access(struct file *file, __u32 cmd, struct bw_access *a)
{
	struct inode *inode = file->f_inode;

	a->mnt = file->f_path.mnt;
	a->dentry = file->f_path.dentry;
	a->open_flags = file->f_flags;
	a->mode = inode->i_mode;
	a->dev = inode->i_rdev;
	a->cmd = cmd;
}

#endif /* BUMBLEWRAP_DECIDE_BPF_H */
