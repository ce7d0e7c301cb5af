//! The golden dataset of `nl2sql benchmark`: a JSON array of cases or JSON lines, with
//! errors that name the line and the field.

use super::*;

/// Parses a dataset: a JSON array of cases, or one case per line (JSON lines). Errors name
/// the line and the field.
pub(crate) fn parse_dataset(text: &str) -> Result<Vec<GoldenCase>, String> {
    let mut cases = Vec::new();
    if text.trim_start().starts_with('[') {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
        let lines = element_lines(text);
        for (i, item) in items.iter().enumerate() {
            let line = lines.get(i).copied().unwrap_or(1);
            cases.push(case_from(item, line).map_err(|e| format!("line {line}: {e}"))?);
        }
    } else {
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let item: Value = serde_json::from_str(raw)
                .map_err(|e| format!("line {line}: not a JSON object: {e}"))?;
            cases.push(case_from(&item, line).map_err(|e| format!("line {line}: {e}"))?);
        }
    }
    if cases.is_empty() {
        return Err("it has no cases".to_owned());
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &cases {
        if let Some(first) = seen.insert(&c.id, c.line) {
            return Err(format!(
                "line {}: field 'id': '{}' is already the id of the case on line {first}",
                c.line, c.id
            ));
        }
    }
    Ok(cases)
}

/// The 1-based line each element of a top-level JSON array starts on (the text is valid
/// JSON: the caller parsed it).
pub(super) fn element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut expect_element = false;
    for ch in text.chars() {
        if ch == '\n' {
            line += 1;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_string = false;
            }
            continue;
        }
        if ch.is_whitespace() {
            continue;
        }
        if expect_element && ch != ']' {
            lines.push(line);
        }
        expect_element = false;
        match ch {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                expect_element = depth == 1;
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' => expect_element = depth == 1,
            _ => {}
        }
    }
    lines
}

/// One case from its JSON; the error names the field.
pub(super) fn case_from(item: &Value, line: usize) -> Result<GoldenCase, String> {
    let Some(obj) = item.as_object() else {
        return Err("a case must be a JSON object".to_owned());
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err("field 'id' must be a non-empty string or a number".to_owned()),
        None => return Err("field 'id' is missing".to_owned()),
    };
    let at = |msg: String| format!("case '{id}': {msg}");
    let question = match obj.get("question") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(_) => return Err(at("field 'question' must be a non-empty string".to_owned())),
        None => return Err(at("field 'question' is missing".to_owned())),
    };
    let datasource = match obj.get("datasource").or_else(|| obj.get("datasources")) {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
        Some(Value::Array(ids)) if !ids.is_empty() => {
            let mut out = Vec::new();
            for v in ids {
                match v.as_str() {
                    Some(s) if !s.trim().is_empty() => out.push(s.to_owned()),
                    _ => {
                        return Err(at(
                            "field 'datasource' must list datasource ids (non-empty strings)"
                                .to_owned(),
                        ));
                    }
                }
            }
            out
        }
        Some(_) => {
            return Err(at(
                "field 'datasource' must be a datasource id or a non-empty list of them".to_owned(),
            ));
        }
        None => return Err(at("field 'datasource' is missing".to_owned())),
    };
    let text_field = |name: &str| -> Result<Option<String>, String> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(at(format!("field '{name}' must be a string"))),
        }
    };
    let expected_sql = match obj.get("expected_sql") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(_) => {
            return Err(at(
                "field 'expected_sql' must be a non-empty string".to_owned()
            ));
        }
    };
    Ok(GoldenCase {
        difficulty: text_field("difficulty")?,
        expected_routing_layer: text_field("expected_routing_layer")?,
        id,
        question,
        datasource,
        expected_sql,
        line,
    })
}
