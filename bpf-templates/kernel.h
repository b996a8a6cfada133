/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the BPF programs touch, marked for CO-RE relocation so one
 * object loads on every kernel with BTF. Far cheaper to compile than a full vmlinux.h.
 */
#ifndef BUMBLEWRAP_KERNEL_H
#define BUMBLEWRAP_KERNEL_H

#include <linux/types.h>

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct vfsmount;
struct dentry;
struct task_struct;
struct inode;

/* include/linux/uidgid_types.h (6.12), uidgid.h (6.1): the same shape on both */
typedef struct {
	__u32 val;
} kuid_t;

typedef struct {
	__u32 val;
} kgid_t;

/* the task's credentials, for `when uid`, `when gid` and `owner` */
struct cred {
	kuid_t fsuid;
	kgid_t fsgid;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
	unsigned int f_mode;
	unsigned int f_flags;
};

/* tasks and cgroups */
struct kernfs_node {
	__u64 id; /* the cgroup id that bpf_get_current_cgroup_id() returns */
};

struct cgroup {
	struct kernfs_node *kn;
};

struct css_set {
	struct cgroup *dfl_cgrp; /* the task's cgroup v2 */
};

struct task_struct {
	int pid;
	int tgid;
	struct css_set *cgroups;
	char comm[16];
	const struct cred *real_cred;
};

struct list_head {
	struct list_head *next;
	struct list_head *prev;
};

/* inodes and file systems, for the device and file-system invariants */
struct user_namespace;

struct file_system_type {
	const char *name;
};

struct super_block {
	struct file_system_type *s_type;
	unsigned long s_flags;
	unsigned long s_magic;
	struct list_head s_mounts; /* its mounts, linked by mount.mnt_instance */
	struct user_namespace *s_user_ns; /* the user namespace it was mounted in */
};

struct inode {
	unsigned short i_mode;
	kuid_t i_uid;
	struct super_block *i_sb;
	__u32 i_rdev;
};

enum kernel_read_file_id {
	READING_UNKNOWN,
	READING_FIRMWARE,
	READING_MODULE,
	READING_KEXEC_IMAGE,
	READING_KEXEC_INITRAMFS,
	READING_POLICY,
	READING_X509_CERTIFICATE,
};

enum kernel_load_data_id {
	LOADING_UNKNOWN,
	LOADING_FIRMWARE,
	LOADING_MODULE,
	LOADING_KEXEC_IMAGE,
	LOADING_KEXEC_INITRAMFS,
	LOADING_POLICY,
	LOADING_X509_CERTIFICATE,
};

/* sockets: include/linux/net.h, include/net/sock.h, include/linux/socket.h (same on 6.1 and 6.12) */
struct sock_common {
	unsigned short skc_family;
};

struct sock {
	struct sock_common __sk_common;
	__u16 sk_type;
	__u16 sk_protocol;
};

struct socket {
	short type;
	struct sock *sk;
};

/* include/net/af_unix.h: the file a socket is bound to (dentry NULL when abstract) */
struct unix_sock {
	struct sock sk;
	struct path path;
};

struct sockaddr {
	unsigned short sa_family;
	char sa_data[14];
};

struct msghdr {
	void *msg_name;
	int msg_namelen;
	unsigned int msg_flags;
};

#pragma clang attribute pop

/* paths and mounts */
#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct qstr {
	union {
		struct {
			__u32 hash;
			__u32 len;
		};
		__u64 hash_len;
	};
	const unsigned char *name;
};

struct dentry {
	unsigned int d_flags;
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
	struct super_block *d_sb;
};

struct vfsmount {
	struct dentry *mnt_root;
};

struct mnt_namespace;
struct cred;

/* fs/mount.h: the mount tree node around each vfsmount */
struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
	struct mnt_namespace *mnt_ns;
	struct list_head mnt_instance;
	struct list_head mnt_mounts; /* the mounts on it, linked by mnt_child */
	struct list_head mnt_child;
};

/* include/linux/ns_common.h: the inode number of /proc/PID/ns/NAME */
struct ns_common {
	unsigned int inum;
};

struct user_namespace {
	struct ns_common ns;
};

struct mnt_namespace {
	struct ns_common ns;
	struct mount *root;
	struct user_namespace *user_ns; /* the user namespace that owns it */
};

struct nsproxy {
	struct mnt_namespace *mnt_ns;
};

/* A flavour (libbpf ignores the ___ suffix), so other blocks may define task_struct. */
struct task_struct___paths {
	struct nsproxy *nsproxy;
	const struct cred *real_cred;
	const struct cred *cred; /* differs from real_cred while the kernel borrows credentials */
};

/* include/linux/fs.h: what a notify_change() changes */
struct iattr {
	unsigned int ia_valid;
};

