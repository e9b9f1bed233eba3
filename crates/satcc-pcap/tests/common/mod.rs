//! Writing classic pcap files in tests (little-endian, microsecond timestamps).

/// A pcap file header for link type `linktype` (snap length 65535).
pub fn pcap_header(linktype: u32) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, linktype] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v
}

/// One record: `cap` (the captured bytes) of a `orig_len`-byte frame at `sec`.`usec`.
pub fn push_record(v: &mut Vec<u8>, sec: u32, usec: u32, cap: &[u8], orig_len: usize) {
    for x in [sec, usec, cap.len() as u32, orig_len as u32] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(cap);
}
