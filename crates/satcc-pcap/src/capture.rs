//! Streaming pcap / pcapng record reader (format parsing by the `pcap-parser` crate).
//!
//! Reads any `Read` through a fixed-size buffer, so memory does not grow with the file. Each
//! packet record becomes a [`Frame`] (1-based frame number as tshark counts them, absolute
//! timestamp in integer nanoseconds, link type, captured bytes, original length).
//!
//! Bad input never panics: a truncated last record, a corrupt record header or a block the
//! parser rejects ends the read with a [`Warning`] naming the record number and byte offset;
//! everything before it has already been delivered. Only a file whose header is unreadable
//! is an error.
//!
//! | parameter | default | unit | source |
//! |---|---|---|---|
//! | `READ_BUFFER_BYTES` | 1 MiB | bytes | large enough for any 64 KiB record, small enough for L2 |
//! | `MAX_RECORD_BYTES` | 16 MiB | bytes | the reader grows its buffer up to this for huge records |
//!
//! Deviations from tshark: (1) the pcap header's `thiszone` is ignored (tshark ignores it too
//! in practice: every writer sets 0); (2) pcapng timestamps with a non-decimal `if_tsresol`
//! are converted with integer arithmetic, truncating below 1 ns.

use std::io::Read;

use pcap_parser::pcapng::Block;
use pcap_parser::{create_reader, Linktype, PcapBlockOwned, PcapError};

/// Read buffer size; a record larger than this makes the reader grow its buffer.
pub const READ_BUFFER_BYTES: usize = 1 << 20;
/// Largest record accepted (pcapng blocks can be large; anything bigger is corruption).
pub const MAX_RECORD_BYTES: usize = 16 << 20;
const NS_PER_S: i128 = 1_000_000_000;

/// One packet record.
#[derive(Debug)]
pub struct Frame<'a> {
    /// 1-based, counting packet records only (tshark's `frame.number`).
    pub number: u64,
    /// Absolute time, ns since the Unix epoch.
    pub ts_ns: i64,
    pub linktype: Linktype,
    /// Captured bytes (at most the snap length).
    pub data: &'a [u8],
    /// Length of the packet on the wire.
    pub orig_len: u32,
    /// Byte offset of the record in the file.
    pub offset: u64,
}

/// Something that was wrong with the input but did not stop the analysis of what came before.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// 1-based record (block) number in the file, counting every record/block.
    pub record: u64,
    /// Byte offset of that record from the start of the file.
    pub offset: u64,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "record {} at byte offset {}: {}",
            self.record, self.offset, self.message
        )
    }
}

/// The file as a whole could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum CaptureError {
    Empty,
    NotACapture,
    Io(String),
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaptureError::Empty => write!(f, "empty file"),
            CaptureError::NotACapture => {
                write!(f, "not a pcap or pcapng file (header not recognized)")
            }
            CaptureError::Io(e) => write!(f, "read error: {e}"),
        }
    }
}

impl std::error::Error for CaptureError {}

/// File format detected from the first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pcap,
    PcapNg,
}

/// What the reader saw.
#[derive(Clone, Debug, Default)]
pub struct ReadSummary {
    pub format: Option<Format>,
    pub frames: u64,
    pub records: u64,
    pub bytes: u64,
}

#[derive(Clone, Copy)]
struct Interface {
    linktype: Linktype,
    /// Timestamp units per second.
    resolution: u64,
    offset_s: i64,
}

