//! Parse and type errors that point at the place: file, line and column, the
//! dotted key, in the project's words rather than serde's Rust type names.
//!
//! Why a module of its own: the toml parser knows positions but not our
//! keys, serde_path_to_error knows keys but loses them inside the tables
//! chosen by `kind` (serde buffers an internally tagged enum), and serde
//! speaks of `f64` and `u32`. This module joins the three.

use super::ConfigError;
use serde::de::DeserializeOwned;

/// 1-based line and column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A TOML syntax error as `invalid TOML at FILE:LINE:COL: what`.
pub fn syntax(e: &toml::de::Error, text: &str, origin: &str) -> ConfigError {
    let at = match e.span() {
        Some(s) => {
            let (l, c) = line_col(text, s.start);
            format!(" at {origin}:{l}:{c}")
        }
        None => String::new(),
    };
    ConfigError::new("", format!("invalid TOML{at}: {}", e.message().trim()))
}

/// Where `key` (dotted, `[i]` for array entries) is written in `text`, as
/// `FILE:LINE:COL`, or None when the file does not set it (a `--set`).
pub fn position(text: &str, origin: &str, key: &str) -> Option<String> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut item = doc.as_item();
    let mut span = None;
    for seg in key.split('.') {
        let (name, indices) = match seg.find('[') {
            Some(i) => (&seg[..i], &seg[i..]),
            None => (seg, ""),
        };
        let table = item.as_table_like()?;
        span = table.key(name).and_then(|k| k.span()).or(span);
        item = table.get(name)?;
        for idx in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            item = item.get(idx.parse::<usize>().ok()?)?;
            span = item.span().or(span);
        }
    }
    let (l, c) = line_col(text, span?.start);
    Some(format!("{origin}:{l}:{c}"))
}

/// serde's message in the project's words: `invalid type: string "ten",
/// expected f64` becomes `expected a number, got a string "ten"`.
pub fn words(msg: &str) -> String {
    // toml appends "\nin `key`"; the caller names the key itself.
    let msg = msg.split("\nin `").next().unwrap_or(msg).trim();
    for head in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = msg.strip_prefix(head) {
            if let Some((got, want)) = rest.rsplit_once(", expected ") {
                // TOML reads 1e14 and 2.0 as floats; a count must be written as an integer.
                let int =
                    ["u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize"].contains(&want.trim());
                let hint = if int && got.trim().starts_with("floating point") {
                    " (a float; write a whole number without a decimal point or exponent)"
                } else {
                    ""
                };
                return format!("expected {}, got {}{hint}", expected(want), unexpected(got));
            }
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        return format!("unknown value {rest}");
    }
    msg.to_string()
}

fn expected(want: &str) -> String {
    match want.trim() {
        "f64" | "f32" => "a number".into(),
        "u8" => "an integer in [0, 255]".into(),
        "u16" => "an integer in [0, 65535]".into(),
        "u32" => "an integer in [0, 4294967295]".into(),
        "u64" | "usize" => "an integer >= 0".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer".into(),
        "a boolean" | "bool" => "true or false".into(),
        "a sequence" => "an array".into(),
        "a map" => "a table".into(),
        w if w.starts_with("struct ") => "a table".into(),
        w if w.starts_with("a sequence") => "an array".into(),
        w if w.starts_with("an array of length") => w.replace("an array of length", "an array of"),
        w => w.into(),
    }
}

fn unexpected(got: &str) -> String {
    let got = got.trim();
    let inner = |p: &str| got.strip_prefix(p).map(|r| r.trim_matches('`').to_string());
    if let Some(s) = inner("string ") {
        return format!("a string {s}");
    }
    if let Some(n) = inner("floating point ").or_else(|| inner("integer ")) {
        return n;
    }
    if let Some(b) = inner("boolean ") {
        return b;
    }
    match got {
        "sequence" => "an array".into(),
        "map" => "a table".into(),
        "unit value" | "unit variant" => "a bare name".into(),
        g => g.into(),
    }
}

/// Serde loses the key inside tables chosen by `kind` (`[topology]`,
/// `[workload]`); deserializing the table again as the chosen variant's own
/// type finds it. Returns (dotted key, message) when it can.
pub fn inside_kind(section: &str, table: &toml::Value) -> Option<(String, String)> {
    let kind = table.get("kind")?.as_str()?.to_string();
    let mut t = table.as_table()?.clone();
    t.remove("kind");
    let v = toml::Value::Table(t);
    use crate::net::{fat_tree::FatTree, topology_config as topology};
    use fabriclab_workload as w;
    match (section, kind.as_str()) {
        ("topology", "leaf_spine") => find::<topology::LeafSpine>(section, v),
        ("topology", "fat_tree") => find::<FatTree>(section, v),
        ("topology", "dumbbell") => find::<topology::Dumbbell>(section, v),
        ("topology", "star") => find::<topology::Star>(section, v),
        ("workload", "poisson") => find::<w::Poisson>(section, v),
        ("workload", "incast") => find::<w::Incast>(section, v),
        ("workload", "trace") => find::<w::Trace>(section, v),
        ("workload", "permutation") => find::<w::permutation::Permutation>(section, v),
        ("workload", "all_to_all") => find::<w::closed::AllToAll>(section, v),
        ("workload", "ring_allreduce") => find::<w::closed::RingAllreduce>(section, v),
        ("workload", "goal") => find::<w::goal::Goal>(section, v),
        _ => None,
    }
}

fn find<T: DeserializeOwned>(section: &str, v: toml::Value) -> Option<(String, String)> {
    match serde_path_to_error::deserialize::<_, T>(v) {
        Ok(_) => None,
        Err(e) => {
            let path = e.path().to_string();
            let key = if path == "." { section.to_string() } else { format!("{section}.{path}") };
            Some((key, words(&e.inner().to_string())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_read_in_our_words() {
        assert_eq!(words("invalid type: string \"ten\", expected f64"), "expected a number, got a string \"ten\"");
        assert_eq!(
            words("invalid type: floating point `2.5`, expected u32"),
            "expected an integer in [0, 4294967295], got 2.5 (a float; write a whole number without a decimal point or exponent)"
        );
        assert_eq!(words("invalid value: integer `-5`, expected u64"), "expected an integer >= 0, got -5");
        assert_eq!(words("invalid type: integer `3`, expected a boolean"), "expected true or false, got 3");
        assert_eq!(words("missing field `x`"), "missing field `x`");
        assert_eq!(
            words("invalid type: floating point `NaN`, expected u32\nin `hosts`\n"),
            "expected an integer in [0, 4294967295], got NaN (a float; write a whole number without a decimal point or exponent)"
        );
    }

    #[test]
    fn positions_of_keys_and_array_entries() {
        let text = "[run]\nduration_ms = \"ten\"\n\n[[network.events]]\nat_us = 1\n[[network.events]]\nat_us = -1\n";
        assert_eq!(position(text, "e.toml", "run.duration_ms").as_deref(), Some("e.toml:2:1"));
        assert_eq!(position(text, "e.toml", "network.events[1].at_us").as_deref(), Some("e.toml:7:1"));
        assert_eq!(position(text, "e.toml", "run.seed"), None);
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
