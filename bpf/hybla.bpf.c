// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hybla as a BPF struct_ops congestion control.
 *
 * Rust twin: crates/satcc-cc/src/algos/hybla.rs (the simulator's Hybla).
 * Linux:     net/ipv4/tcp_hybla.c.
 *
 * Model: Reno with its growth scaled by rho = max(RTT / RTT0, 1), so a flow
 * with a long RTT grows per unit of time as a flow with RTT0 does. Per ACK:
 * 2^rho - 1 packets in slow start (eq. 5), rho^2 / cwnd in congestion
 * avoidance (eq. 6); loss halves as Reno. RTT is the smoothed RTT, and rho is
 * recomputed only when srtt reaches a new minimum.
 * C. Caini, R. Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
 * networks", Int. J. Satell. Commun. Netw. 22(5), 2004, section 3.
 *
 * Parameters (-D defines, set by satcc/emu/bpf.py from the scenario's `cc`):
 *   HYBLA_RTT0_US  25000  us  reference RTT (`rtt0` module parameter, ms;
 *                             satcc's `rtt0` in ms, rounded to whole us)
 *   HYBLA_CWND_CLAMP 65535U packets, the sender's cap on cwnd (hybla_init's
 *                             snd_cwnd_clamp; the flow's `cwnd_clamp` when
 *                             set, as a kernel with snd_cwnd_clamp rebuilt)
 *
 * Fixed point, as in the kernel:
 *   rho_3ls      rho * 8, from 8 (rho = 1) up to 2^32 - 1 (srtt up to
 *                ~4.5 h at rtt0 = 25 ms)
 *   rho2_7ls     rho^2 * 128, in 64 bits (fits for every rho_3ls)
 *   cwnd_cents   fractions of a packet, 1/128 units, 0..127 between ACKs
 *   tp->srtt_us  the kernel keeps srtt * 8 in us, so srtt_us / rtt0_us is
 *                already rho * 8
 *
 * Differences:
 * 1. Linux sets tp->snd_cwnd_clamp = 65535 in hybla_init; a BPF congestion
 *    control may not write snd_cwnd_clamp (bpf_tcp_ca_btf_struct_access), so
 *    the cap (65535, or the flow's `cwnd_clamp`) is applied at the end of
 *    every hybla_cong_avoid, where Linux applies snd_cwnd_clamp. Other paths
 *    that raise cwnd are not capped by it: undo after a spurious loss restores
 *    a cwnd that was capped already, so it stays below the cap too. The Rust
 *    twin sets the clamp as Linux does.
 * 2. As in the Rust twin (its difference 1) and unlike Linux, an init without
 *    an srtt sample leaves the minimum unset and cwnd untouched, so the first
 *    real srtt sets rho. After a handshake the kernel always has srtt, so
 *    this path is not taken in practice.
 * 3. rho^2 * 128 is computed in 64 bits (the Rust twin's difference 3;
 *    Linux's u32 wraps for srtt above ~145 s at rtt0 = 25 ms).
 * 4. The Rust twin sees srtt unshifted (its difference 2); here, as in Linux,
 *    the kernel's three fractional bits of srtt are used.
 *
 * Not implemented: nothing of tcp_hybla.c.
 */
#include "satcc_tcp.h"

char _license[] SEC("license") = "GPL";

#ifndef SATCC_CA_NAME
#define SATCC_CA_NAME satcc_hybla
#endif
#ifndef HYBLA_RTT0_US
#define HYBLA_RTT0_US 25000	/* tcp_hybla.c: rtt0 = 25 ms */
#endif

#define HYBLA_ONE		128U	/* one packet in 1/128 units */
#define HYBLA_RHO_3LS_MIN	8U	/* rho >= 1 */
#define HYBLA_MAX_SS_SHIFT	16U	/* 1 << min(rho, 16) in slow start */
#ifndef HYBLA_CWND_CLAMP
#define HYBLA_CWND_CLAMP	65535U	/* hybla_init: snd_cwnd_clamp */
#endif

/*
 * hybla_fraction: floor(128 * 2^(k / 8)) for k = 0..7, the fractional part of
 * 2^rho. (A switch, not a const table: clang 14 puts small const tables in
 * .rodata.cst* sections that libbpf 1.1 cannot load.)
 */
static __always_inline __u32 hybla_fraction(__u32 k)
{
	switch (k) {
	case 1: return 139;
	case 2: return 152;
	case 3: return 165;
	case 4: return 181;
	case 5: return 197;
	case 6: return 215;
	case 7: return 234;
	default: return 128;
	}
}

struct hybla {
	__u64 rho2_7ls;		/* rho^2 * 128 */
	__u32 rho;		/* integer part of rho */
	__u32 rho_3ls;		/* rho * 8 */
	__u32 cwnd_cents;	/* fractional cwnd, 1/128 packet */
	__u32 minrtt_us;	/* smallest srtt seen (srtt_us units, << 3) */
	__u32 enabled;		/* hybla_en: Hybla growth only in Open */
};
SATCC_CA_PRIV_FITS(struct hybla);

/* hybla_recalc_param: rho * 8 = max(srtt * 8 / rtt0, 8). */
static void hybla_recalc(struct hybla *ca, const struct tcp_sock *tp)
{
	__u64 rho_3ls = tp->srtt_us / (__u64)HYBLA_RTT0_US;

	if (rho_3ls < HYBLA_RHO_3LS_MIN)
		rho_3ls = HYBLA_RHO_3LS_MIN;
	if (rho_3ls > 0xffffffffULL)
		rho_3ls = 0xffffffffULL;
	ca->rho_3ls = rho_3ls;
	ca->rho = ca->rho_3ls >> 3;
	ca->rho2_7ls = (rho_3ls * rho_3ls) << 1;	/* (rho * 8)^2 * 2 */
}

SEC("struct_ops")
void BPF_PROG(hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hybla *ca = inet_csk_ca(sk);

	ca->rho = 0;
	ca->rho_3ls = 0;
	ca->rho2_7ls = 0;
	ca->cwnd_cents = 0;
	ca->enabled = 1;
	if (!tp->srtt_us) {
		ca->minrtt_us = ~0U;	/* difference 2 */
		return;
	}
	hybla_recalc(ca, tp);	/* first rho from the handshake's srtt */
	ca->minrtt_us = tp->srtt_us;
	tp->snd_cwnd = max(ca->rho, 1U);
}

SEC("struct_ops")
void BPF_PROG(hybla_state, struct sock *sk, __u8 new_state)
{
	struct hybla *ca = inet_csk_ca(sk);

	ca->enabled = new_state == TCP_CA_Open;
}

SEC("struct_ops")
void BPF_PROG(hybla_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hybla *ca = inet_csk_ca(sk);
	__u64 increment;
	__u32 odd, fractions;
	bool slow_start;

	/* Recompute rho only when srtt reaches a new minimum. */
	if (tp->srtt_us && tp->srtt_us < ca->minrtt_us) {
		hybla_recalc(ca, tp);
		ca->minrtt_us = tp->srtt_us;
	}
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (!ca->enabled) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (ca->rho == 0)
		hybla_recalc(ca, tp);

	fractions = (ca->rho_3ls - (ca->rho << 3)) & 7;
	slow_start = tcp_in_slow_start(tp);
	if (slow_start) {
		/* eq. 5: 2^rho - 1 = 2^int(rho) * 2^frac(rho) - 1, in 1/128 */
		increment = (1ULL << min(ca->rho, HYBLA_MAX_SS_SHIFT)) *
			    hybla_fraction(fractions) - HYBLA_ONE;
	} else {
		/* eq. 6: rho^2 / cwnd, in 1/128 */
		increment = ca->rho2_7ls / max(tp->snd_cwnd, 1U);
		if (increment < HYBLA_ONE)
			tp->snd_cwnd_cnt++;
	}

	odd = increment % HYBLA_ONE;
	tp->snd_cwnd += (__u32)min(increment >> 7, 0xffffffffULL);
	ca->cwnd_cents += odd;
	/* Fractions reaching a whole packet add one (at most once: odd < 128). */
	if (ca->cwnd_cents >= HYBLA_ONE) {
		tp->snd_cwnd++;
		ca->cwnd_cents -= HYBLA_ONE;
		tp->snd_cwnd_cnt = 0;
	}
	/* rho^2 / cwnd below 1/128: Reno's one packet per cwnd ACKs. */
	if (increment == 0 && odd == 0 && tp->snd_cwnd_cnt >= tp->snd_cwnd) {
		tp->snd_cwnd++;
		tp->snd_cwnd_cnt = 0;
	}
	if (slow_start)
		tp->snd_cwnd = min(tp->snd_cwnd, tp->snd_ssthresh);
	tp->snd_cwnd = min(tp->snd_cwnd, min(tp->snd_cwnd_clamp, HYBLA_CWND_CLAMP));
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops SATCC_CA_NAME = {
	.init		= (void *)hybla_init,
	.ssthresh	= (void *)hybla_ssthresh,
	.undo_cwnd	= (void *)hybla_undo_cwnd,
	.cong_avoid	= (void *)hybla_cong_avoid,
	.set_state	= (void *)hybla_state,
	.name		= SATCC_STR(SATCC_CA_NAME),
};
