/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets: socket_create by address family; connect, bind and sendmsg to an address by
 * the endpoint rules (first match decides: compiler/net sorts them most specific first),
 * then by the family's verdict. Rules with conditions (a conditional policy, see struct
 * bw_net_policy) are all scanned. See docs/language.md, "Network", for what is checked.
 *
 * The including program defines, anywhere in the file that includes this one:
 *   int bw_net_tables(struct bw_net_tables *t, __u64 cgid)
 *	finds the sandbox's tables; non-zero when they are missing (the operation fails closed);
 *   const struct bw_net_rule *bw_net_rule_at(const struct bw_net_tables *t, __u32 i)
 *	endpoint rule i, or NULL.
 */
#ifndef BUMBLEWRAP_HOOK_NET_H
#define BUMBLEWRAP_HOOK_NET_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "decide.bpf.h" /* bw_link_holds and bw_task_context, for conditions */

/* One sandbox's network tables: the policy, and the endpoint rules when they are a map. */
struct bw_net_tables {
	const struct bw_net_policy *policy;
	void *rules;
};

static int bw_net_tables(struct bw_net_tables *t, __u64 cgid);
static const struct bw_net_rule *bw_net_rule_at(const struct bw_net_tables *t, __u32 i);

/*
 * The verdicts for an address family below BW_NET_FAMILIES (a power of two). After the
 * caller's range check clang may test a copy of the family and index with the original,
 * which the verifier sees unbounded; the mask bounds the register that indexes, and
 * barrier_var keeps clang from dropping the mask as implied by that check.
 */
static __always_inline const struct bw_net_family *bw_net_family(const struct bw_net_policy *p, __u32 family)
{
	barrier_var(family);
	return &p->families[family & (BW_NET_FAMILIES - 1)];
}

/* Only TCP over SOCK_STREAM and UDP over SOCK_DGRAM can match endpoint rules; MPTCP,
 * SCTP, UDP-Lite, raw and ping sockets are decided by their family's verdict. */
static __always_inline __u32 bw_net_rule_protocol(__u16 type, __u16 protocol)
{
	if (type == SOCK_STREAM && protocol == IPPROTO_TCP)
		return IPPROTO_TCP;
	if (type == SOCK_DGRAM && protocol == IPPROTO_UDP)
		return IPPROTO_UDP;
	return 0;
}

/*
 * A scan of the rules for the first that matches `query` and whose conditions hold. A
 * create scans them all: the first family rule that holds decides, unless it denies and an
 * allowed endpoint of the family holds (ir::evaluate_net).
 */
struct bw_net_scan {
	const struct bw_net_tables *tables;
	const struct bw_net_object *query;
	struct bw_chain task; /* what conditions see */
	__u32 protocol; /* IPPROTO_TCP or IPPROTO_UDP, or 0 when no endpoint rule can match */
	__u32 op;       /* BW_NET_CREATE, BW_NET_CONNECT or BW_NET_BIND */
	__u32 decision; /* BW_DECISION_NONE while nothing matched */
	__u32 rule;
	__u32 enabled;  /* a create: the allowed endpoint that holds, 0 if none */
	__u32 failed;
};

static __always_inline int bw_net_endpoint_matches(const struct bw_net_scan *s, const struct bw_net_rule *r)
{
	const struct bw_net_object *q = s->query;
	int k;

	if (r->family != q->family || r->protocol != s->protocol || r->op != s->op ||
	    q->port < r->port_lo || q->port > r->port_hi)
		return 0;
	for (k = 0; k < 4; k++) {
		if ((q->addr[k] & r->mask[k]) != r->addr[k])
			return 0;
	}
	return 1;
}

static long bw_net_scan_step(__u64 i, void *ctx)
{
	struct bw_net_scan *s = ctx;
	const struct bw_net_rule *r;
	int family_matches;

	r = bw_net_rule_at(s->tables, i);
	if (!r) {
		s->failed = 1;
		return 1;
	}
	family_matches = r->family == s->query->family || r->family == BW_NET_ANY_FAMILY;
	if (r->op == BW_NET_ENABLE) {
		if (s->op == BW_NET_CREATE && !s->enabled && family_matches && bw_link_holds(&r->when, &s->task))
			s->enabled = r->rule;
		return 0;
	}
	if (r->op == BW_NET_FAMILY_RULE ? !family_matches : !bw_net_endpoint_matches(s, r))
		return 0;
	if (!bw_link_holds(&r->when, &s->task) || s->decision != BW_DECISION_NONE)
		return 0;
	s->decision = r->decision;
	s->rule = r->rule;
	/* A create goes on to its enabling endpoints, which come last. */
	return s->op != BW_NET_CREATE;
}

/*
 * The verdict on `obj` (op BW_NET_CREATE, BW_NET_CONNECT or BW_NET_BIND) under the
 * sandbox's tables, into *rule; BW_DECISION_DENY with rule 0 when they cannot be read.
 */
