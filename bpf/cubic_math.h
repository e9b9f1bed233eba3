/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cubic_math.h - CUBIC's integer arithmetic: the kernel's cube root, the
 * cubic term, K and the study-004 K-mode factor (see cubic.bpf.c for the
 * model, the parameters and the fixed-point scales).
 *
 * Kept free of kernel types beyond __u8/__u32/__u64 so that the same code is
 * compiled natively by tests/test_bpf.py and checked against floating point
 * and the Rust twin's quantisation (crates/satcc-cc/src/algos/cubic.rs).
 */
#ifndef SATCC_CUBIC_MATH_H
#define SATCC_CUBIC_MATH_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#ifndef CUBIC_BETA
#define CUBIC_BETA 717
#endif
#ifndef CUBIC_BIC_SCALE
#define CUBIC_BIC_SCALE 41
#endif
#ifndef CUBIC_K_MODE
#define CUBIC_K_MODE 0
#endif
#ifndef CUBIC_K_TABLE_N
#define CUBIC_K_TABLE_N 1
#define CUBIC_K_TABLE_RTT_US { 0 }
#define CUBIC_K_TABLE_F_Q20 { 1048576 }
#endif
#ifndef CUBIC_K_NUM_Q43
#define CUBIC_K_NUM_Q43 0
#endif

#define BICTCP_BETA_SCALE	1024	/* beta in 1/1024 */
#define BICTCP_HZ		10	/* t and K in 1/2^10 s */
#define K_MODE_STOCK		0
#define K_MODE_TABLE		1
#define K_MODE_CBRT		2
#define K_FACTOR_SHIFT		20	/* f in Q20 */
#define K_CBRT_SHIFT		23	/* cbrt(RTT) in Q23 */
#define K_TABLE_MAX		16
#define OFFS_EXACT_MAX		(1ULL << 21)	/* |t - K| with an exact cube */

_Static_assert(CUBIC_BETA > 0 && CUBIC_BETA < BICTCP_BETA_SCALE, "beta in (0, 1)");
_Static_assert(CUBIC_BIC_SCALE >= 1 && CUBIC_BIC_SCALE <= 102400, "bic_scale range");
_Static_assert(CUBIC_K_TABLE_N >= 1 && CUBIC_K_TABLE_N <= K_TABLE_MAX, "k_table size");

/* cubictcp_register's precomputed constants. */
#define CUBE_RTT_SCALE	((__u64)CUBIC_BIC_SCALE * 10)		/* C in 1/1024 */
#define CUBE_FACTOR	((1ULL << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE)

/* Read-only tables (.rodata): cbrt seeds and the K table. */
const volatile __u8 cubic_root_seed[64] = {
	/* tcp_cubic.c: v[x] ~ cbrt(x << 18) - 1, hand-tuned by W. Tarreau */
	0,   54,  54,  54,  118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
	157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
	200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
	231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
};
const volatile __u32 k_table_rtt_us[CUBIC_K_TABLE_N] = CUBIC_K_TABLE_RTT_US;
const volatile __u64 k_table_f_q20[CUBIC_K_TABLE_N] = CUBIC_K_TABLE_F_Q20;

/* fls64. */
static __always_inline __u32 cubic_fls64(__u64 x)
{
	__u32 n = 0;

	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8) { n += 8; x >>= 8; }
	if (x >> 4) { n += 4; x >>= 4; }
	if (x >> 2) { n += 2; x >>= 2; }
	if (x >> 1) { n += 1; x >>= 1; }
	return n + (__u32)x;
}

/* cubic_root: the kernel's seed table plus one Newton-Raphson step (~0.2 %). */
static __u32 cubic_root(__u64 a)
{
	__u32 x, b, shift;

	if (a < 64)
		return ((__u32)cubic_root_seed[a & 63] + 35) >> 6;
	b = cubic_fls64(a);
	b = ((b * 84) >> 8) - 1;	/* ~ bits / 3 - 1 */
	shift = a >> (b * 3);
	if (shift >= 64)		/* bound for the verifier; never taken */
		return 0;
	x = ((__u32)(((__u32)cubic_root_seed[shift] + 10) << b)) >> 6;
	/* x' = (2x + a / x^2) / 3, with x (x - 1) for rounding, /3 as *341/1024 */
	x = 2 * x + (__u32)(a / ((__u64)x * (__u64)(x - 1)));
	return (x * 341) >> 10;
}

