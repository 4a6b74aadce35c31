//! A note as a reader sees it, one line per block (paragraph, list item, heading, table
//! cell): inline code kept as code spans (`` `[aliases]` `` stays code, and a `!` in it ends no
//! sentence), links as their visible text (`[[Note#Part|shown]]` → `shown`, `[[Note#Part]]` →
//! `Note › Part`), and what a reader does not see as text left out — embeds, images, HTML,
//! `%%` comments, footnote marks, code blocks, front matter.

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Tag, TagEnd};

use crate::lines::normalized;
use crate::parse::events;

/// The blocks of `text` as a reader reads them, each on one line.
pub fn blocks(text: &str) -> Vec<String> {
    blocks_and_cells(text).into_iter().map(|(line, _)| line).collect()
}

/// [`blocks`], each with whether it is (a line of) a table cell: a table's label or value
/// (`Ctrl (+ Shift in Source Mode)`, `Move the cursor up one page`) is seldom a sentence.
pub fn blocks_and_cells(text: &str) -> Vec<(String, bool)> {
    let text = &*normalized(text);
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut line = String::new();
    let mut skip = 0usize; // inside an image, an embed or a code block
    let mut wikilink: Option<(String, bool)> = None; // (target as written, has an alias)
    let mut comment = false;
    let mut cell = false;
    let end = |line: &mut String, out: &mut Vec<(String, bool)>, cell: bool| {
        let l = without_embeds(line).split_whitespace().collect::<Vec<_>>().join(" ");
        if !l.is_empty() {
            out.push((l, cell));
        }
        line.clear();
    };
    for (event, _) in events(text).1 {
        match event {
            Event::Start(Tag::TableCell) => {
                end(&mut line, &mut out, cell);
                cell = true;
            }
            Event::End(TagEnd::TableCell) => {
                end(&mut line, &mut out, cell);
                cell = false;
            }
            // An image or embed leaves a mark where it stood, so the brackets that held it go
            // with it (`Publish ( ![[send.svg#icon]] ) in` → `Publish in`).
            Event::Start(Tag::Image { .. }) => {
                if skip == 0 {
                    line.push(EMBED);
                }
                skip += 1;
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_) | CodeBlockKind::Indented)) => {
                skip += 1;
            }
            Event::End(TagEnd::Image) | Event::End(TagEnd::CodeBlock) => skip = skip.saturating_sub(1),
            _ if skip > 0 => {}
            Event::Start(Tag::Link {
                link_type: LinkType::WikiLink { has_pothole },
                dest_url,
                ..
            }) => {
                wikilink = Some((dest_url.to_string(), has_pothole));
            }
            Event::End(TagEnd::Link) if wikilink.is_some() => {
                let (dest, aliased) = wikilink.take().expect("open");
                if !aliased {
                    line.extend(shown_target(&dest).chars().filter(|&c| c != EMBED));
                }
            }
            Event::Text(t) if wikilink.as_ref().is_some_and(|(_, aliased)| !aliased) => {
                let _ = t;
            }
            Event::Text(t) => {
                for (i, part) in t.split("%%").enumerate() {
                    if i > 0 {
                        comment = !comment;
                    }
                    if !comment {
                        // Only scholia's marks are marks: the character in the note is dropped.
                        line.extend(part.chars().filter(|&c| c != EMBED));
                    }
                }
            }
            Event::Code(c) if !comment => {
                let ticks = if c.contains('`') { "``" } else { "`" };
                let pad = if c.starts_with('`') || c.ends_with('`') {
                    " "
                } else {
                    ""
                };
                let c: String = c.chars().filter(|&c| c != EMBED).collect();
                line.push_str(&format!("{ticks}{pad}{c}{pad}{ticks}"));
            }
            // A line break or paragraph written as HTML (`<br>`, `<p/>`: table cells hold
            // several lines so) parts what it stands between.
            Event::InlineHtml(h) if !comment && breaks_line(&h) => end(&mut line, &mut out, cell),
            // A callout's `[!type] Title` line is a label of its own.
            Event::SoftBreak if line.trim_start().starts_with("[!") => end(&mut line, &mut out, cell),
            Event::SoftBreak => line.push(' '),
            Event::HardBreak => end(&mut line, &mut out, cell),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::TableRow
                | TagEnd::BlockQuote(_)
                | TagEnd::FootnoteDefinition,
            ) => end(&mut line, &mut out, cell),
            Event::Start(Tag::Item | Tag::BlockQuote(_) | Tag::Heading { .. }) => end(&mut line, &mut out, cell),
            _ => {}
        }
    }
    end(&mut line, &mut out, cell);
    out
}

