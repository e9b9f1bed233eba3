//! From a scenario's `[link.model]` description (JSON, as the runner passes it through) to a
//! satcc-core link model.
//!
//! Only the constant link (no `model`) is built today: satcc-core's time-varying models
//! (`satcc_core::models`) are being written; once they expose their resolved configuration,
//! this is the one place that maps the JSON onto it, and every model then runs here unchanged.

use satcc_core::link::{LinkModel, LinkState};
use serde_json::Value;

use crate::config::ConfigError;

/// Build the model a `model` object describes.
pub fn build(model: &Value, _base: &LinkState, _seed: u64, _label: u64) -> Result<Box<dyn LinkModel>, ConfigError> {
    let kind = model.get("kind").and_then(Value::as_str).unwrap_or("?");
    Err(ConfigError(format!(
        "model kind {kind:?}: this satcc-linkd has no time-varying link models yet (only rate/delay/loss links)"
    )))
}
