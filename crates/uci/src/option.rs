//! `option` (an engine declares what it can be set to) and `setoption` (a GUI sets it).

use std::fmt;

use crate::ParseError;

/// An `option` line from the handshake:
/// `option name <words> type <t> [default <words>] [min n] [max n] [var <words>]*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionDecl {
    pub name: String,
    /// `spin`, `check`, `combo`, `button` or `string`, as the engine spelt it: the runner must
    /// take a declaration of a type it does not know rather than refuse the engine.
    pub kind: String,
    /// The default as text; `Some("")` when the engine wrote `default` with nothing after it
    /// (older Stockfish does, for an empty string).
    pub default: Option<String>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// A combo's choices, in order.
    pub vars: Vec<String>,
}

/// The words that start a new field of an `option` line.
fn is_keyword(word: &str) -> bool {
    matches!(word, "type" | "default" | "min" | "max" | "var")
}

impl OptionDecl {
    /// A `spin` option: a whole number from `min` to `max`.
    pub fn spin(name: &str, default: i64, min: i64, max: i64) -> OptionDecl {
        OptionDecl {
            default: Some(default.to_string()),
            min: Some(min),
            max: Some(max),
            ..OptionDecl::new(name, "spin")
        }
    }

    /// An option of `kind` with nothing but its name (`button`), or to be filled in.
    pub fn new(name: &str, kind: &str) -> OptionDecl {
        OptionDecl {
            name: name.to_owned(),
            kind: kind.to_owned(),
            default: None,
            min: None,
            max: None,
            vars: Vec::new(),
        }
    }

    /// Reads an `option` line; `None` when it is not one or has no name. Fields are split at
    /// their keywords, so names and defaults may have spaces (`Move Overhead`); a name may
    /// even start with a keyword. A `min`/`max` that is not a whole number is `None`.
    pub fn parse(line: &str) -> Option<OptionDecl> {
        let mut words = line.split_ascii_whitespace();
        if (words.next(), words.next()) != (Some("option"), Some("name")) {
            return None;
        }
        let mut decl = OptionDecl::new("", "");
        let mut field = "name";
        let mut text = String::new();
        let mut first = true;
        for word in words {
            if is_keyword(word) && !(field == "name" && first) {
                decl.set(field, std::mem::take(&mut text));
                field = word;
                first = true;
                continue;
            }
            if !first {
                text.push(' ');
            }
            text.push_str(word);
            first = false;
        }
        decl.set(field, text);
        (!decl.name.is_empty()).then_some(decl)
    }

    fn set(&mut self, field: &str, text: String) {
        match field {
            "name" => self.name = text,
            "type" => self.kind = text,
            "default" => self.default = Some(text),
            "min" => self.min = text.parse().ok(),
            "max" => self.max = text.parse().ok(),
            "var" => self.vars.push(text),
            _ => unreachable!("fields are the keywords"),
        }
    }
}

impl fmt::Display for OptionDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "option name {} type {}", self.name, self.kind)?;
        if let Some(default) = &self.default {
            f.write_str(" default")?;
            if !default.is_empty() {
                write!(f, " {default}")?;
            }
        }
        if let Some(min) = self.min {
            write!(f, " min {min}")?;
        }
        if let Some(max) = self.max {
            write!(f, " max {max}")?;
        }
        for var in &self.vars {
            write!(f, " var {var}")?;
        }
        Ok(())
    }
}

/// `setoption name <name> [value <value>]`; a button has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetOption {
    pub name: String,
    pub value: Option<String>,
}

impl SetOption {
    /// Reads a `setoption` line (with or without the leading `setoption`). The name runs to
    /// `value`; the value to the end of the line, so both may have spaces.
    pub fn parse(line: &str) -> Result<SetOption, ParseError> {
        let words: Vec<&str> = crate::arguments(line, "setoption").collect();
        if words.first() != Some(&"name") {
            return Err(ParseError::SetOption);
        }
        let value_at = words.iter().position(|w| *w == "value");
        Ok(SetOption {
            name: words[1..value_at.unwrap_or(words.len())].join(" "),
            value: value_at.map(|at| words[at + 1..].join(" ")),
        })
    }
}

impl fmt::Display for SetOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "setoption name {}", self.name)?;
        if let Some(value) = &self.value {
            f.write_str(" value")?;
            if !value.is_empty() {
                write!(f, " {value}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations() {
        let o = OptionDecl::parse("option name Move Overhead type spin default 10 min 0 max 5000")
            .unwrap();
        assert_eq!(o, OptionDecl::spin("Move Overhead", 10, 0, 5000));
        let o = OptionDecl::parse(
            "option name Style type combo default Normal var Solid var Normal var Risky",
        )
        .unwrap();
        assert_eq!(o.vars, ["Solid", "Normal", "Risky"]);
        let o = OptionDecl::parse("option name Clear Hash type button").unwrap();
        assert_eq!(o, OptionDecl::new("Clear Hash", "button"));
        let o = OptionDecl::parse("option name SyzygyPath type string default <empty>").unwrap();
        assert_eq!(o.default.as_deref(), Some("<empty>"));
        let o = OptionDecl::parse("option name Debug Log File type string default ").unwrap();
        assert_eq!(o.default.as_deref(), Some(""));
        assert_eq!(
            o.to_string(),
            "option name Debug Log File type string default"
        );
        let o = OptionDecl::parse("option  name  type type check default true").unwrap();
        assert_eq!((o.name.as_str(), o.kind.as_str()), ("type", "check"));
        let o = OptionDecl::parse("option name Odd type spin min x max 5").unwrap();
        assert_eq!((o.min, o.max), (None, Some(5)));
        assert_eq!(OptionDecl::parse("option type spin"), None);
        assert_eq!(OptionDecl::parse("option name"), None);
        assert_eq!(OptionDecl::parse("id name x"), None);
        assert_eq!(OptionDecl::parse(""), None);
    }

    #[test]
    fn setoption() {
        let set = SetOption::parse("setoption name Move Overhead value 30").unwrap();
        assert_eq!(set.name, "Move Overhead");
        assert_eq!(set.value.as_deref(), Some("30"));
        assert_eq!(set.to_string(), "setoption name Move Overhead value 30");
        let set = SetOption::parse("name Clear Hash").unwrap();
        assert_eq!((set.name.as_str(), set.value), ("Clear Hash", None));
        assert_eq!(
            SetOption::parse("setoption name Book value")
                .unwrap()
                .value
                .as_deref(),
            Some("")
        );
        assert_eq!(
            SetOption::parse("setoption Hash 3"),
            Err(ParseError::SetOption)
        );
        assert_eq!(SetOption::parse("setoption"), Err(ParseError::SetOption));
    }
}
