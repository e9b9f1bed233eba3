/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vegas_core.h - Vegas's RTT bookkeeping, shared by vegas.bpf.c and
 * yeah.bpf.c as tcp_yeah.c shares tcp_vegas.c's exported functions (which a
 * BPF program cannot call: they are not kfuncs, and tcp_vegas may not even be
 * built).
 *
 * Rust twin: VegasCore in crates/satcc-cc/src/algos/vegas.rs.
 * Linux:     tcp_vegas_init, vegas_enable, tcp_vegas_pkts_acked,
 *            tcp_vegas_state, tcp_vegas_cwnd_event (net/ipv4/tcp_vegas.c).
 *
 * RTTs are in us, stored + 1 so that no sample is 0 ("never allow zero rtt or
 * baseRTT"); VEGAS_RTT_UNSET (0x7fffffff) is the kernel's "no sample yet",
 * where the Rust twin uses Option.
 */
#ifndef SATCC_VEGAS_CORE_H
#define SATCC_VEGAS_CORE_H

#include "satcc_tcp.h"

#define VEGAS_RTT_UNSET		0x7fffffffU
/* A round is judged only with more than this many RTT samples (delayed ACKs). */
#define VEGAS_MIN_RTT_SAMPLES	2U

struct vegas_core {
	__u32 beg_snd_nxt;	/* right edge of the window at the round start */
	__u32 doing_vegas_now;	/* Vegas decisions on (only in Open) */
	__u32 cnt_rtt;		/* RTT samples in this round */
	__u32 min_rtt;		/* smallest sample of this round, us + 1 */
	__u32 base_rtt;		/* smallest sample ever, us + 1 */
};

/* vegas_enable: a fresh round from snd_nxt. */
static __always_inline void vegas_core_enable(struct vegas_core *v,
					      const struct tcp_sock *tp)
{
	v->doing_vegas_now = 1;
	v->beg_snd_nxt = tp->snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = VEGAS_RTT_UNSET;
}

/* tcp_vegas_init. */
static __always_inline void vegas_core_init(struct vegas_core *v,
					    const struct tcp_sock *tp)
{
	v->base_rtt = VEGAS_RTT_UNSET;
	vegas_core_enable(v, tp);
}

/* Wipe the round for the next RTT. */
static __always_inline void vegas_core_new_round(struct vegas_core *v)
{
	v->cnt_rtt = 0;
	v->min_rtt = VEGAS_RTT_UNSET;
}

/* tcp_vegas_pkts_acked: min-filter this round's and all samples. */
static __always_inline void vegas_core_pkts_acked(struct vegas_core *v,
						  const struct ack_sample *sample)
{
	__u32 vrtt;

	if (sample->rtt_us < 0)	/* duplicates without a timestamp */
		return;
	vrtt = sample->rtt_us + 1;
	if (vrtt < v->base_rtt)
		v->base_rtt = vrtt;
	v->min_rtt = min(v->min_rtt, vrtt);
	v->cnt_rtt++;
}

/* tcp_vegas_state: Vegas only in Open. */
static __always_inline void vegas_core_state(struct vegas_core *v,
					     const struct tcp_sock *tp, __u8 state)
{
	if (state == TCP_CA_Open)
		vegas_core_enable(v, tp);
	else
		v->doing_vegas_now = 0;
}

/* tcp_vegas_cwnd_event: a restart from idle forgets baseRTT too. */
static __always_inline void vegas_core_cwnd_event(struct vegas_core *v,
						  const struct tcp_sock *tp,
						  enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		vegas_core_init(v, tp);
}

/* Enough samples in this round for a decision? */
static __always_inline bool vegas_core_round_ready(const struct vegas_core *v)
{
	return v->cnt_rtt > VEGAS_MIN_RTT_SAMPLES;
}

#endif /* SATCC_VEGAS_CORE_H */
