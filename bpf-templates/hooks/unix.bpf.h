/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unix sockets by path: connecting a stream or seqpacket socket to a listener, and
 * connecting or sending a datagram to one, need `write` on the socket file the listener
 * is bound to (what the kernel's own permission check asks of the file too). The family
 * verdict of net.bpf.h decided already whether the sandbox may have unix sockets at all;
 * this is what keeps `net allow family unix` from reaching every socket on the machine
 * (/run/docker.sock). Abstract sockets have no file: only the family verdict decides them.
 */
#ifndef BUMBLEWRAP_HOOK_UNIX_H
#define BUMBLEWRAP_HOOK_UNIX_H

#include "decide.bpf.h"

/* `write` on the file `peer` is bound to; nothing for an abstract or unbound socket. */
static __always_inline int bw_unix_peer_check(struct sock *peer)
{
	struct unix_sock *u;
	struct bw_hook h;

	if (!peer || !bw_hook_enter(&h))
		return 0;
	/* The cast the verifier accepts: a struct sock pointer may not be read past its end. */
	u = bpf_skc_to_unix_sock(peer);
	if (!u || !u->path.dentry)
		return 0;
	return bw_check(&h, u->path.mnt, u->path.dentry, BW_KIND(BW_ACCESS_WRITE));
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(bw_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk, int ret)
{
	if (ret)
		return ret;
	return bw_unix_peer_check(other);
}

/* connect(2) and every sendmsg(2) of a datagram socket; 6.1 to 6.12 pass the sockets. */
SEC("lsm/unix_may_send")
int BPF_PROG(bw_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	if (ret)
		return ret;
	return bw_unix_peer_check(other->sk);
}

#endif /* BUMBLEWRAP_HOOK_UNIX_H */
