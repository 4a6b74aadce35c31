//! A page longer than its budget in a prompt: its paragraphs closest in meaning to the topic,
//! in the page's order, rather than its first part (which on most pages is navigation and
//! preamble). Without embeddings, or when they fail, the page is cut at the budget.

use std::sync::Arc;

use scholia_embed::{Embedder, Quantized};

/// Paragraphs of a page compared at most (a page is capped at 50,000 characters).
const MAX_PARAGRAPHS: usize = 400;

/// `text` within `chars`: the paragraphs nearest `topic` by meaning, kept in order. Blocking.
pub fn closest(embedder: &Arc<dyn Embedder>, topic: &str, text: &str, chars: usize) -> Option<String> {
    if text.len() <= chars {
        return Some(text.to_string());
    }
    let paragraphs: Vec<&str> = text
        .split("\n\n")
        .map(str::trim)
        .filter(|p| p.chars().count() >= 40)
        .take(MAX_PARAGRAPHS)
        .collect();
    if paragraphs.len() < 2 {
        return None;
    }
    let q = Quantized::new(&embedder.embed_query(topic).ok()?);
    let vectors = embedder.embed_now(&paragraphs).ok()?;
    let mut scored: Vec<(f32, usize)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (q.dot(&Quantized::new(v)), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut kept: Vec<usize> = Vec::new();
    let mut used = 0;
    for (_, i) in scored {
        let len = paragraphs[i].len() + 2;
        if used + len > chars {
            continue;
        }
        used += len;
        kept.push(i);
    }
    kept.sort_unstable();
    Some(kept.iter().map(|&i| paragraphs[i]).collect::<Vec<_>>().join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts one word: paragraphs that say "kombucha" are near a kombucha topic.
    struct Word;

    impl Embedder for Word {
        fn model_id(&self) -> String {
            "word".into()
        }
        fn dims(&self) -> usize {
            2
        }
        fn max_tokens(&self) -> usize {
            256
        }
        fn count_tokens(&self, t: &str) -> usize {
            t.len()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, scholia_embed::EmbedError> {
            Ok(texts
                .iter()
                .map(|t| {
                    let n = t.matches("kombucha").count() as f32;
                    let mut v = vec![n, 1.0];
                    scholia_embed::normalize(&mut v);
                    v
                })
                .collect())
        }
    }

    #[test]
    fn the_paragraphs_about_the_topic_in_their_order() {
        let nav = "Home · About · Contact · Shop · Newsletter · Privacy · Cookies · Terms";
        let about = "Kombucha is tea fermented by a SCOBY; kombucha tastes sour and fizzy.";
        let other = "Our shop ships worldwide within three days of your order, weekends too.";
        let later = "Brewing kombucha at home takes a week at room temperature, or two in winter.";
        let page = [nav, about, other, later].join("\n\n");
        let e: Arc<dyn Embedder> = Arc::new(Word);
        let kept = closest(&e, "kombucha", &page, about.len() + later.len() + 10).unwrap();
        assert_eq!(kept, format!("{about}\n\n{later}"));
        assert_eq!(closest(&e, "x", "short", 100).unwrap(), "short");
    }
}
