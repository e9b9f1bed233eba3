// SPDX-License-Identifier: GPL-2.0-only
/*
 * CUBIC with HyStart and the RTT-fair K modes of study 004, as a BPF
 * struct_ops congestion control.
 *
 * Rust twin: crates/satcc-cc/src/algos/cubic.rs.
 * Linux:     net/ipv4/tcp_cubic.c (bictcp_update, cubic_root,
 *            cubictcp_recalc_ssthresh, hystart_update, cubictcp_acked,
 *            cubictcp_cwnd_event).
 *
 * Model: after a loss at W_max, cwnd follows W(t) = C (t - K)^3 + W_max
 * (RFC 9438 eq. 1; study 004 eq. 1) with K = cbrt(W_max (1 - beta) / C)
 * (eq. 2), t counted from the first ACK of the epoch plus the min RTT. A
 * Reno estimate (RFC 9438 section 4.3) keeps CUBIC at least as fast as Reno;
 * fast convergence lowers W_max after a loss below the previous W_max; HyStart
 * leaves slow start on an ACK train or a delay increase.
 * Ha, Rhee, Xu, ACM SIGOPS OSR 42(5), 2008; RFC 9438; Kozu, Akiyama,
 * Yamaguchi (study 004) eqs. 5-7 for the K modes.
 *
 * K modes scale the kernel's integer K by f >= 0 when an epoch starts:
 *   stock     f = 1                                   (eq. 2)
 *   table     f = x(RTT), linear between points, clamped at the ends (eq. 5)
 *   cbrt_rtt  f = 1 / cbrt(RTT / rtt_unit)            (eq. 6)
 *   scaled    f = a / cbrt(RTT / rtt_unit)            (eq. 7)
 * RTT is CUBIC's delay_min (us); before the first sample f = 1.
 *
 * Parameters (-D defines, computed by satcc/emu/bpf.py from the scenario's
 * `cc` exactly as the Rust twin quantises them):
 *   CUBIC_BETA               717   1/1024  round(beta * 1024)
 *   CUBIC_BIC_SCALE           41   -       round(c * 102.4), C = bic_scale * 10 / 1024
 *   CUBIC_FAST_CONVERGENCE     1   bool
 *   CUBIC_TCP_FRIENDLINESS     1   bool
 *   CUBIC_HYSTART              1   bool
 *   CUBIC_HYSTART_DETECT       3   bits    1 ack train, 2 delay
 *   CUBIC_HYSTART_LOW_WINDOW  16   packets
 *   CUBIC_HZ                 (host CONFIG_HZ) 1/s  clock of the epoch, see below
 *   CUBIC_KERNEL_HZ          (host CONFIG_HZ) 1/s  to read tp->lsndtime
 *   CUBIC_K_MODE               0   -       0 stock, 1 table, 2 cbrt_rtt/scaled
 *   CUBIC_K_TABLE_N            0   -       table points (1..CUBIC_K_TABLE_MAX)
 *   CUBIC_K_TABLE_RTT_US     {}    us      table RTTs, increasing
 *   CUBIC_K_TABLE_F_Q20      {}    2^-20   table factors
 *   CUBIC_K_NUM_Q43            0   2^-43   a * cbrt(rtt_unit in us), modes 2
 *
 * Fixed point and ranges:
 *   t, K           1/1024 s (BICTCP_HZ = 10), u32
 *   beta           1/1024, 10..1014
 *   C              cube_rtt_scale = bic_scale * 10, in 1/1024 s^-3 per the
 *                  kernel's 100 ms calibration; bic_scale 1..102400
 *   cube_factor    2^40 / cube_rtt_scale; cube_factor * dW saturates at 2^64
 *   C (t - K)^3    exact for |t - K| < 2^21 (2048 s), saturated beyond
 *   f              Q20 (2^-20); K' = round(K f), saturated at 2^32 - 1
 *   cbrt(RTT)      Q23 from the integer cube root of RTT_us * 2^30 plus one
 *                  linear correction; RTT_us < 2^32
 *   a cbrt(unit)   Q43, a * cbrt(rtt_unit_us) < 2^20 (a <= 1000, unit <= 10^6 ms)
 *
 * Differences:
 * 1. The epoch clock is tp->tcp_mstamp (us) counted in ticks of CUBIC_HZ,
 *    the Rust twin's `hz` (its difference 1: jiffies derived from a finer
 *    clock). Linux counts tcp_jiffies32 at CONFIG_HZ; with CUBIC_HZ equal to
 *    the host's CONFIG_HZ (the default here) the tick rate is the same, only
 *    the phase of the tick differs. The Rust twin's default `hz` is 1000.
 * 2. HyStart's ACK-train cushion uses GSO_LEGACY_MAX_SIZE (65536) for
 *    sk_gso_max_size, as the Rust twin (its difference 2); Linux reads the
 *    socket's value (65536 on veth).
 * 3. Overflow guards as in the Rust twin (its differences 4-5): the cubic
 *    term and cube_factor * dW saturate instead of wrapping, a target below
 *    zero is clamped to 0, the Reno-estimate loop is one division. The cubic
 *    term saturates from |t - K| >= 2048 s where the twin uses 128 bits.
 * 4. K modes other than stock: f is fixed point (above), so K' is within one
 *    unit (1/1024 s) of the twin's f64 result (tests/test_bpf.py checks this
 *    natively for K up to ~60 s and RTTs from 1 us to 2 s); table RTTs are
 *    whole us (the twin compares ms as f64).
 * 5. CA_EVENT_TX_START measures the idle time from tp->lsndtime in the
 *    kernel's jiffies (CUBIC_KERNEL_HZ) and converts it to CUBIC_HZ ticks.
 *
 * Not implemented: initial_ssthresh (kernel default 0 = unused), get_info.
 */
