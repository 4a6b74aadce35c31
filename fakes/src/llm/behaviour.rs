//! The misbehaviour a fake model's name asks for: `fake:<flag>,<flag>=<n>,…` (see `llm`).

use std::collections::HashMap;

#[derive(Debug, Default, Clone)]
pub struct Behaviour {
    flags: HashMap<String, Option<String>>,
}

impl Behaviour {
    pub fn parse(model: &str) -> Behaviour {
        let spec = model.split_once(':').map(|(_, s)| s).unwrap_or("");
        let flags = spec
            .split(',')
            .filter(|f| !f.is_empty())
            .map(|f| match f.split_once('=') {
                Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
                None => (f.trim().to_string(), None),
            })
            .collect();
        Behaviour { flags }
    }

    pub fn has(&self, flag: &str) -> bool {
        self.flags.contains_key(flag)
    }

    pub fn num(&self, flag: &str) -> Option<u64> {
        self.value(flag)?.parse().ok()
    }

    pub fn value(&self, flag: &str) -> Option<&str> {
        self.flags.get(flag)?.as_deref()
    }
}
