//! Why a related note is related, said as a reader can check it: its words, or, when the
//! vault's links or folders weigh more than any word it shares, the note that ties the two
//! ("[[Hotkeys]], which this note links, links it").

use super::around::{Around, folder_of};
use super::hubs::MIN_HUB;
use super::{Evidence, Likeness};

/// What relates a note to the researched one, as it is told.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Tie {
    /// What it says: the words it shares, its meaning, its names.
    Words,
    /// `via`, a note the researched one links, links it.
    LinkedFrom { via: String },
    /// `by`, a note linking the researched one, links it too.
    CitedWith { by: String },
    /// `by`, one of the notes most like the researched one, links it.
    AlikeLinks { by: String },
    /// `linking` of the `mates` other notes in the researched one's `folder` link it.
    FolderLinks {
        folder: String,
        linking: usize,
        mates: usize,
    },
    /// It is in the researched one's `folder`.
    Folder { folder: String },
    /// It is in `folder`, where `linked` of the notes the researched one links are.
    LinksInto { folder: String, linked: usize },
    /// It has the researched note's `tag`.
    Tag { tag: String },
    /// Linked from `linking` notes: one of the vault's hubs (see `related::hubs`) found by its
    /// ties and how many notes link it more than by the words the two share.
    Popular { linking: usize },
    /// Linked from `linking` notes, fewer than the vault's hubs are, and nothing ties it to the
    /// researched one more than that: a note of its own, not one of the hubs (obsidian-help en's
    /// hubs line read "[[Aliases]] (5)" and "[[Graph view]] (8)" beside Settings' 65).
    Linked { linking: usize },
}

/// What a related note's words share with the note ([`Ties::words_share`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WordsShare {
    /// The better of the stem cosines of the whole note and of its best part
    /// ([`Evidence::similar`], [`Evidence::part_similar`]).
    pub cosine: f32,
    /// How many times `cosine` is the usual: what the median note sharing one of the note's
    /// stems shares with it. Infinite when too few notes share one to tell (see `similar.rs`).
    pub above_usual: f32,
    /// ln(1 + the notes linking it) ([`Evidence::popularity`]): a note many notes link is one
    /// a reader knows, and one whose words meet most notes' by chance.
    pub popularity: f32,
}

/// The vault's ties around one note, as the evidence read them, for all its related notes.
pub struct Ties {
    note: Likeness,
    around: Around,
    /// What each kind of evidence weighed in ranking the notes (the [`Signals`](super::Signals)).
    weights: Evidence,
    /// The fewest notes linking one of the vault's hubs.
    hub_floor: usize,
}

impl Ties {
    pub(super) fn new(note: &Likeness, around: Around, weights: Evidence, hub_floor: usize) -> Ties {
        Ties {
            note: note.clone(),
            around,
            weights,
            hub_floor,
        }
    }

    /// What the note's words share with the note found with `evidence`, against what any note
    /// of the vault shares with it.
    pub fn words_share(&self, evidence: &Evidence) -> WordsShare {
        let cosine = evidence.similar.max(evidence.part_similar);
        let usual = self.around.usual;
        WordsShare {
            cosine,
            above_usual: if usual > 0.0 { cosine / usual } else { f32::INFINITY },
            popularity: evidence.popularity,
        }
    }