#include "satcc_tcp.h"
#include "cubic_math.h"

char _license[] SEC("license") = "GPL";

#ifndef SATCC_CA_NAME
#define SATCC_CA_NAME satcc_cubic
#endif
#ifndef CUBIC_FAST_CONVERGENCE
#define CUBIC_FAST_CONVERGENCE 1
#endif
#ifndef CUBIC_TCP_FRIENDLINESS
#define CUBIC_TCP_FRIENDLINESS 1
#endif
#ifndef CUBIC_HYSTART
#define CUBIC_HYSTART 1
#endif
#ifndef CUBIC_HYSTART_DETECT
#define CUBIC_HYSTART_DETECT 3
#endif
#ifndef CUBIC_HYSTART_LOW_WINDOW
#define CUBIC_HYSTART_LOW_WINDOW 16
#endif
#ifndef CUBIC_KERNEL_HZ
#define CUBIC_KERNEL_HZ 1000
#endif
#ifndef CUBIC_HZ
#define CUBIC_HZ CUBIC_KERNEL_HZ
#endif

#define HYSTART_ACK_TRAIN	0x1
#define HYSTART_DELAY		0x2
#define HYSTART_MIN_SAMPLES	8	/* RTT samples per round before the delay test */
#define HYSTART_DELAY_MIN	4000U	/* delay threshold clamp, us */
#define HYSTART_DELAY_MAX	16000U
#define HYSTART_ACK_DELTA_US	2000	/* ACKs closer than this are one train */
#define HYSTART_ACK_DELAY_CAP	1000ULL	/* cushion cap, us */
#define GSO_MAX_SIZE_BYTES	65536ULL	/* difference 2 */
#define CNT_BEFORE_FIRST_LOSS	20U	/* cwnd +5 % per RTT before any loss */
#define CNT_MIN			2U	/* at most +1 packet per 2 acked */

_Static_assert(CUBIC_HZ >= 1 && CUBIC_HZ <= 1000000, "hz range");

/* cubictcp_register: the Reno estimate's step, x8. */
#define BETA_SCALE	(8 * (BICTCP_BETA_SCALE + CUBIC_BETA) / 3 / \
			 (BICTCP_BETA_SCALE - CUBIC_BETA))

struct cubic {
	__u32 cnt;		/* acked packets per +1 packet of cwnd */
	__u32 last_max_cwnd;	/* W_max, 0 before the first loss */
	__u32 last_cwnd;	/* cwnd at the last curve evaluation */
	__u32 last_time;	/* its tick */
	__u32 origin;		/* bic_origin_point */
	__u32 k;		/* bic_K, 1/1024 s, after the K mode */
	__u32 delay_min;	/* us, 0 = no sample */
	__u32 epoch_start;	/* tick, 0 = no epoch */
	__u32 ack_cnt;		/* acked since the Reno estimate last grew */
	__u32 tcp_cwnd;		/* the Reno estimate (RFC 9438 W_est) */
	__u8 sample_cnt;	/* HyStart: samples in this round */
	__u8 found;		/* HyStart: slow-start exit found */
	__u32 round_start;	/* HyStart: us */
	__u32 end_seq;		/* HyStart: the round ends past this */
	__u32 last_ack;		/* HyStart: us of the train's last ACK */
	__u32 curr_rtt;		/* HyStart: min RTT of this round, us */
};
SATCC_CA_PRIV_FITS(struct cubic);

/* The epoch clock: tp->tcp_mstamp (us) in ticks of CUBIC_HZ (difference 1). */
static __always_inline __u32 cubic_ticks(const struct tcp_sock *tp)
{
	__u64 us = tp->tcp_mstamp;

	return (us / USEC_PER_SEC) * CUBIC_HZ +
	       (us % USEC_PER_SEC) * CUBIC_HZ / USEC_PER_SEC;
}

