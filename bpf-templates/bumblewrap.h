/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF programs and user space (bwc, bwrun, bwctl).
 * tests/unit/test_abi.cc pins their sizes and offsets: change both together,
 * and bump BW_ABI_VERSION when a layout changes.
 */
#ifndef BUMBLEWRAP_H
#define BUMBLEWRAP_H

#include <linux/types.h>

#define BW_ABI_VERSION 3

/* The kernel's PATH_MAX: d_path() never yields more, terminating NUL included. */
#define BW_PATH_MAX 4096
/* The kernel's NAME_MAX: the longest path component. */
#define BW_NAME_MAX 255
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

/* Scratch space per task: the resolved path, written right to left so that it ends at
 * path[BW_PATH_MAX - 1] (see path.bpf.h). The spill lets the verifier see that a
 * component copied at any offset below BW_PATH_MAX stays inside the buffer. Task-local
 * so that preemption cannot hand one task's buffer to another. */
struct bw_scratch {
	char path[BW_PATH_MAX];
	char spill[BW_NAME_MAX + 1];
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

#endif /* BUMBLEWRAP_H */
