//! Fitting the synthesis prompt into the model's context: the least relevant material goes
//! first — page extracts of the last topics, then their results beyond the first two, then
//! whole topics from the last (topics come most important first); the note is cut last.

use super::gather::Material;
use scholia_providers::llm::window::{estimate_tokens, fit_text};

/// Sources kept per topic before whole topics are dropped.
const KEEP_PER_TOPIC: usize = 2;
/// Tokens for a source's title, URL and the prompt's markup around it.
const PER_SOURCE: usize = 40;

fn cost(m: &Material) -> usize {
    let web: usize = m
        .web
        .iter()
        .map(|w| {
            PER_SOURCE
                + estimate_tokens(&w.title)
                + estimate_tokens(&w.snippet)
                + w.extract.as_deref().map_or(0, estimate_tokens)
        })
        .sum();
    let vault: usize = m.vault.iter().map(|v| PER_SOURCE + estimate_tokens(&v.snippet)).sum();
    PER_SOURCE + estimate_tokens(&m.topic) + estimate_tokens(&m.context) + web + vault
}

/// Cuts `materials` and then `note` until they fit `room` tokens; says what was left out.
pub(super) fn fit(materials: &mut Vec<Material>, note: &mut String, room: usize) -> Vec<String> {
    let mut dropped = Vec::new();
    let total = |ms: &[Material], note: &str| ms.iter().map(cost).sum::<usize>() + estimate_tokens(note);
    // 1. Page extracts, last topic first.
    for i in (0..materials.len()).rev() {
        for j in (0..materials[i].web.len()).rev() {
            if total(materials, note) <= room {
                return dropped;
            }
            if materials[i].web[j].extract.take().is_some() {
                dropped.push(format!("the page read for `{}`", materials[i].topic));
            }
        }
    }
    // 2. Results beyond the first two, last topic first.
    for i in (0..materials.len()).rev() {
        if total(materials, note) <= room {
            return dropped;
        }
        let m = &mut materials[i];
        let extra = m.web.len().saturating_sub(KEEP_PER_TOPIC) + m.vault.len().saturating_sub(KEEP_PER_TOPIC);
        if extra > 0 {
            m.web.truncate(KEEP_PER_TOPIC);
            m.vault.truncate(KEEP_PER_TOPIC);
            dropped.push(format!("{extra} lesser result(s) for `{}`", m.topic));
        }
    }
    // 3. Whole topics from the last, keeping the first.
    while materials.len() > 1 && total(materials, note) > room {
        let m = materials.pop().expect("more than one");
        dropped.push(format!("the topic `{}`", m.topic));
    }
    // 4. The note.
    let left = room.saturating_sub(materials.iter().map(cost).sum::<usize>());
    let (cut, was_cut) = fit_text(note, left.max(200));
    if was_cut {
        let cut = cut.to_string();
        dropped.push(format!("the note after its first {} characters", cut.chars().count()));
        *note = cut;
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::super::gather::{VaultSource, WebSource};
    use super::*;

    fn material(topic: &str, n: usize, extract: bool) -> Material {
        Material {
            topic: topic.into(),
            kind: "concept".into(),
            context: String::new(),
            web: (0..n)
                .map(|i| WebSource {
                    title: format!("Page {i}"),
                    url: format!("https://e.com/{topic}/{i}"),
                    snippet: "word ".repeat(60),
                    extract: extract.then(|| "fact ".repeat(300)),
                })
                .collect(),
            vault: (0..n)
                .map(|i| VaultSource {
                    title: format!("Note {i}"),
                    path: format!("n{i}.md"),
                    target: format!("n{i}"),
                    snippet: "text ".repeat(40),
                })
                .collect(),
            failures: Vec::new(),
            pages_read: 0,
            usage: Default::default(),
        }
    }

    #[test]
    fn the_least_relevant_goes_first() {
        let all = || {
            vec![
                material("first", 5, true),
                material("second", 5, true),
                material("third", 5, true),
            ]
        };
        let size = |ms: &[Material], note: &str| ms.iter().map(cost).sum::<usize>() + estimate_tokens(note);
        let note = "note ".repeat(2000);

        // Enough room: nothing changes.
        let (mut ms, mut n) = (all(), note.clone());
        assert!(fit(&mut ms, &mut n, 1_000_000).is_empty());

        // A little less room: only the last topic's page extracts go.
        let (mut ms, mut n) = (all(), note.clone());
        let room = size(&ms, &n) - 300;
        let dropped = fit(&mut ms, &mut n, room);
        assert!(
            dropped.iter().all(|d| d.contains("page read for `third`")),
            "{dropped:?}"
        );
        assert!(ms[0].web.iter().all(|w| w.extract.is_some()));
        assert!(size(&ms, &n) <= room);

        // Little room: one topic with two results each, and the note cut.
        let (mut ms, mut n) = (all(), note.clone());
        let dropped = fit(&mut ms, &mut n, 900);
        assert_eq!(ms.len(), 1, "{dropped:?}");
        assert_eq!(
            (ms[0].topic.as_str(), ms[0].web.len(), ms[0].vault.len()),
            ("first", 2, 2)
        );
        assert!(n.len() < note.len());
        assert!(dropped.last().unwrap().starts_with("the note after"), "{dropped:?}");
    }
}
