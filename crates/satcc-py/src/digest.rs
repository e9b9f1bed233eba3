//! satcc's one sha256 (the `sha2` crate): the digest of a result's files that summary.json
//! records (`write_parquet` returns that of the bytes it wrote; `satcc.results.file_sha256`
//! reads a file into `Sha256`), a scenario's hash and a campaign run's id
//! (`satcc.scenario.config.json_sha256`). Python's hashlib is not used: its import loads
//! OpenSSL, ~11 M instructions of every `satcc sim` (BENCHMARKS.md, issue 40).

use pyo3::prelude::*;
use sha2::Digest;

/// Updates at least this long release the GIL while they are hashed (as hashlib does above
/// 2 KiB): a campaign's writer thread hashes while its workers' results arrive.
const RELEASE_GIL_BYTES: usize = 2048;

/// Lower-case hexadecimal, two digits a byte (hashlib's `hexdigest`).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// The sha256 of `data`, hex.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&sha2::Sha256::digest(data))
}

/// A sha256 fed piece by piece, as hashlib's: `Sha256(b"...")`, `.update(data)`,
/// `.hexdigest()`.
#[pyclass(module = "satcc._native")]
pub struct Sha256 {
    hasher: sha2::Sha256,
}

#[pymethods]
impl Sha256 {
    #[new]
    #[pyo3(signature = (data = None))]
    fn new(py: Python<'_>, data: Option<&[u8]>) -> Self {
        let mut h = Sha256 {
            hasher: sha2::Sha256::new(),
        };
        if let Some(data) = data {
            h.update(py, data);
        }
        h
    }

    /// Hash `data` (bytes) after what came before.
    fn update(&mut self, py: Python<'_>, data: &[u8]) {
        if data.len() >= RELEASE_GIL_BYTES {
            let hasher = &mut self.hasher;
            py.allow_threads(|| hasher.update(data));
        } else {
            self.hasher.update(data);
        }
    }

    /// The digest of everything given so far, hex (more may be given after).
    fn hexdigest(&self) -> String {
        hex(&self.hasher.clone().finalize())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Sha256>()
}