static __u32 bw_net_verdict(const struct bw_net_tables *t, const struct bw_net_object *obj, __u32 op, __u32 *rule)
{
	const struct bw_net_family *f = bw_net_family(t->policy, obj->family);
	struct bw_net_scan s = {
		.tables = t,
		.query = obj,
		.protocol = op == BW_NET_CREATE ? 0 : bw_net_rule_protocol(obj->type, obj->protocol),
		.op = op,
	};

	*rule = 0;
	/* Only a conditional policy has rules that decide creates, or conditions to read; in
	 * another, only a tcp or udp connect or bind can match a rule. */
	if (t->policy->conditional && bw_task_context(&s.task))
		return BW_DECISION_DENY;
	if (t->policy->conditional || s.protocol)
		bpf_loop(t->policy->nrules, bw_net_scan_step, &s, 0);
	if (s.failed)
		return BW_DECISION_DENY;
	if (s.decision == BW_DECISION_NONE) {
		s.decision = op == BW_NET_CREATE ? f->create_decision : f->other_decision;
		s.rule = op == BW_NET_CREATE ? f->create_rule : f->other_rule;
	}
	if (s.decision != BW_DECISION_ALLOW && s.enabled) {
		s.decision = BW_DECISION_ALLOW;
		s.rule = s.enabled;
	}
	*rule = s.rule;
	return s.decision;
}

static __always_inline __u64 bw_net_sandbox(void)
{
	__u64 cgid = bpf_get_current_cgroup_id();

	return bw_sandbox_lookup(&cgid) ? cgid : 0;
}

/* A report: the object travels in the event's path buffer (see bumblewrap.h). */
static __always_inline void bw_net_report(__u64 cgid, const struct bw_net_object *obj, __u32 rule, __u32 audit)
{
	/* bw_report's length counts a terminating NUL, which the object does not have. */
	bw_report(cgid, (const char *)obj, sizeof(*obj) + 1, BW_NET_EVENT | audit, rule);
}

static __always_inline int bw_net_deny(__u64 cgid, const struct bw_net_object *obj, __u32 rule)
{
	bw_net_report(cgid, obj, rule, 0);
	return -EACCES;
}

/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d) reaches a.b.c.d: decide it as that. */
static __always_inline void bw_net_unmap_v4(struct bw_net_object *obj)
{
	if (obj->family != AF_INET6 || obj->addr[0] || obj->addr[1] ||
	    obj->addr[2] != bpf_htonl(0xffff))
		return;
	obj->family = AF_INET;
	obj->addr[0] = obj->addr[3];
	obj->addr[2] = 0;
	obj->addr[3] = 0;
}

/*
 * Reads the address a connect, bind or send names into obj (family, addr, port).
 * Returns 1 when there is an endpoint to decide; 0 when the kernel will refuse the
 * address itself (too short, or a family the socket does not take) or ignore it;
 * negative when it cannot be read. An AF_UNSPEC address reads as the socket's family
 * (inet_bind and udp_sendmsg take it so); the caller handles AF_UNSPEC connects.
 */
static __always_inline int bw_net_read_address(struct bw_net_object *obj, const struct sockaddr *address,
					       int addrlen, __u16 sock_family)
{
	struct {
		__u16 family;
		__u16 port;
		__u32 flowinfo_or_v4; /* sin_addr for AF_INET, sin6_flowinfo for AF_INET6 */
		__u32 v6[4];
	} sa = {};

	if (addrlen < (int)sizeof(sa.family))
		return 0;
	if (bpf_probe_read_kernel(&sa.family, sizeof(sa.family), address))
		return -EFAULT;
	if (sa.family == AF_UNSPEC)
		sa.family = sock_family;
	if (sa.family == AF_INET && addrlen < BW_SIN_LEN)
		return 0;
	if (sa.family == AF_INET6 && addrlen < BW_SIN6_LEN)
		return 0;
	if (sa.family != AF_INET && sa.family != AF_INET6)
		return 0;
	/* Both lengths were checked above; BW_SIN6_LEN covers the IPv6 address. */
	if (bpf_probe_read_kernel(&sa.port, sa.family == AF_INET ? BW_SIN_LEN - 2 : BW_SIN6_LEN - 2,
				  (const char *)address + 2))
		return -EFAULT;
	obj->family = sa.family;
	obj->port = bpf_ntohs(sa.port);
	if (sa.family == AF_INET) {
		obj->addr[0] = sa.flowinfo_or_v4;
	} else {
		obj->addr[0] = sa.v6[0];
		obj->addr[1] = sa.v6[1];
		obj->addr[2] = sa.v6[2];
		obj->addr[3] = sa.v6[3];
		bw_net_unmap_v4(obj);
	}
	return 1;
}

/* The decision on obj, a socket of family below BW_NET_FAMILIES; op is BW_NET_CREATE,
 * BW_NET_CONNECT (for sends too) or BW_NET_BIND. */
