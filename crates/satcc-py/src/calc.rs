//! Small computations the Python side needs and the simulator owns: the receive buffer's
//! accounting (`satcc_sim::tcp::receiver`), so the scenario layer, the model engine and the
//! emulator's sysctls use the simulator's numbers instead of a copy of its formulas.

use pyo3::prelude::*;
use satcc_sim::tcp::receiver;

/// Bytes of receive buffer one packet with `payload` bytes costs (`skb->truesize`).
#[pyfunction]
#[pyo3(signature = (payload, timestamps = true))]
fn rx_truesize(payload: u64, timestamps: bool) -> u64 {
    receiver::rx_truesize(payload, timestamps)
}

/// Linux's `scaling_ratio` for full segments of `mss` bytes: window bytes per 256 of buffer.
#[pyfunction]
#[pyo3(signature = (mss, timestamps = true))]
fn scaling_ratio(mss: u64, timestamps: bool) -> u64 {
    receiver::full_segment_scaling_ratio(mss, timestamps)
}

/// The buffer that offers a window of `window` bytes (`rcvbuf_autotune = false`).
#[pyfunction]
#[pyo3(signature = (window, mss, timestamps = true))]
fn fixed_rcvbuf_bytes(window: u64, mss: u64, timestamps: bool) -> u64 {
    receiver::fixed_rcvbuf_bytes(window, mss, timestamps)
}

/// The largest window a receiver with buffer ceiling `rwnd` offers: the buffer's share
/// (`tcp_win_from_space` at the full-segment `scaling_ratio`) when it autotunes, `rwnd` itself
/// when it does not, at most 65,535 bytes without window scaling.
#[pyfunction]
fn receive_window_bytes(
    rwnd: u64,
    mss: u64,
    timestamps: bool,
    autotune: bool,
    window_scaling: bool,
) -> u64 {
    let window = if autotune {
        let space = i64::try_from(rwnd).unwrap_or(i64::MAX);
        let ratio = receiver::full_segment_scaling_ratio(mss, timestamps);
        receiver::win_from_space(space, ratio).max(0) as u64
    } else {
        rwnd
    };
    if window_scaling {
        window
    } else {
        window.min(receiver::MAX_UNSCALED_WINDOW)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rx_truesize, m)?)?;
    m.add_function(wrap_pyfunction!(scaling_ratio, m)?)?;
    m.add_function(wrap_pyfunction!(fixed_rcvbuf_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(receive_window_bytes, m)?)?;
    Ok(())
}