    /// Why the note at `path`, found with `evidence`, is related: the kind of evidence that
    /// weighs most under the weights that ranked the notes, told by the note or folder that
    /// makes it; [`Tie::Words`] when words weigh as much. One of the vault's hubs is told as
    /// one ([`Tie::Popular`]) unless its words outweigh the tie and its popularity together:
    /// that many notes link Settings is why a note links it too, and "linked from 5 of the 12
    /// other notes in Editing and formatting/" or four chance words beside it said nothing a
    /// reader of the note did not know. `tags` are the related note's own.
    pub fn of(&self, path: &str, evidence: &Evidence, tags: &[String]) -> Tie {
        let (e, w) = (evidence, &self.weights);
        let words = w.content * e.content
            + w.similar * e.similar
            + w.part_similar * e.part_similar
            + w.name_stems * e.name_stems
            + w.meaning * e.meaning
            + w.names_it * e.names_it
            + w.named_by * e.named_by;
        let folder = folder_of(&self.note.rel);
        // Each kind of tie, with what its kind weighs in all (links: X → Y → Z and X ← W → Z;
        // the folder: in it, and linked from it) and what it weighs itself.
        let mut told: Vec<(f32, f32, Tie)> = Vec::new();
        let (neighbour, cocited) = (w.neighbour * e.neighbour, w.cocited * e.cocited);
        if let Some((_, via)) = self.around.via.get(path) {
            told.push((neighbour + cocited, neighbour, Tie::LinkedFrom { via: via.clone() }));
        }
        if let Some((_, by)) = self.around.beside.get(path) {
            told.push((neighbour + cocited, cocited, Tie::CitedWith { by: by.clone() }));
        }
        // Reached through the note's own links (above), it is told by them: a link the reader
        // can follow from this note says more than a likeness.
        let linked = self.around.via.contains_key(path) || self.around.beside.contains_key(path);
        if let Some(by) = self.around.alike.get(path).filter(|_| !linked) {
            let weight = w.alike_link * e.alike_link;
            told.push((weight, weight, Tie::AlikeLinks { by: by.clone() }));
        }
        // The vault's top folder is no place a reader would call one.
        if !folder.is_empty() {
            let (inside, linked) = (w.folder * e.folder, w.folder_linked * e.folder_linked);
            let mates = &self.around.mates;
            let linking = mates.linking.get(path).copied().unwrap_or(0);
            // One mate linking it is that mate's link, not the folder's; a folder read in part
            // (more than [`FOLDER_MATES`](super::around::FOLDER_MATES)) gives no "k of the n".
            if linking > 1 && mates.every {
                let tie = Tie::FolderLinks {
                    folder: folder.to_string(),
                    linking,
                    mates: mates.read,
                };
                told.push((inside + linked, linked, tie));
            }
            if folder_of(path) == folder {
                told.push((
                    inside + linked,
                    inside,
                    Tie::Folder {
                        folder: folder.to_string(),
                    },
                ));
            }
        }
        // Its folder, where the note links others: two links at least (one is that link's).
        let theirs = folder_of(path);
        let linked = self
            .note
            .links
            .iter()
            .filter(|l| **l != self.note.rel && folder_of(l) == theirs)
            .count();
        if !theirs.is_empty() && linked > 1 {
            let weight = w.link_folder * e.link_folder;
            let tie = Tie::LinksInto {
                folder: theirs.to_string(),
                linked,
            };
            told.push((weight, weight, tie));
        }
        if e.shared_tag > 0.0 {
            // The first of the note's tags it has (tags match whatever their case).
            let theirs: Vec<String> = tags.iter().map(|t| t.to_lowercase()).collect();
            if let Some(tag) = self.note.tags.iter().find(|t| theirs.contains(&t.to_lowercase())) {
                let weight = w.shared_tag * e.shared_tag;
                told.push((weight, weight, Tie::Tag { tag: tag.clone() }));
            }
        }
        // The heaviest kind, and in it the heaviest tie; on a tie, the order above (links
        // before folders before the folders it links into before tags).
        let mut best: Option<(f32, f32, Tie)> = None;
        for (kind, own, tie) in told {
            if own > 0.0 && best.as_ref().is_none_or(|(k, o, _)| (kind, own) > (*k, *o)) {
                best = Some((kind, own, tie));
            }
        }
        let strongest = best.as_ref().map_or(0.0, |(kind, _, _)| *kind);
        let popular = w.popularity * e.popularity;
        // What the figure counts, ln(1 + linking notes), undone.
        let linking = (e.popularity.exp() - 1.0).round() as usize;
        match best {
            _ if linking >= self.hub_floor && words <= strongest + popular => Tie::Popular { linking },
            Some((kind, _, tie)) if kind > words => tie,
            // Under the floor, how many notes link it is told only when it outweighs the words
            // and every tie (the words may have nothing a reader can be shown).
            _ if popular > words && popular > strongest && linking >= MIN_HUB => Tie::Linked { linking },
            _ => Tie::Words,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::Signals;
    use crate::related::around::FolderMates;

    /// The ties around `Trips/Plans.md`: it links `Middle.md`, which links `Far.md`; `Index.md`
    /// links it and `Beside.md`; two of its three folder-mates link `Packing.md`, all three
    /// `Trips/Hub.md`.
    fn ties(weights: Evidence) -> Ties {
        let note = Likeness {
            rel: "Trips/Plans.md".into(),
            tags: vec!["Travel".into()],
            links: vec![
                "Middle.md".into(),
                "Gear/Tent.md".into(),
                "Gear/Boots.md".into(),
                "Food/Rice.md".into(),
            ],
            ..Default::default()
        };
        let at = |p: &str| (3, p.to_string());
        let around = Around {
            via: HashMap::from([("Far.md".to_string(), at("Middle.md"))]),
            beside: HashMap::from([("Beside.md".to_string(), at("Index.md"))]),
            alike: HashMap::from([
                ("Recipe.md".to_string(), "Cooking.md".to_string()),
                ("Far.md".to_string(), "Middle.md".to_string()),
            ]),
            mates: FolderMates {
                all: Vec::new(),
                read: 3,
                every: true,
                linking: HashMap::from([
                    ("Packing.md".to_string(), 2),
                    ("Once.md".to_string(), 1),
                    ("Trips/Hub.md".to_string(), 3),
                ]),
            },
            usual: 0.05,
        };
        Ties::new(&note, around, weights, 10)
    }

    /// Evidence of the given figures (the others 0).
    fn evidence(figures: &[(&str, f32)]) -> Evidence {
        let mut e = Evidence::default();
        for (name, x) in figures {
            *match *name {
                "content" => &mut e.content,
                "similar" => &mut e.similar,
                "part_similar" => &mut e.part_similar,
                "neighbour" => &mut e.neighbour,
                "cocited" => &mut e.cocited,
                "folder" => &mut e.folder,
                "folder_linked" => &mut e.folder_linked,
                "shared_tag" => &mut e.shared_tag,
                "link_folder" => &mut e.link_folder,
                "alike_link" => &mut e.alike_link,
                "popularity" => &mut e.popularity,
                _ => unreachable!("{name}"),
            } = *x;
        }
        e
    }

    #[test]
    fn the_heaviest_kind_of_evidence_is_told() {
        let ones = Evidence {
            content: 1.0,
            linked: 1.0,
            names_it: 1.0,
            named_by: 1.0,
            shared_tag: 1.0,
            neighbour: 1.0,
            cocited: 1.0,
            folder: 1.0,
            folder_linked: 1.0,
            similar: 1.0,
            popularity: 1.0,
            name_stems: 1.0,
            meaning: 1.0,
            link_folder: 1.0,
            alike_link: 1.0,
            part_similar: 1.0,
        };
        let ties = ties(ones);
        let check = |path: &str, figures: &[(&str, f32)], tags: &[&str], expected: Tie| {
            let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
            assert_eq!(ties.of(path, &evidence(figures), &tags), expected, "{path} {figures:?}");
        };
        let via = || Tie::LinkedFrom {
            via: "Middle.md".into(),
        };
        check("Far.md", &[("neighbour", 0.5), ("content", 0.4)], &[], via());
        // Words weigh as much: words.
        check(
            "Far.md",
            &[("neighbour", 0.5), ("content", 0.3), ("similar", 0.2)],
            &[],
            Tie::Words,
        );
        // Links are one kind: a little of each outweighs the words, told by the heavier.
        check(
            "Far.md",
            &[("neighbour", 0.3), ("cocited", 0.2), ("content", 0.4)],
            &[],
            via(),
        );
        check(
            "Beside.md",
            &[("cocited", 0.5)],
            &[],
            Tie::CitedWith { by: "Index.md".into() },
        );
        // A note most like it links it: told by that note, when it weighs most.
        let alike = Tie::AlikeLinks {
            by: "Cooking.md".into(),
        };
        check("Recipe.md", &[("alike_link", 0.5), ("content", 0.2)], &[], alike);
        check("Recipe.md", &[("alike_link", 0.2), ("content", 0.5)], &[], Tie::Words);
        // Reached through a note it links too: the link tells it, not the likeness.
        check("Far.md", &[("alike_link", 0.9), ("neighbour", 0.5)], &[], via());
        let mates = Tie::FolderLinks {
            folder: "Trips".into(),
            linking: 2,
            mates: 3,
        };
        check(
            "Packing.md",
            &[("folder_linked", 0.6), ("similar", 0.5)],
            &[],
            mates.clone(),
        );
        // One mate linking it is no folder's tie.
        check("Once.md", &[("folder_linked", 0.3)], &[], Tie::Words);
        let folder = Tie::Folder { folder: "Trips".into() };
        check(
            "Trips/Coast.md",
            &[("folder", 0.3), ("content", 0.2)],
            &[],
            folder.clone(),
        );
        // In the folder and linked from it: the heavier of the two.
        let all = Tie::FolderLinks {
            folder: "Trips".into(),
            linking: 3,
            mates: 3,
        };
        check("Trips/Hub.md", &[("folder", 0.3), ("folder_linked", 0.5)], &[], all);
        check("Trips/Hub.md", &[("folder", 0.5), ("folder_linked", 0.3)], &[], folder);
        check("Elsewhere/Coast.md", &[("folder", 0.3)], &[], Tie::Words);
        // In a folder the note links into twice: told so; once is that link's, not the folder's.
        let gear = Tie::LinksInto {
            folder: "Gear".into(),
            linked: 2,
        };
        check("Gear/Stove.md", &[("link_folder", 0.5), ("content", 0.2)], &[], gear);
        check(
            "Gear/Stove.md",
            &[("link_folder", 0.2), ("content", 0.5)],
            &[],
            Tie::Words,
        );
        check(
            "Food/Pasta.md",
            &[("link_folder", 0.25), ("content", 0.2)],
            &[],
            Tie::Words,
        );
        check(
            "Coast.md",
            &[("shared_tag", 1.0), ("content", 0.5)],
            &["travel"],
            Tie::Tag { tag: "Travel".into() },
        );
        // One of the vault's hubs (ten links here) is told as one unless its words outweigh
        // its popularity and its ties together.
        let hub = |linking| Tie::Popular { linking };
        check(
            "Settings.md",
            &[("popularity", 65f32.ln()), ("content", 0.5)],
            &[],
            hub(64),
        );
        check(
            "Settings.md",
            &[("popularity", 65f32.ln()), ("content", 4.5)],
            &[],
            Tie::Words,
        );
        // Linked from a note it links, by words weighing more than either alone: a hub still.
        check(
            "Far.md",
            &[("popularity", 65f32.ln()), ("neighbour", 3.0), ("content", 4.0)],
            &[],
            hub(64),
        );
        check(
            "Far.md",
            &[("popularity", 65f32.ln()), ("neighbour", 3.0), ("content", 7.5)],
            &[],
            Tie::Words,
        );
        // Under the vault's floor, how many notes link it is no tie.
        check(
            "Far.md",
            &[("popularity", 10f32.ln()), ("neighbour", 0.5), ("content", 0.2)],
            &[],
            via(),
        );
        check(
            "Small.md",
            &[("popularity", 11f32.ln()), ("content", 0.5)],
            &[],
            hub(10),
        );
        // Under it, only when nothing else weighs as much, and as a note of its own; four notes
        // linking it say nothing.
        check(
            "Small.md",
            &[("popularity", 10f32.ln()), ("content", 0.5)],
            &[],
            Tie::Linked { linking: 9 },
        );
        check(
            "Small.md",
            &[("popularity", 10f32.ln()), ("content", 2.5)],
            &[],
            Tie::Words,
        );
        check(
            "Small.md",
            &[("popularity", 5f32.ln()), ("content", 0.5)],
            &[],
            Tie::Words,
        );
        // Nothing at all: words (and the passages say the rest).
        check("Nothing.md", &[], &[], Tie::Words);
    }

    /// A folder read in part gives no "k of the n".
    #[test]
    fn a_folder_read_in_part_is_not_counted() {
        let mut ties = ties(Signals::default().0);
        ties.around.mates.every = false;
        let e = Evidence {
            folder_linked: 1.0,
            ..Default::default()
        };
        assert_eq!(ties.of("Packing.md", &e, &[]), Tie::Words);
    }
}