/// Where an image or embed stood in a line being read ([`without_embeds`] takes it out).
const EMBED: char = '\u{FFFC}';

/// `line` without its [`EMBED`] marks, and without the brackets that held nothing but embeds
/// (`（ ![[icon]] ）`, `( ![[icon]] )`): an icon a reader sees in brackets is gone from the
/// text, and empty brackets would be left.
fn without_embeds(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let close = match chars[i] {
            '(' => Some(')'),
            '（' => Some('）'),
            _ => None,
        };
        if let Some(close) = close {
            // Only marks and spaces up to the closing bracket, and at least one mark.
            let inner = chars[i + 1..]
                .iter()
                .take_while(|c| **c == EMBED || c.is_whitespace())
                .count();
            let held = chars[i + 1..i + 1 + inner].contains(&EMBED);
            if held && chars.get(i + 1 + inner) == Some(&close) {
                i = closed_up(&mut out, &chars, i + inner + 2);
                continue;
            }
        }
        if chars[i] == EMBED {
            i = closed_up(&mut out, &chars, i + 1);
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Where reading goes on after an icon taken out of `chars` before `next`: a mark that ends a
/// clause, with the spaces before it, closes up on the word before (`click Publish changes
/// ![[send.svg#icon]].` reads `click Publish changes.`, not `changes .`).
fn closed_up(out: &mut String, chars: &[char], next: usize) -> usize {
    let spaces = chars[next..]
        .iter()
        .take_while(|c| c.is_whitespace() || **c == EMBED)
        .count();
    if matches!(chars.get(next + spaces), Some('.' | ',' | ';' | ':' | '!' | '?' | ')')) {
        out.truncate(out.trim_end().len());
        return next + spaces;
    }
    next
}

/// Whether an inline HTML tag breaks the line it is in: `<br>`, `<p>`, `</p>`, `<p/>`, and the
/// same for `div` and `li`.
fn breaks_line(html: &str) -> bool {
    let name: String = html
        .trim_start_matches('<')
        .trim_start_matches('/')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(name.as_str(), "br" | "p" | "div" | "li")
}

/// What Obsidian shows for a wikilink without alias: `Note`, `Note › Part`, `Part` (a link
/// within the note); block ids are not shown.
fn shown_target(dest: &str) -> String {
    let parts: Vec<&str> = dest
        .split('#')
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.starts_with('^'))
        .collect();
    parts.join(" › ")
}

/// `plain` (a note's plain text, [`crate::parse::ParsedNote::plain_text`]) without its callouts'
/// types: `[!todo]- Bookmark a file` is an icon and a title to a reader, and the type is no word
/// of the note (obsidian-help's Bookmarks had `todo` as its second key term, from eight `[!todo]-`
/// callouts). The title stays.
pub fn without_callout_types(plain: &str) -> String {
    let mut out = String::with_capacity(plain.len());
    for line in plain.split_inclusive('\n') {
        let rest = line
            .strip_prefix("[!")
            .and_then(|r| r.split_once(']'))
            .filter(|(kind, _)| !kind.is_empty() && kind.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_'))
            .map(|(_, title)| title.trim_start_matches(['-', '+', ' ', '\t']));
        out.push_str(rest.unwrap_or(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callout_s_type_is_no_word() {
        let check = |plain: &str, want: &str| assert_eq!(without_callout_types(plain), want, "{plain:?}");
        check(
            "[!todo]- Bookmark a file\nSelect it.\n",
            "Bookmark a file\nSelect it.\n",
        );
        check(
            "[!tip] Useful\n[!note]\nText [!not] a callout\n",
            "Useful\n\nText [!not] a callout\n",
        );
        check("[!warning]+ 注意\n", "注意\n");
        // Not a type: brackets with spaces or nothing, or not at the line's start.
        check("[!a b] x\n[!] y\n see [!todo] z", "[!a b] x\n[!] y\n see [!todo] z");
        check("", "");
        // Hostile: unclosed, nested, a type of another script, a long unclosed line.
        check("[!x\n[![!x]] y\n[!注意] 題\n", "[!x\n[![!x]] y\n題\n");
        let long = format!("[!{}", "a".repeat(1 << 20));
        assert_eq!(without_callout_types(&long), long);
    }

    #[test]
    fn what_a_reader_reads() {
        let check = |text: &str, want: &[&str]| assert_eq!(blocks(text), want, "{text:?}");
        check(
            "Use `[aliases]` to find them; see [[Help and support#Report bugs]] or [[Note|this one]].",
            &["Use `[aliases]` to find them; see Help and support › Report bugs or this one."],
        );
        // Lines a table cell parts with HTML are lines of their own.
        check(
            "| `line:` | Find files matching `x`.<p/>Example: `line:(mix flour)`.<p/><br>**Note:** Using it negates. |\n| --- | --- |\n",
            &[
                "`line:`",
                "Find files matching `x`.",
                "Example: `line:(mix flour)`.",
                "Note: Using it negates.",
            ],
        );
        check("One<br/>two<BR>three <span>four</span>", &["One", "two", "three four"]);
        // Table cells are marked as such, each line of a cell parted by HTML too.
        assert_eq!(
            blocks_and_cells("Intro.\n\n| a | b<br>c |\n| - | - |\n| d | e |\n\n- item\n"),
            [
                ("Intro.", false),
                ("a", true),
                ("b", true),
                ("c", true),
                ("d", true),
                ("e", true),
                ("item", false)
            ]
            .map(|(l, c)| (l.to_string(), c))
        );
        // Brackets that held only an icon go with it; others stay.
        check(
            "Select Publish changes ( ![[lucide-send.svg#icon]] ) in the ribbon.\n\nオプション（![[more.svg#icon]]）を選択。\n\n変更（ ![[a.svg#icon]] ![[b.svg#icon]] ）を公開 (see ![[c.png]] here) and (note).",
            &[
                "Select Publish changes in the ribbon.",
                "オプションを選択。",
                "変更を公開 (see here) and (note).",
            ],
        );
        // The mark is scholia's own: the same character written in a note is no embed, and
        // its brackets stay.
        check(
            "A box ( \u{FFFC} ) and (\u{FFFC}) and ([[N\u{FFFC}]]) here.",
            &["A box ( ) and () and (N) here."],
        );
        check(
            "An image ![alt](x.png) and ![[Embedded]] here.",
            &["An image and here."],
        );
        // A mark ending the clause closes up on the word before the icon.
        check(
            "Click Publish changes ![[send.svg#icon]]. Open Vault switcher ( ![[v.svg#icon]] ) .\n\n\
             In Ribbon, select ![[a.svg#icon]] ![[b.svg#icon]] , then (see ![[c.png]]) .md files.",
            &[
                "Click Publish changes. Open Vault switcher.",
                "In Ribbon, select, then (see) .md files.",
            ],
        );
        check(
            "Text %%hidden%% shown.\n\n- item *one*\n- two <b>bold</b>",
            &["Text shown.", "item one", "two bold"],
        );
        check("# Title\n\n```\ncode block\n```\nAfter.", &["Title", "After."]);
        check(
            "Link [[#Local heading]] and [[Note#^abc123]].",
            &["Link Local heading and Note."],
        );
        check("Code with a tick: `` a`b ``.", &["Code with a tick: ``a`b``."]);
        check("| a | `b` |\n|---|---|\n| 1 | 2 |\n", &["a", "`b`", "1", "2"]);
        check(
            "> [!note] Advice\n> Feed it daily.",
            &["[!note] Advice", "Feed it daily."],
        );
    }
}
