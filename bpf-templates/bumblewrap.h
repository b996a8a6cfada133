/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF programs and user space (bwc, bwrun, bwctl).
 * tests/unit/test_abi.cc pins their sizes and offsets: change both together,
 * and bump BW_ABI_VERSION when a layout changes.
 */
#ifndef BUMBLEWRAP_H
#define BUMBLEWRAP_H

#include <linux/types.h>

#define BW_ABI_VERSION 15

/* The kernel's PATH_MAX: d_path() never yields more, terminating NUL included. */
#define BW_PATH_MAX 4096
/* The kernel's NAME_MAX: the longest path component. */
#define BW_NAME_MAX 255
/* Mounts of one file system in the sandbox's mount namespace that name a file: a power of two. */
#define BW_NAMES_MAX 16
/* Mount points a file's name may pass when it is named through another namespace's
 * mount: a power of two. */
#define BW_COVERED_MAX 4
#define BW_MAX_SANDBOXES 1024
/* Slots of bw_cg_filter (common.bpf.h): a power of two, four per possible sandbox. */
#define BW_CG_FILTER_SLOTS 4096
/* File systems that sandboxes mounted themselves, all sandboxes together. */
#define BW_MAX_OWN_SBS 4096
/* Each sandbox's denial ring. An event takes its header and its path's length (see
 * struct bw_event), so a typical one is under 200 bytes and the ring holds hundreds. */
#define BW_EVENTS_BYTES (64 * 1024)

/* DFA state numbers: 0 is the dead state (no rule can match any more). */
#define BW_DEAD_STATE 0
#define BW_START_STATE 1
/* Set in a transition whose target is absorbing: its decisions hold for any suffix. */
#define BW_ABSORBING (1u << 31)

