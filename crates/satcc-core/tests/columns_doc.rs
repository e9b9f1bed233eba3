//! docs/results.md's column tables are the declaration (`satcc_core::columns`), generated:
//! each sits between `<!-- columns: TABLE -->` and `<!-- /columns -->`.

use satcc_core::columns::{markdown, TABLES};

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results.md");
const END: &str = "<!-- /columns -->";

/// `text` with every table's block replaced by the generated one; an error names a table
/// whose block is missing or repeated.
fn generate(text: &str) -> Result<String, String> {
    let mut out = text.to_string();
    for t in TABLES {
        let open = format!("<!-- columns: {} -->\n", t.name);
        let (Some(start), 1) = (out.find(&open), out.matches(&open).count()) else {
            return Err(format!("docs/results.md: expected one `{}`", open.trim()));
        };
        let body = start + open.len();
        let Some(len) = out[body..].find(END) else {
            return Err(format!("docs/results.md: `{}` has no `{END}`", open.trim()));
        };
        out.replace_range(body..body + len, &markdown(t));
    }
    Ok(out)
}

#[test]
fn the_results_reference_tables_are_the_declaration() {
    let have = std::fs::read_to_string(DOC).expect("read docs/results.md");
    let want = generate(&have).unwrap_or_else(|e| panic!("{e}"));
    if std::env::var_os("SATCC_BLESS").is_some() {
        std::fs::write(DOC, &want).expect("write docs/results.md");
        return;
    }
    assert!(
        have == want,
        "docs/results.md's column tables differ from crates/satcc-core/src/columns.rs; \
         regenerate them: SATCC_BLESS=1 cargo test -p satcc-core --test columns_doc"
    );
}

#[test]
fn a_block_is_replaced_whole_and_a_missing_one_is_named() {
    let mut text = String::new();
    for t in TABLES {
        text.push_str(&format!(
            "## {}\n<!-- columns: {} -->\nstale\n{END}\nprose\n",
            t.name, t.name
        ));
    }
    let out = generate(&text).unwrap();
    assert!(!out.contains("stale"));
    assert_eq!(out.matches("prose").count(), TABLES.len());
    assert!(out.contains(&markdown(&TABLES[0])));
    let err = generate(&text.replace("<!-- columns: seqack -->", "")).unwrap_err();
    assert!(err.contains("columns: seqack"), "{err}");
}