static int bw_net_decide(__u64 cgid, struct bw_net_object *obj, __u32 op)
{
	struct bw_net_tables t = {};
	__u32 rule;

	if (bw_net_tables(&t, cgid))
		return bw_net_deny(cgid, obj, 0);
	if (bw_net_verdict(&t, obj, op, &rule) != BW_DECISION_ALLOW)
		return bw_net_deny(cgid, obj, rule);
	if (t.policy->record)
		bw_net_report(cgid, obj, rule, BW_REPORT_AUDIT);
	return 0;
}

/* A socket's family, type and protocol, as the object of a decision. */
static __always_inline __u16 bw_net_socket(struct bw_net_object *obj, const struct socket *sock)
{
	const struct sock *sk = BPF_CORE_READ(sock, sk);

	obj->type = BPF_CORE_READ(sock, type);
	if (!sk)
		return AF_UNSPEC;
	obj->protocol = BPF_CORE_READ(sk, sk_protocol);
	return BPF_CORE_READ(sk, __sk_common.skc_family);
}

/* A connect or bind on a socket of another family is decided by that family's rules: the
 * sandbox did not create it (socket_create denied that), it was passed in. */
static int bw_net_other_family(__u64 cgid, struct bw_net_object *obj)
{
	if (obj->family >= BW_NET_FAMILIES)
		return 0;
	return bw_net_decide(cgid, obj, BW_NET_CONNECT);
}

static __always_inline int bw_net_address_op(__u64 cgid, struct socket *sock, struct sockaddr *address,
					     int addrlen, __u32 op)
{
	struct bw_net_object obj = {};
	__u16 sock_family;
	int n;

	obj.op = op;
	sock_family = bw_net_socket(&obj, sock);
	if (sock_family != AF_INET && sock_family != AF_INET6) {
		obj.family = sock_family;
		return bw_net_other_family(cgid, &obj);
	}
	/* connect(AF_UNSPEC) disconnects (inet_dgram_connect, __inet_stream_connect). */
	if (op == BW_NET_CONNECT && addrlen >= (int)sizeof(__u16) &&
	    BPF_CORE_READ(address, sa_family) == AF_UNSPEC)
		return 0;
	n = bw_net_read_address(&obj, address, addrlen, sock_family);
	if (n < 0)
		return bw_net_deny(cgid, &obj, 0);
	if (n == 0)
		return 0;
	return bw_net_decide(cgid, &obj, op == BW_NET_BIND ? BW_NET_BIND : BW_NET_CONNECT);
}

SEC("lsm/socket_create")
int BPF_PROG(bw_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct bw_net_object obj = {};
	__u64 cgid;

	if (ret)
		return ret;
	/* The kernel's own sockets are not the sandbox's doing. */
	if (kern)
		return 0;
	cgid = bw_net_sandbox();
	if (!cgid)
		return 0;
	obj.op = BW_NET_CREATE;
	obj.family = family;
	obj.type = type;
	obj.protocol = protocol;
	/* __sock_create refuses these before calling the hook; refuse them as it does. */
	if (family < 0 || family >= BW_NET_FAMILIES)
		return -EAFNOSUPPORT;
	return bw_net_decide(cgid, &obj, BW_NET_CREATE);
}

SEC("lsm/socket_connect")
int BPF_PROG(bw_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	cgid = bw_net_sandbox();
	if (!cgid)
		return 0;
	return bw_net_address_op(cgid, sock, address, addrlen, BW_NET_CONNECT);
}

SEC("lsm/socket_bind")
int BPF_PROG(bw_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	__u64 cgid;

	if (ret)
		return ret;
	cgid = bw_net_sandbox();
	if (!cgid)
		return 0;
	return bw_net_address_op(cgid, sock, address, addrlen, BW_NET_BIND);
}

/*
 * A send that names an address reaches it without connect(): UDP and raw sendto, and TCP
 * Fast Open (MSG_FASTOPEN connects). Other stream sends ignore the address. msg_name is
 * the kernel's copy of the address (move_addr_to_kernel), as for connect and bind.
 */
SEC("lsm/socket_sendmsg")
int BPF_PROG(bw_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	struct sockaddr *name;
	__u16 family;
	int namelen;
	__u64 cgid;

	if (ret)
		return ret;
	cgid = bw_net_sandbox();
	if (!cgid)
		return 0;
	name = BPF_CORE_READ(msg, msg_name);
	namelen = BPF_CORE_READ(msg, msg_namelen);
	if (!name || namelen <= 0)
		return 0;
	family = BPF_CORE_READ(sock, sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return 0;
	if (BPF_CORE_READ(sock, type) == SOCK_STREAM && !(BPF_CORE_READ(msg, msg_flags) & MSG_FASTOPEN))
		return 0;
	return bw_net_address_op(cgid, sock, name, namelen, BW_NET_SEND);
}

#endif /* BUMBLEWRAP_HOOK_NET_H */
