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

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
	unsigned int f_mode;
	unsigned int f_flags;
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

/* include/linux/fs.h */
#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
#define FMODE_EXEC 0x20

/* include/uapi/asm-generic/fcntl.h */
#define O_APPEND 02000
/* include/linux/fs.h: exec opens carry it in f_flags; some kernels copy it to f_mode */
#define __FMODE_EXEC 0x20

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
