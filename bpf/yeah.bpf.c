// SPDX-License-Identifier: GPL-2.0-only
/*
 * YeAH ("Yet Another Highspeed TCP") as a BPF struct_ops congestion control.
 *
 * Rust twin: crates/satcc-cc/src/algos/yeah.rs.
 * Linux:     net/ipv4/tcp_yeah.c (with tcp_vegas.c's RTT bookkeeping).
 *
 * Model: once per RTT, Vegas's queue estimate Q = cwnd * (RTT - baseRTT) / RTT
 * picks a mode. While Q <= alpha and the queueing delay is under baseRTT/phy
 * the flow is *fast* and grows like Scalable TCP (1 packet per min(cwnd, 100)
 * acked); otherwise it is *slow*, grows like Reno and, when Q > alpha, drains
 * the excess at once (cwnd -= min(Q / gamma, cwnd >> epsilon), not below
 * reno_count). On loss, a flow not slow for rho RTTs removes only its own
 * queue (between cwnd >> delta and cwnd / 2); otherwise it halves.
 * A. Baiocchi, A. P. Castellani, F. Vacirca, "YeAH-TCP: Yet Another Highspeed
 * TCP", PFLDnet 2007, section 3.
 *
 *                Q > alpha or delay > baseRTT/phy  (drain if Q > alpha)
 *  +----------------------+ -----------------------------> +-------------------+
 *  | fast: Scalable growth|                                | slow: Reno growth |
 *  | doing_reno_now = 0   | <----------------------------- | doing_reno_now++  |
 *  +----------------------+  Q <= alpha, delay <= base/phy +-------------------+
 *
 * Parameters (-D defines from the scenario's `cc`; #defines in Linux):
 *   YEAH_ALPHA            80  packets  TCP_YEAH_ALPHA: queue that means slow mode
 *   YEAH_GAMMA             1  -        TCP_YEAH_GAMMA: drain Q / gamma
 *   YEAH_DELTA             3  log2     TCP_YEAH_DELTA: loss removes >= cwnd >> delta
 *   YEAH_EPSILON           1  log2     TCP_YEAH_EPSILON: drain <= cwnd >> epsilon
 *   YEAH_PHY               8  -        TCP_YEAH_PHY: slow when delay > baseRTT / phy
 *   YEAH_RHO              16  RTTs     TCP_YEAH_RHO: slow RTTs after which loss halves
 *   YEAH_ZETA             50  RTTs     TCP_YEAH_ZETA: fast RTTs that reset reno_count
 *   YEAH_SCALABLE_AI_CNT 100  packets  TCP_SCALABLE_AI_CNT
 *
 * Scales and ranges: RTTs in us + 1 (u32); the queue estimate is a 64-bit
 * product truncated to 32 bits, as in Linux and the Rust twin.
 *
 * Differences:
 * 1. Linux lowers snd_cwnd_clamp to 2^32 / 128 in tcp_yeah_init; a BPF
 *    program may not write snd_cwnd_clamp. The clamp only guards arithmetic
 *    at windows of 33 M packets, which no path reaches; not applied here (the
 *    Rust twin applies it).
 * 2. RTT minima use the kernel's 0x7fffffff sentinel where the Rust twin uses
 *    Option; same arithmetic.
 *
 * Not implemented: get_info.
 */
#include "satcc_tcp.h"
#include "vegas_core.h"

char _license[] SEC("license") = "GPL";

#ifndef SATCC_CA_NAME
#define SATCC_CA_NAME satcc_yeah
#endif
#ifndef YEAH_ALPHA
#define YEAH_ALPHA 80
#endif
#ifndef YEAH_GAMMA
#define YEAH_GAMMA 1
#endif
#ifndef YEAH_DELTA
#define YEAH_DELTA 3
#endif
#ifndef YEAH_EPSILON
#define YEAH_EPSILON 1
#endif
#ifndef YEAH_PHY
#define YEAH_PHY 8
#endif
#ifndef YEAH_RHO
#define YEAH_RHO 16
#endif
#ifndef YEAH_ZETA
#define YEAH_ZETA 50
#endif
#ifndef YEAH_SCALABLE_AI_CNT
#define YEAH_SCALABLE_AI_CNT 100
#endif

#define YEAH_MIN_WIN		2U		/* floor of reno_count and the loss window */
#define YEAH_DOING_RENO_MAX	0xffffffU	/* doing_reno_now saturates here */

struct yeah {
	struct vegas_core vegas;
	__u32 last_q;		/* lastQ: queue of the last decided RTT, packets */
	__u32 doing_reno_now;	/* consecutive slow RTTs; 0 = fast mode */
	__u32 reno_count;	/* window a competing Reno flow would have */
	__u32 fast_count;	/* fast RTTs since the last loss or reset */
};
SATCC_CA_PRIV_FITS(struct yeah);

