/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF programs and user space (bwc, bwrun, bwctl).
 * tests/unit/test_abi.cc pins their sizes and offsets: change both together,
 * and bump BW_ABI_VERSION when a layout changes.
 */
#ifndef BUMBLEWRAP_H
#define BUMBLEWRAP_H

#include <linux/types.h>

#define BW_ABI_VERSION 2

/* The kernel's PATH_MAX: d_path() never yields more, terminating NUL included. */
#define BW_PATH_MAX 4096
#define BW_MAX_SANDBOXES 1024
#define BW_EVENTS_BYTES (256 * 1024)

/* DFA state numbers: 0 is the dead state (no rule can match any more). */
#define BW_DEAD_STATE 0
#define BW_START_STATE 1
/* Set in a transition whose target is absorbing: its decisions hold for any suffix. */
#define BW_ABSORBING (1u << 31)

enum bw_decision {
	BW_DECISION_NONE = 0,
	BW_DECISION_ALLOW = 1,
	BW_DECISION_DENY = 2,
};

/* Access kinds, as in the language (values match ir::Access). */
enum bw_access_kind {
	BW_ACCESS_READ,
	BW_ACCESS_WRITE,
	BW_ACCESS_APPEND,
	BW_ACCESS_EXEC,
	BW_ACCESS_CREATE,
	BW_ACCESS_DELETE,
	BW_ACCESS_RENAME,
	BW_ACCESS_LINK,
	BW_ACCESS_METADATA,
	BW_ACCESS_ATTR,
	BW_ACCESS_IOCTL,
	BW_ACCESS_KINDS,
};

/*
 * One running sandbox, keyed by its cgroup id in bw_sandboxes. Present only once
 * the sandbox's automaton maps are in place, so a hit always has a whole policy.
 */
struct bw_sandbox {
	__u32 nclasses;         /* byte classes: width of a transition row */
	__u32 nstates;
	__u32 default_decision; /* enum bw_decision */
	__u32 default_rule;     /* rule id of the `default` statement */
	__u8 classes[256];      /* byte -> class */
};

/* Per DFA state: for each access kind, the decision for a path ending here and the
 * rule that made it (decision NONE: the sandbox's default decides). */
struct bw_accept {
	__u32 rule[BW_ACCESS_KINDS];
	__u8 decision[BW_ACCESS_KINDS];
	__u8 pad;
};

/* Scratch space per task: bpf_d_path's output. Task-local so that preemption cannot
 * hand one task's buffer to another. */
struct bw_scratch {
	char path[BW_PATH_MAX];
};

/* A denial, as written to the sandbox's ring buffer. path holds path_len bytes
 * (no NUL); path_error is the negative errno of a path that could not be resolved. */
struct bw_event {
	__u64 cgroup_id;
	__u32 pid;
	__u32 tgid;
	__u32 rule_id;
	__u32 access;     /* enum bw_access_kind that was denied */
	__s32 path_error;
	__u32 path_len;
	char comm[16];
	char path[BW_PATH_MAX];
};

/*
 * Sockets (compiler/net lowers the policy's net rules to these; hooks/net.bpf.h reads them).
 * BW_NET_FAMILIES covers every address family: AF_MAX is 46 on 6.1 and 6.12, and the
 * kernel refuses a family >= AF_MAX before the socket_create hook runs.
 */
#define BW_NET_FAMILIES 64

enum bw_net_op {
	BW_NET_CREATE,
	BW_NET_CONNECT,
	BW_NET_BIND,
	BW_NET_SEND, /* sendmsg to an address: decided as a connect */
};

/* Per address family: the verdict on creating a socket (an allowed endpoint of the family
 * allows it), and the verdict on a connect or bind that no endpoint rule matches. */
struct bw_net_family {
	__u32 create_rule;
	__u32 other_rule;
	__u8 create_decision; /* enum bw_decision, never NONE */
	__u8 other_decision;
	__u8 pad[2];
};

/* A sandbox's network tables besides its endpoint rules. */
struct bw_net_policy {
	__u32 nrules; /* endpoint rules to scan */
	__u32 pad;
	struct bw_net_family families[BW_NET_FAMILIES];
};

/* An endpoint rule. The rules are sorted most specific first, so the first one that
 * matches decides. Addresses are 4 words in network byte order; IPv4 uses addr[0]. */
struct bw_net_rule {
	__u32 addr[4]; /* already masked */
	__u32 mask[4]; /* the prefix's bits */
	__u16 port_lo; /* host byte order, inclusive */
	__u16 port_hi;
	__u16 family;  /* AF_INET or AF_INET6 */
	__u8 protocol; /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 op;       /* BW_NET_CONNECT or BW_NET_BIND */
	__u32 decision;
	__u32 rule;
};

/*
 * A socket denial travels in a struct bw_event like any other: access is BW_NET_EVENT,
 * path_error is 0 and path holds path_len == sizeof(struct bw_net_object) bytes of this
 * struct (binary, not text). runtime/lib/denials.cc renders it.
 */
#define BW_NET_EVENT 0x100

struct bw_net_object {
	__u32 addr[4];  /* network byte order; IPv4 uses addr[0]; zero for CREATE */
	__u16 family;   /* the address family (CREATE: the socket's) */
	__u16 port;     /* host byte order */
	__u16 type;     /* SOCK_STREAM, SOCK_DGRAM, ... */
	__u16 protocol; /* the socket's protocol (IPPROTO_*), as the kernel knows it */
	__u32 op;       /* enum bw_net_op */
};

#endif /* BUMBLEWRAP_H */
