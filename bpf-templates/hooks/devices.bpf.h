/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device rules by number: for a character or block device node, the first rule of the
 * sandbox's table (compiler/devices sorts it most specific first) that matches the device
 * and an access kind decides that kind; the path rules decide the kinds no rule matches.
 * An allowing rule decides ioctl by its list of commands. Used by the file_open, create
 * (mknod) and ioctl hooks.
 *
 * The including program defines, anywhere in the file that includes this one:
 *   int bw_device_rules(__u64 cgid, void **rules)
 *	finds the sandbox's rules (a map, or NULL when they are constants); non-zero when
 *	they are missing (the access fails closed);
 *   const struct bw_device_rule *bw_device_rule_at(void *rules, __u32 i)
 *	rule i, or NULL past the last one.
 */
#ifndef BUMBLEWRAP_HOOK_DEVICES_H
#define BUMBLEWRAP_HOOK_DEVICES_H

#include "decide.bpf.h"

static int bw_device_rules(__u64 cgid, void **rules);
static const struct bw_device_rule *bw_device_rule_at(void *rules, __u32 i);

/* A scan of the device rules for the first that decides `kind` on the device. */
struct bw_device_scan {
	void *rules;
	__u32 type;  /* 'c' or 'b' */
	__u32 major;
	__u32 minor;
	__u32 kind;
	__u32 cmd;   /* the ioctl command, when kind is BW_ACCESS_IOCTL */
	__u32 decision; /* BW_DECISION_NONE while nothing matched */
	__u32 rule;
};

static __always_inline int bw_ioctl_listed(const struct bw_device_rule *r, __u32 cmd)
{
	__u32 i;

	if (r->ioctl_any)
		return 1;
	for (i = 0; i < BW_DEVICE_IOCTLS && i < r->nioctls; i++) {
		if (cmd >= r->ioctls[i].lo && cmd <= r->ioctls[i].hi)
			return 1;
	}
	return 0;
}

static long bw_device_scan_step(__u64 i, void *ctx)
{
	struct bw_device_scan *s = ctx;
	const struct bw_device_rule *r;

	r = bw_device_rule_at(s->rules, i);
	if (!r)
		return 1;
	if (!(r->kinds & BW_KIND(s->kind)) || r->type != s->type || s->major < r->major_lo ||
	    s->major > r->major_hi || s->minor < r->minor_lo || s->minor > r->minor_hi)
		return 0;
	s->decision = r->decision;
	s->rule = r->rule;
	if (r->decision == BW_DECISION_ALLOW && s->kind == BW_ACCESS_IOCTL && !bw_ioctl_listed(r, s->cmd))
		s->decision = BW_DECISION_DENY;
	return 1;
}

/* An access to a device node: its name, mode, device number and the ioctl command. */
struct bw_device_access {
	const struct vfsmount *mnt;
	struct dentry *dentry;
	__u32 mode;
	__u32 dev;
	__u32 cmd; /* when the access is ioctl */
};

/*
 * path_mknod gets the device number as mknod(2) took it (new_encode_dev's layout), not
 * yet decoded to the kernel's dev_t (MAJOR << MINORBITS | MINOR) as in inodes.
 */
static __always_inline __u32 bw_decode_user_dev(__u32 dev)
{
	__u32 major = (dev & 0xfff00) >> 8;
	__u32 minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);

	return major << MINORBITS | minor;
}

/* Whether an inode's mode is a device node's. */
static __always_inline int bw_is_device(__u32 mode)
{
	return (mode & S_IFMT) == S_IFCHR || (mode & S_IFMT) == S_IFBLK;
}

/* The device rules' decision for `kind` on a device node (BW_DECISION_NONE: no rule
 * decides, the path rules do), and the rule that made it. Missing tables deny. */
static __u32 bw_device_decide(const struct bw_hook *h, const struct bw_device_access *a, __u32 kind,
			      __u32 *rule)
{
	struct bw_device_scan s = {};

	*rule = h->sandbox->default_rule;
	if (bw_device_rules(h->cgid, &s.rules))
		return BW_DECISION_DENY;
	s.type = (a->mode & S_IFMT) == S_IFCHR ? 'c' : 'b';
	s.major = a->dev >> MINORBITS;
	s.minor = a->dev & MINORMASK;
	s.kind = kind;
	s.cmd = a->cmd;
	bpf_loop(BW_MAX_DEVICE_RULES, bw_device_scan_step, &s, 0);
	if (s.decision != BW_DECISION_NONE)
		*rule = s.rule;
	return s.decision;
}

/* Reports a device rule's denial: the node's path (as bw_check resolves it), device
 * number and, for ioctl, the command. */
static void bw_device_report(const struct bw_hook *h, const struct bw_device_access *a, __u32 kind,
			     __u32 rule)
{
	struct bw_scratch *scratch;
	struct bw_event *e;
	void *ring;
	long start = -ENOMEM;
	__u32 len;

	ring = bpf_map_lookup_elem(&bw_events, &h->cgid);
	if (!ring)
		return;
	e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);
	if (!e)
		return;
	e->cgroup_id = h->cgid;
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->rule_id = rule;
	e->access = kind;
	e->op = BW_OP_DEVICE_RULE;
	e->invariant = 0;
	e->target = a->dev;
	e->arg = a->cmd;
	e->target_comm[0] = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->path_len = 0;
	scratch = bpf_task_storage_get(&bw_scratch, bpf_get_current_task_btf(), 0,
				       BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (scratch)
		start = bw_resolve_path(scratch->path, a->mnt, a->dentry);
	e->path_error = start < 0 ? (__s32)start : 0;
	if (scratch && start >= 0) {
		start &= BW_PATH_MAX - 1;
		/* The path ends at the buffer's last byte, a NUL. */
		len = (BW_PATH_MAX - 1 - start) & (BW_PATH_MAX - 1);
		e->path_len = len;
		bpf_probe_read_kernel(e->path, len, scratch->path + start);
	}
	bpf_ringbuf_submit(e, 0);
}

/*
 * Decides the kinds in *kinds that a device rule decides on the device node: -EACCES with
 * a report when one denies, else 0 with the kinds allowed cleared from *kinds, which the
 * path rules then decide.
 */
static int bw_device_check(const struct bw_hook *h, const struct bw_device_access *a, __u32 *kinds)
{
	__u32 k, rule, decision;

	for (k = 0; k < BW_ACCESS_KINDS; k++) {
		if (!(*kinds & BW_KIND(k)))
			continue;
		decision = bw_device_decide(h, a, k, &rule);
		if (decision == BW_DECISION_DENY) {
			bw_device_report(h, a, k, rule);
			return -EACCES;
		}
		if (decision == BW_DECISION_ALLOW)
			*kinds &= ~BW_KIND(k);
	}
	return 0;
}

/*
 * bw_device_check for an access to an open file (`cmd`: the ioctl command, if any): 0 with
 * *kinds unchanged when the file is no device node.
 */
static __always_inline int bw_file_device_check(const struct bw_hook *h, struct file *file, __u32 cmd,
						__u32 *kinds)
{
	struct inode *inode = file->f_inode;
	struct bw_device_access a = {
		.mnt = file->f_path.mnt,
		.dentry = file->f_path.dentry,
		.mode = inode->i_mode,
		.dev = inode->i_rdev,
		.cmd = cmd,
	};

	if (!bw_is_device(a.mode))
		return 0;
	return bw_device_check(h, &a, kinds);
}

#endif /* BUMBLEWRAP_HOOK_DEVICES_H */
