//! Which note a name means among the notes that hold it: Obsidian's order (a path that names
//! it exactly, then the shortest path), the linking note's nearest first. A leaf: the graph,
//! references and link resolution all rank with it.

use tantivy::DocAddress;

use super::VaultIndex;

/// The notes holding one link key, ranked once for resolving links to it from many notes.
pub(crate) struct Named<'a> {
    /// (not named exactly by its path, folder, note) in Obsidian's order, folder aside.
    ranked: Vec<(bool, &'a str, &'a (String, DocAddress))>,
}

impl<'a> Named<'a> {
    pub fn new(index: &VaultIndex, found: &'a [(String, DocAddress)], key: &str) -> Named<'a> {
        Named::in_scope(&index.scope(), found, key)
    }

    /// [`Named::new`] as a server confined to `scope` sees it.
    pub fn in_scope(scope: &crate::Scope, found: &'a [(String, DocAddress)], key: &str) -> Named<'a> {
        let mut ranked: Vec<_> = found
            .iter()
            .filter(|(p, _)| scope.allows(p))
            .map(|entry| {
                let path = entry.0.as_str();
                let without_ext = path.rsplit_once('.').map(|(p, _)| p).unwrap_or(path);
                let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                // `key` is lower-cased already; compared without lower-casing into a new string.
                let exact = without_ext.chars().flat_map(char::to_lowercase).eq(key.chars());
                (!exact, dir, entry)
            })
            .collect();
        ranked.sort_by(|a, b| (a.0, a.2.0.len(), &a.2.0).cmp(&(b.0, b.2.0.len(), &b.2.0)));
        Named { ranked }
    }

    /// The ranking as `(not named exactly by its path, path)`, owned: [`pick_ranked`] picks
    /// from it as [`Named::pick`] does.
    pub fn into_ranked(self) -> Vec<(bool, String)> {
        self.ranked
            .into_iter()
            .map(|(miss, _, e)| (miss, e.0.clone()))
            .collect()
    }

    /// The note a link from `from` means: named by its path, else in `from`'s folder, else
    /// the shortest path.
    pub fn pick(&self, from: Option<&str>) -> Option<&'a (String, DocAddress)> {
        pick_in(&self.ranked, |r| (r.0, r.1), from).map(|r| r.2)
    }
}

/// [`Named::pick`] over [`Named::into_ranked`].
pub(crate) fn pick_ranked<'r>(ranked: &'r [(bool, String)], from: Option<&str>) -> Option<&'r str> {
    pick_in(
        ranked,
        |(miss, p)| (*miss, p.rsplit_once('/').map_or("", |(d, _)| d)),
        from,
    )
    .map(|(_, p)| p.as_str())
}

/// The note a link from `from` means among `ranked` (each seen as its "not named exactly by
/// its path" flag and folder, in Obsidian's order: shortest path first): named by its path,
/// else the one nearest `from` in the folder tree (its own folder first, then the longest
/// common folder prefix — in a vault of one folder per language, `[[Canvas]]` in `en/` is
/// `en/`'s Canvas), else the first.
fn pick_in<'r, T>(ranked: &'r [T], seen: impl Fn(&'r T) -> (bool, &'r str), from: Option<&str>) -> Option<&'r T> {
    let first = ranked.first()?;
    let Some(from_dir) = from.map(|f| f.rsplit_once('/').map_or("", |(d, _)| d)) else {
        return Some(first);
    };
    let best = seen(first).0;
    let shared = |dir: &str| -> usize {
        if dir == from_dir {
            return usize::MAX;
        }
        let (a, b) = (dir.split('/'), from_dir.split('/'));
        a.zip(b).take_while(|(x, y)| !x.is_empty() && x == y).count()
    };
    let mut nearest = first;
    let mut nearest_shared = shared(seen(first).1);
    for r in ranked.iter().take_while(|r| seen(r).0 == best).skip(1) {
        let s = shared(seen(r).1);
        if s > nearest_shared {
            (nearest, nearest_shared) = (r, s);
        }
    }
    Some(nearest)
}
