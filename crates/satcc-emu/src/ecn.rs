//! ECN Congestion Experienced marking of IPv4 packets inside Ethernet frames.
//!
//! The ECN field is the low two bits of the IPv4 TOS byte (RFC 3168 §5): 00 Not-ECT,
//! 01 ECT(1), 10 ECT(0), 11 CE. Marking sets CE on ECT packets only and patches the header
//! checksum incrementally (RFC 1624 eqn. 3), so no other byte is touched.

/// Ethertype of IPv4 (IEEE 802.3).
const ETHERTYPE_IPV4: u16 = 0x0800;
/// Offsets inside the frame: Ethernet header, then the IPv4 header.
const ETHERTYPE_AT: usize = 12;
const IP_AT: usize = 14;
const TOS_AT: usize = IP_AT + 1;
const CHECKSUM_AT: usize = IP_AT + 10;
const MIN_IP_HEADER: usize = 20;
/// RFC 3168 §5 codepoints.
const ECN_MASK: u8 = 0b11;
const NOT_ECT: u8 = 0b00;
const CE: u8 = 0b11;

/// Set CE on an ECT IPv4 packet; returns whether the frame was marked.
pub fn mark_ce(frame: &mut [u8]) -> bool {
    if frame.len() < IP_AT + MIN_IP_HEADER {
        return false;
    }
    if u16::from_be_bytes([frame[ETHERTYPE_AT], frame[ETHERTYPE_AT + 1]]) != ETHERTYPE_IPV4 {
        return false;
    }
    if frame[IP_AT] >> 4 != 4 {
        return false;
    }
    let tos = frame[TOS_AT];
    let ecn = tos & ECN_MASK;
    if ecn == NOT_ECT || ecn == CE {
        return false;
    }
    let old_word = u16::from_be_bytes([frame[IP_AT], tos]);
    let new_tos = tos | CE;
    let new_word = u16::from_be_bytes([frame[IP_AT], new_tos]);
    frame[TOS_AT] = new_tos;
    let hc = u16::from_be_bytes([frame[CHECKSUM_AT], frame[CHECKSUM_AT + 1]]);
    // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), in one's-complement arithmetic.
    let sum = (!hc as u32) + (!old_word as u32) + new_word as u32;
    let folded = (sum & 0xffff) + (sum >> 16);
    let folded = (folded & 0xffff) + (folded >> 16);
    let new_hc = !(folded as u16);
    frame[CHECKSUM_AT..CHECKSUM_AT + 2].copy_from_slice(&new_hc.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The IPv4 header checksum computed from scratch (RFC 791 §3.1).
    fn checksum(header: &[u8]) -> u16 {
        let mut sum = 0u32;
        for (i, pair) in header.chunks(2).enumerate() {
            if i == 5 {
                continue; // the checksum field itself
            }
            sum += u16::from_be_bytes([pair[0], pair[1]]) as u32;
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    fn ipv4_frame(tos: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20];
        f[12] = 0x08;
        f[14] = 0x45;
        f[15] = tos;
        f[16..18].copy_from_slice(&60u16.to_be_bytes());
        f[22] = 64;
        f[23] = 6;
        f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        let c = checksum(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
        f
    }

    #[test]
    fn marking_an_ect0_packet_sets_ce_and_keeps_the_checksum_valid() {
        let mut f = ipv4_frame(0x02);
        assert!(mark_ce(&mut f));
        assert_eq!(f[15] & 0b11, CE);
        assert_eq!(u16::from_be_bytes([f[24], f[25]]), checksum(&f[14..34]));
    }

    #[test]
    fn marking_keeps_the_dscp_bits() {
        let mut f = ipv4_frame(0xb9); // DSCP 46 (EF) + ECT(1)
        assert!(mark_ce(&mut f));
        assert_eq!(f[15], 0xbb);
        assert_eq!(u16::from_be_bytes([f[24], f[25]]), checksum(&f[14..34]));
    }

    #[test]
    fn not_ect_and_non_ip_frames_are_left_alone() {
        let mut f = ipv4_frame(0x00);
        let before = f.clone();
        assert!(!mark_ce(&mut f));
        assert_eq!(f, before);
        let mut arp = ipv4_frame(0x02);
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert!(!mark_ce(&mut arp));
    }
}
