//! Why a world cannot be built or its series reserved: which key and why. A scenario reaches
//! the simulator resolved (`satcc_core::scenario::resolve`, the one checker); what can still
//! fail here is building an algorithm from its parameters, a link's model, or memory.

/// A key and what is wrong with it (`Display`: `key: message`, the resolver's form).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

impl From<String> for ConfigError {
    /// satcc-core's `key: message`.
    fn from(e: String) -> ConfigError {
        match e.split_once(": ") {
            Some((key, message)) => ConfigError {
                key: key.into(),
                message: message.into(),
            },
            None => ConfigError {
                key: String::new(),
                message: e,
            },
        }
    }
}
