// SPDX-License-Identifier: GPL-2.0-only
/*
 * DCTCP as a BPF struct_ops congestion control (needs ECN).
 *
 * Rust twin: crates/satcc-cc/src/algos/dctcp.rs (Dctcp sender, DctcpEcho
 *            receiver).
 * Linux:     net/ipv4/tcp_dctcp.c, net/ipv4/tcp_dctcp.h.
 *
 * Model: the network marks CE above a queue threshold; the DCTCP receiver
 * echoes ECE exactly while the data it acknowledges was CE-marked; the sender
 * keeps alpha, a moving average of the marked fraction F (once per window:
 * alpha <- (1 - g) alpha + g F), and on the first ECE of a window cuts cwnd to
 * cwnd (1 - alpha / 2). Growth is Reno's; a loss halves.
 * M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, section 3.1;
 * RFC 8257 sections 3.2-3.4.
 *
 * TCP_CONG_NEEDS_ECN makes the kernel negotiate ECN for every connection that
 * uses this congestion control, whatever net.ipv4.tcp_ecn says. The receiving
 * socket must use it too for the DCTCP echo (set it on the listener).
 *
 * Parameters (-D defines from the scenario's `cc`):
 *   DCTCP_SHIFT_G        4     log2    g = 2^-shift_g (dctcp_shift_g, 0..10)
 *   DCTCP_ALPHA_ON_INIT  1024  1/1024  initial alpha (dctcp_alpha_on_init)
 *
 * Fixed point: alpha in 1/1024 (0..1024 = DCTCP_MAX_ALPHA); the cut is
 * cwnd - (cwnd * alpha >> 11); g F = (marked << (10 - shift_g)) / delivered,
 * in 64 bits.
 *
 * Differences:
 * 1. Without ECN on the connection Linux swaps in its own dctcp-reno ops
 *    (Reno with DCTCP's get_info); a BPF program cannot, so dctcp_init
 *    switches the socket to the kernel's "reno" with bpf_setsockopt
 *    (TCP_CONGESTION), which also stops ECT marking as Linux's
 *    INET_ECN_dontxmit does. The Rust twin stays itself and runs Reno.
 * 2. marked << (10 - shift_g) is computed in 64 bits, as in the Rust twin
 *    (its difference 1); Linux's u32 overflows above 4 M marked packets per
 *    window.
 * 3. The receiver echo (tcp_dctcp.h dctcp_ece_ack_update) runs here, in the
 *    same program, as in Linux; the Rust twin puts it in DctcpEcho for the
 *    simulator's receiver (its difference 2).
 * 4. ECN negotiated is bit 0 or bit 4 of tp->ecn_flags (RFC 3168 or, on
 *    6.18+ kernels, Accurate ECN), read at run time.
 *
 * Not implemented: get_info (INET_DIAG_DCTCPINFO; BPF congestion controls
 * cannot provide it), PLB (as in the Rust twin).
 */
#include "satcc_tcp.h"

char _license[] SEC("license") = "GPL";

#ifndef SATCC_CA_NAME
#define SATCC_CA_NAME satcc_dctcp
#endif
#ifndef DCTCP_SHIFT_G
#define DCTCP_SHIFT_G 4
#endif
#ifndef DCTCP_ALPHA_ON_INIT
#define DCTCP_ALPHA_ON_INIT 1024
#endif

#define DCTCP_MAX_ALPHA		1024U	/* alpha = 1.0 */
#define DCTCP_ALPHA_SHIFT	10	/* log2(DCTCP_MAX_ALPHA) */
#define DCTCP_MIN_CWND		2U

_Static_assert(DCTCP_SHIFT_G >= 0 && DCTCP_SHIFT_G <= 10, "dctcp_shift_g is 0..10");

/* The kernel's Reno, what DCTCP becomes without ECN (difference 1). */
static char dctcp_fallback[] = "reno";

struct dctcp {
	__u32 old_delivered;	/* tp->delivered at the window start */
	__u32 old_delivered_ce;	/* tp->delivered_ce at the window start */
	__u32 prior_rcv_nxt;	/* receiver: rcv_nxt before the last segment */
	__u32 alpha;		/* 0..1024 */
	__u32 next_seq;		/* the window ends when snd_una reaches this */
	__u32 ce_state;		/* receiver: the last segment was CE */
	__u32 loss_cwnd;	/* cwnd at the last reduction, for undo */
};
SATCC_CA_PRIV_FITS(struct dctcp);