SEC("struct_ops")
void BPF_PROG(yeah_init, struct sock *sk)
{
	struct yeah *ca = inet_csk_ca(sk);

	vegas_core_init(&ca->vegas, tcp_sk(sk));
	ca->doing_reno_now = 0;
	ca->last_q = 0;
	ca->reno_count = YEAH_MIN_WIN;
	ca->fast_count = 0;
}

SEC("struct_ops")
void BPF_PROG(yeah_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct yeah *ca = inet_csk_ca(sk);

	vegas_core_pkts_acked(&ca->vegas, sample);
}

SEC("struct_ops")
void BPF_PROG(yeah_state, struct sock *sk, __u8 new_state)
{
	struct yeah *ca = inet_csk_ca(sk);

	vegas_core_state(&ca->vegas, tcp_sk(sk), new_state);
}

SEC("struct_ops")
void BPF_PROG(yeah_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct yeah *ca = inet_csk_ca(sk);

	vegas_core_cwnd_event(&ca->vegas, tcp_sk(sk), ev);
}

/* The once-per-RTT mode decision and precautionary decongestion. */
static void yeah_per_rtt(struct tcp_sock *tp, struct yeah *ca)
{
	__u32 rtt = ca->vegas.min_rtt;
	__u32 base = ca->vegas.base_rtt;
	/* Packets above the BDP: cwnd * (RTT - baseRTT) / RTT. */
	__u32 queue = (__u32)((__u64)tp->snd_cwnd * (rtt - base) / rtt);

	if (queue > YEAH_ALPHA || rtt - base > base / YEAH_PHY) {
		if (queue > YEAH_ALPHA && tp->snd_cwnd > ca->reno_count) {
			__u32 reduction = min(queue / YEAH_GAMMA,
					      tp->snd_cwnd >> YEAH_EPSILON);

			tp->snd_cwnd = max(tp->snd_cwnd - reduction, ca->reno_count);
			tp->snd_ssthresh = tp->snd_cwnd;
		}
		if (ca->reno_count <= YEAH_MIN_WIN)
			ca->reno_count = max(tp->snd_cwnd >> 1, YEAH_MIN_WIN);
		else
			ca->reno_count++;
		ca->doing_reno_now = min(ca->doing_reno_now + 1, YEAH_DOING_RENO_MAX);
	} else {
		ca->fast_count++;
		if (ca->fast_count > YEAH_ZETA) {
			ca->reno_count = YEAH_MIN_WIN;
			ca->fast_count = 0;
		}
		ca->doing_reno_now = 0;
	}
	ca->last_q = queue;
}

SEC("struct_ops")
void BPF_PROG(yeah_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct yeah *ca = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp))
		acked = tcp_slow_start(tp, acked);
	if (acked) {
		if (!ca->doing_reno_now)	/* fast: Scalable */
			tcp_cong_avoid_ai(tp, min(tp->snd_cwnd,
						  (__u32)YEAH_SCALABLE_AI_CNT), acked);
		else				/* slow: Reno */
			tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
	}
	/* do_vegas: once per RTT. */
	if (after(ack, ca->vegas.beg_snd_nxt)) {
		if (vegas_core_round_ready(&ca->vegas))
			yeah_per_rtt(tp, ca);
		ca->vegas.beg_snd_nxt = tp->snd_nxt;
		vegas_core_new_round(&ca->vegas);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(yeah_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct yeah *ca = inet_csk_ca(sk);
	__u32 half = max(tp->snd_cwnd >> 1, YEAH_MIN_WIN);
	__u32 reduction;

	if (ca->doing_reno_now < YEAH_RHO) {
		/* Not competing with Reno: remove our own queue. */
		reduction = min(ca->last_q, half);
		reduction = max(reduction, tp->snd_cwnd >> YEAH_DELTA);
	} else {
		reduction = half;
	}
	ca->fast_count = 0;
	ca->reno_count = max(ca->reno_count >> 1, YEAH_MIN_WIN);
	return max((__s32)(tp->snd_cwnd - reduction), (__s32)YEAH_MIN_WIN);
}

SEC("struct_ops")
__u32 BPF_PROG(yeah_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops SATCC_CA_NAME = {
	.init		= (void *)yeah_init,
	.ssthresh	= (void *)yeah_ssthresh,
	.undo_cwnd	= (void *)yeah_undo_cwnd,
	.cong_avoid	= (void *)yeah_cong_avoid,
	.pkts_acked	= (void *)yeah_pkts_acked,
	.set_state	= (void *)yeah_state,
	.cwnd_event	= (void *)yeah_cwnd_event,
	.name		= SATCC_STR(SATCC_CA_NAME),
};
