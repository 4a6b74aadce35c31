//! How every setting is found, once: [`Layers::pick`] takes the first of the override
//! (initializationOptions or a CLI flag), the environment, the vault's file and the default,
//! and remembers which field it came from, so that [`ranged`] and the other checks name the
//! field the user actually set.

use std::fmt::Display;
use std::ops::RangeInclusive;
use std::str::FromStr;

use scholia_base::Env;

use super::ConfigError;
use super::file::FileConfig;

/// A setting's value and the field it came from (a dotted key or a variable name).
pub(super) struct Picked<T> {
    pub value: T,
    pub field: &'static str,
}

/// The layers of settings: override > environment > `.scholia.toml` > default.
pub(super) struct Layers<'a> {
    pub env: &'a dyn Env,
    pub over: &'a FileConfig,
    pub file: &'a FileConfig,
}

impl Layers<'_> {
    /// The first value set: `get` reads it from the override and the file (as `key`), `var` from
    /// the environment.
    pub fn pick<T: FromStr>(
        &self,
        key: &'static str,
        var: Option<&'static str>,
        get: impl Fn(&FileConfig) -> Option<T>,
    ) -> Result<Option<Picked<T>>, ConfigError> {
        self.layered(key, var, get, |raw| raw.trim().parse::<T>().ok())
    }

    /// The override, else the environment's `var` read by `parse` (`None`: not a valid value),
    /// else the file.
    fn layered<T>(
        &self,
        key: &'static str,
        var: Option<&'static str>,
        get: impl Fn(&FileConfig) -> Option<T>,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<Picked<T>>, ConfigError> {
        if let Some(value) = get(self.over) {
            return Ok(Some(Picked { value, field: key }));
        }
        if let Some(var) = var
            && let Some(raw) = self.env.var(var)
        {
            let value = parse(&raw).ok_or_else(|| ConfigError::Invalid {
                field: var.into(),
                value: raw.clone(),
                valid: format!("a value for {key}"),
            })?;
            return Ok(Some(Picked { value, field: var }));
        }
        Ok(get(self.file).map(|value| Picked { value, field: key }))
    }

    /// [`Layers::pick`] for a string the environment gives as it is, untrimmed (a prompt's
    /// trailing space is part of it).
    pub fn verbatim(
        &self,
        key: &'static str,
        var: &'static str,
        get: impl Fn(&FileConfig) -> Option<String>,
    ) -> Result<Option<Picked<String>>, ConfigError> {
        self.layered(key, Some(var), get, |raw| Some(raw.to_string()))
    }

    /// [`Layers::pick`] with a default, checked against `range`.
    pub fn ranged<T: FromStr + PartialOrd + Display + Copy>(
        &self,
        key: &'static str,
        var: Option<&'static str>,
        get: impl Fn(&FileConfig) -> Option<T>,
        default: T,
        range: RangeInclusive<T>,
    ) -> Result<T, ConfigError> {
        match self.pick(key, var, get)? {
            Some(p) => ranged(p.field, p.value, range),
            None => Ok(default),
        }
    }

    /// [`Layers::pick`] for a string, or `None`.
    pub fn text(
        &self,
        key: &'static str,
        var: Option<&'static str>,
        get: impl Fn(&FileConfig) -> Option<String>,
    ) -> Result<Option<Picked<String>>, ConfigError> {
        self.pick(key, var, get)
    }
}

/// `value` when it is in `range`, else an error naming `field` and the range.
pub(super) fn ranged<T: PartialOrd + Display>(
    field: &str,
    value: T,
    range: RangeInclusive<T>,
) -> Result<T, ConfigError> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(ConfigError::Invalid {
        field: field.into(),
        value: value.to_string(),
        valid: format!("a number from {} to {}", range.start(), range.end()),
    })
}

/// An http(s) URL with a host, without its trailing slash.
pub(super) fn http_url(field: &str, value: &str) -> Result<String, ConfigError> {
    let ok = url::Url::parse(value).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
    if ok {
        Ok(value.trim_end_matches('/').to_string())
    } else {
        Err(ConfigError::Invalid {
            field: field.into(),
            value: value.into(),
            valid: "an http(s) URL such as http://localhost:11434/v1".into(),
        })
    }
}

/// A boolean environment variable: `1`/`true` or `0`/`false`.
pub(super) fn flag(env: &dyn Env, name: &'static str) -> Result<bool, ConfigError> {
    match env.var(name).as_deref() {
        None | Some("0") | Some("false") => Ok(false),
        Some("1") | Some("true") => Ok(true),
        Some(other) => Err(ConfigError::Invalid {
            field: name.into(),
            value: other.into(),
            valid: "1 or 0".into(),
        }),
    }
}

/// A model name passed to the Gemini CLI: one word that cannot pass for an option.
pub(super) fn cli_model(picked: Option<Picked<String>>) -> Result<Option<String>, ConfigError> {
    let Some(Picked { value: name, field }) = picked else {
        return Ok(None);
    };
    let ok = !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('-')
        && !name.chars().any(|c| c.is_whitespace() || c.is_control());
    if !ok {
        return Err(ConfigError::Invalid {
            field: field.into(),
            value: name,
            valid: "a model name such as gemini-2.5-pro (no spaces, not starting with `-`)".into(),
        });
    }
    Ok(Some(name))
}