/* dctcp_reset: a new observation window from snd_nxt. */
static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);
	int state = sk->__sk_common.skc_state;

	if ((tp->ecn_flags & TCP_ECN_MODE_ANY) ||
	    state == TCP_LISTEN || state == TCP_CLOSE) {
		ca->prior_rcv_nxt = tp->rcv_nxt;
		ca->alpha = min(DCTCP_ALPHA_ON_INIT, DCTCP_MAX_ALPHA);
		ca->loss_cwnd = 0;
		ca->ce_state = 0;
		dctcp_reset(tp, ca);
		return;
	}
	/* No ECN: become the kernel's Reno (difference 1). */
	bpf_setsockopt(sk, SOL_TCP, TCP_CONGESTION, dctcp_fallback,
		       sizeof(dctcp_fallback));
}

/* dctcp_ssthresh: cwnd (1 - alpha / 2), RFC 8257 section 3.4. */
SEC("struct_ops")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);
	__u32 cut = ((__u64)tp->snd_cwnd * ca->alpha) >> (DCTCP_ALPHA_SHIFT + 1);

	ca->loss_cwnd = tp->snd_cwnd;
	return max(tp->snd_cwnd - cut, DCTCP_MIN_CWND);
}

/* dctcp_update_alpha (in_ack_event): once per window, RFC 8257 section 3.3. */
SEC("struct_ops")
void BPF_PROG(dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);
	__u32 alpha = ca->alpha;
	__u64 marked, delivered;
	__u32 decay;

	if (before(tp->snd_una, ca->next_seq))
		return;
	marked = tp->delivered_ce - ca->old_delivered_ce;
	/* (1 - g) alpha, the decrement rounded so that a small alpha decays to 0 */
	decay = alpha >> DCTCP_SHIFT_G;
	alpha -= decay ? min(alpha, decay) : alpha;
	if (marked) {
		delivered = tp->delivered - ca->old_delivered;
		/* g F in 1/1024 (difference 2) */
		marked = (marked << (DCTCP_ALPHA_SHIFT - DCTCP_SHIFT_G)) /
			 (delivered ? delivered : 1);
		alpha = min((__u64)alpha + marked, (__u64)DCTCP_MAX_ALPHA);
	}
	ca->alpha = alpha;
	dctcp_reset(tp, ca);
}

/* dctcp_react_to_loss: a loss halves, as Reno. */
static __always_inline void dctcp_react_to_loss(struct tcp_sock *tp, struct dctcp *ca)
{
	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = max(tp->snd_cwnd >> 1, DCTCP_MIN_CWND);
}

SEC("struct_ops")
void BPF_PROG(dctcp_state, struct sock *sk, __u8 new_state)
{
	/* Entering Recovery halves; RTO is handled in dctcp_cwnd_event. */
	if (new_state == TCP_CA_Recovery && new_state != satcc_ca_state(sk))
		dctcp_react_to_loss(tcp_sk(sk), inet_csk_ca(sk));
}

/* dctcp_ece_ack_cwr: ECE on our ACKs while the CE state holds. */
static __always_inline void dctcp_ece_ack_cwr(struct tcp_sock *tp, __u32 ce_state)
{
	if (ce_state)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/*
 * dctcp_ece_ack_update (tcp_dctcp.h), the receiver: a change of CE state
 * forces an immediate ACK, after flushing a pending delayed ACK with the
 * previous state, so that one ACK never covers marked and unmarked data.
 */
static __always_inline void dctcp_ece_ack_update(struct sock *sk, struct dctcp *ca,
						 __u32 new_ce_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct inet_connection_sock *icsk = inet_csk(sk);

	if (ca->ce_state != new_ce_state) {
		if (icsk->icsk_ack.pending & ICSK_ACK_TIMER) {
			dctcp_ece_ack_cwr(tp, ca->ce_state);
			bpf_tcp_send_ack(tp, ca->prior_rcv_nxt);
		}
		icsk->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ce_state = new_ce_state;
	dctcp_ece_ack_cwr(tp, new_ce_state);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct dctcp *ca = inet_csk_ca(sk);

	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
		dctcp_ece_ack_update(sk, ca, 1);
		break;
	case CA_EVENT_ECN_NO_CE:
		dctcp_ece_ack_update(sk, ca, 0);
		break;
	case CA_EVENT_LOSS:
		dctcp_react_to_loss(tcp_sk(sk), ca);
		break;
	default:
		break;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_undo_cwnd, struct sock *sk)
{
	const struct dctcp *ca = inet_csk_ca(sk);

	return max(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops SATCC_CA_NAME = {
	.init		= (void *)dctcp_init,
	.in_ack_event	= (void *)dctcp_in_ack_event,
	.cwnd_event	= (void *)dctcp_cwnd_event,
	.ssthresh	= (void *)dctcp_ssthresh,
	.cong_avoid	= (void *)dctcp_cong_avoid,
	.undo_cwnd	= (void *)dctcp_undo_cwnd,
	.set_state	= (void *)dctcp_state,
	.flags		= TCP_CONG_NEEDS_ECN,
	.name		= SATCC_STR(SATCC_CA_NAME),
};
