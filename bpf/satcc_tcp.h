/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * satcc_tcp.h - what every satcc BPF congestion control includes.
 *
 * The kernel's own inline helpers (tcp_sk, inet_csk_ca, tcp_in_slow_start,
 * tcp_is_cwnd_limited, before/after) are not callable from BPF, so they are
 * restated here from include/net/tcp.h and include/net/inet_connection_sock.h.
 * Anything the kernel exports to BPF congestion controls as a kfunc
 * (net/ipv4/bpf_tcp_ca.c, bpf_tcp_ca_check_kfunc_ids) is imported with __ksym
 * instead of being rewritten: tcp_slow_start, tcp_cong_avoid_ai,
 * tcp_reno_cong_avoid, tcp_reno_ssthresh, tcp_reno_undo_cwnd.
 *
 * Every program is compiled once per parameter set (satcc/emu/bpf.py): its
 * parameters arrive as -D defines, and SATCC_CA_NAME (<= 15 characters,
 * TCP_CA_NAME_MAX - 1) names both the struct_ops map (what `bpftool struct_ops
 * list` shows) and the congestion control (what setsockopt(TCP_CONGESTION)
 * and tcp_available_congestion_control see).
 */
#ifndef SATCC_TCP_H
#define SATCC_TCP_H

#include <vmlinux.h>	/* generated from the running kernel's BTF */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* #defines of include/net/tcp.h and include/uapi/linux/tcp.h (not in BTF). */
#define TCP_INFINITE_SSTHRESH	0x7fffffff
#define TCP_CONG_NEEDS_ECN	0x2
#define SOL_TCP			6
#define TCP_CONGESTION		13
/*
 * tp->ecn_flags: bit 0 is TCP_ECN_OK (RFC 3168) on every kernel; kernels with
 * Accurate ECN (6.18+) call it TCP_ECN_MODE_RFC3168 and add
 * TCP_ECN_MODE_ACCECN = bit 4, a bit older kernels never set.
 */
#define TCP_ECN_MODE_RFC3168	0x01
#define TCP_ECN_DEMAND_CWR	0x04
#define TCP_ECN_MODE_ACCECN	0x10
#define TCP_ECN_MODE_ANY	(TCP_ECN_MODE_RFC3168 | TCP_ECN_MODE_ACCECN)

#define USEC_PER_MSEC		1000ULL
#define USEC_PER_SEC		1000000ULL

#define SATCC_STR_(x)		#x
#define SATCC_STR(x)		SATCC_STR_(x)

#ifndef min
#define min(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef max
#define max(a, b) ((a) > (b) ? (a) : (b))
#endif

/* The kernel's congestion-control kfuncs (net/ipv4/tcp_cong.c). */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

/* Private state must fit icsk_ca_priv (ICSK_CA_PRIV_SIZE, 104 bytes on 6.x). */
#define SATCC_CA_PRIV_FITS(type)					\
	_Static_assert(sizeof(type) <=					\
		       sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv), \
		       #type " does not fit icsk_ca_priv")

static __always_inline bool before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

static __always_inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

static __always_inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return true;
	/* In slow start, cwnd may grow to twice what was in flight. */
	if (tcp_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

static __always_inline __u8 satcc_ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
}

/* tcp_current_ssthresh (include/net/tcp.h). */
static __always_inline __u32 tcp_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if ((1 << satcc_ca_state(sk)) & ((1 << TCP_CA_CWR) | (1 << TCP_CA_Recovery)))
		return tp->snd_ssthresh;
	return max(tp->snd_ssthresh,
		   (tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2));
}

#endif /* SATCC_TCP_H */