/* floor(cbrt(a)) exactly, by bisection (a < 2^63). */
static __always_inline __u64 icbrt(__u64 a)
{
	__u64 c = 0, y;
	int i;

	for (i = 20; i >= 0; i--) {
		y = c | (1ULL << i);
		if (y * y * y <= a)
			c = y;
	}
	return c;
}

/* The K-mode factor f in Q20 for a flow whose min RTT is rtt_us (> 0). */
static __u64 cubic_k_factor(__u32 rtt_us)
{
	if (CUBIC_K_MODE == K_MODE_TABLE) {
		/* eq. 5: x(RTT), linear between points, clamped at the ends */
		__u32 i, x0, x1;
		__u64 f0, f1;

		if (rtt_us <= k_table_rtt_us[0])
			return k_table_f_q20[0];
		for (i = 1; i < CUBIC_K_TABLE_N; i++) {
			x1 = k_table_rtt_us[i];
			if (rtt_us >= x1)
				continue;
			x0 = k_table_rtt_us[i - 1];
			f0 = k_table_f_q20[i - 1];
			f1 = k_table_f_q20[i];
			if (f1 >= f0)
				return f0 + (f1 - f0) * (rtt_us - x0) / (x1 - x0);
			return f0 - (f0 - f1) * (rtt_us - x0) / (x1 - x0);
		}
		return k_table_f_q20[CUBIC_K_TABLE_N - 1];
	}
	if (CUBIC_K_MODE == K_MODE_CBRT) {
		/* eqs. 6-7: a cbrt(rtt_unit) / cbrt(RTT), all in us */
		__u64 r = (__u64)rtt_us << 30;
		__u64 c = icbrt(r);		/* floor(cbrt(RTT) * 2^10) */
		__u64 rem = r - c * c * c;
		__u64 den = (c << (K_CBRT_SHIFT - 10)) +
			    (rem << (K_CBRT_SHIFT - 10)) / (3 * c * c);

		return CUBIC_K_NUM_Q43 / den;
	}
	return 1ULL << K_FACTOR_SHIFT;
}

/*
 * K for dW = W_max - cwnd (eq. 2), scaled by the K mode (eqs. 5-7) for a flow
 * whose min RTT is delay_min us (0: no sample yet, K unchanged).
 */
static __u32 cubic_k_of(__u32 dw, __u32 delay_min)
{
	__u64 half = 1ULL << (K_FACTOR_SHIFT - 1);
	__u64 x, k, f;

	/* Saturate (difference 3); only a tiny C can overflow. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wtautological-constant-out-of-range-compare"
	x = dw > ~0ULL / CUBE_FACTOR ? ~0ULL : CUBE_FACTOR * dw;
#pragma clang diagnostic pop
	k = cubic_root(x);	/* eq. 2: K = cbrt(dW / C), 1/1024 s */
	if (CUBIC_K_MODE == K_MODE_STOCK || !delay_min)
		return k;
	f = cubic_k_factor(delay_min);
	if (f && k > (~0ULL - half) / f)
		return ~0U;
	k = (k * f + half) >> K_FACTOR_SHIFT;
	return k > 0xffffffffULL ? ~0U : k;
}

/* C (t - K)^3 in packets: (cube_rtt_scale * offs^3) >> 40, saturated. */
static __always_inline __u32 cubic_term(__u64 offs)
{
	__u64 cube, hi, lo, d;

	if (offs >= OFFS_EXACT_MAX)
		return ~0U;
	cube = offs * offs * offs;	/* < 2^63 */
	hi = cube >> 20;
	lo = cube & ((1ULL << 20) - 1);
	d = (CUBE_RTT_SCALE * hi + ((CUBE_RTT_SCALE * lo) >> 20)) >> 20;
	return d > 0xffffffffULL ? ~0U : d;
}

#endif /* SATCC_CUBIC_MATH_H */