/* usecs_to_jiffies at CUBIC_HZ: rounds up. */
static __always_inline __u64 cubic_us_to_ticks(__u64 us)
{
	return (us * CUBIC_HZ + USEC_PER_SEC - 1) / USEC_PER_SEC;
}

static __always_inline __u32 cubic_clock_us(const struct tcp_sock *tp)
{
	return tp->tcp_mstamp;
}

static __always_inline void cubic_reset(struct cubic *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->origin = 0;
	ca->k = 0;
	ca->delay_min = 0;
	ca->epoch_start = 0;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
	ca->found = 0;
}

/* bictcp_hystart_reset: a new round starts now and ends at snd_nxt. */
static __always_inline void cubic_hystart_reset(const struct tcp_sock *tp, struct cubic *ca)
{
	ca->round_start = ca->last_ack = cubic_clock_us(tp);
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

/* bictcp_update: recompute cnt for cwnd after `acked` more packets. */
static void cubic_update(const struct tcp_sock *tp, struct cubic *ca,
			 __u32 cwnd, __u32 acked)
{
	__u32 now = cubic_ticks(tp);
	__u32 delta, target;
	__u64 t, offs;
	__s32 since;

	ca->ack_cnt += acked;
	if (ca->last_cwnd == cwnd && (__s32)(now - ca->last_time) <= CUBIC_HZ / 32)
		return;
	/* The curve is evaluated at most once per tick; a reduction forces it. */
	if (ca->epoch_start && now == ca->last_time)
		goto friendliness;

	ca->last_cwnd = cwnd;
	ca->last_time = now;
	if (ca->epoch_start == 0) {
		ca->epoch_start = now;
		ca->ack_cnt = acked;
		ca->tcp_cwnd = cwnd;
		if (ca->last_max_cwnd <= cwnd) {
			ca->k = 0;
			ca->origin = cwnd;
		} else {
			ca->k = cubic_k_of(ca->last_max_cwnd - cwnd, ca->delay_min);
			ca->origin = ca->last_max_cwnd;
		}
	}

	/* t = now - epoch_start + delay_min, in 1/1024 s: one RTT ahead */
	since = now - ca->epoch_start;
	t = (since > 0 ? since : 0) + cubic_us_to_ticks(ca->delay_min);
	t = (t << BICTCP_HZ) / CUBIC_HZ;
	offs = t < ca->k ? ca->k - t : t - ca->k;
	delta = cubic_term(offs);	/* eq. 1: C (t - K)^3 */
	if (t < ca->k)
		target = ca->origin > delta ? ca->origin - delta : 0;
	else
		target = ca->origin > ~0U - delta ? ~0U : ca->origin + delta;

	if (target > cwnd)
		ca->cnt = cwnd / (target - cwnd);
	else
		ca->cnt = cwnd > ~0U / 100 ? ~0U : 100 * cwnd;
	if (ca->last_max_cwnd == 0 && ca->cnt > CNT_BEFORE_FIRST_LOSS)
		ca->cnt = CNT_BEFORE_FIRST_LOSS;

friendliness:
	if (CUBIC_TCP_FRIENDLINESS) {
		/* RFC 9438 section 4.3: W_est += 1 per cwnd * 8 / beta_scale acked */
		__u64 step = ((__u64)cwnd * BETA_SCALE) >> 3;

		if (step && ca->ack_cnt > step) {
			__u64 n = (ca->ack_cnt - 1) / step;

			ca->ack_cnt -= n * step;
			ca->tcp_cwnd += n;
		}
		if (ca->tcp_cwnd > cwnd) {
			/* Reno is ahead: grow at least as fast */
			__u32 max_cnt = cwnd / (ca->tcp_cwnd - cwnd);

			ca->cnt = min(ca->cnt, max_cnt);
		}
	}
	ca->cnt = max(ca->cnt, CNT_MIN);
}

SEC("struct_ops")
void BPF_PROG(cubic_init, struct sock *sk)
{
	struct cubic *ca = inet_csk_ca(sk);

	cubic_reset(ca);
	if (CUBIC_HYSTART)
		cubic_hystart_reset(tcp_sk(sk), ca);
}

SEC("struct_ops")
void BPF_PROG(cubic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct cubic *ca = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	cubic_update(tp, ca, tp->snd_cwnd, acked);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

/* cubictcp_recalc_ssthresh: end the epoch, W_max with fast convergence (eq. 4). */
SEC("struct_ops")
__u32 BPF_PROG(cubic_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct cubic *ca = inet_csk_ca(sk);
	__u64 cwnd = tp->snd_cwnd;

	ca->epoch_start = 0;
	if (tp->snd_cwnd < ca->last_max_cwnd && CUBIC_FAST_CONVERGENCE)
		ca->last_max_cwnd = cwnd * (BICTCP_BETA_SCALE + CUBIC_BETA) /
				    (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = tp->snd_cwnd;
	/* RFC 9438 eq. 4: ssthresh = beta cwnd */
	return max((__u32)(cwnd * CUBIC_BETA / BICTCP_BETA_SCALE), 2U);
}

/* cubictcp_state: an RTO forgets everything, HyStart included. */
SEC("struct_ops")
void BPF_PROG(cubic_state, struct sock *sk, __u8 new_state)
{
	struct cubic *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Loss) {
		cubic_reset(ca);
		cubic_hystart_reset(tcp_sk(sk), ca);
	}
}

/* cubictcp_cwnd_event: shift the epoch by an idle period (difference 5). */
SEC("struct_ops")
void BPF_PROG(cubic_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct cubic *ca = inet_csk_ca(sk);
	__u32 now, idle;
	__s32 idle_jiffies;

	if (ev != CA_EVENT_TX_START || !ca->epoch_start)
		return;
	idle_jiffies = (__u32)bpf_jiffies64() - tp->lsndtime;
	if (idle_jiffies <= 0)
		return;
	idle = (__u64)idle_jiffies * CUBIC_HZ / CUBIC_KERNEL_HZ;
	now = cubic_ticks(tp);
	ca->epoch_start += idle;
	if (after(ca->epoch_start, now))
		ca->epoch_start = now;
}

/* hystart_ack_delay: TSO/GRO cushion, min(1 ms, 4 * gso_max_size / rate). */
static __always_inline __u32 cubic_hystart_ack_delay(const struct sock *sk)
{
	__u64 rate = sk->sk_pacing_rate;

	if (!rate)
		return 0;
	return min(HYSTART_ACK_DELAY_CAP, GSO_MAX_SIZE_BYTES * 4 * USEC_PER_SEC / rate);
}

/* hystart_update with this ACK's RTT sample `delay` (us). */
static void cubic_hystart_update(struct sock *sk, struct cubic *ca, __u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 threshold;

	if (after(tp->snd_una, ca->end_seq))
		cubic_hystart_reset(tp, ca);

	if (CUBIC_HYSTART_DETECT & HYSTART_ACK_TRAIN) {
		__u32 now = cubic_clock_us(tp);

		if ((__s32)(now - ca->last_ack) <= HYSTART_ACK_DELTA_US) {
			ca->last_ack = now;
			threshold = ca->delay_min + cubic_hystart_ack_delay(sk);
			/* Unpaced: the train ends past delay_min / 2. */
			if (sk->sk_pacing_status == SK_PACING_NONE)
				threshold >>= 1;
			if (now - ca->round_start > threshold) {	/* u32, as Linux compares */
				ca->found = 1;
				tp->snd_ssthresh = tp->snd_cwnd;
			}
		}
	}
	if (CUBIC_HYSTART_DETECT & HYSTART_DELAY) {
		if (ca->curr_rtt > delay)
			ca->curr_rtt = delay;
		if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
			ca->sample_cnt++;
		} else {
			__u32 thresh = ca->delay_min >> 3;

			thresh = max(thresh, HYSTART_DELAY_MIN);
			thresh = min(thresh, HYSTART_DELAY_MAX);
			if (ca->curr_rtt > ca->delay_min + thresh) {
				ca->found = 1;
				tp->snd_ssthresh = tp->snd_cwnd;
			}
		}
	}
}

/* cubictcp_acked: track delay_min and run HyStart. */
SEC("struct_ops")
void BPF_PROG(cubic_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct cubic *ca = inet_csk_ca(sk);
	__u32 delay;

	if (sample->rtt_us < 0)	/* duplicates without timestamps */
		return;
	/* Discard delay samples in the first second of an epoch. */
	if (ca->epoch_start && (__s32)(cubic_ticks(tp) - ca->epoch_start) < CUBIC_HZ)
		return;
	delay = sample->rtt_us ? sample->rtt_us : 1;
	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;
	if (CUBIC_HYSTART && !ca->found && tcp_in_slow_start(tp) &&
	    tp->snd_cwnd >= CUBIC_HYSTART_LOW_WINDOW)
		cubic_hystart_update(sk, ca, delay);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops SATCC_CA_NAME = {
	.init		= (void *)cubic_init,
	.ssthresh	= (void *)cubic_ssthresh,
	.cong_avoid	= (void *)cubic_cong_avoid,
	.set_state	= (void *)cubic_state,
	.undo_cwnd	= (void *)cubic_undo_cwnd,
	.cwnd_event	= (void *)cubic_cwnd_event,
	.pkts_acked	= (void *)cubic_pkts_acked,
	.name		= SATCC_STR(SATCC_CA_NAME),
};