enum bw_decision {
	BW_DECISION_NONE = 0,
	BW_DECISION_ALLOW = 1,
	BW_DECISION_DENY = 2,
	/* Decided at run time: the rule is the first bw_link of the state's decision chain. */
	BW_DECISION_CHAIN = 3,
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
 * Sandbox invariants: what no policy loosens without an `unsafe` statement (values match
 * ir::Invariant). bw_sandbox.invariants holds the ones in force. Reaching bumblewrap's own
 * state (/run/bumblewrap, /sys/fs/bpf/bumblewrap) is an invariant that nothing loosens.
 */
enum bw_invariant {
	BW_INV_CGROUP = 1 << 0,  /* leave the cgroup: write under /sys/fs/cgroup, mkdir on cgroup2 */
	BW_INV_BPF = 1 << 1,     /* bpf(), /sys/fs/bpf */
	BW_INV_PERF = 1 << 2,    /* perf events */
	BW_INV_SIGNAL = 1 << 3,  /* signal a process outside the sandbox */
	BW_INV_PTRACE = 1 << 4,  /* ptrace, process_vm_*, /proc/PID/mem of one outside */
	BW_INV_MOUNT = 1 << 5,   /* mount, move_mount, umount, pivot_root, chroot */
	BW_INV_MODULES = 1 << 6, /* load kernel modules or a kexec image, request a module */
	BW_INV_SYSCTL = 1 << 7,  /* write /proc/sys, /sys/kernel */
	BW_INV_DEVICES = 1 << 8, /* raw block devices, /dev/mem, /dev/kmem, /dev/port */
	BW_INV_SELF = 1 << 9,    /* bumblewrap's own state: never loosened */
	BW_INV_TTY = 1 << 10,    /* push input into a terminal (TIOCSTI, TIOCLINUX) */
	BW_INV_NAMESPACES = 1 << 11, /* create a user namespace; lifted, mount inside its own ones */
	BW_INV_ALL = (1 << 12) - 1,
};

/* What a denial event denied: a path access, or an operation that has no path rule. */
enum bw_event_op {
	BW_OP_PATH,
	BW_OP_SIGNAL,     /* target: the pid; target_comm its comm; arg: the signal */
	BW_OP_PTRACE,     /* target: the pid; target_comm its comm; arg: the ptrace mode (0: traceme) */
	BW_OP_MOUNT,      /* target_comm: the source; path: the mount point's name; arg: the flags */
	BW_OP_UMOUNT,     /* arg: the flags */
	BW_OP_PIVOT_ROOT, /* path: the new root's name */
	BW_OP_CHROOT,     /* path: the new root's name */
	BW_OP_BPF,        /* arg: the bpf command */
	BW_OP_PERF,       /* a perf event */
	BW_OP_MODULE,     /* arg: the kernel_read_file or kernel_load_data id; path: a requested module */
	BW_OP_MKDIR,      /* path: the new directory's name; arg: the file system's magic */
	BW_OP_DEVICE,     /* target: the device number (major << 20 | minor); arg: the mode; path: the name */
	BW_OP_MKNOD,      /* target: the device number; arg: the mode; path: the name */
	BW_OP_OPEN,       /* an open on cgroup2 or bpffs; target: the magic; arg: f_mode; path: the name */
	BW_OP_DEVICE_RULE, /* a device rule denied: rule_id, access; target: the device number;
			    * arg: the ioctl command (access ioctl); path as for BW_OP_PATH */
	BW_OP_AUDIT,      /* not a denial: an allowed access an audit rule records, as BW_OP_PATH;
			   * arg: every kind the operation asked (bits 1 << enum bw_access_kind) */
	BW_OP_TTY,        /* target: the device number; arg: the ioctl command; path: the name */
	BW_OP_USERNS,     /* the creation of a user namespace */
	BW_OP_NEW_FS,     /* a new file system: arg its magic; target_comm its type */
	BW_OP_SYSCALL,    /* a live syscall rule denied (struct bw_syscall_policy): rule_id;
			   * arg: the syscall number; target: 1 for a syscall of another ABI
			   * (i386, x32; rule_id 0) */
};

/*
 * One running sandbox, keyed by its cgroup id in bw_sandboxes. Present only once
 * the sandbox's automaton maps are in place, so a hit always has a whole policy.
 * A live edit (bwctl) puts the new policy's tables in place under a key of their own,
 * then replaces this entry whole: a hook that has read the entry decides by one policy.
 */
struct bw_sandbox {
	__u64 id;               /* the cgroup id of the sandbox this entry belongs to: a nested
				 * sandbox's cgroup has its enclosing sandbox's entry, under its own
				 * key, in the enclosing sandbox's program */
	__u32 nclasses;         /* byte classes: width of a transition row */
	__u32 nstates;
	__u32 default_decision; /* enum bw_decision */
	__u32 default_rule;     /* rule id of the `default` statement */
	__u8 classes[256];      /* byte -> class */
	__u32 invariants;       /* enum bw_invariant: those in force */
	__u32 audits;           /* 1 when the policy has audit rules */
	__u32 mnt_ns;           /* the inode numbers of the mount and user namespaces the sandbox */
	__u32 user_ns;          /* started in: paths are named in that mount namespace */
	__u64 tables;           /* the key of its per-sandbox tables (the map backend's): the cgroup
				 * id, or BW_TABLES_ALT | the cgroup id after an odd number of edits */
	__u32 version;          /* of its policy: 0 as started, one more per live edit */
	__u32 pad;
};

/* Set in the key of a policy's tables while the other key still holds the previous ones. */
#define BW_TABLES_ALT (1ull << 63)

/* `when exe` patterns: a policy names at most this many, each one bit of a mask. */
#define BW_MAX_EXE_PATTERNS 32
/* Device rules by path pattern: at most this many distinct patterns, one bit each. */
#define BW_MAX_DEVICE_PATTERNS 32

/* Per DFA state: for each access kind, the decision for a path ending here and the
 * rule that made it (decision NONE: the sandbox's default decides); the `when exe`
 * patterns that an executable whose path ends here matches (a mask of pattern numbers);
 * the first link of its audit chain (0: no audit rule matches); and the device rules'
 * patterns that a device node whose path ends here matches (bw_device_rule.pattern). */
struct bw_accept {
	__u32 rule[BW_ACCESS_KINDS];
	__u32 exe;
	__u32 audit;
	__u32 devices;
	__u8 decision[BW_ACCESS_KINDS];
	__u8 pad;
};

/*
 * One candidate of a decision chain: the rules that may decide a path ending in a state,
 * strongest first, down to the first that holds whatever the process and the access
 * (last set). The first link whose conditions hold decides; decision NONE: the sandbox's
 * default. An audit chain holds the audit rules whose patterns match, strongest first,
 * each with decision ALLOW and the access kinds it records (kinds, a mask of
 * 1 << enum bw_access_kind), and ends with a link of decision NONE: the first link that
 * holds and records one of the access's kinds names the audit rule.
 * Conditions: uid and gid are the task's fsuid and fsgid; owner: the file's owner is the
 * fsuid; open_flags: O_* bits the open must carry (only file_open has any); exe: the
 * `when exe` patterns the task's executable must match (bw_accept.exe of its path).
 */
struct bw_link {
	__u32 rule;
	__u8 decision;   /* enum bw_decision, never CHAIN */
	__u8 last;
	__u8 owner;
	__u8 pad;
	__u32 open_flags;
	__u32 uid_lo;
	__u32 uid_hi;
	__u32 gid_lo;
	__u32 gid_hi;
	__u32 exe;
	__u32 kinds;
};

/* The state of a walk over a file system's mounts (path.bpf.h), kept in a map value: a
 * bpf_loop context must be on the stack, and 6.1 gives all the frames of a program 512
 * bytes. head and pos are struct list_head *. */
struct bw_mounts_walk {
	__u64 head;
	__u64 pos;
	__u32 ns_inum;  /* the namespace whose mounts it keeps */
	__s32 error;
	__u8 count;     /* of the mounts kept */
	__u8 check;     /* 0: only look for a kernel-internal mount */
	__u8 internal;  /* a kernel-internal mount holds the file system */
	__u8 done;
};

/* Scratch space per task: the resolved path, written right to left so that it ends at
 * path[BW_PATH_MAX - 1] (see path.bpf.h). The spill lets the verifier see that a
 * component copied at any offset below BW_PATH_MAX stays inside the buffer. Task-local
 * so that preemption cannot hand one task's buffer to another. */
struct bw_scratch {
	char path[BW_PATH_MAX];
	char spill[BW_NAME_MAX + 1];
	/* A twin walk's (path.bpf.h): the mounts of the file's file system in the sandbox's
	 * mount namespace (struct mount *) and their roots (struct dentry *), and the mount
	 * points it passed (struct dentry *). */
	__u64 twin[BW_NAMES_MAX];
	__u64 twin_root[BW_NAMES_MAX];
	__u64 covered[BW_COVERED_MAX];
	struct bw_mounts_walk mounts;
};

/* A denial, or an audit record, as written to the sandbox's ring buffer: the header and
 * path_len bytes of path, no more (a reader must not look past the size it received). path
 * holds path_len bytes (no NUL); path_error is the negative errno of a path that could not be
 * resolved. Path denials (op BW_OP_PATH) and audit records name their rule; the others
 * name their invariant. */
struct bw_event {
	__u64 cgroup_id;
	__u32 pid;
	__u32 tgid;
	__u32 rule_id;
	__u32 access;     /* enum bw_access_kind that was denied */
	__s32 path_error;
	__u32 path_len;
	char comm[16];
	__u32 op;         /* enum bw_event_op */
	__u32 invariant;  /* enum bw_invariant that denied (op != BW_OP_PATH) */
	__u64 target;     /* the object: a pid, a device number (see enum bw_event_op) */
	__u64 arg;        /* a signal, a command, flags (see enum bw_event_op) */
	char target_comm[16]; /* the target task's comm, for signals and ptrace */
	__u32 version;    /* of the sandbox's policy when the event was written */
	__u32 pad;
	char path[BW_PATH_MAX];
};

/*
 * Live syscall rules (compiler/syscall_bitmap lowers them; hooks/syscalls.bpf.h reads them):
 * the verdict on each syscall number of the program's architecture that an LSM hook of ours
 * sees on every call (syscalls::live_hook). The seccomp filter allows those numbers, so that
 * bwctl can deny and re-allow them while the sandbox runs. Numbers no hook covers stay
 * all zero, which allows.
 */
#define BW_SYSCALL_NUMBERS 512

struct bw_syscall_verdict {
	__u32 rule;     /* the deciding rule's id */
	__u16 error;    /* the errno a denial returns */
	__u8 decision;  /* enum bw_decision: ALLOW (or NONE where no hook covers it) or DENY */
	__u8 kill;      /* 1: `action kill`; the task gets SIGKILL */
};

struct bw_syscall_policy {
	__u32 denied; /* how many numbers are denied: while any is, a syscall of another ABI
		       * (i386, x32), which this table cannot name, is denied at these hooks */
	__u32 pad;
	struct bw_syscall_verdict numbers[BW_SYSCALL_NUMBERS];
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
	/* Only in a conditional policy's bw_net_rule.op (see struct bw_net_policy): */
	BW_NET_FAMILY_RULE,  /* a `family` or `all` rule: decides a create, connect or bind */
	BW_NET_ENABLE,       /* an allowed endpoint: a create of its family its conditions allow */
};

/* bw_net_rule.family of an `all` rule */
#define BW_NET_ANY_FAMILY 0xffff

/* Per address family: the verdict on creating a socket (an allowed endpoint of the family
 * allows it), and the verdict on a connect or bind that no endpoint rule matches. */
struct bw_net_family {
	__u32 create_rule;
	__u32 other_rule;
	__u8 create_decision; /* enum bw_decision, never NONE */
	__u8 other_decision;
	__u8 pad[2];
};

/*
 * A sandbox's network tables besides its endpoint rules. In a conditional policy (a net
 * rule has conditions) every rule is in bw_net_rule, with its conditions: after the
 * endpoint rules come the `family` and `all` rules (BW_NET_FAMILY_RULE) in the same order
 * of precedence, then the allowed endpoints (BW_NET_ENABLE) in the policy's; the families'
 * verdicts are then the default's, for what no rule decides.
 */
struct bw_net_policy {
	__u32 nrules;      /* rules to scan */
	__u32 conditional; /* 1: a conditional policy */
	__u32 record;      /* 1: every socket operation allowed is reported too (learn mode), as
			    * an audit event (op BW_OP_AUDIT, access BW_NET_EVENT) */
	__u32 pad;
	struct bw_net_family families[BW_NET_FAMILIES];
};

/* A rule. The rules are sorted most specific first, so the first one that matches (and
 * whose conditions hold) decides. Addresses are 4 words in network byte order; IPv4 uses
 * addr[0]. */
struct bw_net_rule {
	__u32 addr[4]; /* already masked */
	__u32 mask[4]; /* the prefix's bits */
	__u16 port_lo; /* host byte order, inclusive */
	__u16 port_hi;
	__u16 family;  /* AF_INET or AF_INET6 */
	__u8 protocol; /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 op;       /* BW_NET_CONNECT or BW_NET_BIND; BW_NET_FAMILY_RULE, BW_NET_ENABLE */
	__u32 decision;
	__u32 rule;
	struct bw_link when; /* its conditions: uid, gid and exe (decision and rule unused) */
};

/*
 * A socket denial, or learn mode's record of an allowed operation, travels in a struct
 * bw_event like any other: access is BW_NET_EVENT, path_error is 0 and path holds path_len
 * == sizeof(struct bw_net_object) bytes of this struct (binary, not text).
 * runtime/lib/denials.cc renders it.
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

/*
 * Device rules (compiler/devices lowers them; hooks/devices.bpf.h reads them), by path
 * pattern or by number. They are sorted most specific first, so the first rule that
 * matches a device node and an access kind decides; no rule matches: the path rules
 * decide. A rule by pattern matches a node whose path's state (bw_accept.devices) has
 * its pattern's bit; a rule by number (pattern 0) matches by type and number. Either
 * matches only when its conditions hold: those of `when`, a link of which only the
 * conditions count (bw_link_holds; an unconditional rule's always hold).
 */
#define BW_DEVICE_IOCTLS 16      /* ioctl command ranges per rule */
#define BW_MAX_DEVICE_RULES 1024 /* rules per policy */

struct bw_ioctl_range {
	__u32 lo; /* inclusive */
	__u32 hi;
};

struct bw_device_rule {
	__u32 major_lo; /* inclusive ranges */
	__u32 major_hi;
	__u32 minor_lo;
	__u32 minor_hi;
	__u32 kinds;    /* bit 1 << enum bw_access_kind for each kind the rule decides */
	__u32 rule;
	__u32 pattern;  /* by path: one bit of bw_accept.devices; 0: by number */
	__u8 type;      /* 'c' or 'b', when by number */
	__u8 decision;  /* enum bw_decision */
	__u8 ioctl_any; /* an allowing rule allows every ioctl command */
	__u8 nioctls;   /* else those in ioctls[0..nioctls) */
	struct bw_ioctl_range ioctls[BW_DEVICE_IOCTLS];
	struct bw_link when;
};

#endif /* BUMBLEWRAP_H */