fn ts_from_units(units: u64, resolution: u64, offset_s: i64) -> i64 {
    // pcapng §4.2 if_tsresol / if_tsoffset; integer math so 1 ns resolution stays exact.
    let ns =
        (units as i128) * NS_PER_S / (resolution.max(1) as i128) + (offset_s as i128) * NS_PER_S;
    ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Read every packet record of `reader`, calling `on_frame` for each and `on_progress` with the
/// number of bytes consumed so far (about every 4 MiB). Problems after the header become
/// `warnings`; reading stops at the first one that makes the rest unreadable.
pub fn read_frames<R: Read + Send>(
    reader: R,
    warnings: &mut Vec<Warning>,
    mut on_frame: impl FnMut(&Frame<'_>),
    mut on_progress: impl FnMut(u64),
) -> Result<ReadSummary, CaptureError> {
    let mut rdr = match create_reader(READ_BUFFER_BYTES, reader) {
        Ok(r) => r,
        Err(PcapError::Eof) => return Err(CaptureError::Empty),
        Err(PcapError::ReadError) => return Err(CaptureError::Io("read failed".into())),
        Err(PcapError::Incomplete(_)) => return Err(CaptureError::NotACapture),
        Err(_) => return Err(CaptureError::NotACapture),
    };
    let mut summary = ReadSummary::default();
    let mut interfaces: Vec<Interface> = Vec::new();
    let mut legacy_link = Linktype::ETHERNET;
    let mut legacy_ns = false;
    let mut pos: u64 = 0;
    let mut next_progress: u64 = 4 << 20;
    let mut buffer_size = READ_BUFFER_BYTES;
    let mut stalled = 0u32;
    let mut warned_no_idb = false;
    loop {
        let record = summary.records + 1;
        match rdr.next() {
            Ok((len, block)) => {
                stalled = 0;
                match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        summary.format = Some(Format::Pcap);
                        legacy_link = h.network;
                        legacy_ns = h.is_nanosecond_precision();
                    }
                    PcapBlockOwned::Legacy(b) => {
                        summary.frames += 1;
                        let frac_ns = if legacy_ns {
                            b.ts_usec as i64
                        } else {
                            b.ts_usec as i64 * 1000
                        };
                        let caplen = (b.caplen as usize).min(b.data.len());
                        on_frame(&Frame {
                            number: summary.frames,
                            ts_ns: b.ts_sec as i64 * 1_000_000_000 + frac_ns,
                            linktype: legacy_link,
                            data: &b.data[..caplen],
                            orig_len: b.origlen,
                            offset: pos,
                        });
                    }
                    PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                        summary.format = Some(Format::PcapNg);
                        interfaces.clear();
                    }
                    PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                        let resolution = idb.ts_resolution().unwrap_or(1_000_000);
                        interfaces.push(Interface {
                            linktype: idb.linktype,
                            resolution,
                            offset_s: idb.ts_offset(),
                        });
                    }
                    PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                        summary.frames += 1;
                        match interfaces.get(epb.if_id as usize) {
                            Some(ifc) => {
                                let units = ((epb.ts_high as u64) << 32) | epb.ts_low as u64;
                                let caplen = (epb.caplen as usize).min(epb.data.len());
                                on_frame(&Frame {
                                    number: summary.frames,
                                    ts_ns: ts_from_units(units, ifc.resolution, ifc.offset_s),
                                    linktype: ifc.linktype,
                                    data: &epb.data[..caplen],
                                    orig_len: epb.origlen,
                                    offset: pos,
                                });
                            }
                            None if !warned_no_idb => {
                                warned_no_idb = true;
                                warnings.push(Warning {
                                    record,
                                    offset: pos,
                                    message: format!(
                                        "packet for undeclared interface {} skipped",
                                        epb.if_id
                                    ),
                                });
                            }
                            None => {}
                        }
                    }
                    PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                        summary.frames += 1;
                        if let Some(ifc) = interfaces.first() {
                            let caplen = (spb.origlen as usize).min(spb.data.len());
                            // pcapng §4.4: a simple packet block has no timestamp.
                            on_frame(&Frame {
                                number: summary.frames,
                                ts_ns: 0,
                                linktype: ifc.linktype,
                                data: &spb.data[..caplen],
                                orig_len: spb.origlen,
                                offset: pos,
                            });
                        }
                    }
                    PcapBlockOwned::NG(_) => {}
                }
                summary.records += 1;
                pos += len as u64;
                rdr.consume(len);
                if pos >= next_progress {
                    on_progress(pos);
                    next_progress = pos + (4 << 20);
                }
            }
            Err(PcapError::Eof) => break,
            Err(PcapError::Incomplete(_)) => {
                stalled += 1;
                if stalled > 2 {
                    // The buffer is full and still holds less than one record.
                    if buffer_size < MAX_RECORD_BYTES && rdr.grow(buffer_size * 2) {
                        buffer_size *= 2;
                        stalled = 0;
                    } else {
                        warnings.push(Warning {
                            record,
                            offset: pos,
                            message: "record larger than 16 MiB; rest of file skipped".into(),
                        });
                        break;
                    }
                }
                if rdr.refill().is_err() {
                    warnings.push(Warning {
                        record,
                        offset: pos,
                        message: "read error; rest of file skipped".into(),
                    });
                    break;
                }
            }
            Err(PcapError::BufferTooSmall) => {
                if buffer_size < MAX_RECORD_BYTES && rdr.grow(buffer_size * 2) {
                    buffer_size *= 2;
                    if rdr.refill().is_err() {
                        warnings.push(Warning {
                            record,
                            offset: pos,
                            message: "read error; rest of file skipped".into(),
                        });
                        break;
                    }
                } else {
                    warnings.push(Warning {
                        record,
                        offset: pos,
                        message: "record length larger than 16 MiB (corrupt record header?); rest of file skipped".into(),
                    });
                    break;
                }
            }
            Err(PcapError::UnexpectedEof) => {
                warnings.push(Warning {
                    record,
                    offset: pos,
                    message: "file truncated inside this record; rest ignored".into(),
                });
                break;
            }
            Err(e) => {
                let what = match e {
                    PcapError::NomError(_, k) | PcapError::OwnedNomError(_, k) => format!("{k:?}"),
                    other => format!("{other:?}"),
                };
                warnings.push(Warning {
                    record,
                    offset: pos,
                    message: format!("corrupt record ({what}); rest of file skipped"),
                });
                break;
            }
        }
    }
    summary.bytes = pos;
    on_progress(pos);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcap_header(linktype: u32) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        v.extend_from_slice(&2u16.to_le_bytes());
        v.extend_from_slice(&4u16.to_le_bytes());
        v.extend_from_slice(&0i32.to_le_bytes());
        v.extend_from_slice(&0u32.to_le_bytes());
        v.extend_from_slice(&65535u32.to_le_bytes());
        v.extend_from_slice(&linktype.to_le_bytes());
        v
    }

    fn record(v: &mut Vec<u8>, sec: u32, usec: u32, data: &[u8]) {
        v.extend_from_slice(&sec.to_le_bytes());
        v.extend_from_slice(&usec.to_le_bytes());
        v.extend_from_slice(&(data.len() as u32).to_le_bytes());
        v.extend_from_slice(&(data.len() as u32).to_le_bytes());
        v.extend_from_slice(data);
    }

    type ReadAll = (
        Result<ReadSummary, CaptureError>,
        Vec<(u64, i64, usize)>,
        Vec<Warning>,
    );

    fn read_all(bytes: &[u8]) -> ReadAll {
        let mut w = Vec::new();
        let mut frames = Vec::new();
        let r = read_frames(
            bytes,
            &mut w,
            |f| frames.push((f.number, f.ts_ns, f.data.len())),
            |_| {},
        );
        (r, frames, w)
    }

    #[test]
    fn microsecond_pcap_records_become_nanosecond_frames() {
        let mut v = pcap_header(1);
        record(&mut v, 10, 250_000, &[0u8; 60]);
        record(&mut v, 11, 1, &[0u8; 54]);
        let (r, frames, w) = read_all(&v);
        assert_eq!(r.unwrap().frames, 2);
        assert!(w.is_empty());
        assert_eq!(
            frames,
            vec![(1, 10_250_000_000, 60), (2, 11_000_001_000, 54)]
        );
    }

    #[test]
    fn truncated_last_record_keeps_earlier_frames_and_warns_with_offset() {
        let mut v = pcap_header(1);
        record(&mut v, 1, 0, &[0u8; 60]);
        record(&mut v, 2, 0, &[0u8; 60]);
        let cut = v.len() - 10;
        let (r, frames, w) = read_all(&v[..cut]);
        assert!(r.is_ok());
        assert_eq!(frames.len(), 1);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].record, 3, "header is record 1, first packet record 2");
        assert_eq!(w[0].offset, 24 + 16 + 60);
    }

    #[test]
    fn garbage_is_not_a_capture() {
        let (r, _, _) = read_all(b"this is not a capture file at all, just text");
        assert_eq!(r.unwrap_err(), CaptureError::NotACapture);
        let (r, _, _) = read_all(b"");
        assert_eq!(r.unwrap_err(), CaptureError::Empty);
    }

    #[test]
    fn pcapng_resolution_is_applied() {
        assert_eq!(ts_from_units(1_500_000, 1_000_000, 0), 1_500_000_000);
        assert_eq!(ts_from_units(7, 1_000_000_000, 2), 2_000_000_007);
        assert_eq!(ts_from_units(1 << 20, 1 << 20, 0), 1_000_000_000);
    }
}