struct linux_binprm {
	struct file *file;
};

struct vm_area_struct {
	struct file *vm_file;
};

/* The registers a task entered the kernel with: which syscall it is in (hooks/syscalls.bpf.h). */
#if defined(__TARGET_ARCH_arm64)
struct pt_regs___syscall {
	__u64 pstate;   /* PSR_MODE32_BIT: an AArch32 task */
	__s32 syscallno;
};
#else
struct pt_regs___syscall {
	unsigned long orig_ax; /* -1 outside a syscall; x32 numbers have __X32_SYSCALL_BIT */
};

struct thread_info___syscall {
	__u32 status; /* TS_COMPAT while an i386 syscall runs */
};

struct task_struct___syscall {
	struct thread_info___syscall thread_info;
};
#endif

#pragma clang attribute pop

/* fs/mount.h: the mnt_ns of kern_mount()ed filesystems (pipes, sockets, memfds) */
#define MNT_NS_INTERNAL ((void *)-22L)
/* include/linux/dcache.h: a mount sits on this dentry, in some namespace (6.1 and 6.12) */
#define DCACHE_MOUNTED 0x00010000
/* include/linux/fs.h: a file system the kernel mounted for itself (kern_mount) */
#define SB_KERNMOUNT (1 << 22)
/* include/linux/fs.h: a mount made by an automount point (vfs_submount) */
#define SB_SUBMOUNT (1 << 26)
/* include/uapi/asm-generic/mman-common.h */
#define PROT_EXEC 0x4
/* include/uapi/linux/fs.h */
#define RENAME_EXCHANGE (1 << 1)
/* include/linux/fs.h: iattr.ia_valid (same on 6.1 and 6.12) */
#define ATTR_MODE (1 << 0)
#define ATTR_UID (1 << 1)
#define ATTR_GID (1 << 2)
#define ATTR_SIZE (1 << 3)
#define ATTR_ATIME (1 << 4)
#define ATTR_MTIME (1 << 5)
#define ATTR_TOUCH (1 << 17)

#define ENOENT 2
#define ENODEV 19
#define EXDEV 18
#define EREMOTE 66
#define EFAULT 14
#define ELOOP 40
#define E2BIG 7
/* include/linux/err.h: the largest errno */
#define MAX_ERRNO 4095

/* include/linux/fs.h */
#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
#define FMODE_EXEC 0x20

/* include/uapi/asm-generic/fcntl.h */
#define O_APPEND 02000
/* include/linux/fs.h: exec opens carry it in f_flags; some kernels copy it to f_mode */
#define __FMODE_EXEC 0x20

/* include/uapi/linux/stat.h */
#define S_IFMT 00170000
#define S_IFBLK 0060000
#define S_IFCHR 0020000

/* include/linux/kdev_t.h: the kernel's dev_t */
#define MINORBITS 20
#define MINORMASK ((1U << MINORBITS) - 1)

/* include/uapi/asm-generic/ioctls.h */
#define TIOCSTI 0x5412
#define TIOCLINUX 0x541C
#define FIONBIO 0x5421
#define FIONCLEX 0x5450
#define FIOCLEX 0x5451
#define FIOASYNC 0x5452
/* include/uapi/linux/fs.h: chattr's flags, and the 32-bit compat form; fsxattr */
#define FS_IOC_SETFLAGS 0x40086602
#define FS_IOC32_SETFLAGS 0x40046602
#define FS_IOC_FSSETXATTR 0x401c5820

/* include/uapi/linux/magic.h */
#define CGROUP2_SUPER_MAGIC 0x63677270
#define BPF_FS_MAGIC 0xcafe4a11
#define PROC_SUPER_MAGIC 0x9fa0
#define TMPFS_MAGIC 0x01021994
#define RAMFS_MAGIC 0x858458f6
#define DEVPTS_SUPER_MAGIC 0x1cd1
#define SYSFS_MAGIC 0x62656572

/* include/linux/ptrace.h: the check of a ptrace attach (not a mere read of /proc) */
#define PTRACE_MODE_ATTACH 0x02
#define PTRACE_MODE_NOAUDIT 0x04

#define EPERM 1

/* sockets: include/linux/socket.h, include/uapi/linux/in.h, include/linux/net.h */
#define AF_UNSPEC 0
#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define MSG_FASTOPEN 0x20000000
/* the sizes below which the kernel refuses an address with EINVAL (sockaddr_in, SIN6_LEN_RFC2133) */
#define BW_SIN_LEN 16
#define BW_SIN6_LEN 24

#define EACCES 13
#define EAFNOSUPPORT 97
#define EFAULT 14
#define ENOMEM 12
#define ENAMETOOLONG 36

#endif /* BUMBLEWRAP_KERNEL_H */
