// SPDX-License-Identifier: GPL-2.0-only
/*
 * Vegas as a BPF struct_ops congestion control.
 *
 * Rust twin: crates/satcc-cc/src/algos/vegas.rs.
 * Linux:     net/ipv4/tcp_vegas.c.
 *
 * Model: once per RTT, diff = cwnd * (RTT - baseRTT) / baseRTT estimates the
 * packets this flow keeps queued. In avoidance cwnd grows by one per RTT
 * while diff < alpha, shrinks by one while diff > beta, holds in between.
 * Slow start doubles per RTT until diff > gamma, then cwnd becomes the
 * actual rate * baseRTT + 1. RTT is the round's minimum sample, baseRTT the
 * minimum ever; losses halve as Reno.
 * L. S. Brakmo, L. L. Peterson, "TCP Vegas: end to end congestion avoidance
 * on a global internet", IEEE JSAC 13(8), 1995, section 3.2.
 *
 *             set_state(Open)                   diff > gamma
 *  +--------+ --------------> +------------------+ ----------> +-------------------+
 *  | Reno   |                 | Vegas slow start |             | Vegas avoidance   |
 *  | (off)  | <-------------- | doubles per RTT  |             | +-1 per RTT       |
 *  +--------+ set_state(!Open)+------------------+             +-------------------+
 *
 * Parameters (-D defines from the scenario's `cc`):
 *   VEGAS_ALPHA  2  packets  grow while fewer are queued   (module param alpha)
 *   VEGAS_BETA   4  packets  shrink while more are queued  (module param beta)
 *   VEGAS_GAMMA  1  packets  slow-start exit threshold     (module param gamma)
 *
 * Scales and ranges: RTTs in us + 1 (u32, up to ~35 min); diff and the
 * target window in 64 bits.
 *
 * Differences:
 * 1. cwnd * (rtt - baseRTT) is computed in 64 bits, as in the Rust twin (its
 *    difference 1); Linux's u32 product wraps above 2^32 packet-us.
 * 2. RTT minima use the kernel's 0x7fffffff sentinel, as Linux does; the Rust
 *    twin uses Option (its difference 2). Same arithmetic.
 *
 * Not implemented: get_info (INET_DIAG_VEGASINFO; BPF congestion controls
 * cannot provide it).
 */
#include "satcc_tcp.h"
#include "vegas_core.h"

char _license[] SEC("license") = "GPL";

#ifndef SATCC_CA_NAME
#define SATCC_CA_NAME satcc_vegas
#endif
#ifndef VEGAS_ALPHA
#define VEGAS_ALPHA 2
#endif
#ifndef VEGAS_BETA
#define VEGAS_BETA 4
#endif
#ifndef VEGAS_GAMMA
#define VEGAS_GAMMA 1
#endif

#define VEGAS_MIN_CWND 2U

struct vegas {
	struct vegas_core core;
};
SATCC_CA_PRIV_FITS(struct vegas);

SEC("struct_ops")
void BPF_PROG(vegas_init, struct sock *sk)
{
	struct vegas *ca = inet_csk_ca(sk);

	vegas_core_init(&ca->core, tcp_sk(sk));
}

SEC("struct_ops")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *ca = inet_csk_ca(sk);

	vegas_core_pkts_acked(&ca->core, sample);
}

SEC("struct_ops")
void BPF_PROG(vegas_state, struct sock *sk, __u8 new_state)
{
	struct vegas *ca = inet_csk_ca(sk);

	vegas_core_state(&ca->core, tcp_sk(sk), new_state);
}

SEC("struct_ops")
void BPF_PROG(vegas_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct vegas *ca = inet_csk_ca(sk);

	vegas_core_cwnd_event(&ca->core, tcp_sk(sk), ev);
}

/* The once-per-RTT decision of tcp_vegas_cong_avoid. */
static void vegas_adjust(struct sock *sk, struct vegas_core *v, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 cwnd = tp->snd_cwnd;
	__u64 rtt = v->min_rtt;
	__u64 base = v->base_rtt;
	/* Expected window at the actual rate: cwnd * baseRTT / RTT. */
	__u64 target_cwnd = cwnd * base / rtt;
	/* Packets queued: cwnd * (RTT - baseRTT) / baseRTT (difference 1). */
	__u64 diff = cwnd * (rtt - base) / base;

	if (diff > VEGAS_GAMMA && tcp_in_slow_start(tp)) {
		/* Going too fast: match the actual rate, leave slow start. */
		tp->snd_cwnd = min(tp->snd_cwnd, (__u32)target_cwnd + 1);
		tp->snd_ssthresh = min(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else if (diff > VEGAS_BETA) {
		tp->snd_cwnd--;
		tp->snd_ssthresh = min(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (diff < VEGAS_ALPHA) {
		tp->snd_cwnd++;
	}
	if (tp->snd_cwnd < VEGAS_MIN_CWND)
		tp->snd_cwnd = VEGAS_MIN_CWND;
	else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
		tp->snd_cwnd = tp->snd_cwnd_clamp;
	tp->snd_ssthresh = tcp_current_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct vegas *ca = inet_csk_ca(sk);
	struct vegas_core *v = &ca->core;

	if (!v->doing_vegas_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (after(ack, v->beg_snd_nxt)) {
		/* A round ended: the once-per-RTT adjustment. */
		v->beg_snd_nxt = tp->snd_nxt;
		if (!vegas_core_round_ready(v))
			tcp_reno_cong_avoid(sk, ack, acked);	/* delayed ACKs */
		else
			vegas_adjust(sk, v, acked);
		vegas_core_new_round(v);
	} else if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops SATCC_CA_NAME = {
	.init		= (void *)vegas_init,
	.ssthresh	= (void *)vegas_ssthresh,
	.undo_cwnd	= (void *)vegas_undo_cwnd,
	.cong_avoid	= (void *)vegas_cong_avoid,
	.pkts_acked	= (void *)vegas_pkts_acked,
	.set_state	= (void *)vegas_state,
	.cwnd_event	= (void *)vegas_cwnd_event,
	.name		= SATCC_STR(SATCC_CA_NAME),
};
