//! A TOML text as the document [`super::file::read`] reads: parsed by the `toml` crate (TOML
//! 1.0, the language of Python's `tomllib`, which satcc's other TOML files are still read
//! with). A syntax error is placed by line and column; a value the document cannot hold (a
//! float that is not finite) is named by its key path.

use serde_json::Value;

use super::file::{self, File, Issue, Known};

/// Read a scenario file's text ([`document`], then [`file::read`]).
pub fn read(text: &str, default_name: &str, known: &Known) -> Result<File, Vec<Issue>> {
    file::read(&document(text)?, default_name, known)
}

/// The tables of a TOML text, in the order written. Err: "invalid TOML: what (at line L,
/// column C)", columns counted in characters from 1, as `tomllib` counts them.
pub fn parse(text: &str) -> Result<toml::Table, String> {
    text.parse::<toml::Table>().map_err(|e| {
        let what = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        match e.span() {
            Some(span) => {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                format!("invalid TOML: {what} (at line {line}, column {column})")
            }
            None => format!("invalid TOML: {what}"),
        }
    })
}

/// A scenario file's text as the document [`super::file::read`] takes: a syntax error as one
/// issue at the top (""), a float that is not finite at its key path; a date or time is its
/// TOML text.
pub fn document(text: &str) -> Result<Value, Vec<Issue>> {
    let table = parse(text).map_err(|e| vec![(String::new(), e)])?;
    let mut issues = Vec::new();
    let doc = json_table(&table, "", &mut issues);
    if issues.is_empty() {
        Ok(doc)
    } else {
        Err(issues)
    }
}

fn json_table(t: &toml::Table, path: &str, issues: &mut Vec<Issue>) -> Value {
    let map = t
        .iter()
        .map(|(k, v)| {
            let key = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            (k.clone(), json(v, &key, issues))
        })
        .collect();
    Value::Object(map)
}

fn json(v: &toml::Value, path: &str, issues: &mut Vec<Issue>) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or_else(|| {
                issues.push((
                    path.to_string(),
                    format!("expected a finite number, found {f}"),
                ));
                Value::Null
            }),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, v)| json(v, &format!("{path}[{i}]"), issues))
                .collect(),
        ),
        toml::Value::Table(t) => json_table(t, path, issues),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syntax_error_names_its_line_and_column() {
        let e = parse("[scenario]\nduration = \n").unwrap_err();
        assert!(e.starts_with("invalid TOML: "), "{e}");
        assert!(e.contains("(at line 2, column "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = parse("a = 1\na = 2\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn values_keep_their_types_and_paths_name_what_json_cannot_hold() {
        let doc =
            document("[s]\nn = 3\nx = 1.5\nb = true\nd = 1979-05-27\n[[l]]\nr = \"1 Mbit/s\"\n")
                .unwrap();
        assert_eq!(doc["s"]["n"], 3);
        assert_eq!(doc["s"]["x"], 1.5);
        assert_eq!(doc["s"]["b"], true);
        assert_eq!(doc["s"]["d"], "1979-05-27");
        assert_eq!(doc["l"][0]["r"], "1 Mbit/s");
        let issues = document("[[l]]\nq = [1.0, inf]\n[s]\nx = nan\n").unwrap_err();
        assert_eq!(
            issues,
            vec![
                (
                    "l[0].q[1]".to_string(),
                    "expected a finite number, found inf".to_string()
                ),
                (
                    "s.x".to_string(),
                    "expected a finite number, found NaN".to_string()
                ),
            ]
        );
    }
}
