//! BBR's fixed-point units and the conversions between them (`tcp_bbr.c`).
//!
//! - Bandwidth: packets per µs scaled by 2^24 (`BW_SCALE`), in a u32: one unit ≈ 715 bit/s
//!   at 1500 B packets, the range reaches ~3 Tbit/s.
//! - Gains: fractions scaled by 2^8 (`BBR_SCALE`): 256 = 1.0.
//! - Pacing rate: bytes per second (`sk_pacing_rate`).

use crate::TcpState;

/// `BW_SCALE`, `BW_UNIT`: bandwidth fixed point.
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// `BBR_SCALE`, `BBR_UNIT`: gain fixed point.
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// `bbr_pacing_margin_percent`: pace 1 % below the estimate to drain queues on average.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// `USEC_PER_SEC`.
const USEC_PER_SEC: u128 = 1_000_000;

/// `delivered · BW_UNIT / interval_us`: a bandwidth sample (saturating to u32 where the
/// kernel would truncate, far beyond any real rate).
pub fn bw_sample(delivered: u64, interval_us: u64) -> u32 {
    (u128::from(delivered) * u128::from(BW_UNIT) / u128::from(interval_us.max(1)))
        .min(u128::from(u32::MAX)) as u32
}

/// `bbr_rate_bytes_per_sec`: bw·mss·gain in bytes/s, with the 1 % margin, computed in the
/// kernel's order (128-bit, saturating, so no wrap).
pub fn rate_bytes_per_sec(mss: u32, bw: u64, gain: u32) -> u64 {
    let mut rate = u128::from(bw).saturating_mul(u128::from(mss));
    rate = rate.saturating_mul(u128::from(gain));
    rate >>= BBR_SCALE;
    rate = rate.saturating_mul(USEC_PER_SEC / 100 * u128::from(100 - PACING_MARGIN_PERCENT));
    (rate >> BW_SCALE).min(u128::from(u64::MAX)) as u64
}

/// `bbr_bw_to_pacing_rate`: capped by `sk_max_pacing_rate`.
pub fn bw_to_pacing_rate(tcp: &TcpState, bw: u64, gain: u32) -> u64 {
    rate_bytes_per_sec(tcp.mss, bw, gain).min(tcp.max_pacing_rate_bps)
}

/// `bbr_bdp` body: ceil(bw · min_rtt · gain), packets.
pub fn bdp(bw: u32, min_rtt_us: u32, gain: u32) -> u32 {
    let w = u128::from(bw) * u128::from(min_rtt_us);
    let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
    bdp.min(u128::from(u32::MAX)) as u32
}

/// Packets delivered at `bw` over `us` microseconds (`bw · us >> BW_SCALE`).
pub fn packets_in(bw: u32, us: u64) -> u64 {
    ((u128::from(bw) * u128::from(us)) >> BW_SCALE).min(u128::from(u64::MAX)) as u64
}

/// Bandwidth in packets per second, for traces.
pub fn bw_pps(bw: u32) -> f64 {
    f64::from(bw) * 1e6 / BW_UNIT as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacing_rate_is_bw_times_gain_times_mss_less_one_percent() {
        let bw = bw_sample(1000, 1_000_000); // 1000 packets/s
        let rate = rate_bytes_per_sec(1448, u64::from(bw), BBR_UNIT * 5 / 4);
        let want = 1000.0 * 1448.0 * 1.25 * 0.99;
        assert!((rate as f64 - want).abs() / want < 1e-4, "{rate} vs {want}");
    }

    #[test]
    fn bdp_rounds_up() {
        let bw = bw_sample(1000, 1_000_000);
        assert_eq!(bdp(bw, 50_000, BBR_UNIT), 50);
        assert_eq!(bdp(bw, 50_001, BBR_UNIT), 51);
        assert_eq!(bdp(bw, 50_000, 2 * BBR_UNIT), 100);
    }

    #[test]
    fn huge_rates_saturate_instead_of_wrapping() {
        assert_eq!(bw_sample(u64::MAX, 1), u32::MAX);
        assert!(rate_bytes_per_sec(u32::MAX, u64::MAX, u32::MAX) > 0);
    }
}
