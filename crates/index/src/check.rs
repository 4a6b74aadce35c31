//! `scholia check`: every problem the editor's diagnostics find, for every note (or those
//! under some paths), as `path:line:col` lines for CI and pre-commit hooks. Links that lead
//! nowhere are errors; a name several notes share is a warning (the link still opens one).

use rayon::prelude::*;
use serde::Serialize;

use super::{IndexError, VaultIndex};
use scholia_base::Summary;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem, where it is (line and column from 1, the column in characters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    pub path: String,
    pub line: usize,
    pub col: usize,
    pub severity: Severity,
    /// `unresolved-link`, `unresolved-heading`, `unresolved-block`, `missing-embed`,
    /// `ambiguous-link`.
    pub code: &'static str,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub notes: usize,
    pub errors: usize,
    pub warnings: usize,
    /// Notes that could not be read (not UTF-8, unreadable), with why.
    pub unread: Vec<(String, String)>,
    pub problems: Vec<Found>,
}

impl Summary for Checked {
    fn summary(&self) -> String {
        let mut s = format!(
            "{} notes checked: {} errors, {} warnings",
            self.notes, self.errors, self.warnings
        );
        if !self.unread.is_empty() {
            s.push_str(&format!(", {} notes not read", self.unread.len()));
        }
        s
    }
}

/// Line and column (from 1, characters) of byte `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

impl VaultIndex {
    /// The problems of every note of the index under one of `under` (vault paths of notes or
    /// folders; all notes when empty), by path and position.
    pub fn check_notes(&self, under: &[String]) -> Result<Checked, IndexError> {
        let wanted = |rel: &str| {
            under.is_empty()
                || under.iter().any(|u| {
                    let u = u.trim_matches('/');
                    u.is_empty() || rel == u || rel.starts_with(&format!("{u}/"))
                })
        };
        let scope = self.scope();
        let mut notes: Vec<String> = self
            .stamps()?
            .into_keys()
            .filter(|r| wanted(r) && scope.allows(r))
            .collect();
        notes.sort();
        let each: Vec<Result<Vec<Found>, (String, String)>> = notes
            .par_iter()
            .map(|rel| {
                let text = self.note_text_whole(rel).map_err(|why| (rel.clone(), why))?;
                let problems = self
                    .link_problems(rel, &text)
                    .map_err(|e| (rel.clone(), e.to_string()))?;
                Ok(problems
                    .into_iter()
                    .map(|p| {
                        let (line, col) = line_col(&text, p.range.start);
                        let severity = match p.problem {
                            super::Problem::Ambiguous { .. } => Severity::Warning,
                            _ => Severity::Error,
                        };
                        Found {
                            path: rel.clone(),
                            line,
                            col,
                            severity,
                            code: p.problem.code(),
                            message: p.problem.message(),
                        }
                    })
                    .collect())
            })
            .collect();
        let mut checked = Checked {
            notes: notes.len(),
            errors: 0,
            warnings: 0,
            unread: Vec::new(),
            problems: Vec::new(),
        };
        for r in each {
            match r {
                Ok(found) => checked.problems.extend(found),
                Err(unread) => checked.unread.push(unread),
            }
        }
        checked.errors = checked
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        checked.warnings = checked.problems.len() - checked.errors;
        Ok(checked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters_from_one() {
        let check =
            |text: &str, at: usize, expected: (usize, usize)| assert_eq!(line_col(text, at), expected, "{text:?} {at}");
        check("abc", 0, (1, 1));
        check("abc\n[[x]]", 4, (2, 1));
        check("é [[x]]", 3, (1, 3));
        check("a\nb\n  [[x]]", 6, (3, 3));
    }

    #[test]
    fn every_broken_link_is_found_where_it_is() {
        let f = crate::fixture::vault(&[
            ("a.md", "# A\n\nSee [[b]] and [[nope]].\n\nAlso [[b#Missing]].\n"),
            ("b.md", "# B\n\nFine [[a]].\n"),
            ("x/c.md", "# C\n\n[[d]]\n"),
            ("x/d.md", "# D\n"),
            ("y/d.md", "# D\n"),
        ]);
        let all = f.index.check_notes(&[]).unwrap();
        let shown: Vec<(String, usize, usize, &str)> = all
            .problems
            .iter()
            .map(|p| (p.path.clone(), p.line, p.col, p.code))
            .collect();
        assert_eq!(
            shown,
            [
                ("a.md".to_string(), 3, 15, "unresolved-link"),
                ("a.md".to_string(), 5, 6, "unresolved-heading"),
                ("x/c.md".to_string(), 3, 1, "ambiguous-link"),
            ]
        );
        assert_eq!((all.notes, all.errors, all.warnings), (5, 2, 1));
        let some = f.index.check_notes(&["x".into()]).unwrap();
        assert_eq!((some.notes, some.errors, some.warnings), (2, 0, 1));
    }
}
