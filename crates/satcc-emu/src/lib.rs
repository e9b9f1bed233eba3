//! satcc-emu: the pieces of `satcc-linkd`, satcc's real-time link emulator (see README.md).
//!
//! - [`clock`]: the one seam between real time and model time (`Clock`, `MonotonicClock`).
//! - [`direction`]: one link direction (queue, serialiser, loss, wire) as a pure function of
//!   the times handed in; the simulator's link direction with frames.
//! - [`ecn`]: CE marking of IPv4 frames with an incremental checksum update.
//! - [`firsts`]: each TCP connection's first SYN and first data segment on the wire.
//! - [`config`]: the JSON configuration (the resolved scenario and the run's options).
//! - [`sock`]: AF_PACKET sockets on veth ends; [`emulator`]: the epoll loop; [`hist`]: timing.
//! - [`ring`]: the mapped receive ring (`TPACKET_V2`) the sockets read frames from.
//! - [`outbox`]: due frames the kernel refused (back-pressure), retried in order.

pub mod clock;
pub mod config;
pub mod direction;
pub mod ecn;
pub mod emulator;
pub mod firsts;
pub mod hist;
pub mod outbox;
pub mod ring;
pub mod sock;
