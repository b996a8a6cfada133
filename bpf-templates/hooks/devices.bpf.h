/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device rules: for a character or block device node, the first rule of the sandbox's
 * table (compiler/devices sorts it most specific first) that matches the device and an
 * access kind decides that kind; the path rules decide the kinds no rule matches. A rule
 * by pattern matches when the node's path ends in a state that has its pattern; a rule
 * by number, by the node's type and number. An allowing rule decides ioctl by its list of
 * commands. bw_check_access calls bw_device_check after its walk when the file_open,
 * create (mknod) and ioctl hooks hand it a device node. Only decide.bpf.h includes this
 * file, after the hook, access and chain types it uses.
 *
 * The including program defines, anywhere in the file that includes this one:
 *   int bw_device_rules(const struct bw_hook *h, void **rules)
 *	finds the sandbox's rules (a map, or NULL when they are constants); non-zero when
 *	they are missing (the access fails closed);
 *   const struct bw_device_rule *bw_device_rule_at(void *rules, __u32 i)
 *	rule i, or NULL past the last one.
 */
#ifndef BUMBLEWRAP_HOOK_DEVICES_H
#define BUMBLEWRAP_HOOK_DEVICES_H

static int bw_device_rules(const struct bw_hook *h, void **rules);
static const struct bw_device_rule *bw_device_rule_at(void *rules, __u32 i);

/*
 * One scan of the device rules for every kind an access asks: each kind is decided by the
 * first rule that matches the device and has it. One scan, rather than one per kind, keeps
 * the verifier's work small: it checks the callback once.
 */
struct bw_device_scan {
	void *rules;
	struct bw_chain chain; /* what the rules' conditions see */
	__u32 patterns; /* the device patterns the node's path matches */
	__u32 type;  /* 'c' or 'b' */
	__u32 major;
	__u32 minor;
	__u32 cmd;   /* the ioctl command, when the access is ioctl */
	__u32 open;  /* the kinds asked that no rule has decided yet */
	__u32 allowed;
	__u32 denied;
	__u32 kind;  /* the lowest kind denied, */
	__u32 rule;  /* and the rule that denied it */
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

static __always_inline void bw_device_denied(struct bw_device_scan *s, __u32 kinds, __u32 rule)
{
	__u32 lowest = bw_first_kind(kinds);

	if (!s->denied || lowest < s->kind) {
		s->kind = lowest;
		s->rule = rule;
	}
	s->denied |= kinds;
}

static long bw_device_scan_step(__u64 i, void *ctx)
{
	struct bw_device_scan *s = ctx;
	const struct bw_device_rule *r;
	__u32 mine;

	r = bw_device_rule_at(s->rules, i);
	if (!r)
		return 1;
	mine = s->open & r->kinds;
	if (!mine || !bw_link_holds(&r->when, &s->chain))
		return 0;
	if (r->pattern ? !(s->patterns & r->pattern)
		       : r->type != s->type || s->major < r->major_lo || s->major > r->major_hi ||
				 s->minor < r->minor_lo || s->minor > r->minor_hi)
		return 0;
	s->open &= ~mine;
	if (r->decision != BW_DECISION_ALLOW) {
		bw_device_denied(s, mine, r->rule);
	} else if ((mine & BW_KIND(BW_ACCESS_IOCTL)) && !bw_ioctl_listed(r, s->cmd)) {
		bw_device_denied(s, BW_KIND(BW_ACCESS_IOCTL), r->rule);
		s->allowed |= mine & ~BW_KIND(BW_ACCESS_IOCTL);
	} else {
		s->allowed |= mine;
	}
	return !s->open;
}

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

/* A device node as bw_check_access found it: the access, the path it resolved (len
 * counts the NUL; negative: the errno of a path it could not resolve), and the device
 * patterns that path matches. */
struct bw_device_node {
	const struct bw_access *a;
	const char *path;
	__s32 len; /* narrow: 6.1 gives all the frames of a program 512 bytes */
	__u32 patterns;
};

/* Reports a device rule's denial: the node's path, device number and, for ioctl, the
 * command. */
static void bw_device_report(const struct bw_hook *h, const struct bw_device_node *n, __u32 kind, __u32 rule)
{
	struct bw_event *e;
	void *ring;

	ring = bpf_map_lookup_elem(&bw_events, &h->cgid);
	if (!ring)
		return;
	e = bw_event_start(h->cgid, BW_OP_DEVICE_RULE);
	if (!e)
		return;
	e->rule_id = rule;
	e->access = kind;
	e->target = n->a->dev;
	e->arg = n->a->cmd;
	bw_event_path(e, n->path, n->len);
	bw_event_send(ring, e);
}

/*
 * Decides the kinds in *kinds that a device rule decides on the device node: -EACCES with
 * a report when one denies, else 0 with the kinds allowed cleared from *kinds, which the
 * path rules then decide. Missing tables, or conditions that cannot be read, deny.
 */
static int bw_device_check(const struct bw_hook *h, const struct bw_device_node *n, __u32 *kinds)
{
	const struct bw_access *a = n->a;
	struct bw_device_scan s = {
		.patterns = n->patterns,
		.type = (a->mode & S_IFMT) == S_IFCHR ? 'c' : 'b',
		.major = a->dev >> MINORBITS,
		.minor = a->dev & MINORMASK,
		.cmd = a->cmd,
		.open = *kinds & BW_ALL_KINDS,
	};

	s.chain.open_flags = a->open_flags;
	if (bw_device_rules(h, &s.rules) || bw_chain_init(&s.chain, a->dentry)) {
		bw_device_report(h, n, bw_first_kind(*kinds), h->sandbox->default_rule);
		return -EACCES;
	}
	bpf_loop(BW_MAX_DEVICE_RULES, bw_device_scan_step, &s, 0);
	if (s.denied) {
		bw_device_report(h, n, s.kind, s.rule);
		return -EACCES;
	}
	*kinds &= ~s.allowed;
	return 0;
}

#endif /* BUMBLEWRAP_HOOK_DEVICES_H */
